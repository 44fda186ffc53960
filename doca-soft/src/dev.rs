//! Device objects: STUB written by the flow helper against the contract, until the core
//! helper's `dev.rs` lands (take core's version on merge; only `DevInfo`/`PortSpec` are used
//! by the port module).

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{DocaError, DocaResult};

/// What kind of port a device is backed by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortSpec {
    /// AF_PACKET on a Linux interface.
    Linux {
        /// Interface name.
        ifname: String,
        /// Interface index.
        ifindex: u32,
    },
    /// `pcap:IN,OUT`.
    Pcap {
        /// Capture replayed into RX.
        input: PathBuf,
        /// Capture that TX writes.
        output: PathBuf,
    },
    /// One side of an in-memory wire `wire:NAME`.
    Wire {
        /// Wire name (without the side digit).
        name: String,
        /// 0 or 1.
        side: u8,
    },
}

/// Static description of a device.
#[derive(Clone, Debug)]
pub struct DevInfo {
    /// "BB:DD.F".
    pub pci: String,
    /// Interface name.
    pub iface: String,
    /// IB device name.
    pub ibdev: String,
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address, if any.
    pub ipv4: Option<[u8; 4]>,
    /// Port backend.
    pub spec: PortSpec,
}

/// The C `struct doca_dev` (stub).
pub struct Dev {
    info: Arc<DevInfo>,
}

impl Dev {
    /// Opens a device (stub).
    pub fn new(info: Arc<DevInfo>) -> Dev {
        Dev { info }
    }
    /// The device's description.
    pub fn info(&self) -> &Arc<DevInfo> {
        &self.info
    }
}

/// Borrows a device from a C pointer; INVALID_VALUE if null.
///
/// # Safety
/// `p` must be null or point to a live `Dev`.
pub unsafe fn dev_ref<'a>(p: *const Dev) -> DocaResult<&'a Dev> {
    // SAFETY: the caller guarantees p is null or valid.
    unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}
