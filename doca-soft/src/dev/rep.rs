//! Representors (`doca_dev.h`): none exist in doca-soft. The list calls succeed with an
//! empty list, so programs that enumerate representors run; calls on a representor cannot
//! be reached with a valid one and return INVALID_VALUE for NULL, NOT_SUPPORTED otherwise.

use crate::error::{DocaError, DocaResult};

/// `DOCA_DEVINFO_REP_VUID_SIZE`.
pub const REP_VUID_SIZE: usize = 128;

/// The C `struct doca_devinfo_rep` (never instantiated).
pub struct DevInfoRep {
    _private: (),
}

/// The C `struct doca_dev_rep` (never instantiated).
pub struct DevRep {
    _private: (),
}

impl DevInfoRep {
    /// What every call on a representor returns: INVALID_VALUE for NULL, else
    /// NOT_SUPPORTED (no valid one can exist).
    pub(crate) fn unsupported(p: *const Self) -> DocaResult<()> {
        if p.is_null() {
            Err(DocaError::INVALID_VALUE)
        } else {
            Err(DocaError::NOT_SUPPORTED)
        }
    }
}

impl DevRep {
    /// As [`DevInfoRep::unsupported`].
    pub(crate) fn unsupported(p: *const Self) -> DocaResult<()> {
        if p.is_null() {
            Err(DocaError::INVALID_VALUE)
        } else {
            Err(DocaError::NOT_SUPPORTED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::doca_dev::*;
    use std::sync::Arc;

    #[test]
    fn rep_list_is_empty_and_destroyable() {
        let info = Arc::new(
            crate::dev::build_list(
                &[],
                &[crate::dev::config::ExtraPort {
                    name: "w0".into(),
                    spec: crate::dev::PortSpec::Wire {
                        name: "w".into(),
                        side: 0,
                    },
                }],
                &[],
            )
            .remove(0),
        );
        let dev = Box::into_raw(Box::new(crate::dev::Dev::new(info)));
        let mut list: *mut *mut DevInfoRep = std::ptr::null_mut();
        let mut n = 99u32;
        // SAFETY: valid device and out-pointers; the list is destroyed once.
        unsafe {
            assert_eq!(doca_devinfo_rep_create_list(dev, 0, &mut list, &mut n), 0);
            assert_eq!(n, 0);
            assert!((*list).is_null());
            assert_eq!(doca_devinfo_rep_destroy_list(list), 0);
            assert_eq!(
                doca_devinfo_rep_create_list(std::ptr::null_mut(), 0, &mut list, &mut n),
                DocaError::INVALID_VALUE.0
            );
            drop(Box::from_raw(dev));
        }
        assert_eq!(
            doca_devinfo_rep_get_vuid(std::ptr::null(), std::ptr::null_mut(), 0),
            DocaError::INVALID_VALUE.0
        );
        let mut t = 0u32;
        assert_eq!(
            doca_devinfo_rep_get_pci_func_type(std::ptr::null(), &mut t),
            DocaError::INVALID_VALUE.0
        );
        assert!(doca_dev_rep_as_devinfo(std::ptr::null_mut()).is_null());
    }
}
