//! Progress engines (`doca_pe`), their notification handle, and [`ProgressWaiter`] for
//! futures that wait on one.

mod waiter;
mod wake;

pub use waiter::{ProgressWaiter, BACKOFF_MAX, BACKOFF_MIN};

use crate::error::{check, Error, Result};
use doca_sys as sys;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock};

struct PeInner {
    raw: NonNull<sys::doca_pe>,
    // DOCA's PE must not be progressed from two threads at once; this lock makes the safe
    // handle shareable anyway (it also covers arming and clearing the notification).
    progress_lock: Mutex<()>,
    /// The notification handle, asked for once.
    notification: OnceLock<Option<RawFd>>,
}

// SAFETY: all access to the PE goes through `progress_lock` or happens at creation and
// destruction, which are exclusive.
unsafe impl Send for PeInner {}
// SAFETY: as above.
unsafe impl Sync for PeInner {}

impl Drop for PeInner {
    fn drop(&mut self) {
        if let Some(Some(fd)) = self.notification.get() {
            // The descriptor goes with the engine: futures waiting on it are woken first.
            wake::forget(*fd);
        }
        // SAFETY: created by doca_pe_create; contexts connected to it hold an Arc of this,
        // so none is left.
        let rc = unsafe { sys::doca_pe_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_pe_destroy", rc) {
            crate::error::record_drop_error(e);
        }
    }
}

/// A progress engine: drives the contexts connected to it (state changes, task completions,
/// events). Cheap to clone; `Send + Sync` (progress calls are serialized).
#[derive(Clone)]
pub struct ProgressEngine {
    inner: Arc<PeInner>,
}

impl ProgressEngine {
    /// A new engine.
    pub fn new() -> Result<Self> {
        crate::log::init_default();
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("doca_pe_create", unsafe { sys::doca_pe_create(&mut raw) })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::InvalidArgument("doca_pe_create returned NULL".into()))?;
        Ok(ProgressEngine {
            inner: Arc::new(PeInner {
                raw,
                progress_lock: Mutex::new(()),
                notification: OnceLock::new(),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.inner
            .progress_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Lets every connected context make progress once; true when something completed.
    pub fn progress(&self) -> bool {
        let _g = self.lock();
        // SAFETY: the PE is live; calls are serialized by the lock.
        unsafe { sys::doca_pe_progress(self.inner.raw.as_ptr()) != 0 }
    }

    /// The engine's notification handle (`doca_pe_get_notification_handle`): a file
    /// descriptor that becomes readable when the engine has work, once armed with
    /// [`request_notification`](Self::request_notification); wait on it with
    /// `epoll`/`poll` (or an async runtime's reactor), then
    /// [`clear_notification`](Self::clear_notification) and progress. The engine owns it.
    ///
    /// `None` when the runtime has no such handle (it answers `DOCA_ERROR_NOT_SUPPORTED`,
    /// or the DOCA headers this crate was built against do not declare the calls). Asked
    /// once; later calls return the same answer. Arming may still be refused while a
    /// connected context cannot notify: [`ProgressWaiter`] then polls with a backoff.
    pub fn notification_handle(&self) -> Option<RawFd> {
        *self
            .inner
            .notification
            .get_or_init(|| self.query_notification_handle())
    }

    #[cfg(doca_pe_notification)]
    fn query_notification_handle(&self) -> Option<RawFd> {
        let mut h: sys::doca_notification_handle_t = -1;
        let _g = self.lock();
        // SAFETY: the PE is live; `h` is a valid out-pointer.
        let rc = unsafe { sys::doca_pe_get_notification_handle(self.inner.raw.as_ptr(), &mut h) };
        (rc == sys::doca_error_t::DOCA_SUCCESS && h >= 0).then_some(h as RawFd)
    }

    #[cfg(not(doca_pe_notification))]
    fn query_notification_handle(&self) -> Option<RawFd> {
        None
    }

    /// Arms the notification (`doca_pe_request_notification`): the handle becomes
    /// readable when the engine has work. `DOCA_ERROR_NOT_SUPPORTED` without a handle.
    pub fn request_notification(&self) -> Result<()> {
        #[cfg(doca_pe_notification)]
        {
            let _g = self.lock();
            // SAFETY: the PE is live; serialized with progress by the lock.
            check("doca_pe_request_notification", unsafe {
                sys::doca_pe_request_notification(self.inner.raw.as_ptr())
            })
        }
        #[cfg(not(doca_pe_notification))]
        Err(Error::doca(
            "doca_pe_request_notification",
            crate::DocaError::NOT_SUPPORTED,
        ))
    }

    /// Clears a notification that fired (`doca_pe_clear_notification`), before progressing.
    /// `DOCA_ERROR_NOT_SUPPORTED` without a handle.
    pub fn clear_notification(&self) -> Result<()> {
        let Some(h) = self.notification_handle() else {
            return Err(Error::doca(
                "doca_pe_clear_notification",
                crate::DocaError::NOT_SUPPORTED,
            ));
        };
        #[cfg(doca_pe_notification)]
        {
            let _g = self.lock();
            // SAFETY: the PE is live and `h` is its handle; serialized by the lock.
            check("doca_pe_clear_notification", unsafe {
                sys::doca_pe_clear_notification(self.inner.raw.as_ptr(), h)
            })
        }
        #[cfg(not(doca_pe_notification))]
        {
            let _ = h;
            Ok(())
        }
    }

    /// Progresses until `done()` holds or `timeout` passes; returns whether it held.
    pub fn progress_until(
        &self,
        timeout: std::time::Duration,
        mut done: impl FnMut() -> bool,
    ) -> bool {
        let end = std::time::Instant::now() + timeout;
        loop {
            if done() {
                return true;
            }
            if std::time::Instant::now() >= end {
                return false;
            }
            if !self.progress() {
                std::thread::yield_now();
            }
        }
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_pe {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for ProgressEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressEngine").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_engine_reports_no_progress() {
        let pe = ProgressEngine::new().unwrap();
        assert!(!pe.progress());
        let mut n = 0;
        assert!(pe.progress_until(std::time::Duration::from_secs(1), || {
            n += 1;
            n == 3
        }));
        assert!(!pe.progress_until(std::time::Duration::from_millis(10), || false));
    }

    #[cfg(not(doca_pe_notification))]
    #[test]
    fn without_the_calls_there_is_no_handle_and_arming_is_not_supported() {
        let pe = ProgressEngine::new().unwrap();
        assert_eq!(pe.notification_handle(), None);
        let e = pe.request_notification().unwrap_err();
        assert_eq!(e.doca_code(), Some(crate::DocaError::NOT_SUPPORTED));
        assert_eq!(e.op(), Some("doca_pe_request_notification"));
        assert!(pe.clear_notification().is_err());
    }

    #[test]
    fn a_parked_waiter_is_woken_again_without_spinning() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::task::{Wake, Waker};
        struct Count(AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let pe = ProgressEngine::new().unwrap();
        let mut w = ProgressWaiter::new(&pe);
        let c = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(c.clone());
        if pe.notification_handle().is_some() && pe.request_notification().is_ok() {
            // A runtime with notifications: an engine with nothing connected is armed and
            // never woken (no spurious wake-ups, no polling).
            assert!(w.park(&waker));
            std::thread::sleep(std::time::Duration::from_millis(200));
            assert_eq!(c.0.load(Ordering::SeqCst), 0, "woken with nothing to do");
            return;
        }
        // Without: each park leads to exactly one wake, later, never a busy loop.
        let t0 = std::time::Instant::now();
        let mut parks = 0;
        while t0.elapsed() < std::time::Duration::from_millis(100) {
            assert!(!w.progress(), "nothing is connected");
            let before = c.0.load(Ordering::SeqCst);
            if w.park(&waker) {
                parks += 1;
                let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
                while c.0.load(Ordering::SeqCst) == before {
                    assert!(std::time::Instant::now() < end, "the waker was never woken");
                    std::thread::yield_now();
                }
            }
        }
        // 100 ms at most BACKOFF_MAX apart after the first few: about 100, never thousands.
        assert!(parks >= 10, "{parks} parks");
        assert!(parks <= 400, "{parks} parks in 100 ms: spinning");
    }
}
