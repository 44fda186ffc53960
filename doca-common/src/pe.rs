//! Progress engines (`doca_pe`).

use crate::error::{check, Error, Result};
use doca_sys as sys;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

struct PeInner {
    raw: NonNull<sys::doca_pe>,
    // DOCA's PE must not be progressed from two threads at once; this lock makes the safe
    // handle shareable anyway.
    progress_lock: Mutex<()>,
}

// SAFETY: all access to the PE goes through `progress_lock` or happens at creation and
// destruction, which are exclusive.
unsafe impl Send for PeInner {}
// SAFETY: as above.
unsafe impl Sync for PeInner {}

impl Drop for PeInner {
    fn drop(&mut self) {
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
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("doca_pe_create", unsafe { sys::doca_pe_create(&mut raw) })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::InvalidArgument("doca_pe_create returned NULL".into()))?;
        Ok(ProgressEngine {
            inner: Arc::new(PeInner {
                raw,
                progress_lock: Mutex::new(()),
            }),
        })
    }

    /// Lets every connected context make progress once; true when something completed.
    pub fn progress(&self) -> bool {
        let _g = self
            .inner
            .progress_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // SAFETY: the PE is live; calls are serialized by the lock.
        unsafe { sys::doca_pe_progress(self.inner.raw.as_ptr()) != 0 }
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
}
