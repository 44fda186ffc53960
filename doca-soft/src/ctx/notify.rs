//! The progress engine's notification handle (`doca_pe_get_notification_handle`,
//! `doca_pe_request_notification`, `doca_pe_clear_notification`): a file descriptor an
//! application waits on (`poll`, `epoll`, an async reactor) instead of calling
//! `doca_pe_progress` in a loop.
//!
//! The handle is an epoll descriptor. It holds the engine's own eventfd, written when a
//! context says at arming time that it has work already, and the wake-up descriptors of
//! the connected contexts (for example a UCX worker's event descriptor). Arming asks each
//! connected context ([`CtxOps::arm_wakeup`](super::CtxOps::arm_wakeup)); the UROM host
//! contexts (service, worker, domain) answer with an epoll descriptor of their own holding
//! their connection's descriptors and a liveness timer (`urom::host::wake`). A context kind
//! that cannot say when it will have work makes the request `DOCA_ERROR_NOT_SUPPORTED`
//! (logged once per kind), and callers keep polling, as DOCA's own contexts without event
//! support behave.

use crate::error::{DocaError, DocaResult};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

/// What a context answers when the engine arms its notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wakeup {
    /// Nothing can complete until the application calls into the context again.
    Quiet,
    /// Something may complete now: the engine should be progressed at once.
    Ready,
    /// The descriptor becomes readable when the context has work (armed by this call).
    Fd(RawFd),
    /// The context cannot tell (its work is found only by polling).
    Unknown,
}

/// The engine's epoll descriptor, its eventfd and the context descriptors it holds.
pub(crate) struct Notifier {
    epoll: OwnedFd,
    event: OwnedFd,
    watched: Mutex<Vec<RawFd>>,
}

fn errno_result(r: libc::c_int, what: &str) -> DocaResult<libc::c_int> {
    if r < 0 {
        sdk_err!("pe", "{what} failed: {}", std::io::Error::last_os_error());
        Err(DocaError::OPERATING_SYSTEM)
    } else {
        Ok(r)
    }
}

impl Notifier {
    pub(crate) fn new() -> DocaResult<Notifier> {
        // SAFETY: plain system calls creating new descriptors, owned right away.
        let epoll = errno_result(
            unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
            "epoll_create1",
        )?;
        // SAFETY: epoll is a new descriptor nobody else owns.
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        // SAFETY: as above.
        let event = errno_result(
            unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) },
            "eventfd",
        )?;
        // SAFETY: as above.
        let event = unsafe { OwnedFd::from_raw_fd(event) };
        let n = Notifier {
            epoll,
            event,
            watched: Mutex::new(Vec::new()),
        };
        n.watch(n.event.as_raw_fd())?;
        Ok(n)
    }

    /// The handle applications wait on.
    pub(crate) fn handle(&self) -> RawFd {
        self.epoll.as_raw_fd()
    }

    /// Adds `fd` to the epoll set. Asked of the kernel every time, not of a cache: a closed
    /// descriptor leaves the set by itself, and its number may come back as another file.
    pub(crate) fn watch(&self, fd: RawFd) -> DocaResult<()> {
        let mut watched = crate::sync::lock(&self.watched);
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: fd as u64,
        };
        // SAFETY: both descriptors are open; ev is a valid event description.
        let r =
            unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
            errno_result(r, "epoll_ctl")?;
        }
        if !watched.contains(&fd) {
            watched.push(fd);
        }
        Ok(())
    }

    /// Removes `fd` (a context going away); unknown descriptors are ignored.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn unwatch(&self, fd: RawFd) {
        let mut watched = crate::sync::lock(&self.watched);
        if let Some(i) = watched.iter().position(|&w| w == fd) {
            watched.swap_remove(i);
            // SAFETY: removing a descriptor we added; a null event is allowed for DEL.
            unsafe {
                libc::epoll_ctl(
                    self.epoll.as_raw_fd(),
                    libc::EPOLL_CTL_DEL,
                    fd,
                    std::ptr::null_mut(),
                )
            };
        }
    }

    /// Makes the handle readable now.
    pub(crate) fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a live u64 to our eventfd (never full: counter).
        unsafe { libc::write(self.event.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    /// Drains the engine's own eventfd (the contexts' descriptors are re-armed by them).
    pub(crate) fn clear(&self) {
        let mut v: u64 = 0;
        // SAFETY: reading 8 bytes into a live u64 from our non-blocking eventfd.
        unsafe { libc::read(self.event.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::doca_pe::*;
    use crate::ctx::{Ctx, CtxOps, Transition};
    use std::sync::Arc;

    /// A context kind answering `answer` when armed.
    struct Arms(Mutex<Wakeup>);
    impl CtxOps for Arms {
        fn kind(&self) -> &'static str {
            "arms"
        }
        fn start(&self, _: &Ctx) -> DocaResult<Transition> {
            Ok(Transition::Done)
        }
        fn stop(&self, _: &Ctx) -> DocaResult<Transition> {
            Ok(Transition::Done)
        }
        fn arm_wakeup(&self, _: &Ctx) -> Wakeup {
            *crate::sync::lock(&self.0)
        }
    }
    /// A kind keeping the default (it cannot notify).
    struct Silent;
    impl CtxOps for Silent {
        fn kind(&self) -> &'static str {
            "silent"
        }
        fn start(&self, _: &Ctx) -> DocaResult<Transition> {
            Ok(Transition::Done)
        }
        fn stop(&self, _: &Ctx) -> DocaResult<Transition> {
            Ok(Transition::Done)
        }
    }

    fn readable(fd: RawFd) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; zero timeout.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    }

    fn eventfd() -> OwnedFd {
        // SAFETY: a new descriptor, owned at once.
        unsafe { OwnedFd::from_raw_fd(libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC)) }
    }

    #[test]
    fn the_handle_follows_ready_contexts_and_their_descriptors() {
        let kind = Arc::new(Arms(Mutex::new(Wakeup::Quiet)));
        let ctx = Ctx::new(kind.clone());
        let c = &*ctx as *const Ctx as *mut Ctx;
        let mut pe = std::ptr::null_mut();
        let (mut h, mut h2) = (-1, -1);
        // SAFETY: live objects and valid out-pointers throughout.
        unsafe {
            assert_eq!(doca_pe_create(&mut pe), 0);
            assert_eq!(doca_pe_get_notification_handle(pe, &mut h), 0);
            assert_eq!(doca_pe_get_notification_handle(pe, &mut h2), 0);
            assert!(h >= 0 && h == h2, "one handle per engine");
            // Nothing connected, or a quiet context: armed, not readable.
            assert_eq!(doca_pe_request_notification(pe), 0);
            assert_eq!(doca_pe_connect_ctx(pe, c), 0);
            assert_eq!(doca_pe_request_notification(pe), 0);
            assert!(!readable(h));
            // Work pending at arming time: readable at once; clear makes it quiet again.
            *kind.0.lock().unwrap() = Wakeup::Ready;
            assert_eq!(doca_pe_request_notification(pe), 0);
            assert!(readable(h));
            assert_eq!(doca_pe_clear_notification(pe, h), 0);
            assert!(!readable(h));
            // A context descriptor: the handle is readable when it is.
            let efd = eventfd();
            *kind.0.lock().unwrap() = Wakeup::Fd(efd.as_raw_fd());
            assert_eq!(doca_pe_request_notification(pe), 0);
            assert!(!readable(h));
            let one = 1u64;
            libc::write(efd.as_raw_fd(), (&one as *const u64).cast(), 8);
            assert!(readable(h));
            (*pe).unwatch(efd.as_raw_fd());
            assert!(!readable(h), "an unwatched descriptor no longer counts");
            // Bad input.
            assert_eq!(
                doca_pe_clear_notification(pe, h + 1000),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_pe_get_notification_handle(pe, std::ptr::null_mut()),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_pe_get_notification_handle(std::ptr::null(), &mut h2),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_pe_request_notification(std::ptr::null_mut()),
                DocaError::INVALID_VALUE.0
            );
            ctx.detach_from_pe();
            assert_eq!(doca_pe_destroy(pe), 0);
        }
    }

    #[test]
    fn a_context_that_cannot_notify_makes_the_request_not_supported() {
        let ctx = Ctx::new(Arc::new(Silent));
        let c = &*ctx as *const Ctx as *mut Ctx;
        let mut pe = std::ptr::null_mut();
        // SAFETY: live objects and valid out-pointers throughout.
        unsafe {
            assert_eq!(doca_pe_create(&mut pe), 0);
            assert_eq!(doca_pe_connect_ctx(pe, c), 0);
            assert_eq!(doca_pe_request_notification(pe), DocaError::NOT_SUPPORTED.0);
            ctx.detach_from_pe();
            assert_eq!(doca_pe_request_notification(pe), 0);
            assert_eq!(doca_pe_destroy(pe), 0);
        }
    }
}
