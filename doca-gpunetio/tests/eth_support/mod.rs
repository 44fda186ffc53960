//! Helpers shared by the queue and Flow tests: wire ports of the software runtime, host
//! memory packet buffers, the runtime's host-memory data path hooks, the tests' frames
//! (built with doca-test-support).
#![allow(dead_code)]

use doca_gpunetio::{sys, AccessFlags, Device, DocaError, Error, Mmap, Result};
use doca_test_support::frames::{pattern, FrameBuilder, Tcp};
use std::sync::{Arc, Once};

/// Bounded waits: `eventually(|| cond)` polls for up to 20 s (not every test binary waits).
#[allow(unused_imports)]
pub use doca_test_support::eventually;

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

fn soft_err(op: &'static str, e: doca_soft::testing::capi::doca_error::DocaError) -> Error {
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

/// A started host-data-path RX queue (64 buffers of `max_packet` bytes in host memory)
/// that Flow steers to as `queue_id`.
pub fn steered_rxq(dev: &Device, queue_id: u16, max_packet: u32) -> doca_gpunetio::EthRxq {
    let len = 64 * max_packet;
    let m = host_mmap(dev, len as usize);
    let q = doca_gpunetio::EthRxq::builder(dev)
        .max_burst_size(64)
        .max_packet_size(max_packet)
        .packet_buffer(&m, 0, len)
        .configure_raw(rxq_host_datapath)
        .start()
        .unwrap();
    q.apply_queue_id(queue_id).unwrap();
    q
}

/// Every frame waiting in `q`, in order.
pub fn drain(q: &doca_gpunetio::EthRxq) -> Vec<Vec<u8>> {
    let rx = cpu_rxq(q);
    let mut got = Vec::new();
    rx.recv_with(0, 1_000_000, |_, _, p| got.push(p.to_vec()));
    got
}

/// The frames of one test: 10.0.0.1 to 10.0.0.<seed>, so frames of different seeds differ
/// in their headers as well as their payloads.
fn frames(seed: u8) -> FrameBuilder {
    FrameBuilder::new().ips([10, 0, 0, 1], [10, 0, 0, seed])
}

/// A UDP frame with `payload` bytes derived from `seed`.
pub fn udp_frame(src_port: u16, dst_port: u16, payload: usize, seed: u8) -> Vec<u8> {
    frames(seed).udp(src_port, dst_port, &pattern(seed, payload))
}

/// A TCP frame with `flags` and 16 payload bytes derived from `seed`.
pub fn tcp_frame(src_port: u16, dst_port: u16, flags: u8, seed: u8) -> Vec<u8> {
    frames(seed).tcp(&Tcp::new(src_port, dst_port, flags), &pattern(seed, 16))
}

/// An ICMP echo request with 32 payload bytes derived from `seed`.
pub fn icmp_frame(seed: u8) -> Vec<u8> {
    frames(seed).icmp_echo(1, u16::from(seed), &pattern(seed, 32))
}
