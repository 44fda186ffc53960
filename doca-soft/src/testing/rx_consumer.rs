//! The consumer side of an RX ring, on the CPU: the same algorithm as
//! `doca_gpu_dev_eth_rxq_recv` (thread scope) in `include/doca_gpunetio_dev_eth_rxq.cuh`,
//! reading the same structs. Tests drive the ring protocol with it; it also lets a host-memory
//! queue be consumed without a GPU.

use crate::eth::ring::{self, RxCqe, RxqHandle};
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
    /// `h` points to a live handle whose `pkt_addr` and `cqe_addr` are CPU pointers to the
    /// packet ring and completion ring, alive as long as this value; there is one consumer.
    pub unsafe fn new(h: *mut RxqHandle) -> CpuRxq {
        CpuRxq { h }
    }

    fn handle(&self) -> &RxqHandle {
        // SAFETY: per `new`'s contract; only the immutable configuration is read through it.
        unsafe { &*self.h }
    }

    fn cqe(&self, idx: u64) -> RxCqe {
        let h = self.handle();
        let i = (idx % u64::from(h.cqe_num)) as usize;
        // SAFETY: `cqe_addr` points to `cqe_num` entries (per `new`); entries below cqe_pi
        // are not written by the producer until consumed.
        unsafe { std::ptr::read_volatile((h.cqe_addr as *const RxCqe).add(i)) }
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
            let c = self.cqe(ci + u64::from(k));
            let attr = RxAttr {
                timestamp_ns: c.timestamp_ns,
                bytes: c.bytes,
                padding: 0,
            };
            f(k, attr, self.pkt(first + u64::from(k), c.bytes));
        }
        self.release(ci, n);
        n
    }

    fn release(&self, ci: u64, n: u32) {
        // SAFETY: the handle is live; only this consumer writes cqe_ci. Release hands the
        // entries back to the producer.
        unsafe { ring::store_release(&mut (*self.h).cqe_ci, ci + u64::from(n)) };
    }

    /// Waits per the recv rules; returns (first slot, count, consumer index).
    fn wait(&self, max_rx_pkts: u32, timeout_ns: u64) -> (u64, u32, u64) {
        let h = self.h;
        // SAFETY: the handle is live; only this consumer writes cqe_ci.
        let ci = unsafe { ring::load_acquire(&mut (*h).cqe_ci) };
        let start = Instant::now();
        let avail = loop {
            // SAFETY: as above.
            let pi = unsafe { ring::load_acquire(&mut (*h).cqe_pi) };
            let avail = pi.wrapping_sub(ci);
            if max_rx_pkts != 0 && avail >= u64::from(max_rx_pkts) {
                break u64::from(max_rx_pkts);
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
        (u64::from(self.cqe(ci).slot), avail as u32, ci)
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
                let c = self.cqe(ci + k as u64);
                *out = RxAttr {
                    timestamp_ns: c.timestamp_ns,
                    bytes: c.bytes,
                    padding: 0,
                };
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
        self.cqe(packet_idx).bytes
    }

    /// `doca_gpu_dev_eth_rxq_get_pkt_ts`.
    pub fn pkt_ts(&self, packet_idx: u64) -> u64 {
        self.cqe(packet_idx).timestamp_ns
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
