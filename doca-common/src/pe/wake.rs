//! The thread that wakes futures waiting for progress engines: it waits (epoll) on the
//! engines' notification descriptors and on a timer for the futures whose engine has none,
//! and wakes the registered wakers. One thread for the process, started on first use; it
//! sleeps in `epoll_wait` while nothing is due.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};
use std::task::Waker;
use std::time::{Duration, Instant};

/// The epoll data of the timer descriptor (descriptors are never negative).
const TIMER: u64 = u64::MAX;

/// A registered timer: its deadline and a sequence number that makes it unique (and orders
/// equal deadlines by arrival). [`cancel`] takes it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TimerKey(Instant, u64);

#[derive(Default)]
struct Waiting {
    /// Wakers per descriptor, woken once when it becomes readable.
    fds: HashMap<RawFd, Vec<Waker>>,
    /// Descriptors in the epoll set (armed or not).
    registered: HashSet<RawFd>,
    timers: BTreeMap<TimerKey, Waker>,
    seq: u64,
    /// The deadline the timer descriptor is set to.
    timer_at: Option<Instant>,
}

struct Reactor {
    epoll: OwnedFd,
    timer: OwnedFd,
    waiting: Mutex<Waiting>,
}

static REACTOR: OnceLock<Option<&'static Reactor>> = OnceLock::new();

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

impl Reactor {
    fn start() -> Result<&'static Reactor, String> {
        // SAFETY: plain descriptor creation; each result is checked and then owned.
        let (epoll, timer) = unsafe {
            let e = libc::epoll_create1(libc::EPOLL_CLOEXEC);
            if e < 0 {
                return Err(os_err("epoll_create1"));
            }
            let epoll = OwnedFd::from_raw_fd(e);
            let t = libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
            );
            if t < 0 {
                return Err(os_err("timerfd_create"));
            }
            (epoll, OwnedFd::from_raw_fd(t))
        };
        let r: &'static Reactor = Box::leak(Box::new(Reactor {
            epoll,
            timer,
            waiting: Mutex::new(Waiting::default()),
        }));
        r.ctl(
            libc::EPOLL_CTL_ADD,
            r.timer.as_raw_fd(),
            libc::EPOLLIN as u32,
            TIMER,
        )?;
        std::thread::Builder::new()
            .name("doca-pe-wake".into())
            .spawn(move || r.run())
            .map_err(|e| format!("cannot start the doca-pe-wake thread: {e}"))?;
        Ok(r)
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, data: u64) -> Result<(), String> {
        let mut ev = libc::epoll_event { events, u64: data };
        // SAFETY: our epoll descriptor; `ev` is a valid event.
        if unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), op, fd, &mut ev) } != 0 {
            return Err(os_err("epoll_ctl"));
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the timer descriptor to the earliest deadline (or disarms it).
    fn set_timer(&self, w: &mut Waiting) {
        let next = w.timers.keys().next().map(|k| k.0);
        if next == w.timer_at {
            return;
        }
        w.timer_at = next;
        // A zero value disarms: a due deadline is set 1 ns ahead instead.
        let left = next.map_or(Duration::ZERO, |at| {
            at.saturating_duration_since(Instant::now())
                .max(Duration::from_nanos(1))
        });
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: our timer descriptor; `spec` is valid; the old value is not wanted.
        unsafe { libc::timerfd_settime(self.timer.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
    }

    fn run(&self) {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 32];
        loop {
            // SAFETY: our epoll descriptor; `events` has room for 32 entries.
            let n =
                unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), 32, -1) };
            if n < 0 {
                if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                    std::thread::sleep(Duration::from_millis(1));
                }
                continue;
            }
            let mut wake = Vec::new();
            {
                let mut w = self.lock();
                for ev in &events[..n as usize] {
                    if ev.u64 == TIMER {
                        let mut expirations = 0u64;
                        // SAFETY: reads 8 bytes into a u64 from our non-blocking timer.
                        unsafe {
                            libc::read(
                                self.timer.as_raw_fd(),
                                (&mut expirations as *mut u64).cast(),
                                8,
                            )
                        };
                        w.timer_at = None;
                    } else if let Some(ws) = w.fds.remove(&(ev.u64 as RawFd)) {
                        wake.extend(ws);
                    }
                }
                let now = Instant::now();
                while w.timers.first_key_value().is_some_and(|(k, _)| k.0 <= now) {
                    wake.extend(w.timers.pop_first().map(|(_, waker)| waker));
                }
                self.set_timer(&mut w);
            }
            wake.into_iter().for_each(Waker::wake);
        }
    }
}

fn reactor() -> Option<&'static Reactor> {
    *REACTOR.get_or_init(|| Reactor::start().ok())
}

/// Wakes `waker` once when `fd` becomes readable. `false` when that cannot be arranged
/// (the caller then falls back to [`wake_at`]).
pub(crate) fn wake_on_readable(fd: RawFd, waker: &Waker) -> bool {
    let Some(r) = reactor() else { return false };
    let mut w = r.lock();
    let list = w.fds.entry(fd).or_default();
    if !list.iter().any(|x| x.will_wake(waker)) {
        list.push(waker.clone());
    }
    // One-shot: the thread takes the wakers when it fires; the next wait arms it again.
    let events = (libc::EPOLLIN | libc::EPOLLONESHOT) as u32;
    let armed = if w.registered.contains(&fd) {
        r.ctl(libc::EPOLL_CTL_MOD, fd, events, fd as u64)
    } else {
        r.ctl(libc::EPOLL_CTL_ADD, fd, events, fd as u64).map(|()| {
            w.registered.insert(fd);
        })
    };
    if armed.is_err() {
        if let Some(list) = w.fds.get_mut(&fd) {
            list.retain(|x| !x.will_wake(waker));
        }
        return false;
    }
    true
}

/// Wakes `waker` once at `at` (at once when no timer thread can be had, then `None`).
pub(crate) fn wake_at(at: Instant, waker: &Waker) -> Option<TimerKey> {
    let Some(r) = reactor() else {
        waker.wake_by_ref();
        return None;
    };
    let mut w = r.lock();
    w.seq += 1;
    let key = TimerKey(at, w.seq);
    w.timers.insert(key, waker.clone());
    r.set_timer(&mut w);
    Some(key)
}

/// Takes back a timer that has not fired (no effect once it has).
pub(crate) fn cancel(key: TimerKey) {
    let Some(Some(r)) = REACTOR.get() else { return };
    let mut w = r.lock();
    if w.timers.remove(&key).is_some() {
        r.set_timer(&mut w);
    }
}

/// Forgets `fd` (its engine is being destroyed): it leaves the epoll set, and the futures
/// waiting on it are woken (they find their engine's work done or report its end).
pub(crate) fn forget(fd: RawFd) {
    let Some(Some(r)) = REACTOR.get() else { return };
    let ws = {
        let mut w = r.lock();
        if w.registered.remove(&fd) {
            let _ = r.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0);
        }
        w.fds.remove(&fd).unwrap_or_default()
    };
    ws.into_iter().for_each(Waker::wake);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn wait_for(c: &Count, n: usize) -> bool {
        let end = Instant::now() + Duration::from_secs(10);
        while c.0.load(Ordering::SeqCst) < n {
            if Instant::now() > end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    #[test]
    fn timers_wake_in_order_and_only_when_due() {
        let (a, b) = (
            Arc::new(Count(AtomicUsize::new(0))),
            Arc::new(Count(AtomicUsize::new(0))),
        );
        let t0 = Instant::now();
        wake_at(t0 + Duration::from_millis(300), &Waker::from(b.clone()));
        wake_at(t0 + Duration::from_millis(20), &Waker::from(a.clone()));
        assert!(wait_for(&a, 1));
        assert_eq!(b.0.load(Ordering::SeqCst), 0, "not due yet");
        assert!(wait_for(&b, 1));
        assert!(t0.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn a_cancelled_timer_never_fires() {
        let c = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(c.clone());
        let key = wake_at(Instant::now() + Duration::from_millis(30), &waker).unwrap();
        cancel(key);
        let d = Arc::new(Count(AtomicUsize::new(0)));
        wake_at(
            Instant::now() + Duration::from_millis(60),
            &Waker::from(d.clone()),
        );
        assert!(wait_for(&d, 1));
        assert_eq!(c.0.load(Ordering::SeqCst), 0, "cancelled");
    }

    #[test]
    fn a_readable_descriptor_wakes_once_per_arming() {
        let c = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(c.clone());
        // SAFETY: a fresh eventfd, owned below.
        let efd = unsafe { OwnedFd::from_raw_fd(libc::eventfd(0, libc::EFD_CLOEXEC)) };
        let fd = efd.as_raw_fd();
        assert!(wake_on_readable(fd, &waker));
        assert!(
            wake_on_readable(fd, &waker),
            "the same waker registers once"
        );
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(c.0.load(Ordering::SeqCst), 0, "not readable yet");
        let one = 1u64;
        // SAFETY: writes 8 bytes to our eventfd.
        assert_eq!(
            unsafe { libc::write(fd, (&one as *const u64).cast(), 8) },
            8
        );
        assert!(wait_for(&c, 1));
        // Still readable, but one-shot: nothing more until armed again.
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
        assert!(wake_on_readable(fd, &waker));
        assert!(wait_for(&c, 2));
        // A forgotten descriptor wakes its waiters and leaves the set.
        let d = Arc::new(Count(AtomicUsize::new(0)));
        // SAFETY: a fresh eventfd, owned below.
        let efd2 = unsafe { OwnedFd::from_raw_fd(libc::eventfd(0, libc::EFD_CLOEXEC)) };
        assert!(wake_on_readable(efd2.as_raw_fd(), &Waker::from(d.clone())));
        forget(efd2.as_raw_fd());
        assert!(wait_for(&d, 1));
        drop((efd, efd2));
    }
}
