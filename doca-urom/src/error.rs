//! Errors: the shared [`DocaError`] code (from `doca-gpunetio`) and this crate's [`Error`],
//! which names the operation that failed.

use doca_sys::doca_error_t;

/// The DOCA error code, shared with `doca-gpunetio` (one type across the safe crates).
pub use doca_gpunetio::DocaError;

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
pub(crate) fn check(op: &'static str, code: doca_error_t) -> Result<()> {
    DocaError::result(code).map_err(|code| Error { op, code })
}

/// `Ok(())` for `DOCA_SUCCESS`, else the code: for plugin-ABI functions, which return the
/// code as a plain integer.
pub(crate) fn code_result(code: u32) -> std::result::Result<(), DocaError> {
    DocaError::result(doca_error_t(code))
}

/// Errors of the shared types (devices, progress engines) keep their operation name and
/// DOCA code; errors found before reaching DOCA get the code that describes them.
impl From<doca_gpunetio::Error> for Error {
    fn from(e: doca_gpunetio::Error) -> Self {
        use doca_gpunetio::Error as G;
        let (op, code) = match e {
            G::Doca { op, code } => (op, code),
            G::Timeout { op, .. } => (op, DocaError::TIME_OUT),
            G::InvalidArgument(_) => ("argument check", DocaError::INVALID_VALUE),
            G::NotFound(_) => ("lookup", DocaError::NOT_FOUND),
            G::Cuda(_) => ("CUDA", DocaError::DRIVER),
            _ => ("doca-gpunetio", DocaError::UNKNOWN),
        };
        Error { op, code }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_named_errors() {
        assert!(check("x", doca_error_t::DOCA_SUCCESS).is_ok());
        let e = check("doca_urom_worker_set_id", DocaError::BAD_STATE.raw()).unwrap_err();
        assert_eq!(e.code, DocaError::BAD_STATE);
        assert_eq!(e.op, "doca_urom_worker_set_id");
        assert!(
            e.to_string()
                .starts_with("doca_urom_worker_set_id failed: "),
            "{e}"
        );
        assert!(e.to_string().contains("DOCA_ERROR_BAD_STATE"), "{e}");
        assert_eq!(code_result(0), Ok(()));
        assert_eq!(code_result(6), Err(DocaError::INVALID_VALUE));
    }

    #[test]
    fn shared_errors_keep_op_and_code() {
        let g = doca_gpunetio::Error::Doca {
            op: "doca_pe_create",
            code: DocaError::NO_MEMORY,
        };
        let e = Error::from(g);
        assert_eq!((e.op, e.code), ("doca_pe_create", DocaError::NO_MEMORY));
        let e = Error::from(doca_gpunetio::Error::NotFound("nic".into()));
        assert_eq!(e.code, DocaError::NOT_FOUND);
        let e = Error::from(doca_gpunetio::Error::Timeout { op: "stop", ms: 5 });
        assert_eq!((e.op, e.code), ("stop", DocaError::TIME_OUT));
    }
}
