//! Devices (`doca_dev.h`): the device list, device info getters, open/close.
//!
//! Every Linux network interface is a device, and so is every extra port named in
//! `DOCA_SOFT_PORTS` (see [`config`]). Each gets a PCI address: the one `DOCA_SOFT_PCI_MAP`
//! gives it, else a synthetic one derived from its name ([`pci::PciAddr::synthetic`]), so
//! the same name has the same address on every machine and run (`lo` is `a2:07.0`). The
//! ibdev name is `soft_<iface>`.
//!
//! doca-soft extension: `doca_devinfo_is_equal_pci_addr` also matches the iface or ibdev
//! name, so `-n lo` works with programs that look devices up by PCI address.
//!
//! Representors do not exist here: `doca_devinfo_rep_create_list` returns an empty list.

pub mod config;
pub mod pci;
pub mod rep;
pub mod sys;

use crate::capi::toolkit::{copy_bytes, copy_cstr, str_arg, write_out};
use crate::error::{to_c, DocaError, DocaResult};
use pci::PciAddr;
use std::ffi::c_char;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use sys::LinuxIface;

/// `DOCA_DEVINFO_PCI_ADDR_SIZE`.
pub const PCI_ADDR_SIZE: usize = 13;
/// `DOCA_DEVINFO_IBDEV_NAME_SIZE`.
pub const IBDEV_NAME_SIZE: usize = 64;
/// `DOCA_DEVINFO_IFACE_NAME_SIZE`.
pub const IFACE_NAME_SIZE: usize = 256;
/// `DOCA_DEVINFO_MAC_ADDR_SIZE`.
pub const MAC_ADDR_SIZE: usize = 6;
/// `DOCA_DEVINFO_IPV4_ADDR_SIZE`.
pub const IPV4_ADDR_SIZE: usize = 4;
/// `DOCA_PCI_FUNC_TYPE_PF`.
pub const PCI_FUNC_TYPE_PF: u32 = 0;

/// What carries a device's frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortSpec {
    /// AF_PACKET on a Linux interface.
    Linux {
        /// Interface name.
        ifname: String,
        /// Interface index.
        ifindex: u32,
    },
    /// `DOCA_SOFT_PORTS` entry `pcap:IN,OUT`: frames read from IN, sent frames written to OUT.
    Pcap {
        /// Capture file read as received traffic.
        input: PathBuf,
        /// Capture file that receives sent frames.
        output: PathBuf,
    },
    /// `DOCA_SOFT_PORTS` entry `wire:NAME`: two ports NAME0 (side 0) and NAME1 (side 1)
    /// joined by an in-process wire.
    Wire {
        /// Wire name.
        name: String,
        /// 0 or 1.
        side: u8,
    },
}

/// The C `struct doca_devinfo`: one device as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevInfo {
    /// PCI address, `BB:DD.F`.
    pub pci: String,
    /// Interface (port) name.
    pub iface: String,
    /// ibdev name (`soft_<iface>`).
    pub ibdev: String,
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address, if the interface has one.
    pub ipv4: Option<[u8; 4]>,
    /// What carries the frames.
    pub spec: PortSpec,
}

impl DevInfo {
    /// The parsed PCI address.
    pub fn pci_addr(&self) -> PciAddr {
        PciAddr::parse(&self.pci).expect("devinfo PCI addresses are well formed")
    }

    /// Whether `s` names this device: a PCI address (either form) equal to ours, or our
    /// iface or ibdev name.
    pub fn matches(&self, s: &str) -> bool {
        match PciAddr::parse(s) {
            Ok(a) => a == self.pci_addr(),
            Err(_) => s == self.iface || s == self.ibdev,
        }
    }
}

/// A port before it gets its address.
struct Candidate {
    name: String,
    mac: [u8; 6],
    ipv4: Option<[u8; 4]>,
    spec: PortSpec,
}

/// Builds the device list from the Linux interfaces, the extra ports and the PCI map.
/// Mapped ports take their mapped address; the others take their synthetic one, stepping
/// past addresses already taken (`lo` first, then by name, so `lo` keeps its address).
pub fn build_list(
    linux: &[LinuxIface],
    extra: &[config::ExtraPort],
    pci_map: &[(PciAddr, String)],
) -> Vec<DevInfo> {
    let mut cands: Vec<Candidate> = linux
        .iter()
        .map(|l| Candidate {
            name: l.name.clone(),
            mac: l.mac,
            ipv4: l.ipv4,
            spec: PortSpec::Linux {
                ifname: l.name.clone(),
                ifindex: l.ifindex,
            },
        })
        .collect();
    for e in extra {
        if cands.iter().any(|c| c.name == e.name) {
            sdk_warn!(
                "dev",
                "port {} of DOCA_SOFT_PORTS hides an interface of that name",
                e.name
            );
            cands.retain(|c| c.name != e.name);
        }
        let h = pci::fnv1a(e.name.as_bytes()).to_be_bytes();
        cands.push(Candidate {
            name: e.name.clone(),
            // Locally administered unicast address derived from the name.
            mac: [0x02, 0x50, h[0], h[1], h[2], h[3]],
            ipv4: None,
            spec: e.spec.clone(),
        });
    }
    for (addr, name) in pci_map {
        if !cands.iter().any(|c| &c.name == name) {
            sdk_warn!(
                "dev",
                "DOCA_SOFT_PCI_MAP names {name} for {}, no such port",
                addr.short()
            );
        }
    }
    // Assignment order: mapped first, then `lo`, then by name.
    let mut order: Vec<usize> = (0..cands.len()).collect();
    let mapped = |c: &Candidate| pci_map.iter().find(|(_, n)| *n == c.name).map(|(a, _)| *a);
    order.sort_by_key(|&i| {
        let c = &cands[i];
        (mapped(c).is_none(), c.name != "lo", c.name.clone())
    });
    let mut taken: Vec<PciAddr> = Vec::new();
    let mut addrs: Vec<Option<PciAddr>> = vec![None; cands.len()];
    for i in order {
        let a = match mapped(&cands[i]) {
            Some(a) => a,
            None => {
                let mut a = PciAddr::synthetic(&cands[i].name);
                while taken.contains(&a) || pci_map.iter().any(|(m, _)| *m == a) {
                    a = a.next_synthetic();
                }
                a
            }
        };
        taken.push(a);
        addrs[i] = Some(a);
    }
    cands
        .into_iter()
        .zip(addrs)
        .map(|(c, a)| DevInfo {
            pci: a.expect("every candidate has an address").short(),
            ibdev: format!("soft_{}", c.name),
            iface: c.name,
            mac: c.mac,
            ipv4: c.ipv4,
            spec: c.spec,
        })
        .collect()
}

/// The devices of this process now (Linux interfaces plus `DOCA_SOFT_PORTS`, addresses
/// from `DOCA_SOFT_PCI_MAP`).
pub fn list_devices() -> Vec<Arc<DevInfo>> {
    let extra = config::from_env(config::PORTS_ENV, config::parse_ports);
    let map = config::from_env(config::PCI_MAP_ENV, config::parse_pci_map);
    build_list(&sys::linux_ifaces(), &extra, &map)
        .into_iter()
        .map(Arc::new)
        .collect()
}

/// The device named by a PCI address, iface or ibdev name; NOT_FOUND when none matches.
pub fn find_device(name: &str) -> DocaResult<Arc<DevInfo>> {
    list_devices()
        .into_iter()
        .find(|d| d.matches(name))
        .ok_or(DocaError::NOT_FOUND)
}

/// The C `struct doca_dev`: an opened device.
pub struct Dev {
    info: Arc<DevInfo>,
    users: AtomicUsize,
}

impl Dev {
    /// Opens a device.
    pub fn new(info: Arc<DevInfo>) -> Dev {
        Dev {
            info,
            users: AtomicUsize::new(0),
        }
    }

    /// The device's info.
    pub fn info(&self) -> &Arc<DevInfo> {
        &self.info
    }

    /// Records an object that uses this device (an mmap it was added to, a queue);
    /// `doca_dev_close` is IN_USE until each is released with [`Dev::remove_user`].
    pub fn add_user(&self) {
        self.users.fetch_add(1, Ordering::AcqRel);
    }

    /// Releases a use recorded with [`Dev::add_user`].
    pub fn remove_user(&self) {
        let _ = self
            .users
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// Number of current users.
    pub fn users(&self) -> usize {
        self.users.load(Ordering::Acquire)
    }
}

/// Borrows a device from a C pointer; INVALID_VALUE when null.
///
/// # Safety
/// A non-null `p` must point to a live `Dev`.
pub unsafe fn dev_ref<'a>(p: *const Dev) -> DocaResult<&'a Dev> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}

/// Borrows a devinfo from a C pointer; INVALID_VALUE when null.
///
/// # Safety
/// A non-null `p` must point to a live `DevInfo` (from a list or an open device).
pub unsafe fn devinfo_ref<'a>(p: *const DevInfo) -> DocaResult<&'a DevInfo> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}

// ---------------------------------------------------------------------------------------
// C API. A list is a NULL-terminated array of `Arc<DevInfo>` raw pointers.

/// Turns infos into a NULL-terminated C array of owned pointers.
pub(crate) fn into_c_list<T>(items: Vec<Arc<T>>) -> *mut *mut T {
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
pub(crate) unsafe fn free_c_list<T>(list: *mut *mut T) {
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

/// `doca_devinfo_create_list(&list, &nb)`.
///
/// # Safety
/// Both pointers are null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_create_list(
    dev_list: *mut *mut *mut DevInfo,
    nb_devs: *mut u32,
) -> u32 {
    if dev_list.is_null() || nb_devs.is_null() {
        return DocaError::INVALID_VALUE.0;
    }
    let devs = list_devices();
    let n = devs.len() as u32;
    // SAFETY: checked non-null; caller guarantees writability.
    unsafe {
        *dev_list = into_c_list(devs);
        *nb_devs = n;
    }
    0
}

/// `doca_devinfo_destroy_list(list)`.
///
/// # Safety
/// `dev_list` is null or a list from `doca_devinfo_create_list`, not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_destroy_list(dev_list: *mut *mut DevInfo) -> u32 {
    if dev_list.is_null() {
        return DocaError::INVALID_VALUE.0;
    }
    // SAFETY: caller contract.
    unsafe { free_c_list(dev_list) };
    0
}

/// `doca_devinfo_get_pci_addr_str(devinfo, buf)`: writes `DDDD:BB:DD.F` (13 bytes).
///
/// # Safety
/// `devinfo` is null or live; `pci_addr_str` is null or holds `PCI_ADDR_SIZE` bytes.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_pci_addr_str(
    devinfo: *const DevInfo,
    pci_addr_str: *mut c_char,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }
        // SAFETY: caller contract (buffer of PCI_ADDR_SIZE bytes).
        .and_then(|d| unsafe { copy_cstr(pci_addr_str, PCI_ADDR_SIZE, &d.pci_addr().long()) });
    to_c(r)
}

/// `doca_devinfo_is_equal_pci_addr(devinfo, "BB:DD.F" | "DDDD:BB:DD.F", &is_equal)`.
///
/// # Safety
/// `devinfo` is null or live; `pci_addr_str` is null or NUL-terminated; `is_equal` is
/// null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_is_equal_pci_addr(
    devinfo: *const DevInfo,
    pci_addr_str: *const c_char,
    is_equal: *mut u8,
) -> u32 {
    let r = (|| {
        // SAFETY: caller contract.
        let d = unsafe { devinfo_ref(devinfo) }?;
        // SAFETY: caller contract.
        let s = unsafe { str_arg(pci_addr_str) }?;
        if s.trim().is_empty() {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: caller contract.
        unsafe { write_out(is_equal, u8::from(d.matches(s.trim()))) }
    })();
    to_c(r)
}

/// `doca_devinfo_get_ibdev_name(devinfo, buf, size)`.
///
/// # Safety
/// `devinfo` is null or live; `buf` is null or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_ibdev_name(
    devinfo: *const DevInfo,
    ibdev_name: *mut c_char,
    size: u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }
        // SAFETY: caller contract.
        .and_then(|d| unsafe { copy_cstr(ibdev_name, size as usize, &d.ibdev) });
    to_c(r)
}

/// `doca_devinfo_get_iface_name(devinfo, buf, size)`.
///
/// # Safety
/// `devinfo` is null or live; `buf` is null or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_iface_name(
    devinfo: *const DevInfo,
    iface_name: *mut c_char,
    size: u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }
        // SAFETY: caller contract.
        .and_then(|d| unsafe { copy_cstr(iface_name, size as usize, &d.iface) });
    to_c(r)
}

/// `doca_devinfo_get_mac_addr(devinfo, buf, size)` (size >= 6).
///
/// # Safety
/// `devinfo` is null or live; `mac_addr` is null or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_mac_addr(
    devinfo: *const DevInfo,
    mac_addr: *mut u8,
    size: u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }
        // SAFETY: caller contract.
        .and_then(|d| unsafe { copy_bytes(mac_addr, size as usize, &d.mac) });
    to_c(r)
}

/// `doca_devinfo_get_ipv4_addr(devinfo, buf, size)` (size >= 4); NOT_FOUND when the port
/// has no IPv4 address.
///
/// # Safety
/// `devinfo` is null or live; `ipv4_addr` is null or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_ipv4_addr(
    devinfo: *const DevInfo,
    ipv4_addr: *mut u8,
    size: u32,
) -> u32 {
    let r = (|| {
        // SAFETY: caller contract.
        let d = unsafe { devinfo_ref(devinfo) }?;
        if ipv4_addr.is_null() || (size as usize) < IPV4_ADDR_SIZE {
            return Err(DocaError::INVALID_VALUE);
        }
        let ip = d.ipv4.ok_or(DocaError::NOT_FOUND)?;
        // SAFETY: caller contract.
        unsafe { copy_bytes(ipv4_addr, size as usize, &ip) }
    })();
    to_c(r)
}

/// `doca_devinfo_get_pci_func_type(devinfo, &type)`: always PF.
///
/// # Safety
/// `devinfo` is null or live; `pci_func_type` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_pci_func_type(
    devinfo: *const DevInfo,
    pci_func_type: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }
        // SAFETY: caller contract.
        .and_then(|_| unsafe { write_out(pci_func_type, PCI_FUNC_TYPE_PF) });
    to_c(r)
}

/// `doca_devinfo_get_sf_index(devinfo, &index)`: NOT_SUPPORTED (no sub-functions here).
///
/// # Safety
/// `devinfo` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_devinfo_get_sf_index(
    devinfo: *const DevInfo,
    sf_index: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }.and_then(|_| {
        if sf_index.is_null() {
            Err(DocaError::INVALID_VALUE)
        } else {
            Err(DocaError::NOT_SUPPORTED)
        }
    });
    to_c(r)
}

/// `doca_dev_open(devinfo, &dev)`.
///
/// # Safety
/// `devinfo` is null or a live devinfo (from a list, or from `doca_dev_as_devinfo`);
/// `dev` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_dev_open(devinfo: *mut DevInfo, dev: *mut *mut Dev) -> u32 {
    if devinfo.is_null() || dev.is_null() {
        return DocaError::INVALID_VALUE.0;
    }
    // SAFETY: every devinfo handed to C is an Arc pointer (list or Dev); taking a new
    // strong reference keeps it alive for the device.
    let info = unsafe {
        Arc::increment_strong_count(devinfo as *const DevInfo);
        Arc::from_raw(devinfo as *const DevInfo)
    };
    let d = Box::new(Dev::new(info));
    // SAFETY: checked non-null; caller guarantees writability.
    unsafe { *dev = Box::into_raw(d) };
    0
}

/// `doca_dev_close(dev)`: IN_USE while an mmap or queue still uses the device.
///
/// # Safety
/// `dev` is null or a device from `doca_dev_open`, not yet closed.
#[no_mangle]
pub unsafe extern "C" fn doca_dev_close(dev: *mut Dev) -> u32 {
    // SAFETY: caller contract.
    let Ok(d) = (unsafe { dev_ref(dev) }) else {
        return DocaError::INVALID_VALUE.0;
    };
    if d.users() > 0 {
        sdk_err!(
            "dev",
            "closing {} while {} objects use it",
            d.info.iface,
            d.users()
        );
        return DocaError::IN_USE.0;
    }
    // SAFETY: made by Box::into_raw in doca_dev_open; not used after this.
    drop(unsafe { Box::from_raw(dev) });
    0
}

/// `doca_dev_as_devinfo(dev)`: the device's info (valid while the device is open); NULL
/// for a NULL device.
///
/// # Safety
/// `dev` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_dev_as_devinfo(dev: *const Dev) -> *mut DevInfo {
    // SAFETY: caller contract.
    match unsafe { dev_ref(dev) } {
        Ok(d) => Arc::as_ptr(&d.info) as *mut DevInfo,
        Err(_) => std::ptr::null_mut(),
    }
}

#[cfg(test)]
mod tests;
