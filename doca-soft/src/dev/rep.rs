//! Representors (`doca_dev.h`): none exist in doca-soft. The list calls succeed with an
//! empty list, so programs that enumerate representors run; calls on a representor cannot
//! be reached with a valid one and return INVALID_VALUE for NULL, NOT_SUPPORTED otherwise.

use super::{dev_ref, free_c_list, into_c_list};
use crate::error::{to_c, DocaError, DocaResult};
use std::ffi::c_char;
use std::sync::Arc;

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

fn no_rep<T>(p: *const T) -> DocaResult<()> {
    if p.is_null() {
        Err(DocaError::INVALID_VALUE)
    } else {
        Err(DocaError::NOT_SUPPORTED)
    }
}

/// `doca_devinfo_rep_create_list(dev, filter, &list, &nb)`: an empty list.
///
/// # Safety
/// `dev` is null or live; the out-pointers are null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_rep_create_list(
    dev: *mut super::Dev,
    _filter: i32,
    dev_list_rep: *mut *mut *mut DevInfoRep,
    nb_devs_rep: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { dev_ref(dev) }.and_then(|_| {
        if dev_list_rep.is_null() || nb_devs_rep.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: checked non-null; caller guarantees writability.
        unsafe {
            *dev_list_rep = into_c_list::<DevInfoRep>(Vec::<Arc<DevInfoRep>>::new());
            *nb_devs_rep = 0;
        }
        Ok(())
    });
    to_c(r)
}

/// `doca_devinfo_rep_destroy_list(list)`.
///
/// # Safety
/// `dev_list_rep` is null or a list from `doca_devinfo_rep_create_list`.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_rep_destroy_list(dev_list_rep: *mut *mut DevInfoRep) -> u32 {
    if dev_list_rep.is_null() {
        return DocaError::INVALID_VALUE.0;
    }
    // SAFETY: caller contract.
    unsafe { free_c_list(dev_list_rep) };
    0
}

/// `doca_devinfo_rep_get_vuid(rep, buf, size)`.
#[no_mangle]
pub extern "C" fn doca_devinfo_rep_get_vuid(
    devinfo_rep: *const DevInfoRep,
    _rep_vuid: *mut c_char,
    _size: u32,
) -> u32 {
    to_c(no_rep(devinfo_rep))
}

/// `doca_devinfo_rep_get_pci_addr_str(rep, buf)`.
#[no_mangle]
pub extern "C" fn doca_devinfo_rep_get_pci_addr_str(
    devinfo_rep: *const DevInfoRep,
    _pci_addr_str: *mut c_char,
) -> u32 {
    to_c(no_rep(devinfo_rep))
}

/// `doca_devinfo_rep_is_equal_pci_addr(rep, str, &is_equal)`.
#[no_mangle]
pub extern "C" fn doca_devinfo_rep_is_equal_pci_addr(
    devinfo_rep: *const DevInfoRep,
    _pci_addr_str: *const c_char,
    _is_equal: *mut u8,
) -> u32 {
    to_c(no_rep(devinfo_rep))
}

/// `doca_devinfo_rep_get_pci_func_type(rep, &type)`.
#[no_mangle]
pub extern "C" fn doca_devinfo_rep_get_pci_func_type(
    devinfo_rep: *const DevInfoRep,
    _pci_func_type: *mut u32,
) -> u32 {
    to_c(no_rep(devinfo_rep))
}

/// `doca_dev_rep_as_devinfo(dev_rep)`: always NULL (no representor can be opened).
#[no_mangle]
pub extern "C" fn doca_dev_rep_as_devinfo(_dev_rep: *mut DevRep) -> *mut DevInfoRep {
    std::ptr::null_mut()
}

/// `doca_dev_rep_open(rep, &dev_rep)`.
#[no_mangle]
pub extern "C" fn doca_dev_rep_open(devinfo: *mut DevInfoRep, _dev_rep: *mut *mut DevRep) -> u32 {
    to_c(no_rep(devinfo))
}

/// `doca_dev_rep_close(dev_rep)`.
#[no_mangle]
pub extern "C" fn doca_dev_rep_close(dev: *mut DevRep) -> u32 {
    to_c(no_rep(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

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
