//! Devices (`doca_dev.h`): the device list, what a device is, and an opened device.
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

use crate::error::{DocaError, DocaResult};
use crate::sync::UseCount;
use pci::PciAddr;
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

/// What carries a device's frames (the port backends).
pub use crate::port::PortSpec;

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
        if let PortSpec::Xdp { .. } = e.spec {
            // The same interface, carried by AF_XDP: keep its MAC and address.
            if let Some(c) = cands.iter_mut().find(|c| c.name == e.name) {
                c.spec = e.spec.clone();
                continue;
            }
        }
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
#[cfg(any(test, feature = "testing"))]
pub fn find_device(name: &str) -> DocaResult<Arc<DevInfo>> {
    list_devices()
        .into_iter()
        .find(|d| d.matches(name))
        .ok_or(DocaError::NOT_FOUND)
}

/// The C `struct doca_dev`: an opened device.
pub struct Dev {
    info: Arc<DevInfo>,
    users: UseCount,
}

impl Dev {
    /// Opens a device.
    pub fn new(info: Arc<DevInfo>) -> Dev {
        Dev {
            info,
            users: UseCount::default(),
        }
    }

    /// The device's info.
    pub fn info(&self) -> &Arc<DevInfo> {
        &self.info
    }

    /// Records an object that uses this device (an mmap it was added to, a queue);
    /// `doca_dev_close` is IN_USE until each is released with [`Dev::remove_user`].
    pub fn add_user(&self) {
        self.users.add();
    }

    /// Releases a use recorded with [`Dev::add_user`].
    pub fn remove_user(&self) {
        self.users.remove();
    }

    /// Number of current users.
    pub fn users(&self) -> usize {
        self.users.get()
    }

    /// IN_USE (logged) while an mmap or queue still uses the device: `doca_dev_close`
    /// refuses then.
    pub fn ensure_unused(&self) -> DocaResult<()> {
        let users = self.users();
        if users > 0 {
            sdk_err!(
                "dev",
                "closing {} while {users} objects use it",
                self.info.iface
            );
            return Err(DocaError::IN_USE);
        }
        Ok(())
    }
}
