//! Rust mirror of `include/doca_soft_ring.h` and of the queue handle structs of
//! `include/doca_gpunetio_eth_def.h`: the ring layout shared by the CPU proxies and the
//! device API. Sizes and offsets are asserted here and in the headers with the same numbers.

use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicU64, Ordering};

/// `DOCA_SOFT_RING_VERSION`.
pub const RING_VERSION: u32 = 1;
/// `DOCA_SOFT_TX_OP_NOP`.
pub(crate) const TX_OP_NOP: u32 = 0;
/// `DOCA_SOFT_TX_OP_SEND`.
pub const TX_OP_SEND: u32 = 1;
/// `DOCA_SOFT_TX_OP_WAIT`.
pub const TX_OP_WAIT: u32 = 2;
/// `DOCA_SOFT_TX_FLAG_NOTIFY`.
pub const TX_FLAG_NOTIFY: u32 = 1 << 0;
/// `DOCA_SOFT_TX_FLAG_L3_CSUM` (= `DOCA_GPUNETIO_ETH_WQE_L3_CSUM`).
pub const TX_FLAG_L3_CSUM: u32 = 1 << 6;
/// `DOCA_SOFT_TX_FLAG_L4_CSUM` (= `DOCA_GPUNETIO_ETH_WQE_L4_CSUM`).
pub const TX_FLAG_L4_CSUM: u32 = 1 << 7;

/// `struct doca_soft_ring_index`: one free-running counter alone in a cache line.
#[repr(C)]
#[derive(Debug, Default)]
pub struct RingIndex {
    /// The counter.
    pub value: u64,
    pad: [u64; 7],
}

/// `struct doca_soft_rx_cqe`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RxCqe {
    /// Packet ring slot of the frame.
    pub slot: u32,
    /// Frame length.
    pub bytes: u32,
    /// Receive time (CLOCK_REALTIME ns).
    pub timestamp_ns: u64,
}

/// `struct doca_soft_tx_desc`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TxDesc {
    /// First segment address.
    pub addr: u64,
    /// First segment length.
    pub len: u32,
    /// First segment mkey (big-endian).
    pub mkey: u32,
    /// `TX_OP_*`.
    pub opcode: u32,
    /// `TX_FLAG_*`.
    pub flags: u32,
    /// WAIT: BE64 of `seconds << 32 | nanoseconds`.
    pub wait_on_time: u64,
    /// Second segment address (used when `len2 != 0`).
    pub addr2: u64,
    /// Second segment length.
    pub len2: u32,
    /// Second segment mkey (big-endian).
    pub mkey2: u32,
    /// The descriptor's index (ticket), written by the producer.
    pub wqe_index: u64,
    /// Reserved.
    pub rsvd: u64,
}

/// `struct doca_soft_tx_cqe`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TxCqe {
    /// Descriptor index this completion is for.
    pub wqe_index: u64,
    /// Send time (CLOCK_REALTIME ns).
    pub timestamp_ns: u64,
    /// `doca_error_t` (0 = sent).
    pub status: u32,
    /// Bytes sent.
    pub bytes: u32,
    /// Reserved.
    pub rsvd: u64,
}

/// `struct doca_gpu_buf` of `include/doca_gpunetio_dev_buf.cuh`: one buffer's address and
/// mkey (big-endian, as the device send calls take it).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BufDesc {
    /// Address.
    pub addr: u64,
    /// mkey (big-endian).
    pub mkey: u32,
    /// Reserved.
    pub rsvd: u32,
}

/// `struct doca_gpu_eth_mcst_qp` (layout only).
#[repr(C)]
#[derive(Debug, Default)]
pub struct McstQp {
    rsvd: [u64; 8],
}

/// `struct doca_gpu_eth_rxq`: the RX handle the device API reads.
#[repr(C)]
#[derive(Debug, Default)]
pub struct RxqHandle {
    /// Device address of packet slot 0.
    pub pkt_addr: u64,
    /// Device address of the completion ring.
    pub cqe_addr: u64,
    /// mkey of the packet buffer (big-endian).
    pub pkt_mkey: u32,
    /// Packet slots.
    pub pkt_num: u32,
    /// Slot size.
    pub max_pkt_sz: u32,
    /// Completion ring entries.
    pub cqe_num: u32,
    /// Multicast QP needed (always 0 here).
    pub need_mcst: u8,
    /// Striding RQ (always 0 here).
    pub striding_rq: u8,
    pub(crate) rsvd0: u16,
    /// `RING_VERSION`.
    pub version: u32,
    /// Device address of `BufDesc[pkt_num]`, one per slot (legacy `doca_gpu_buf` API).
    pub buf_addr: u64,
    pub(crate) rsvd1: [u64; 2],
    /// Completions published (proxy).
    pub cqe_pi: RingIndex,
    /// Completions consumed (consumer).
    pub cqe_ci: RingIndex,
    /// Multicast QP.
    pub mcst_qp: McstQp,
}

/// `struct doca_gpu_eth_txq`: the TX handle the device API reads and writes.
#[repr(C)]
#[derive(Debug, Default)]
pub struct TxqHandle {
    /// Device address of the descriptor ring.
    pub desc_addr: u64,
    /// Device address of the completion ring.
    pub cq_addr: u64,
    /// Descriptor ring entries (power of two).
    pub desc_num: u32,
    /// `desc_num - 1`.
    pub desc_mask: u32,
    /// Completion ring entries (power of two).
    pub cq_num: u32,
    /// `cq_num - 1`.
    pub cq_mask: u32,
    /// IPv4 header checksum offload enabled.
    pub l3_csum: u8,
    /// UDP/TCP checksum offload enabled.
    pub l4_csum: u8,
    /// Completions go to the CQ ring (else PE events).
    pub completion_on_gpu: u8,
    /// Wait-on-time offload enabled.
    pub wait_on_time: u8,
    /// `enum doca_gpu_dev_eth_nic_handler`.
    pub nic_handler: u32,
    /// `RING_VERSION`.
    pub version: u32,
    pub(crate) rsvd0: u32,
    pub(crate) rsvd1: [u64; 2],
    /// Reserved descriptor indices (producers).
    pub sq_rsvd: RingIndex,
    /// Descriptors ready for the proxy (producers, in order).
    pub sq_ready: RingIndex,
    /// Descriptors consumed by the proxy.
    pub sq_done: RingIndex,
    /// Completions written (proxy).
    pub cq_pi: RingIndex,
    /// Completions reserved by pollers.
    pub cq_rsvd: RingIndex,
    /// Completions consumed by pollers.
    pub cq_ci: RingIndex,
    /// Spare line.
    pub lock: RingIndex,
}

const _: () = assert!(size_of::<RingIndex>() == 64);
const _: () = assert!(size_of::<RxCqe>() == 16);
const _: () = assert!(offset_of!(RxCqe, bytes) == 4);
const _: () = assert!(offset_of!(RxCqe, timestamp_ns) == 8);
const _: () = assert!(size_of::<TxDesc>() == 64);
const _: () = assert!(offset_of!(TxDesc, mkey) == 12);
const _: () = assert!(offset_of!(TxDesc, opcode) == 16);
const _: () = assert!(offset_of!(TxDesc, flags) == 20);
const _: () = assert!(offset_of!(TxDesc, wait_on_time) == 24);
const _: () = assert!(offset_of!(TxDesc, addr2) == 32);
const _: () = assert!(offset_of!(TxDesc, len2) == 40);
const _: () = assert!(offset_of!(TxDesc, wqe_index) == 48);
const _: () = assert!(size_of::<TxCqe>() == 32);
const _: () = assert!(offset_of!(TxCqe, status) == 16);
const _: () = assert!(offset_of!(TxCqe, bytes) == 20);
const _: () = assert!(size_of::<RxqHandle>() == 256);
const _: () = assert!(offset_of!(RxqHandle, cqe_addr) == 8);
const _: () = assert!(offset_of!(RxqHandle, pkt_mkey) == 16);
const _: () = assert!(offset_of!(RxqHandle, pkt_num) == 20);
const _: () = assert!(offset_of!(RxqHandle, max_pkt_sz) == 24);
const _: () = assert!(offset_of!(RxqHandle, cqe_num) == 28);
const _: () = assert!(offset_of!(RxqHandle, need_mcst) == 32);
const _: () = assert!(offset_of!(RxqHandle, version) == 36);
const _: () = assert!(offset_of!(RxqHandle, buf_addr) == 40);
const _: () = assert!(offset_of!(RxqHandle, cqe_pi) == 64);
const _: () = assert!(size_of::<BufDesc>() == 16);
const _: () = assert!(offset_of!(RxqHandle, cqe_ci) == 128);
const _: () = assert!(offset_of!(RxqHandle, mcst_qp) == 192);
const _: () = assert!(size_of::<TxqHandle>() == 512);
const _: () = assert!(offset_of!(TxqHandle, desc_num) == 16);
const _: () = assert!(offset_of!(TxqHandle, cq_num) == 24);
const _: () = assert!(offset_of!(TxqHandle, l3_csum) == 32);
const _: () = assert!(offset_of!(TxqHandle, nic_handler) == 36);
const _: () = assert!(offset_of!(TxqHandle, version) == 40);
const _: () = assert!(offset_of!(TxqHandle, sq_rsvd) == 64);
const _: () = assert!(offset_of!(TxqHandle, sq_ready) == 128);
const _: () = assert!(offset_of!(TxqHandle, sq_done) == 192);
const _: () = assert!(offset_of!(TxqHandle, cq_pi) == 256);
const _: () = assert!(offset_of!(TxqHandle, cq_rsvd) == 320);
const _: () = assert!(offset_of!(TxqHandle, cq_ci) == 384);
const _: () = assert!(offset_of!(TxqHandle, lock) == 448);

/// Atomic view of a ring counter that another agent (GPU or CPU thread) also writes.
///
/// # Safety
/// `p` points to a live, 8-byte aligned `u64` that is only accessed atomically while the
/// returned reference is used.
pub(crate) unsafe fn counter<'a>(p: *mut RingIndex) -> &'a AtomicU64 {
    // SAFETY: per this function's contract; `value` is the first field of a 64-byte
    // aligned-enough repr(C) struct.
    unsafe { AtomicU64::from_ptr(std::ptr::addr_of_mut!((*p).value)) }
}

/// Loads a counter with acquire ordering.
///
/// # Safety
/// As [`counter`].
pub(crate) unsafe fn load_acquire(p: *mut RingIndex) -> u64 {
    // SAFETY: per contract.
    unsafe { counter(p) }.load(Ordering::Acquire)
}

/// Stores a counter with release ordering.
///
/// # Safety
/// As [`counter`].
pub(crate) unsafe fn store_release(p: *mut RingIndex, v: u64) {
    // SAFETY: per contract.
    unsafe { counter(p) }.store(v, Ordering::Release)
}

/// Decodes a wait-on-time value (BE64 of `seconds << 32 | nanoseconds`) to nanoseconds.
pub fn wait_on_time_to_ns(value: u64) -> u64 {
    let v = u64::from_be(value);
    (v >> 32) * 1_000_000_000 + (v & 0xffff_ffff)
}

/// Encodes nanoseconds as a wait-on-time value (the inverse of [`wait_on_time_to_ns`]).
pub fn ns_to_wait_on_time(ns: u64) -> u64 {
    (((ns / 1_000_000_000) << 32) | (ns % 1_000_000_000)).to_be()
}

/// CLOCK_REALTIME in nanoseconds.
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_on_time_round_trips_and_is_big_endian() {
        let ns = 1_700_000_123_456_789_012u64;
        let v = ns_to_wait_on_time(ns);
        assert_eq!(wait_on_time_to_ns(v), ns);
        let host = u64::from_be(v);
        assert_eq!(host >> 32, ns / 1_000_000_000);
        assert_eq!(host & 0xffff_ffff, ns % 1_000_000_000);
    }
}
