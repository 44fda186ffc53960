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

/// The error table of doca-soft-base, as the C API reports it.
#[cfg(test)]
mod table_tests {
    use super::*;
    use doca_soft_base::error::*;
    use std::ffi::CStr;

    #[test]
    fn names_and_descriptions_cover_every_code() {
        for code in 0..=31u32 {
            assert!(name_of(code).is_some(), "code {code} has no name");
            // SAFETY: the returned pointers are to static NUL-terminated strings.
            let name = unsafe { CStr::from_ptr(doca_error_get_name(code)) };
            assert_eq!(name.to_str().unwrap(), name_of(code).unwrap());
        }
        assert_eq!(name_of(18), Some("DOCA_ERROR_BAD_STATE"));
        assert_eq!(name_of(32), None);
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(doca_error_get_name(999)) };
        assert_eq!(unknown.to_str().unwrap(), "DOCA_ERROR_UNRECOGNIZED");
    }

    #[test]
    fn display_names_the_code() {
        assert_eq!(
            DocaError::IN_PROGRESS.to_string(),
            "DOCA_ERROR_IN_PROGRESS: Operation is in progress"
        );
    }
}
