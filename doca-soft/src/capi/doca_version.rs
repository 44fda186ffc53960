//! `doca_version.h`: the version of the library in use.

use std::ffi::c_char;

use super::toolkit::call_value;
use crate::version::RUNTIME_VERSION_C;

/// `doca_version_runtime()`: `"3.3.0"`, the DOCA API version doca-soft implements.
#[no_mangle]
pub extern "C" fn doca_version_runtime() -> *const c_char {
    call_value("doca_version_runtime", RUNTIME_VERSION_C.as_ptr(), || {
        RUNTIME_VERSION_C.as_ptr()
    })
}
