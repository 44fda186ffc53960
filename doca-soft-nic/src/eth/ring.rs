//! Rust mirror of the public GPU-side queue structs of `include/doca_gpunetio_eth_def.h`
//! (DOCA 3.3's sizes: mcst QP 112, RX 232, TX 176 bytes), whose rings hold mlx5 WQEs and
//! CQEs (`doca_soft_packet::mlx5`), and the doca-soft side blocks the proxies share with the device
//! API. Sizes and offsets are asserted here, in the C test and under nvcc with the same
//! numbers.

use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicU64, Ordering};

/// `enum doca_gpu_dev_eth_nic_handler` CPU_PROXY: what doca-soft's queues report.
pub const NIC_HANDLER_CPU_PROXY: u32 = 1;
/// Most RQ WQEs (packet slots) per RX queue: the CQE's 16-bit `wqe_counter` names the slot.
pub const RX_MAX_SLOTS: u32 = 1 << 16;
/// Most send WQE slots per TX queue: the 16-bit index of the control segment and doorbell
/// record must tell a full ring from an empty one.
pub const TX_MAX_WQES: u32 = 1 << 15;
/// QP number doca-soft gives every Ethernet queue's send/receive queue (carried in WQEs and
/// CQEs; nothing routes by it).
pub const SOFT_QPN: u32 = 0x00_0e7e;

/// A free-running 64-bit counter alone in its cache line (the CPU proxy's shared slots).
#[repr(C)]
#[derive(Debug, Default)]
pub struct RingIndex {
    /// The counter.
    pub value: u64,
    pad: [u64; 7],
}

/// `struct doca_gpu_eth_mcst_qp`.
#[repr(C)]
#[derive(Debug, Default)]
pub struct McstQp {
    /// Next WQE index handed out.
    pub sq_rsvd_index: u64,
    /// WQEs below are written.
    pub sq_ready_index: u64,
    /// WQEs below were submitted.
    pub sq_wqe_pi: u64,
    /// WQE slots.
    pub sq_wqe_addr: u64,
    /// Doorbell record.
    pub sq_db_rec: u64,
    /// Doorbell.
    pub sq_db: u64,
    /// QP number.
    pub sq_num: u32,
    /// BE32(sq_num << 8).
    pub sq_num_shift8_be: u32,
    /// WQE slots (power of two).
    pub sq_wqe_num: u16,
    /// `sq_wqe_num - 1`.
    pub sq_wqe_mask: u16,
    /// Device-side lock.
    pub sq_lock: i32,
    /// CQE ring.
    pub cqe_addr: u64,
    /// CQ doorbell record.
    pub cq_db_rec: u64,
    /// CQ consumer index.
    pub cqe_ci: u64,
    /// CQ entries.
    pub cqe_num: u32,
    /// `cqe_num - 1`.
    pub cqe_mask: u32,
    /// Key of the byte DUMP WQEs read (big-endian).
    pub dump_mkey: u32,
    pub(crate) rsvd0: u32,
    /// Address of that byte.
    pub dump_addr: u64,
}

/// `struct doca_gpu_eth_rxq`.
#[repr(C)]
#[derive(Debug, Default)]
pub struct RxqHandle {
    /// Device address of packet slot 0.
    pub pkt_addr: u64,
    /// mkey of the packet buffer (big-endian).
    pub pkt_mkey: u32,
    /// Packet slots (= RQ WQEs).
    pub pkt_num: u32,
    /// Slot size.
    pub max_pkt_sz: u32,
    /// Striding RQ (0 in doca-soft).
    pub striding_rq: u8,
    /// Receives with MCST_AUTO post DUMP WQEs (0 in doca-soft).
    pub need_mcst: u8,
    pub(crate) rsvd0: u16,
    /// RQ WQEs: one mlx5 data segment per slot.
    pub wqe_addr: u64,
    /// RQ doorbell record (BE32 of `wqe_pi & 0xffff`).
    pub wqe_db_rec: u64,
    /// RQ producer index (slots posted to the NIC).
    pub wqe_pi: u64,
    /// RQ WQEs.
    pub wqe_num: u32,
    /// `wqe_num - 1`.
    pub wqe_mask: u32,
    /// Striding RQ: strides per WQE.
    pub stride_num: u32,
    /// Striding RQ: stride bytes.
    pub stride_sz: u32,
    /// Consumer index: completions below are consumed (written by the receiver).
    pub cqe_ci: u64,
    /// CQ entries (power of two).
    pub cqe_num: u32,
    /// `cqe_num - 1`.
    pub cqe_mask: u32,
    /// The mlx5_cqe64 ring.
    pub cqe_addr: u64,
    /// CQ doorbell record (BE32 of `cqe_ci & 0xffffff`).
    pub cq_db_rec: u64,
    /// Multicast QP.
    pub mcst_qp: McstQp,
    /// Device address of `BufDesc[pkt_num]`, one per slot (pre-3.2 `doca_gpu_buf` API).
    pub buf_addr: u64,
    pub(crate) rsvd1: [u64; 2],
}

/// `struct doca_gpu_eth_txq`.
#[repr(C)]
#[derive(Debug, Default)]
pub struct TxqHandle {
    /// Next WQE index handed out.
    pub sq_rsvd_index: u64,
    /// WQEs below are written (published in order).
    pub sq_ready_index: u64,
    /// WQEs below were submitted.
    pub sq_wqe_pi: u64,
    /// 64-byte WQE slots.
    pub sq_wqe_addr: u64,
    /// SQ doorbell record (BE32 of `pi & 0xffff`).
    pub sq_db_rec: u64,
    /// SQ doorbell (GPU_SM_DB: the first 8 bytes of a control segment).
    pub sq_db: u64,
    /// QP number.
    pub sq_num: u32,
    /// BE32(sq_num << 8).
    pub sq_num_shift8_be: u32,
    /// BE32(sq_num << 8 | 2).
    pub sq_num_shift8_be_2ds: u32,
    /// BE32(sq_num << 8 | 3).
    pub sq_num_shift8_be_3ds: u32,
    /// BE32(sq_num << 8 | 4).
    pub sq_num_shift8_be_4ds: u32,
    /// WQE slots (power of two).
    pub sq_wqe_num: u16,
    /// `sq_wqe_num - 1`.
    pub sq_wqe_mask: u16,
    /// Device-side lock.
    pub sq_lock: i32,
    /// Ethernet segment checksum flags the queue enabled (`mlx5::CS_L3 | CS_L4`).
    pub cs_flags: u8,
    /// Wait-on-time offload enabled.
    pub wait_on_time: u8,
    /// Completions go to the CQ (else PE events).
    pub completion_on_gpu: u8,
    pub(crate) rsvd0: u8,
    /// The mlx5_cqe64 ring.
    pub cqe_addr: u64,
    /// CQ doorbell record.
    pub cq_db_rec: u64,
    /// CQ consumer index (pollers).
    pub cqe_ci: u64,
    /// CQ reservations (pollers).
    pub cqe_rsvd: u64,
    /// CQ entries (power of two).
    pub cqe_num: u32,
    /// `cqe_num - 1`.
    pub cqe_mask: u32,
    /// `*cpu_proxy_pi`: producer index submitted to the CPU proxy (host order).
    pub cpu_proxy_pi: u64,
    /// `*cpu_proxy_ci`: WQE slots the CPU proxy consumed.
    pub cpu_proxy_ci: u64,
    /// `enum doca_gpu_dev_eth_nic_handler`.
    pub nic_handler: u32,
    pub(crate) rsvd1: u32,
    pub(crate) rsvd2: [u64; 4],
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

/// The doca-soft block behind a queue's doorbell pointers: each word the device writes
/// (doorbell records, doorbell, CPU proxy producer index) or the proxy writes (consumed
/// WQE slots) alone in its cache line.
#[repr(C)]
#[derive(Debug, Default)]
pub struct Doorbells {
    /// SQ (or RQ) doorbell record.
    pub wq_db_rec: RingIndex,
    /// CQ doorbell record.
    pub cq_db_rec: RingIndex,
    /// Doorbell register (GPU_SM_DB writes the first 8 bytes of a control segment).
    pub db: RingIndex,
    /// CPU proxy producer index.
    pub proxy_pi: RingIndex,
    /// WQE slots the proxy consumed.
    pub proxy_ci: RingIndex,
}

const _: () = assert!(size_of::<RingIndex>() == 64);
const _: () = assert!(size_of::<BufDesc>() == 16);
const _: () = assert!(size_of::<McstQp>() == 112);
const _: () = assert!(offset_of!(McstQp, sq_wqe_addr) == 24);
const _: () = assert!(offset_of!(McstQp, sq_num) == 48);
const _: () = assert!(offset_of!(McstQp, sq_wqe_num) == 56);
const _: () = assert!(offset_of!(McstQp, sq_lock) == 60);
const _: () = assert!(offset_of!(McstQp, cqe_addr) == 64);
const _: () = assert!(offset_of!(McstQp, cqe_ci) == 80);
const _: () = assert!(offset_of!(McstQp, dump_mkey) == 96);
const _: () = assert!(offset_of!(McstQp, dump_addr) == 104);
const _: () = assert!(size_of::<RxqHandle>() == 232);
const _: () = assert!(offset_of!(RxqHandle, pkt_mkey) == 8);
const _: () = assert!(offset_of!(RxqHandle, pkt_num) == 12);
const _: () = assert!(offset_of!(RxqHandle, max_pkt_sz) == 16);
const _: () = assert!(offset_of!(RxqHandle, striding_rq) == 20);
const _: () = assert!(offset_of!(RxqHandle, need_mcst) == 21);
const _: () = assert!(offset_of!(RxqHandle, wqe_addr) == 24);
const _: () = assert!(offset_of!(RxqHandle, wqe_db_rec) == 32);
const _: () = assert!(offset_of!(RxqHandle, wqe_pi) == 40);
const _: () = assert!(offset_of!(RxqHandle, wqe_num) == 48);
const _: () = assert!(offset_of!(RxqHandle, wqe_mask) == 52);
const _: () = assert!(offset_of!(RxqHandle, stride_num) == 56);
const _: () = assert!(offset_of!(RxqHandle, cqe_ci) == 64);
const _: () = assert!(offset_of!(RxqHandle, cqe_num) == 72);
const _: () = assert!(offset_of!(RxqHandle, cqe_mask) == 76);
const _: () = assert!(offset_of!(RxqHandle, cqe_addr) == 80);
const _: () = assert!(offset_of!(RxqHandle, cq_db_rec) == 88);
const _: () = assert!(offset_of!(RxqHandle, mcst_qp) == 96);
const _: () = assert!(offset_of!(RxqHandle, buf_addr) == 208);
const _: () = assert!(size_of::<TxqHandle>() == 176);
const _: () = assert!(offset_of!(TxqHandle, sq_ready_index) == 8);
const _: () = assert!(offset_of!(TxqHandle, sq_wqe_pi) == 16);
const _: () = assert!(offset_of!(TxqHandle, sq_wqe_addr) == 24);
const _: () = assert!(offset_of!(TxqHandle, sq_db_rec) == 32);
const _: () = assert!(offset_of!(TxqHandle, sq_db) == 40);
const _: () = assert!(offset_of!(TxqHandle, sq_num) == 48);
const _: () = assert!(offset_of!(TxqHandle, sq_num_shift8_be) == 52);
const _: () = assert!(offset_of!(TxqHandle, sq_num_shift8_be_4ds) == 64);
const _: () = assert!(offset_of!(TxqHandle, sq_wqe_num) == 68);
const _: () = assert!(offset_of!(TxqHandle, sq_wqe_mask) == 70);
const _: () = assert!(offset_of!(TxqHandle, sq_lock) == 72);
const _: () = assert!(offset_of!(TxqHandle, cs_flags) == 76);
const _: () = assert!(offset_of!(TxqHandle, wait_on_time) == 77);
const _: () = assert!(offset_of!(TxqHandle, completion_on_gpu) == 78);
const _: () = assert!(offset_of!(TxqHandle, cqe_addr) == 80);
const _: () = assert!(offset_of!(TxqHandle, cq_db_rec) == 88);
const _: () = assert!(offset_of!(TxqHandle, cqe_ci) == 96);
const _: () = assert!(offset_of!(TxqHandle, cqe_rsvd) == 104);
const _: () = assert!(offset_of!(TxqHandle, cqe_num) == 112);
const _: () = assert!(offset_of!(TxqHandle, cqe_mask) == 116);
const _: () = assert!(offset_of!(TxqHandle, cpu_proxy_pi) == 120);
const _: () = assert!(offset_of!(TxqHandle, cpu_proxy_ci) == 128);
const _: () = assert!(offset_of!(TxqHandle, nic_handler) == 136);

/// Atomic view of a 64-bit word another agent (GPU or CPU thread) also accesses.
///
/// # Safety
/// `p` points to a live, 8-byte aligned `u64` that is only accessed atomically while the
/// returned reference is used.
pub unsafe fn word<'a>(p: *mut u64) -> &'a AtomicU64 {
    // SAFETY: per this function's contract.
    unsafe { AtomicU64::from_ptr(p) }
}

/// Loads a word with acquire ordering.
///
/// # Safety
/// As [`word`].
pub unsafe fn load_word(p: *mut u64) -> u64 {
    // SAFETY: per contract.
    unsafe { word(p) }.load(Ordering::Acquire)
}

/// Stores a word with release ordering.
#[cfg(any(test, feature = "testing"))]
///
/// # Safety
/// As [`word`].
pub unsafe fn store_word(p: *mut u64, v: u64) {
    // SAFETY: per contract.
    unsafe { word(p) }.store(v, Ordering::Release)
}

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
#[cfg(any(test, feature = "testing"))]
pub fn wait_on_time_to_ns(value: u64) -> u64 {
    let v = u64::from_be(value);
    (v >> 32) * 1_000_000_000 + (v & 0xffff_ffff)
}

/// Encodes nanoseconds as a wait-on-time value (the inverse of `wait_on_time_to_ns`).
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
