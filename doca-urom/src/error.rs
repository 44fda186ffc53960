//! Errors: the one [`Error`] type of the safe DOCA crates and the [`DocaError`] code, both
//! `doca-common`'s (shared with `doca-gpunetio`, so nothing is lost between the crates).

use doca_sys::doca_error_t;

pub use doca_common::error::{check, DocaError, Error, Result};

/// `Ok(())` for `DOCA_SUCCESS`, else the code: for plugin-ABI functions, which return the
/// code as a plain integer.
pub(crate) fn code_result(code: u32) -> std::result::Result<(), DocaError> {
    DocaError::result(doca_error_t(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_named_errors() {
        assert!(check("x", doca_error_t::DOCA_SUCCESS).is_ok());
        let e = check("doca_urom_worker_set_id", DocaError::BAD_STATE.raw()).unwrap_err();
        assert_eq!(e.doca_code(), Some(DocaError::BAD_STATE));
        assert_eq!(e.op(), Some("doca_urom_worker_set_id"));
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
    fn errors_of_the_shared_types_arrive_whole() {
        // A device that does not exist: the message names it, as doca-common wrote it.
        fn open(name: &str) -> Result<crate::Device> {
            let dev = crate::Device::open(name)?;
            Ok(dev)
        }
        let e = open("mlx5_no_such_device").unwrap_err();
        assert!(
            matches!(&e, Error::NotFound(m) if m.contains("mlx5_no_such_device")),
            "{e}"
        );
    }
}
