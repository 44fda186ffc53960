//! One soft NIC per DOCA device and process, started the first time something asks for it
//! and stopped when the last user lets go.
//!
//! The NIC listens on the device's IPv4 address (127.0.0.1 for `lo`, the veth address in a
//! network namespace), so its GID tells peers where it is. A device without an IPv4
//! address (a pcap or in-memory port) gets a NIC on 127.0.0.1, with a warning: only peers
//! on this machine reach it.

use crate::dev::DevInfo;
use crate::error::DocaResult;
use crate::sync::lock;
use doca_soft_nic::rdma::{Nic, WeakNic};
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::Mutex;

static NICS: Mutex<Option<HashMap<String, WeakNic>>> = Mutex::new(None);

/// The key of a device: its interface and PCI address (the same device opened twice
/// shares one NIC).
fn key(info: &DevInfo) -> String {
    format!("{}@{}", info.iface, info.pci)
}

/// The address the NIC of `info` listens on.
pub(crate) fn bind_addr(info: &DevInfo) -> Ipv4Addr {
    match info.ipv4 {
        Some(a) => Ipv4Addr::from(a),
        None => {
            sdk_warn!(
                "gpuqp",
                "device {} has no IPv4 address: its RDMA NIC listens on 127.0.0.1 (peers on this machine only)",
                info.iface
            );
            Ipv4Addr::LOCALHOST
        }
    }
}

/// The NIC of device `info`, started now if none runs (a UCX worker, a listener and a
/// proxy thread). The NIC stops when every returned handle (and every queue made on it)
/// is dropped.
pub(crate) fn nic_for(info: &DevInfo) -> DocaResult<Nic> {
    let k = key(info);
    let mut g = lock(&NICS);
    let map = g.get_or_insert_with(HashMap::new);
    if let Some(n) = map.get(&k).and_then(WeakNic::upgrade) {
        return Ok(n);
    }
    let nic = Nic::start(bind_addr(info))?;
    sdk_dbg!(
        "gpuqp",
        "NIC of {} started on {}",
        info.iface,
        nic.listen_addr()
    );
    map.retain(|_, w| w.is_alive());
    map.insert(k, nic.downgrade());
    Ok(nic)
}
