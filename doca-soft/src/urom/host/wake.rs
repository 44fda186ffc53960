//! [`WakeSet`]: the wake-up descriptor a host-side UROM context (service, worker, domain)
//! gives its progress engine when the application arms the engine's notification
//! (`doca_pe_request_notification`, see `ctx::notify`).
//!
//! A context waits on several things at once: its connection's descriptors (the TCP socket,
//! the UCX worker's event descriptor once the link moved to UCX, see
//! [`Node::sleep_fds`](crate::urom::transport::Node::sleep_fds)) and a time (the liveness
//! watch must ping a silent peer and give up on it after the bound,
//! `DOCA_SOFT_UROM_LIVENESS_MS`; a phase that waits on another context re-checks after
//! [`RECHECK`]). The engine holds one descriptor per context, so each context owns an
//! epoll descriptor of its own holding those descriptors and a timerfd: it becomes readable
//! when any of them is, which makes the engine's handle readable.
//!
//! The descriptors are made on the first arming (a context nobody sleeps on costs none).

use crate::ctx::notify::Wakeup;
use crate::error::DocaError;
use crate::sync::lock;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How soon a context whose progress depends on something without a descriptor of its own
/// (a reply the service's engine receives, an out-of-band collective the application
/// tests) asks to be progressed again.
pub(crate) const RECHECK: Duration = Duration::from_millis(1);

/// A context's epoll descriptor, its timer, and the descriptors registered last time.
#[derive(Default)]
pub(crate) struct WakeSet {
    fds: OnceLock<Option<Fds>>,
    registered: Mutex<Vec<RawFd>>,
}

struct Fds {
    epoll: OwnedFd,
    timer: OwnedFd,
}

/// A new descriptor from a system call returning one, owned at once.
fn owned(r: libc::c_int, what: &str) -> Option<OwnedFd> {
    if r < 0 {
        sdk_err!(
            "urom",
            "{what} failed: {} (the context's work is found by polling)",
            std::io::Error::last_os_error()
        );
        return None;
    }
    // SAFETY: `r` is a new descriptor nobody else owns.
    Some(unsafe { OwnedFd::from_raw_fd(r) })
}

fn make() -> Option<Fds> {
    // SAFETY: plain system calls creating new descriptors.
    let epoll = owned(
        unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
        "epoll_create1",
    )?;
    // SAFETY: as above.
    let timer = owned(
        unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        },
        "timerfd_create",
    )?;
    let fds = Fds { epoll, timer };
    ctl(&fds.epoll, fds.timer.as_raw_fd(), libc::EPOLLIN as u32).ok()?;
    Some(fds)
}

/// Registers `fd` for `events` (modifies a registration that exists).
fn ctl(epoll: &OwnedFd, fd: RawFd, events: u32) -> Result<(), DocaError> {
    let mut ev = libc::epoll_event {
        events,
        u64: fd as u64,
    };
    let ep = epoll.as_raw_fd();
    // SAFETY: both descriptors are open; `ev` is a valid event description. Asked of the
    // kernel each time: a closed descriptor leaves the set by itself and its number may
    // come back as another file.
    let mut r = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_MOD, fd, &mut ev) };
    if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
        // SAFETY: as above.
        r = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) };
    }
    if r < 0 {
        sdk_err!(
            "urom",
            "epoll_ctl on descriptor {fd} failed: {}",
            std::io::Error::last_os_error()
        );
        return Err(DocaError::OPERATING_SYSTEM);
    }
    Ok(())
}

/// The epoll events matching `poll` events.
fn epoll_events(poll: i16) -> u32 {
    let mut e = 0;
    if poll & libc::POLLIN != 0 {
        e |= libc::EPOLLIN as u32;
    }
    if poll & libc::POLLOUT != 0 {
        e |= libc::EPOLLOUT as u32;
    }
    e
}

impl WakeSet {
    /// Arms the set: readable when one of `fds` is ready for its events, or at `deadline`
    /// (none: no timer). `edge`, one of `fds`, is watched edge-triggered: it makes the set
    /// readable when it gets a new event after this call, not while it stays readable (the
    /// set is drained here, so what it reported before does not count). Descriptors
    /// registered by the previous arming and missing now are removed. Answers what the
    /// engine should do: watch the set, or, when it cannot be made, poll
    /// ([`Wakeup::Unknown`]).
    pub(crate) fn arm(
        &self,
        fds: &[libc::pollfd],
        edge: Option<RawFd>,
        deadline: Option<Instant>,
    ) -> Wakeup {
        let Some(set) = self.fds.get_or_init(make) else {
            return Wakeup::Unknown;
        };
        let mut registered = lock(&self.registered);
        for old in registered.iter() {
            if !fds.iter().any(|p| p.fd == *old) {
                // SAFETY: removing a registration of ours; errors (a descriptor closed
                // meanwhile has left the set already) change nothing.
                unsafe {
                    libc::epoll_ctl(
                        set.epoll.as_raw_fd(),
                        libc::EPOLL_CTL_DEL,
                        *old,
                        std::ptr::null_mut(),
                    )
                };
            }
        }
        registered.clear();
        for p in fds {
            let mut events = epoll_events(p.events);
            if edge == Some(p.fd) {
                events |= libc::EPOLLET as u32;
            }
            if ctl(&set.epoll, p.fd, events).is_err() {
                return Wakeup::Unknown;
            }
            registered.push(p.fd);
        }
        // Take the edges reported so far (level-triggered entries stay ready). Nobody else
        // waits on this set: the engine only polls it.
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: our epoll descriptor; `evs` has room for the 64 events asked for.
        unsafe { libc::epoll_wait(set.epoll.as_raw_fd(), evs.as_mut_ptr(), 64, 0) };
        // The timer: a relative time from now (at least 1 us: zero would disarm it), or
        // disarmed. Setting it also resets a past expiry, so the set is quiet again.
        let value = deadline.map_or(
            libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            |d| {
                let left = d
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_micros(1));
                libc::timespec {
                    tv_sec: left.as_secs() as libc::time_t,
                    tv_nsec: left.subsec_nanos() as libc::c_long,
                }
            },
        );
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        // SAFETY: our timerfd; `spec` is valid; the old value is not wanted.
        if unsafe { libc::timerfd_settime(set.timer.as_raw_fd(), 0, &spec, std::ptr::null_mut()) }
            < 0
        {
            return Wakeup::Unknown;
        }
        Wakeup::Fd(set.epoll.as_raw_fd())
    }

    /// Arms the set with the timer alone, [`RECHECK`] from now.
    pub(crate) fn recheck(&self) -> Wakeup {
        self.arm(&[], None, Some(Instant::now() + RECHECK))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(fd: RawFd, timeout_ms: i32) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, timeout_ms) == 1 }
    }

    #[test]
    fn the_set_follows_its_descriptors_and_its_timer() {
        let w = WakeSet::default();
        // SAFETY: a new descriptor, owned at once.
        let efd = unsafe { OwnedFd::from_raw_fd(libc::eventfd(0, libc::EFD_NONBLOCK)) };
        let pfd = libc::pollfd {
            fd: efd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let Wakeup::Fd(h) = w.arm(&[pfd], None, None) else {
            panic!("no descriptor");
        };
        assert!(!readable(h, 50), "quiet descriptor, no timer: not readable");
        let one = 1u64;
        // SAFETY: 8 bytes from a live u64 to our eventfd.
        unsafe { libc::write(efd.as_raw_fd(), (&one as *const u64).cast(), 8) };
        assert!(readable(h, 0), "readable once the descriptor is");
        // Re-armed without it: the descriptor no longer counts.
        assert_eq!(
            w.arm(&[], None, None),
            Wakeup::Fd(h),
            "one descriptor per context"
        );
        assert!(!readable(h, 20));
        // The timer: readable at the deadline, not before; re-arming resets it.
        let t0 = Instant::now();
        w.arm(&[], None, Some(t0 + Duration::from_millis(30)));
        assert!(!readable(h, 0));
        assert!(readable(h, 2000), "the timer fires");
        assert!(t0.elapsed() >= Duration::from_millis(30));
        w.arm(&[], None, None);
        assert!(!readable(h, 20), "disarmed and reset");
        // A deadline already past: readable at once.
        w.arm(&[], None, Some(t0));
        assert!(readable(h, 1000));

        // Edge-triggered: a descriptor that stays readable counts once, until it gets a
        // new event.
        let Wakeup::Fd(_) = w.arm(&[pfd], Some(pfd.fd), None) else {
            panic!("no descriptor");
        };
        assert!(
            readable(efd.as_raw_fd(), 0),
            "the eventfd is still readable"
        );
        assert!(!readable(h, 20), "an old event does not count after arming");
        // SAFETY: as above.
        unsafe { libc::write(efd.as_raw_fd(), (&one as *const u64).cast(), 8) };
        assert!(readable(h, 1000), "a new event counts");
    }
}
