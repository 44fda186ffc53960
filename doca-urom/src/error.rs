//! Errors: the DOCA code and the operation that failed.

use crate::ffi;
use std::ffi::CStr;

/// A DOCA error code (`doca_error_t`, never 0).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DocaError(pub u32);

impl DocaError {
    /// `DOCA_ERROR_NOT_PERMITTED`.
    pub const NOT_PERMITTED: DocaError = DocaError(2);
    /// `DOCA_ERROR_IN_USE`.
    pub const IN_USE: DocaError = DocaError(3);
    /// `DOCA_ERROR_NOT_SUPPORTED`.
    pub const NOT_SUPPORTED: DocaError = DocaError(4);
    /// `DOCA_ERROR_AGAIN`.
    pub const AGAIN: DocaError = DocaError(5);
    /// `DOCA_ERROR_INVALID_VALUE`.
    pub const INVALID_VALUE: DocaError = DocaError(6);
    /// `DOCA_ERROR_INITIALIZATION`.
    pub const INITIALIZATION: DocaError = DocaError(8);
    /// `DOCA_ERROR_TIME_OUT`.
    pub const TIME_OUT: DocaError = DocaError(9);
    /// `DOCA_ERROR_CONNECTION_RESET`.
    pub const CONNECTION_RESET: DocaError = DocaError(11);
    /// `DOCA_ERROR_NOT_CONNECTED`.
    pub const NOT_CONNECTED: DocaError = DocaError(14);
    /// `DOCA_ERROR_NOT_FOUND`.
    pub const NOT_FOUND: DocaError = DocaError(16);
    /// `DOCA_ERROR_BAD_STATE`.
    pub const BAD_STATE: DocaError = DocaError(18);
    /// `DOCA_ERROR_UNSUPPORTED_VERSION`.
    pub const UNSUPPORTED_VERSION: DocaError = DocaError(19);
    /// `DOCA_ERROR_UNEXPECTED`.
    pub const UNEXPECTED: DocaError = DocaError(22);
    /// `DOCA_ERROR_EMPTY`.
    pub const EMPTY: DocaError = DocaError(25);
    /// `DOCA_ERROR_IN_PROGRESS`.
    pub const IN_PROGRESS: DocaError = DocaError(26);

    /// `Ok(())` for 0, else the error.
    pub fn check(code: u32) -> std::result::Result<(), DocaError> {
        if code == 0 {
            Ok(())
        } else {
            Err(DocaError(code))
        }
    }

    /// `DOCA_ERROR_...` name.
    pub fn name(&self) -> String {
        // SAFETY: returns a static NUL-terminated string for any code.
        unsafe { CStr::from_ptr(ffi::doca_error_get_name(self.0)) }
            .to_string_lossy()
            .into_owned()
    }
}

impl std::fmt::Debug for DocaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name())
    }
}

impl std::fmt::Display for DocaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: returns a static NUL-terminated string for any code.
        let d = unsafe { CStr::from_ptr(ffi::doca_error_get_descr(self.0)) };
        write!(f, "{} ({})", d.to_string_lossy(), self.name())
    }
}

impl std::error::Error for DocaError {}

/// An error of this crate: which operation failed and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{op} failed: {code}")]
pub struct Error {
    /// The failed operation (usually the C function).
    pub op: &'static str,
    /// The DOCA code.
    pub code: DocaError,
}

/// Result of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Maps a C return code to a Result naming `op`.
pub(crate) fn check(op: &'static str, code: u32) -> Result<()> {
    DocaError::check(code).map_err(|code| Error { op, code })
}
