//! Helpers shared by the queue and Flow tests: wire ports of the software runtime, host
//! memory packet buffers, the runtime's host-memory data path hooks, frame builders.
#![allow(dead_code)]

use doca_gpunetio::{sys, AccessFlags, Device, DocaError, Error, Mmap, Result};
use std::sync::{Arc, Once};

/// Every wire port the tests of one binary use, declared once before any device lookup
/// (the runtime reads `DOCA_SOFT_PORTS` when listing devices).
pub fn declare_wires(names: &[&str]) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let v: Vec<String> = names.iter().map(|n| format!("wire:{n}")).collect();
        std::env::set_var("DOCA_SOFT_PORTS", v.join(";"));
    });
}

/// Side 0 (`NAME0`) and side 1 (`NAME1`) of wire `name`.
pub fn wire(name: &str) -> (Device, Device) {
    (
        Device::open(&format!("{name}0")).unwrap(),
        Device::open(&format!("{name}1")).unwrap(),
    )
}

/// The runtime's port behind `dev`.
pub fn soft_port(dev: &Device) -> Arc<doca_soft::testing::Port> {
    // SAFETY: with the soft backend a `doca_dev` is doca-soft's `Dev`; `dev` keeps it open.
    unsafe { doca_soft::testing::port_of(dev.as_raw().cast()) }.unwrap()
}

/// A host-memory packet buffer of `len` bytes mapped for `dev` (leaked: the test process
/// owns it until exit, so no queue can outlive it).
pub fn host_mmap(dev: &Device, len: usize) -> Mmap {
    let mem: &'static mut [u8] = Box::leak(vec![0u8; len].into_boxed_slice());
    // SAFETY: the memory is leaked, so it stays valid and in place forever.
    unsafe {
        Mmap::from_host_range(
            mem.as_mut_ptr().cast(),
            len,
            &[dev],
            AccessFlags::LOCAL_READ_WRITE,
        )
    }
    .unwrap()
}

fn soft_err(op: &'static str, e: doca_soft::capi::doca_error::DocaError) -> Error {
    let code = DocaError::result(sys::doca_error(e.0)).unwrap_err();
    Error::Doca { op, code }
}

/// `EthRxqBuilder::configure_raw` step: rings in host memory, consumed on the CPU (the
/// runtime's stand-in for a GPU data path).
pub fn rxq_host_datapath(raw: *mut sys::doca_eth_rxq) -> Result<()> {
    // SAFETY: with the soft backend a `doca_eth_rxq` is doca-soft's `EthRxq`; the builder
    // passes a live queue.
    unsafe { doca_soft::testing::rxq_set_host_datapath(raw.cast()) }
        .map_err(|e| soft_err("set_host_datapath", e))
}

/// `EthTxqBuilder::configure_raw` step: rings in host memory, produced on the CPU.
pub fn txq_host_datapath(raw: *mut sys::doca_eth_txq) -> Result<()> {
    // SAFETY: as in `rxq_host_datapath`, for a TX queue.
    unsafe { doca_soft::testing::txq_set_host_datapath(raw.cast()) }
        .map_err(|e| soft_err("set_host_datapath", e))
}

/// The CPU consumer of a host-data-path RX queue.
pub fn cpu_rxq(q: &doca_gpunetio::EthRxq) -> doca_soft::testing::CpuRxq {
    let h = q.gpu_handle().unwrap();
    // SAFETY: a host-data-path queue's handle is a CPU pointer to the ring handle, live
    // while the queue is (the tests drop the consumer first).
    unsafe { doca_soft::testing::CpuRxq::new(h.as_raw().cast()) }
}

/// An Ethernet/IPv4 frame with protocol `proto` and an L4 header of `l4` (ports, flags...),
/// padded with a payload of `payload` bytes derived from `seed`.
pub fn ipv4_frame(proto: u8, l4: &[u8], payload: usize, seed: u8) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x08, 0x00];
    let total = 20 + l4.len() + payload;
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0,
        0,
        64,
        proto,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, seed]);
    f.extend_from_slice(l4);
    f.extend((0..payload).map(|i| seed.wrapping_mul(31).wrapping_add(i as u8)));
    f
}

/// UDP header (length and checksum left consistent enough for the parser).
pub fn udp_frame(src_port: u16, dst_port: u16, payload: usize, seed: u8) -> Vec<u8> {
    let len = (8 + payload) as u16;
    let l4 = [
        src_port.to_be_bytes(),
        dst_port.to_be_bytes(),
        len.to_be_bytes(),
        [0, 0],
    ]
    .concat();
    ipv4_frame(17, &l4, payload, seed)
}

/// TCP header with `flags`.
pub fn tcp_frame(src_port: u16, dst_port: u16, flags: u8, seed: u8) -> Vec<u8> {
    let mut l4 = [src_port.to_be_bytes(), dst_port.to_be_bytes()].concat();
    l4.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    ipv4_frame(6, &l4, 16, seed)
}

/// ICMP echo request.
pub fn icmp_frame(seed: u8) -> Vec<u8> {
    ipv4_frame(1, &[8, 0, 0, 0, 0, 1, 0, seed], 32, seed)
}

/// Waits (bounded) until `f` holds; returns whether it did.
pub fn wait_until(mut f: impl FnMut() -> bool) -> bool {
    // A generous bound: CI machines are small and shared; only a hang should hit it.
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    f()
}
