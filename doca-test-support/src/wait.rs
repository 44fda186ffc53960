//! Waiting for something to happen, always bounded.
//!
//! Bounds are generous ([`PATIENCE`]): CI machines are small and shared, and only a hang
//! should ever reach one. Timing assertions belong in benches, not here.

use std::fmt::Display;
use std::path::Path;
use std::time::{Duration, Instant};

/// The default bound of a wait.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// How long a poll sleeps between two looks at the condition.
const POLL_EVERY: Duration = Duration::from_millis(2);

/// Polls `cond` until it holds or `limit` passes; whether it held (it is looked at once
/// more after the deadline, so a slow last step still counts).
pub fn poll_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(POLL_EVERY);
    }
    cond()
}

/// [`poll_until`] with [`PATIENCE`].
pub fn eventually(cond: impl FnMut() -> bool) -> bool {
    poll_until(PATIENCE, cond)
}

/// Polls `cond` until it holds; panics with `timed out after <limit> waiting for <what>`
/// when `limit` passes first.
pub fn wait_for(what: impl Display, limit: Duration, cond: impl FnMut() -> bool) {
    assert!(
        poll_until(limit, cond),
        "timed out after {limit:?} waiting for {what}"
    );
}

/// Polls `f` until it returns `Some`, which it returns; None when `limit` passes first.
pub fn poll_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let mut got = None;
    poll_until(limit, || {
        got = f();
        got.is_some()
    });
    got
}

/// Waits until `path` exists (a ready file a child process writes); panics naming the file
/// after `limit`.
pub fn wait_for_file(path: &Path, limit: Duration) {
    wait_for(format_args!("{} to appear", path.display()), limit, || {
        path.exists()
    });
}

/// Fails the test instead of hanging when an awaited event never comes: panics once 60 s
/// have passed since `start` (not a timing assertion: the limit is far above any expected
/// wait), naming `what` was awaited. Call it in each turn of a polling loop.
pub fn watchdog(start: Instant, what: &str) {
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "gave up waiting for {what}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn returns_as_soon_as_the_condition_holds() {
        let n = AtomicUsize::new(0);
        assert!(poll_until(PATIENCE, || n.fetch_add(1, Ordering::Relaxed) == 3));
        assert_eq!(n.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn gives_up_at_the_deadline_after_a_last_look() {
        let n = AtomicUsize::new(0);
        assert!(!poll_until(Duration::from_millis(20), || {
            n.fetch_add(1, Ordering::Relaxed);
            false
        }));
        assert!(
            n.load(Ordering::Relaxed) >= 2,
            "polled, then looked once more"
        );
        assert!(poll_until(Duration::ZERO, || true), "the last look counts");
    }

    #[test]
    fn poll_for_hands_back_the_value() {
        let mut k = 0;
        assert_eq!(
            poll_for(PATIENCE, || {
                k += 1;
                (k == 5).then_some(k * 10)
            }),
            Some(50)
        );
        assert_eq!(poll_for(Duration::from_millis(5), || None::<u8>), None);
    }

    #[test]
    fn wait_for_panics_with_what_it_waited_for() {
        let r =
            std::panic::catch_unwind(|| wait_for("the moon", Duration::from_millis(5), || false));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("waiting for the moon"), "{msg}");
    }

    #[test]
    fn wait_for_file_sees_a_file_written_later() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("ready");
        let q = p.clone();
        let w = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            std::fs::write(q, "").unwrap();
        });
        wait_for_file(&p, PATIENCE);
        w.join().unwrap();
        let missing = t.path().join("never");
        let r = std::panic::catch_unwind(|| wait_for_file(&missing, Duration::from_millis(5)));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("never"), "{msg}");
    }
}
