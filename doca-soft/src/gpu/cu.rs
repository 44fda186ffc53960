//! The runtime's side of the CUDA driver's result layer (`doca_cuda_driver::result`): a
//! failed driver call is DOCA_ERROR_DRIVER, logged with the call and the driver's name for
//! the code.
//!
//! A missing driver or symbol is an error code there (`CUDA_ERROR_NOT_FOUND`), and the
//! entry points are C functions called through pointers, which cannot unwind: nothing here
//! can panic into C.

use crate::error::{DocaError, DocaResult};
use doca_cuda_driver::{result, sys};
use once_cell::sync::OnceCell;

/// Whether a CUDA driver library can be loaded here (never panics; the loader caches it).
pub fn cuda_available() -> bool {
    sys::is_culib_present()
}

/// A driver call's result (from `doca_cuda_driver::cu!`) as the runtime's: a failure is
/// DRIVER, logged ("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY", or that no driver is
/// present).
pub(crate) fn call<T>(r: result::Result<T>) -> DocaResult<T> {
    r.map_err(|e| {
        sdk_err!("gpu", "{e}");
        DocaError::DRIVER
    })
}

/// `cuInit(0)`, once per process (later calls return the first result).
pub(crate) fn init() -> DocaResult<()> {
    static INIT: OnceCell<DocaResult<()>> = OnceCell::new();
    *INIT.get_or_init(|| call(result::init()))
}
