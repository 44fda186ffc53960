//! Checked calls into the CUDA driver (the dynamically loaded [`driver`](super::driver)
//! layer).
//!
//! A missing driver or symbol is an error code there; every call here still runs under
//! `catch_unwind` (nothing may unwind into C) and comes back as DOCA_ERROR_DRIVER.

use crate::error::{DocaError, DocaResult};
use crate::gpu::driver as sys;
use once_cell::sync::OnceCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Whether a CUDA driver library can be loaded here (never panics; the loader caches it).
pub fn cuda_available() -> bool {
    sys::is_culib_present()
}

/// Runs one driver call: DRIVER when no driver is present, the call panics, or it returns
/// an error (logged with `what`). `f` returns the raw CUresult.
pub(crate) fn call(what: &str, f: impl FnOnce() -> sys::CUresult) -> DocaResult<()> {
    match raw(f) {
        Ok(sys::CUresult::CUDA_SUCCESS) => Ok(()),
        Ok(e) => {
            sdk_err!("gpu", "{what} failed: {e:?}");
            Err(DocaError::DRIVER)
        }
        Err(e) => {
            sdk_err!("gpu", "{what}: CUDA driver unavailable");
            Err(e)
        }
    }
}

/// Like [`call`] but returns the CUresult itself (for callers that map specific codes).
pub(crate) fn raw(f: impl FnOnce() -> sys::CUresult) -> DocaResult<sys::CUresult> {
    if !cuda_available() {
        return Err(DocaError::DRIVER);
    }
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| DocaError::DRIVER)
}

/// `cuInit(0)`, once per process (later calls return the first result).
pub(crate) fn init() -> DocaResult<()> {
    static INIT: OnceCell<DocaResult<()>> = OnceCell::new();
    *INIT.get_or_init(|| {
        // SAFETY: cuInit has no pointer arguments.
        call("cuInit", || unsafe { sys::cuInit(0) })
    })
}
