//! The consumer side of an RX ring, on the CPU: the same algorithm as
//! `doca_gpu_dev_eth_rxq_recv` (thread scope) in `include/doca_gpunetio_dev_eth_rxq.cuh`,
//! on the same mlx5 ring: completions are present when their owner bit matches the pass,
//! the first packet's slot is the first completion's `wqe_counter & wqe_mask`, and the
//! receiver hands entries back by advancing `cqe_ci` and the CQ/RQ doorbell records. Tests
//! drive the ring protocol with it; it also lets a host-memory queue be consumed without a
//! GPU.

use crate::eth::ring::{self, RxqHandle};
use crate::mlx5::{self, cqe, Cqe};
use std::time::Instant;

/// `DOCA_GPUNETIO_ETH_RX_NO_PKT`: first index reported when nothing was received.
pub const RX_NO_PKT: u64 = u64::MAX;

/// `struct doca_gpu_dev_eth_rxq_attr`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RxAttr {
    /// Receive time in ns.
    pub timestamp_ns: u64,
    /// Frame length.
    pub bytes: u32,
    /// Padding.
    pub padding: u32,
}

const _: () = assert!(std::mem::size_of::<RxAttr>() == 16);

/// A borrowed RX handle whose addresses are CPU pointers (host-memory queues).
pub struct CpuRxq {
    h: *mut RxqHandle,
}

impl CpuRxq {
    /// Wraps a handle.
    ///
    /// # Safety
    /// `h` points to a live handle whose `pkt_addr`, `cqe_addr` and doorbell record
    /// addresses are CPU pointers, alive as long as this value; there is one consumer.
    pub unsafe fn new(h: *mut RxqHandle) -> CpuRxq {
        CpuRxq { h }
    }

    fn handle(&self) -> &RxqHandle {
        // SAFETY: per `new`'s contract; only the immutable configuration is read through it.
        unsafe { &*self.h }
    }

    fn slot(&self, idx: u64) -> *const u8 {
        let h = self.handle();
        let i = (idx & u64::from(h.cqe_mask)) as usize;
        (h.cqe_addr as usize + i * mlx5::CQE_SIZE) as *const u8
    }

    /// The completion in the slot of completion (or packet) index `idx`, as
    /// `doca_gpu_dev_eth_rxq_get_pkt_cqe` returns it (it may be stale once the ring laps).
    pub fn cqe_at(&self, idx: u64) -> Cqe {
        // SAFETY: `cqe_addr` points to `cqe_num` 64-byte entries (per `new`).
        Cqe::decode(&unsafe { cqe::read(self.slot(idx)) })
    }

    fn present(&self, idx: u64) -> bool {
        // SAFETY: as in `cqe_at`.
        let op = unsafe { cqe::load_op_own(self.slot(idx)) };
        cqe::present(op, idx, self.handle().cqe_num)
    }

    /// The attributes of completion `idx` (only its byte count and timestamp are read).
    fn attr_at(&self, idx: u64) -> RxAttr {
        // SAFETY: as in `cqe_at`.
        let (bytes, ts) = unsafe { cqe::read_len_ts(self.slot(idx)) };
        RxAttr {
            timestamp_ns: mlx5::sec_ns_to_time(ts),
            bytes,
            padding: 0,
        }
    }

    /// Like [`CpuRxq::recv`], but runs `f(k, attr, payload)` for each received packet before
    /// the consumer index advances, so the producer cannot reuse the slots meanwhile.
    pub fn recv_with(
        &self,
        max_rx_pkts: u32,
        timeout_ns: u64,
        mut f: impl FnMut(u32, RxAttr, &[u8]),
    ) -> u32 {
        let (first, n, ci) = self.wait(max_rx_pkts, timeout_ns);
        for k in 0..n {
            let a = self.attr_at(ci + u64::from(k));
            f(k, a, self.pkt(first + u64::from(k), a.bytes));
        }
        self.release(ci, n);
        n
    }

    /// Hands `n` completions (and their slots) back: consumer index, CQ doorbell record,
    /// RQ producer index and doorbell record, as the device receive does.
    fn release(&self, ci: u64, n: u32) {
        if n == 0 {
            return;
        }
        let h = self.h;
        let next = ci + u64::from(n);
        // SAFETY: the handle and its doorbell records are live; only this consumer writes
        // them. Release hands the entries back to the producer.
        unsafe {
            let pi = (*h).wqe_pi + u64::from(n);
            (*h).wqe_pi = pi;
            ring::store_word(
                (*h).cq_db_rec as *mut u64,
                u64::from(((next & 0xff_ffff) as u32).to_be()),
            );
            ring::store_word(
                (*h).wqe_db_rec as *mut u64,
                u64::from(((pi & 0xffff) as u32).to_be()),
            );
            ring::store_word(&mut (*h).cqe_ci, next);
        }
    }

    /// Present completions from `ci` on, up to `limit` (<= cqe_num), `have` known present:
    /// as the device receive counts them (completions arrive in order): one read when all
    /// `limit` are there, else a binary search.
    fn count(&self, ci: u64, have: u64, limit: u64) -> u64 {
        if have >= limit {
            return have;
        }
        if self.present(ci + limit - 1) {
            return limit;
        }
        let (mut lo, mut hi) = (have, limit - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.present(ci + mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Waits per the recv rules; returns (first slot, count, consumer index).
    fn wait(&self, max_rx_pkts: u32, timeout_ns: u64) -> (u64, u32, u64) {
        // SAFETY: the handle is live; only this consumer writes cqe_ci.
        let ci = unsafe { ring::load_word(&mut (*self.h).cqe_ci) };
        let ring = u64::from(self.handle().cqe_num);
        let limit = match u64::from(max_rx_pkts) {
            0 => ring,
            m => m.min(ring),
        };
        let start = Instant::now();
        let mut have = 0;
        let avail = loop {
            let avail = self.count(ci, have, limit);
            have = avail;
            if max_rx_pkts != 0 && avail >= limit {
                break limit;
            }
            if timeout_ns != 0 && start.elapsed().as_nanos() as u64 >= timeout_ns {
                break avail;
            }
            if max_rx_pkts == 0 && timeout_ns == 0 && avail > 0 {
                break avail;
            }
            std::hint::spin_loop();
        };
        if avail == 0 {
            return (RX_NO_PKT, 0, ci);
        }
        let first = u64::from(self.cqe_at(ci).wqe_counter) & u64::from(self.handle().wqe_mask);
        (first, avail as u32, ci)
    }

    /// Receives up to `max_rx_pkts` (0 = no count limit) waiting at most `timeout_ns`
    /// (0 = no time limit; with both 0 this waits for at least one packet). Returns
    /// `(first_pkt_idx, count)`; attributes of packet k go to `attrs[k]` when given (and
    /// long enough). Advances the consumer index.
    pub fn recv(
        &self,
        max_rx_pkts: u32,
        timeout_ns: u64,
        attrs: Option<&mut [RxAttr]>,
    ) -> (u64, u32) {
        let (first, n, ci) = self.wait(max_rx_pkts, timeout_ns);
        if let Some(a) = attrs {
            for (k, out) in a.iter_mut().take(n as usize).enumerate() {
                *out = self.attr_at(ci + k as u64);
            }
        }
        self.release(ci, n);
        (first, n)
    }

    /// `doca_gpu_dev_eth_rxq_get_pkt_addr`: slot address with a single wrap.
    pub fn pkt_addr(&self, packet_idx: u64) -> u64 {
        let h = self.handle();
        let n = u64::from(h.pkt_num);
        let idx = if packet_idx >= n {
            packet_idx - n
        } else {
            packet_idx
        };
        h.pkt_addr + u64::from(h.max_pkt_sz) * idx
    }

    /// `doca_gpu_dev_eth_rxq_get_pkt_bytes`.
    pub fn pkt_bytes(&self, packet_idx: u64) -> u32 {
        self.cqe_at(packet_idx).byte_cnt
    }

    /// `doca_gpu_dev_eth_rxq_get_pkt_ts`.
    pub fn pkt_ts(&self, packet_idx: u64) -> u64 {
        mlx5::sec_ns_to_time(self.cqe_at(packet_idx).timestamp)
    }

    /// The payload of packet `packet_idx` (`bytes` long).
    pub fn pkt(&self, packet_idx: u64, bytes: u32) -> &[u8] {
        // SAFETY: the slot lies inside the packet ring (single wrap keeps idx < pkt_num for
        // idx < 2*pkt_num) and bytes <= max_pkt_sz as written by the producer.
        unsafe {
            std::slice::from_raw_parts(self.pkt_addr(packet_idx) as *const u8, bytes as usize)
        }
    }
}
