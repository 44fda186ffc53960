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
    pub fn unsupported(p: *const Self) -> DocaResult<()> {
        if p.is_null() {
            Err(DocaError::INVALID_VALUE)
        } else {
            Err(DocaError::NOT_SUPPORTED)
        }
    }
}

impl DevRep {
    /// As [`DevInfoRep::unsupported`].
    pub fn unsupported(p: *const Self) -> DocaResult<()> {
        if p.is_null() {
            Err(DocaError::INVALID_VALUE)
        } else {
            Err(DocaError::NOT_SUPPORTED)
        }
    }
}
