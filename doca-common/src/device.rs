//! Network devices: listing and opening (`doca_devinfo`, `doca_dev`).

use crate::error::{check, Error, Result};
use doca_sys as sys;
use std::ffi::{c_char, CStr, CString};
use std::ptr::NonNull;
use std::sync::Arc;

const PCI_ADDR_SIZE: usize = 13;
const IFACE_NAME_SIZE: usize = 256;
const IBDEV_NAME_SIZE: usize = 64;

/// What DOCA reports about one device, copied out of the device list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pci_addr: String,
    iface_name: String,
    ibdev_name: String,
    mac: Option<[u8; 6]>,
    ipv4: Option<[u8; 4]>,
}

impl DeviceInfo {
    /// PCI address, e.g. `17:00.0`.
    pub fn pci_addr(&self) -> &str {
        &self.pci_addr
    }
    /// Network interface name, e.g. `eth0` (with the software runtime: the Linux name).
    pub fn iface_name(&self) -> &str {
        &self.iface_name
    }
    /// InfiniBand device name, e.g. `mlx5_0`.
    pub fn ibdev_name(&self) -> &str {
        &self.ibdev_name
    }
    /// MAC address, when the device has one.
    pub fn mac(&self) -> Option<[u8; 6]> {
        self.mac
    }
    /// IPv4 address, when the device has one.
    pub fn ipv4(&self) -> Option<[u8; 4]> {
        self.ipv4
    }
    /// Whether `selector` names this device: its PCI address, interface or IB device name.
    pub fn matches(&self, selector: &str) -> bool {
        selector == self.iface_name
            || selector == self.ibdev_name
            || pci_eq(selector, &self.pci_addr)
    }
}

/// PCI addresses compare without the `0000:` domain and case-insensitively.
fn pci_eq(a: &str, b: &str) -> bool {
    let strip = |s: &str| s.strip_prefix("0000:").unwrap_or(s).to_ascii_lowercase();
    strip(a) == strip(b)
}

/// The device list, destroyed on drop.
struct DevinfoList {
    list: *mut *mut sys::doca_devinfo,
    len: usize,
}

impl DevinfoList {
    fn new() -> Result<Self> {
        crate::log::init_default();
        let mut list = std::ptr::null_mut();
        let mut n = 0u32;
        // SAFETY: both out-pointers are valid for writes.
        check("doca_devinfo_create_list", unsafe {
            sys::doca_devinfo_create_list(&mut list, &mut n)
        })?;
        Ok(DevinfoList {
            list,
            len: n as usize,
        })
    }

    fn iter(&self) -> impl Iterator<Item = *mut sys::doca_devinfo> + '_ {
        // SAFETY: the list holds `len` valid entries until it is destroyed in Drop.
        (0..self.len).map(move |i| unsafe { *self.list.add(i) })
    }
}

impl Drop for DevinfoList {
    fn drop(&mut self) {
        // SAFETY: the list came from doca_devinfo_create_list and is destroyed once.
        let rc = unsafe { sys::doca_devinfo_destroy_list(self.list) };
        if let Err(e) = check("doca_devinfo_destroy_list", rc) {
            crate::error::record_drop_error(e);
        }
    }
}

fn read_string(
    op: &'static str,
    len: usize,
    f: impl FnOnce(*mut c_char, u32) -> sys::doca_error_t,
) -> Result<String> {
    let mut buf = vec![0 as c_char; len];
    check(op, f(buf.as_mut_ptr(), len as u32))?;
    // SAFETY: DOCA NUL-terminates within the buffer; the last byte stays 0 as a guard.
    buf[len - 1] = 0;
    let s = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Ok(s.to_string_lossy().into_owned())
}

/// Copies what DOCA says about `di` into a [`DeviceInfo`].
///
/// # Safety
/// `di` is a live entry of a device list.
unsafe fn describe(di: *mut sys::doca_devinfo) -> Result<DeviceInfo> {
    let mut pci = [0 as c_char; PCI_ADDR_SIZE];
    // SAFETY: `pci` has DOCA_DEVINFO_PCI_ADDR_SIZE bytes; `di` is live per contract.
    check("doca_devinfo_get_pci_addr_str", unsafe {
        sys::doca_devinfo_get_pci_addr_str(di, pci.as_mut_ptr())
    })?;
    pci[PCI_ADDR_SIZE - 1] = 0;
    // SAFETY: NUL-terminated above.
    let pci_addr = unsafe { CStr::from_ptr(pci.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let iface_name = read_string("doca_devinfo_get_iface_name", IFACE_NAME_SIZE, |b, n| {
        // SAFETY: `b` has `n` bytes; `di` is live.
        unsafe { sys::doca_devinfo_get_iface_name(di, b, n) }
    })?;
    let ibdev_name = read_string("doca_devinfo_get_ibdev_name", IBDEV_NAME_SIZE, |b, n| {
        // SAFETY: `b` has `n` bytes; `di` is live.
        unsafe { sys::doca_devinfo_get_ibdev_name(di, b, n) }
    })?;
    let mut mac = [0u8; 6];
    // SAFETY: 6 writable bytes; `di` is live.
    let mac = DocaOk(unsafe { sys::doca_devinfo_get_mac_addr(di, mac.as_mut_ptr(), 6) }).then(mac);
    let mut ip = [0u8; 4];
    // SAFETY: 4 writable bytes; `di` is live.
    let ipv4 = DocaOk(unsafe { sys::doca_devinfo_get_ipv4_addr(di, ip.as_mut_ptr(), 4) }).then(ip);
    Ok(DeviceInfo {
        pci_addr,
        iface_name,
        ibdev_name,
        mac,
        ipv4,
    })
}

struct DocaOk(sys::doca_error_t);
impl DocaOk {
    fn then<T>(self, v: T) -> Option<T> {
        (self.0 == sys::doca_error_t::DOCA_SUCCESS).then_some(v)
    }
}

struct DeviceInner {
    raw: NonNull<sys::doca_dev>,
    info: DeviceInfo,
}

// SAFETY: a doca_dev is a thread-safe handle in DOCA (opened once, shared by contexts).
unsafe impl Send for DeviceInner {}
// SAFETY: as above; this type only reads it.
unsafe impl Sync for DeviceInner {}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        // SAFETY: opened by doca_dev_open and closed once, after every child (which holds
        // an Arc of this) is gone.
        let rc = unsafe { sys::doca_dev_close(self.raw.as_ptr()) };
        if let Err(e) = check("doca_dev_close", rc) {
            crate::error::record_drop_error(e);
        }
    }
}

/// An open network device (`doca_dev`). Cheap to clone; closed when the last clone and the
/// last queue or memory map using it are gone. `Send + Sync`.
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

impl Device {
    /// Lists the devices DOCA sees (with the software runtime: every Linux interface and the
    /// ports named in `DOCA_SOFT_PORTS`).
    pub fn list() -> Result<Vec<DeviceInfo>> {
        let list = DevinfoList::new()?;
        // SAFETY: entries are live while `list` is.
        list.iter().map(|di| unsafe { describe(di) }).collect()
    }

    /// Opens the device whose PCI address (`17:00.0`), interface name (`eth0`) or IB device
    /// name (`mlx5_0`) is `selector`.
    pub fn open(selector: &str) -> Result<Device> {
        let list = DevinfoList::new()?;
        for di in list.iter() {
            // SAFETY: entries are live while `list` is.
            let info = unsafe { describe(di) }?;
            if info.matches(selector) {
                let mut dev = std::ptr::null_mut();
                // SAFETY: `di` is live; `dev` is a valid out-pointer.
                check("doca_dev_open", unsafe { sys::doca_dev_open(di, &mut dev) })?;
                let raw = NonNull::new(dev).ok_or_else(|| {
                    Error::NotFound(format!("doca_dev_open returned no device for {selector}"))
                })?;
                return Ok(Device {
                    inner: Arc::new(DeviceInner { raw, info }),
                });
            }
        }
        Err(Error::NotFound(format!(
            "no DOCA device with PCI address, interface or IB device name {selector:?} (see Device::list)"
        )))
    }

    /// What DOCA reported about this device when it was opened.
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// Whether DOCA's devinfo of this device has the given PCI address
    /// (`doca_devinfo_is_equal_pci_addr`).
    pub fn has_pci_addr(&self, pci: &str) -> Result<bool> {
        let c =
            CString::new(pci).map_err(|_| Error::InvalidArgument("PCI address with NUL".into()))?;
        let mut eq = 0u8;
        // SAFETY: the device is open; `c` and `eq` are valid.
        let di = unsafe { sys::doca_dev_as_devinfo(self.inner.raw.as_ptr()) };
        // SAFETY: `di` belongs to the open device.
        check("doca_devinfo_is_equal_pci_addr", unsafe {
            sys::doca_devinfo_is_equal_pci_addr(di, c.as_ptr(), &mut eq)
        })?;
        Ok(eq != 0)
    }

    /// The raw handle, for calls this crate does not wrap. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_dev {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("info", &self.inner.info)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_listed_and_opens_by_each_name() {
        let all = Device::list().unwrap();
        let lo = all
            .iter()
            .find(|d| d.iface_name() == "lo")
            .expect("lo is listed");
        // DOCA_DEVINFO_PCI_ADDR_SIZE is 13: "DDDD:BB:DD.F" and its NUL.
        assert_eq!(
            lo.pci_addr().len(),
            12,
            "DDDD:BB:DD.F, got {}",
            lo.pci_addr()
        );
        for sel in [lo.pci_addr(), lo.iface_name(), lo.ibdev_name()] {
            let d = Device::open(sel).unwrap();
            assert_eq!(d.info(), lo);
            assert!(d.has_pci_addr(lo.pci_addr()).unwrap());
            assert!(!d.has_pci_addr("ff:1f.7").unwrap() || lo.pci_addr() == "ff:1f.7");
        }
        // Same device without the domain prefix, as sample command lines write it.
        let short = lo.pci_addr().strip_prefix("0000:").expect("domain 0000");
        assert_eq!(Device::open(short).unwrap().info(), lo);
    }

    #[test]
    fn unknown_device_is_a_clear_not_found() {
        let e = Device::open("no-such-nic-0").unwrap_err();
        assert!(matches!(e, Error::NotFound(_)), "{e}");
        assert!(e.to_string().contains("no-such-nic-0"));
    }
}
