//! `Device`: an opened `doca_dev`, found by PCI address, interface or ibdev name.

use crate::error::{check, DocaError, Error, Result};
use crate::ffi;
use std::ffi::{c_char, CStr};
use std::sync::Arc;

/// An open DOCA device.
pub struct Device {
    raw: *mut ffi::doca_dev,
}

// SAFETY: doca-soft devices are immutable after open and internally synchronised.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

fn text(f: impl FnOnce(*mut c_char) -> u32) -> Option<String> {
    let mut buf = [0 as c_char; 256];
    if f(buf.as_mut_ptr()) != 0 {
        return None;
    }
    // SAFETY: the call wrote a NUL-terminated string into buf.
    Some(
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned(),
    )
}

impl Device {
    /// Opens the device whose PCI address (`BB:DD.F`), interface or ibdev name is `name`.
    pub fn open(name: &str) -> Result<Arc<Device>> {
        let mut list = std::ptr::null_mut();
        let mut n = 0u32;
        // SAFETY: out pointers.
        check("doca_devinfo_create_list", unsafe {
            ffi::doca_devinfo_create_list(&mut list, &mut n)
        })?;
        let mut found = Err(Error {
            op: "Device::open",
            code: DocaError::NOT_FOUND,
        });
        for i in 0..n as usize {
            // SAFETY: list has n entries.
            let info = unsafe { *list.add(i) };
            // SAFETY: info is a live devinfo; buffers are large enough.
            let names = [
                text(|b| unsafe { ffi::doca_devinfo_get_pci_addr_str(info, b) }),
                text(|b| unsafe { ffi::doca_devinfo_get_iface_name(info, b, 256) }),
                text(|b| unsafe { ffi::doca_devinfo_get_ibdev_name(info, b, 256) }),
            ];
            let pci_eq = |p: &str| p == name || p.ends_with(&format!(":{name}"));
            let hit = names[0].as_deref().is_some_and(pci_eq)
                || names[1..].iter().any(|x| x.as_deref() == Some(name));
            if hit {
                let mut raw = std::ptr::null_mut();
                // SAFETY: live devinfo; out pointer.
                found = check("doca_dev_open", unsafe {
                    ffi::doca_dev_open(info, &mut raw)
                })
                .map(|_| Arc::new(Device { raw }));
                break;
            }
        }
        // SAFETY: list came from create_list.
        unsafe { ffi::doca_devinfo_destroy_list(list) };
        found
    }

    /// PCI address (`BB:DD.F`, possibly with a domain) of the device.
    pub fn pci(&self) -> Option<String> {
        // SAFETY: live device; the devinfo lives as long as it.
        let info = unsafe { ffi::doca_dev_as_devinfo(self.raw) };
        // SAFETY: live devinfo; buffer large enough.
        text(|b| unsafe { ffi::doca_devinfo_get_pci_addr_str(info, b) })
    }

    /// The raw handle.
    pub fn as_raw(&self) -> *mut ffi::doca_dev {
        self.raw
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: opened by doca_dev_open; users hold Arcs.
        unsafe { ffi::doca_dev_close(self.raw) };
    }
}
