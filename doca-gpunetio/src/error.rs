//! Errors: [`DocaError`], the raw DOCA code as a transparent newtype with named constants,
//! and [`Error`], which says which operation failed.

use doca_sys::doca_error_t;
use std::ffi::CStr;
use std::sync::Mutex;

/// A DOCA error code (`doca_error_t`), never `DOCA_SUCCESS`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DocaError(doca_error_t);

macro_rules! consts {
    ($($name:ident = $c:ident),* $(,)?) => {
        impl DocaError {
            $(#[doc = concat!("`", stringify!($c), "`")]
            pub const $name: DocaError = DocaError(doca_error_t::$c);)*
        }
    };
}

consts! {
    UNKNOWN = DOCA_ERROR_UNKNOWN, NOT_PERMITTED = DOCA_ERROR_NOT_PERMITTED,
    IN_USE = DOCA_ERROR_IN_USE, NOT_SUPPORTED = DOCA_ERROR_NOT_SUPPORTED,
    AGAIN = DOCA_ERROR_AGAIN, INVALID_VALUE = DOCA_ERROR_INVALID_VALUE,
    NO_MEMORY = DOCA_ERROR_NO_MEMORY, INITIALIZATION = DOCA_ERROR_INITIALIZATION,
    TIME_OUT = DOCA_ERROR_TIME_OUT, SHUTDOWN = DOCA_ERROR_SHUTDOWN,
    CONNECTION_RESET = DOCA_ERROR_CONNECTION_RESET,
    CONNECTION_ABORTED = DOCA_ERROR_CONNECTION_ABORTED,
    CONNECTION_INPROGRESS = DOCA_ERROR_CONNECTION_INPROGRESS,
    NOT_CONNECTED = DOCA_ERROR_NOT_CONNECTED, NO_LOCK = DOCA_ERROR_NO_LOCK,
    NOT_FOUND = DOCA_ERROR_NOT_FOUND, IO_FAILED = DOCA_ERROR_IO_FAILED,
    BAD_STATE = DOCA_ERROR_BAD_STATE, UNSUPPORTED_VERSION = DOCA_ERROR_UNSUPPORTED_VERSION,
    OPERATING_SYSTEM = DOCA_ERROR_OPERATING_SYSTEM, DRIVER = DOCA_ERROR_DRIVER,
    UNEXPECTED = DOCA_ERROR_UNEXPECTED, ALREADY_EXIST = DOCA_ERROR_ALREADY_EXIST,
    FULL = DOCA_ERROR_FULL, EMPTY = DOCA_ERROR_EMPTY, IN_PROGRESS = DOCA_ERROR_IN_PROGRESS,
    TOO_BIG = DOCA_ERROR_TOO_BIG, AUTHENTICATION = DOCA_ERROR_AUTHENTICATION,
    BAD_CONFIG = DOCA_ERROR_BAD_CONFIG, SKIPPED = DOCA_ERROR_SKIPPED,
}

impl DocaError {
    /// `Ok(())` for `DOCA_SUCCESS`, else the error.
    pub fn result(code: doca_error_t) -> Result<(), DocaError> {
        if code == doca_error_t::DOCA_SUCCESS {
            Ok(())
        } else {
            Err(DocaError(code))
        }
    }

    /// The raw code.
    pub fn raw(self) -> doca_error_t {
        self.0
    }

    /// The raw code as an integer.
    pub fn code(self) -> u32 {
        self.0 .0
    }

    /// Short name, e.g. `DOCA_ERROR_BAD_STATE` (from `doca_error_get_name`).
    pub fn name(self) -> &'static str {
        // SAFETY: the library returns a static NUL-terminated string for any value.
        unsafe { static_str(doca_sys::doca_error_get_name(self.0)) }
    }

    /// Human description (from `doca_error_get_descr`).
    pub fn description(self) -> &'static str {
        // SAFETY: as in `name`.
        unsafe { static_str(doca_sys::doca_error_get_descr(self.0)) }
    }
}

/// # Safety
/// `p` is null or a static NUL-terminated string.
unsafe fn static_str(p: *const std::ffi::c_char) -> &'static str {
    if p.is_null() {
        return "(unnamed)";
    }
    // SAFETY: per this function's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .unwrap_or("(not UTF-8)")
}

impl std::fmt::Debug for DocaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for DocaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.description(), self.name())
    }
}

impl std::error::Error for DocaError {}

/// Errors of this crate: the DOCA call that failed and its code, or a problem found
/// before calling DOCA.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A DOCA call returned an error.
    #[error("{op} failed: {code}")]
    Doca {
        /// The DOCA function that failed.
        op: &'static str,
        /// Its error code.
        #[source]
        code: DocaError,
    },
    /// An argument was rejected before reaching DOCA.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A device, GPU or plugin was not found.
    #[error("not found: {0}")]
    NotFound(String),
    /// A CUDA driver call failed, or there is no CUDA driver.
    #[error("CUDA: {0}")]
    Cuda(String),
    /// Waiting for a context to change state took too long.
    #[error("{op} timed out after {ms} ms")]
    Timeout {
        /// What was being waited for.
        op: &'static str,
        /// How long.
        ms: u64,
    },
}

impl Error {
    /// The DOCA code, when the error came from DOCA.
    pub fn doca_code(&self) -> Option<DocaError> {
        match self {
            Error::Doca { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Turns a DOCA return code into a `Result` naming the operation.
pub(crate) fn check(op: &'static str, code: doca_error_t) -> Result<()> {
    DocaError::result(code).map_err(|code| Error::Doca { op, code })
}

static DROP_ERRORS: Mutex<Vec<Error>> = Mutex::new(Vec::new());

/// Records an error that happened in `Drop`, where it cannot be returned.
pub(crate) fn record_drop_error(e: Error) {
    let mut v = DROP_ERRORS.lock().unwrap_or_else(|p| p.into_inner());
    if v.len() < 1024 {
        v.push(e);
    }
}

/// Takes the errors recorded while dropping handles (teardown never panics; call this to
/// learn whether it went cleanly). Use the explicit `stop()`/`close()` methods to get
/// errors directly instead.
pub fn take_drop_errors() -> Vec<Error> {
    std::mem::take(&mut *DROP_ERRORS.lock().unwrap_or_else(|p| p.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_library() {
        assert_eq!(DocaError::BAD_STATE.name(), "DOCA_ERROR_BAD_STATE");
        assert_eq!(DocaError::BAD_STATE.code(), 18);
        assert!(DocaError::result(doca_error_t::DOCA_SUCCESS).is_ok());
        let e = check("doca_ctx_start", DocaError::IN_PROGRESS.raw()).unwrap_err();
        assert_eq!(e.doca_code(), Some(DocaError::IN_PROGRESS));
        assert!(e.to_string().starts_with("doca_ctx_start failed: "), "{e}");
        assert!(e.to_string().contains("DOCA_ERROR_IN_PROGRESS"), "{e}");
    }
}
