//! Errors: [`DocaError`], the raw DOCA code as a transparent newtype with named constants,
//! and [`Error`], the one error type of every safe crate, which says which operation failed.
//!
//! Errors that happen in `Drop` cannot be returned: [`record_drop_error`] keeps them (up to
//! 1024) until [`take_drop_errors`] hands them out, whichever crate's handle recorded them.

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

/// The error of every safe DOCA crate (`doca-gpunetio`, `doca-urom` and this one): the
/// operation that failed with its DOCA code, or a problem found before calling DOCA, with
/// its message. Crates re-export this type rather than wrap it, so nothing is lost passing
/// an error from one crate's call to another's `?`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A DOCA call returned an error, or an operation built on DOCA calls ended with the
    /// code that describes its failure (a worker that did not start: `INITIALIZATION`).
    #[error("{op} failed: {code}")]
    Doca {
        /// The DOCA function (or the operation) that failed.
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
    /// An [`Error::Doca`]: `op` failed with `code`.
    pub fn doca(op: &'static str, code: DocaError) -> Error {
        Error::Doca { op, code }
    }

    /// The DOCA code, when the error came from DOCA.
    pub fn doca_code(&self) -> Option<DocaError> {
        match self {
            Error::Doca { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The operation that failed, for the errors that name one ([`Error::Doca`],
    /// [`Error::Timeout`]); the others carry it in their message.
    pub fn op(&self) -> Option<&'static str> {
        match self {
            Error::Doca { op, .. } | Error::Timeout { op, .. } => Some(op),
            _ => None,
        }
    }
}

/// A failed CUDA driver call ("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY ..."), or no
/// driver, as an [`Error::Cuda`].
impl From<doca_cuda_driver::result::Error> for Error {
    fn from(e: doca_cuda_driver::result::Error) -> Error {
        Error::Cuda(e.to_string())
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Turns a DOCA return code into a `Result` naming the operation (`op`, usually the C
/// function): what every safe wrapper does with a `doca_error_t`.
pub fn check(op: &'static str, code: doca_error_t) -> Result<()> {
    DocaError::result(code).map_err(|code| Error::Doca { op, code })
}

static DROP_ERRORS: Mutex<Vec<Error>> = Mutex::new(Vec::new());

/// Records an error that happened in `Drop`, where it cannot be returned (for the safe
/// crates' handles, and for your own wrappers of raw handles).
pub fn record_drop_error(e: Error) {
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
        assert_eq!(e.op(), Some("doca_ctx_start"));
    }

    #[test]
    fn messages_and_operations_survive_as_the_one_type() {
        let e = Error::NotFound("no DOCA device named \"mlx5_0\"".into());
        assert_eq!(e.to_string(), "not found: no DOCA device named \"mlx5_0\"");
        assert_eq!((e.op(), e.doca_code()), (None, None));
        let t = Error::Timeout {
            op: "doca_ctx_stop",
            ms: 5,
        };
        assert_eq!(t.op(), Some("doca_ctx_stop"));
        assert_eq!(t.to_string(), "doca_ctx_stop timed out after 5 ms");
        let d = Error::doca("worker start", DocaError::INITIALIZATION);
        assert_eq!(d.doca_code(), Some(DocaError::INITIALIZATION));
        // The code stays reachable as the error's source.
        let src = std::error::Error::source(&d).expect("the code is the source");
        assert_eq!(src.to_string(), DocaError::INITIALIZATION.to_string());
    }

    #[test]
    fn drop_errors_are_kept_until_taken() {
        record_drop_error(Error::doca("doca_pe_destroy", DocaError::IN_USE));
        let taken = take_drop_errors();
        assert!(
            taken.iter().any(|e| e.op() == Some("doca_pe_destroy")),
            "{taken:?}"
        );
        assert!(!take_drop_errors()
            .iter()
            .any(|e| e.op() == Some("doca_pe_destroy")));
    }
}
