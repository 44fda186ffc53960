//! [`Serial`]: the lock that serializes this crate's calls on one DOCA object, re-entrant on
//! the thread that holds it (completion callbacks run inside progress calls made under the
//! lock, and may call back into the same object).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A re-entrant lock without data: [`run`](Serial::run) runs a closure while no other
/// thread runs one on the same `Serial`.
#[derive(Default)]
pub(crate) struct Serial {
    lock: Mutex<()>,
    /// The key of the thread inside `run`, 0 when none.
    owner: AtomicUsize,
}

/// A number unique to the calling thread among the live threads (never 0).
fn thread_key() -> usize {
    thread_local!(static KEY: u8 = const { 0 });
    KEY.with(|k| k as *const u8 as usize)
}

impl Serial {
    /// Runs `f` holding the lock (directly when this thread already holds it).
    pub(crate) fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        let me = thread_key();
        // Only this thread ever stores its own key, so seeing it means we hold the lock.
        if self.owner.load(Ordering::Acquire) == me {
            return f();
        }
        let _held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.owner.store(me, Ordering::Release);
        /// Clears the owner before the lock is released (also when `f` panics).
        struct Clear<'a>(&'a AtomicUsize);
        impl Drop for Clear<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Release);
            }
        }
        let _clear = Clear(&self.owner);
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn reentrant_on_one_thread_exclusive_across_threads() {
        let s = Serial::default();
        assert_eq!(s.run(|| s.run(|| 7)), 7);
        let inside = AtomicU32::new(0);
        std::thread::scope(|sc| {
            for _ in 0..4 {
                sc.spawn(|| {
                    for _ in 0..200 {
                        s.run(|| {
                            assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                            s.run(std::hint::spin_loop);
                            inside.fetch_sub(1, Ordering::SeqCst);
                        });
                    }
                });
            }
        });
        // A panic inside releases the lock.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.run(|| panic!("x"))));
        assert!(r.is_err());
        assert_eq!(std::thread::spawn(move || s.run(|| 1)).join().unwrap(), 1);
    }
}
