//! `doca_error.h`: the names and descriptions of the error codes.

use std::ffi::c_char;

use super::toolkit::call_value;
pub use crate::error::{DocaError, DocaResult};

/// What a name or description call returns if it fails inside (never expected).
const UNRECOGNIZED: &std::ffi::CStr = c"DOCA_ERROR_UNRECOGNIZED";

/// `doca_error_get_name(error)`: `DOCA_ERROR_...` (`DOCA_ERROR_UNRECOGNIZED` for an unknown
/// code), in static storage.
#[no_mangle]
pub extern "C" fn doca_error_get_name(error: u32) -> *const c_char {
    call_value("doca_error_get_name", UNRECOGNIZED.as_ptr(), || {
        crate::error::c_strings(error).0.as_ptr().cast()
    })
}

/// `doca_error_get_descr(error)`: a sentence describing the code, in static storage.
#[no_mangle]
pub extern "C" fn doca_error_get_descr(error: u32) -> *const c_char {
    call_value("doca_error_get_descr", UNRECOGNIZED.as_ptr(), || {
        crate::error::c_strings(error).1.as_ptr().cast()
    })
}
