//! `doca_dev.h`: the device list, device information, opening and closing devices, and
//! representors (none exist here: their list is empty).
//!
//! A device list is a NULL-terminated array of `Arc<DevInfo>` raw pointers; an opened
//! device holds one more reference to its info, so `doca_dev_as_devinfo` stays valid while
//! the device is open, whatever happened to the list.

use std::ffi::c_char;
use std::sync::Arc;

use super::toolkit::{call, call_ptr, copy_bytes, copy_cstr, handle, new_handle, non_null};
use super::toolkit::{str_arg, take_handle, write_out};
use crate::dev::{list_devices, IPV4_ADDR_SIZE, PCI_ADDR_SIZE, PCI_FUNC_TYPE_PF};
use crate::error::DocaError;

pub use crate::dev::rep::{DevInfoRep, DevRep, REP_VUID_SIZE};
pub use crate::dev::{Dev, DevInfo, IBDEV_NAME_SIZE, IFACE_NAME_SIZE, MAC_ADDR_SIZE};

/// Turns infos into a NULL-terminated C array of owned pointers.
fn into_c_list<T>(items: Vec<Arc<T>>) -> *mut *mut T {
    let mut v: Vec<*mut T> = items
        .into_iter()
        .map(|a| Arc::into_raw(a) as *mut T)
        .collect();
    v.push(std::ptr::null_mut());
    Box::into_raw(v.into_boxed_slice()) as *mut *mut T
}

/// Frees an array made by [`into_c_list`].
///
/// # Safety
/// `list` must come from `into_c_list::<T>` and not have been freed.
unsafe fn free_c_list<T>(list: *mut *mut T) {
    let mut n = 0;
    // SAFETY: the array is NULL-terminated (into_c_list).
    while !unsafe { *list.add(n) }.is_null() {
        // SAFETY: each element is an Arc::into_raw pointer, released once here.
        drop(unsafe { Arc::from_raw(*list.add(n) as *const T) });
        n += 1;
    }
    // SAFETY: the allocation is a boxed slice of n + 1 elements (into_c_list).
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(list, n + 1)) });
}

/// `doca_devinfo_create_list(&list, &nb_devs)`: every Linux interface and extra port.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_create_list(
    dev_list: *mut *mut *mut DevInfo,
    nb_devs: *mut u32,
) -> u32 {
    call("doca_devinfo_create_list", || {
        non_null(dev_list)?;
        non_null(nb_devs)?;
        let devs = list_devices();
        let n = devs.len() as u32;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(dev_list, into_c_list(devs))?;
            write_out(nb_devs, n)
        }
    })
}

/// `doca_devinfo_destroy_list(list)`.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_destroy_list(dev_list: *mut *mut DevInfo) -> u32 {
    call("doca_devinfo_destroy_list", || {
        non_null(dev_list)?;
        // SAFETY: C API contract: a list from doca_devinfo_create_list, not destroyed.
        unsafe { free_c_list(dev_list) };
        Ok(())
    })
}

/// `doca_devinfo_get_pci_addr_str(devinfo, buf)`: writes `DDDD:BB:DD.F` (13 bytes with
/// the NUL).
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_pci_addr_str(
    devinfo: *const DevInfo,
    pci_addr_str: *mut c_char,
) -> u32 {
    call("doca_devinfo_get_pci_addr_str", || {
        // SAFETY: C API contract (null or live; a buffer of PCI_ADDR_SIZE bytes).
        let d = unsafe { handle(devinfo) }?;
        // SAFETY: as above.
        unsafe { copy_cstr(pci_addr_str, PCI_ADDR_SIZE, &d.pci_addr().long()) }
    })
}

/// `doca_devinfo_is_equal_pci_addr(devinfo, "BB:DD.F" | "DDDD:BB:DD.F", &is_equal)`;
/// doca-soft extension: the iface or ibdev name matches too.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_is_equal_pci_addr(
    devinfo: *const DevInfo,
    pci_addr_str: *const c_char,
    is_equal: *mut u8,
) -> u32 {
    call("doca_devinfo_is_equal_pci_addr", || {
        // SAFETY: C API contract.
        let d = unsafe { handle(devinfo) }?;
        // SAFETY: C API contract (null or NUL-terminated).
        let s = unsafe { str_arg(pci_addr_str) }?.trim();
        if s.is_empty() {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: C API contract (null or writable).
        unsafe { write_out(is_equal, u8::from(d.matches(s))) }
    })
}

/// `doca_devinfo_get_ibdev_name(devinfo, buf, size)`.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_ibdev_name(
    devinfo: *const DevInfo,
    ibdev_name: *mut c_char,
    size: u32,
) -> u32 {
    call("doca_devinfo_get_ibdev_name", || {
        // SAFETY: C API contract (null or live; null or `size` writable bytes).
        unsafe { copy_cstr(ibdev_name, size as usize, &handle(devinfo)?.ibdev) }
    })
}

/// `doca_devinfo_get_iface_name(devinfo, buf, size)`.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_iface_name(
    devinfo: *const DevInfo,
    iface_name: *mut c_char,
    size: u32,
) -> u32 {
    call("doca_devinfo_get_iface_name", || {
        // SAFETY: C API contract.
        unsafe { copy_cstr(iface_name, size as usize, &handle(devinfo)?.iface) }
    })
}

/// `doca_devinfo_get_mac_addr(devinfo, buf, size)` (size >= 6).
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_mac_addr(
    devinfo: *const DevInfo,
    mac_addr: *mut u8,
    size: u32,
) -> u32 {
    call("doca_devinfo_get_mac_addr", || {
        // SAFETY: C API contract.
        unsafe { copy_bytes(mac_addr, size as usize, &handle(devinfo)?.mac) }
    })
}

/// `doca_devinfo_get_ipv4_addr(devinfo, buf, size)` (size >= 4); NOT_FOUND when the port
/// has no IPv4 address.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_ipv4_addr(
    devinfo: *const DevInfo,
    ipv4_addr: *mut u8,
    size: u32,
) -> u32 {
    call("doca_devinfo_get_ipv4_addr", || {
        // SAFETY: C API contract.
        let d = unsafe { handle(devinfo) }?;
        if ipv4_addr.is_null() || (size as usize) < IPV4_ADDR_SIZE {
            return Err(DocaError::INVALID_VALUE);
        }
        let ip = d.ipv4.ok_or(DocaError::NOT_FOUND)?;
        // SAFETY: C API contract.
        unsafe { copy_bytes(ipv4_addr, size as usize, &ip) }
    })
}

/// `doca_devinfo_get_pci_func_type(devinfo, &type)`: always PF.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_pci_func_type(
    devinfo: *const DevInfo,
    pci_func_type: *mut u32,
) -> u32 {
    call("doca_devinfo_get_pci_func_type", || {
        // SAFETY: C API contract.
        unsafe { handle(devinfo) }?;
        // SAFETY: C API contract.
        unsafe { write_out(pci_func_type, PCI_FUNC_TYPE_PF) }
    })
}

/// `doca_devinfo_get_sf_index(devinfo, &index)`: NOT_SUPPORTED (no sub-functions here).
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_sf_index(
    devinfo: *const DevInfo,
    sf_index: *mut u32,
) -> u32 {
    call("doca_devinfo_get_sf_index", || {
        // SAFETY: C API contract.
        unsafe { handle(devinfo) }?;
        non_null(sf_index)?;
        Err(DocaError::NOT_SUPPORTED)
    })
}

/// `doca_dev_open(devinfo, &dev)`.
#[no_mangle]
pub unsafe extern "C" fn doca_dev_open(devinfo: *mut DevInfo, dev: *mut *mut Dev) -> u32 {
    call("doca_dev_open", || {
        non_null(devinfo)?;
        non_null(dev)?;
        // SAFETY: every devinfo handed to C is an Arc pointer (a list entry, or an open
        // device's info); a new strong reference keeps it alive for the device.
        let info = unsafe {
            Arc::increment_strong_count(devinfo as *const DevInfo);
            Arc::from_raw(devinfo as *const DevInfo)
        };
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(dev, Dev::new(info)) }
    })
}

/// `doca_dev_close(dev)`: IN_USE while an mmap or queue still uses the device.
#[no_mangle]
pub unsafe extern "C" fn doca_dev_close(dev: *mut Dev) -> u32 {
    call("doca_dev_close", || {
        // SAFETY: C API contract (null or a device from doca_dev_open, not closed).
        unsafe { handle(dev) }?.ensure_unused()?;
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(dev) }?);
        Ok(())
    })
}

/// `doca_dev_as_devinfo(dev)`: the device's info, valid while the device is open; NULL for
/// a NULL device.
#[no_mangle]
pub unsafe extern "C" fn doca_dev_as_devinfo(dev: *const Dev) -> *mut DevInfo {
    call_ptr("doca_dev_as_devinfo", || {
        // SAFETY: C API contract.
        Ok(Arc::as_ptr(unsafe { handle(dev) }?.info()) as *mut DevInfo)
    })
}

/// `doca_devinfo_rep_create_list(dev, filter, &list, &nb)`: an empty list.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_rep_create_list(
    dev: *mut Dev,
    _filter: i32,
    dev_list_rep: *mut *mut *mut DevInfoRep,
    nb_devs_rep: *mut u32,
) -> u32 {
    call("doca_devinfo_rep_create_list", || {
        // SAFETY: C API contract.
        unsafe { handle(dev) }?;
        non_null(dev_list_rep)?;
        non_null(nb_devs_rep)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(dev_list_rep, into_c_list(Vec::<Arc<DevInfoRep>>::new()))?;
            write_out(nb_devs_rep, 0)
        }
    })
}

/// `doca_devinfo_rep_destroy_list(list)`.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_rep_destroy_list(dev_list_rep: *mut *mut DevInfoRep) -> u32 {
    call("doca_devinfo_rep_destroy_list", || {
        non_null(dev_list_rep)?;
        // SAFETY: C API contract: a list from doca_devinfo_rep_create_list.
        unsafe { free_c_list(dev_list_rep) };
        Ok(())
    })
}

/// `doca_devinfo_rep_get_vuid(rep, buf, size)`: no representor exists.
#[no_mangle]
pub extern "C" fn doca_devinfo_rep_get_vuid(
    devinfo_rep: *const DevInfoRep,
    _rep_vuid: *mut c_char,
    _size: u32,
) -> u32 {
    call("doca_devinfo_rep_get_vuid", || {
        DevInfoRep::unsupported(devinfo_rep)
    })
}

/// `doca_devinfo_rep_get_pci_addr_str(rep, buf)`: no representor exists.
#[no_mangle]
pub extern "C" fn doca_devinfo_rep_get_pci_addr_str(
    devinfo_rep: *const DevInfoRep,
    _pci_addr_str: *mut c_char,
) -> u32 {
    call("doca_devinfo_rep_get_pci_addr_str", || {
        DevInfoRep::unsupported(devinfo_rep)
    })
}

/// `doca_devinfo_rep_is_equal_pci_addr(rep, str, &is_equal)`: no representor exists.
#[no_mangle]
pub extern "C" fn doca_devinfo_rep_is_equal_pci_addr(
    devinfo_rep: *const DevInfoRep,
    _pci_addr_str: *const c_char,
    _is_equal: *mut u8,
) -> u32 {
    call("doca_devinfo_rep_is_equal_pci_addr", || {
        DevInfoRep::unsupported(devinfo_rep)
    })
}

/// `doca_devinfo_rep_get_pci_func_type(rep, &type)`: no representor exists.
#[no_mangle]
pub extern "C" fn doca_devinfo_rep_get_pci_func_type(
    devinfo_rep: *const DevInfoRep,
    _pci_func_type: *mut u32,
) -> u32 {
    call("doca_devinfo_rep_get_pci_func_type", || {
        DevInfoRep::unsupported(devinfo_rep)
    })
}

/// `doca_dev_rep_as_devinfo(dev_rep)`: always NULL (no representor can be opened).
#[no_mangle]
pub extern "C" fn doca_dev_rep_as_devinfo(_dev_rep: *mut DevRep) -> *mut DevInfoRep {
    call_ptr("doca_dev_rep_as_devinfo", || Ok(std::ptr::null_mut()))
}

/// `doca_dev_rep_open(rep, &dev_rep)`: no representor exists.
#[no_mangle]
pub extern "C" fn doca_dev_rep_open(devinfo: *mut DevInfoRep, _dev_rep: *mut *mut DevRep) -> u32 {
    call("doca_dev_rep_open", || DevInfoRep::unsupported(devinfo))
}

/// `doca_dev_rep_close(dev_rep)`: no representor exists.
#[no_mangle]
pub extern "C" fn doca_dev_rep_close(dev: *mut DevRep) -> u32 {
    call("doca_dev_rep_close", || DevRep::unsupported(dev))
}

/// The device list (doca-soft-nic's `dev`) and this C API together.
#[cfg(test)]
#[path = "doca_dev_tests.rs"]
mod tests;

/// Representor lists (doca-soft-nic's `dev::rep`) through this C API.
#[cfg(test)]
mod rep_tests {
    use super::*;

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
