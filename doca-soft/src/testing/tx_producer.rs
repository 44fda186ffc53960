//! The producer side of a TX ring, on the CPU: the same algorithm as the device API's
//! `doca_gpu_dev_eth_txq_send` / `_wait_send` / `_poll_completion`
//! (`include/doca_gpunetio_dev_eth_txq.cuh`) on the same mlx5 ring: reserve WQE indices
//! from `sq_rsvd_index` (waiting while the proxy has not consumed the slots' previous
//! WQEs), write the WQEs, publish them in order through `sq_ready_index`, and submit the
//! producer index to the CPU proxy's slot. Tests drive the TX proxy with it; a host-memory
//! queue can also be fed without a GPU.

use crate::error::{DocaError, DocaResult};
use crate::eth::ring::{self, TxqHandle};
use crate::mlx5::wqe::{self, Ctrl, DataSeg};
use crate::mlx5::{cqe, Cqe};
use std::sync::atomic::{fence, Ordering};

/// A borrowed TX handle whose addresses are CPU pointers (host-memory queues).
pub struct CpuTxq {
    h: *mut TxqHandle,
}

// SAFETY: all shared fields are accessed atomically; the handle outlives the value (per
// `new`'s contract).
unsafe impl Send for CpuTxq {}
// SAFETY: as above.
unsafe impl Sync for CpuTxq {}

impl CpuTxq {
    /// Wraps a handle.
    ///
    /// # Safety
    /// `h` points to a live handle whose ring and doorbell addresses are CPU pointers,
    /// alive as long as this value.
    pub unsafe fn new(h: *mut TxqHandle) -> CpuTxq {
        CpuTxq { h }
    }

    fn cfg(&self) -> &TxqHandle {
        // SAFETY: per `new`; only immutable configuration is read through it.
        unsafe { &*self.h }
    }

    /// Reserves `n` consecutive WQE slots, waiting for the proxy to free space.
    fn reserve(&self, n: u64) -> u64 {
        // SAFETY: the handle is live; counters are accessed atomically.
        let start =
            unsafe { ring::word(&mut (*self.h).sq_rsvd_index) }.fetch_add(n, Ordering::AcqRel);
        let num = u64::from(self.cfg().sq_wqe_num);
        let ci = self.cfg().cpu_proxy_ci as *mut u64;
        // SAFETY: as above.
        while start + n - unsafe { ring::load_word(ci) } > num {
            std::hint::spin_loop();
        }
        start
    }

    /// Writes `bytes` (whole 64-byte blocks) at WQE index `idx`, wrapping.
    fn write(&self, idx: u64, bytes: &[u8]) {
        let c = self.cfg();
        for (k, bb) in bytes.chunks(wqe::WQE_BB).enumerate() {
            let i = ((idx + k as u64) & u64::from(c.sq_wqe_mask)) as usize;
            // SAFETY: i < sq_wqe_num; the slot is reserved by this producer and free.
            // (A plain copy: the release store of the proxy slot publishes it.)
            unsafe {
                let dst = (c.sq_wqe_addr as usize + i * wqe::WQE_BB) as *mut u8;
                std::ptr::copy_nonoverlapping(bb.as_ptr(), dst, bb.len());
            }
        }
    }

    /// Publishes `[start, start+n)` in order after earlier reservations, then submits them
    /// to the proxy (`submit_proxy`: the producer index into `*cpu_proxy_pi`).
    fn mark_ready_and_submit(&self, start: u64, n: u64) {
        // SAFETY: the handle is live; counters are accessed atomically.
        let ready = unsafe { ring::word(&mut (*self.h).sq_ready_index) };
        while ready.load(Ordering::Acquire) != start {
            std::hint::spin_loop();
        }
        fence(Ordering::SeqCst);
        ready.store(start + n, Ordering::Release);
        // SAFETY: as above; the proxy slot is a live word of the doorbell block.
        unsafe {
            ring::word(self.cfg().cpu_proxy_pi as *mut u64).fetch_max(start + n, Ordering::AcqRel);
            ring::word(&mut (*self.h).sq_wqe_pi).fetch_max(start + n, Ordering::AcqRel);
        }
    }

    fn seg(addr: u64, mkey_be: u32, size: u32) -> DataSeg {
        DataSeg {
            byte_count: size,
            lkey_raw: mkey_be,
            addr,
        }
    }

    /// `txq_send` (thread scope): one frame; returns the ticket (WQE index).
    pub fn send(&self, addr: u64, mkey_be: u32, size: u32, notify: bool) -> u64 {
        let idx = self.reserve(1);
        let c = self.cfg();
        let w = wqe::send_wqe(
            idx as u16,
            c.sq_num,
            c.cs_flags,
            notify,
            &[Self::seg(addr, mkey_be, size)],
        );
        self.write(idx, &w);
        self.mark_ready_and_submit(idx, 1);
        idx
    }

    /// `txq_wait_send` (thread scope): a wait-on-time WQE (`wait_on_time` as
    /// `calculate_timestamp` gives it: BE64 of `seconds << 32 | nanoseconds`), then the
    /// send; returns the send's ticket.
    pub fn wait_send(
        &self,
        wait_on_time: u64,
        addr: u64,
        mkey_be: u32,
        size: u32,
        notify: bool,
    ) -> u64 {
        let idx = self.reserve(2);
        let c = self.cfg();
        let w = wqe::wait_wqe(idx as u16, c.sq_num, u64::from_be(wait_on_time), false);
        self.write(idx, &w);
        let s = wqe::send_wqe(
            (idx + 1) as u16,
            c.sq_num,
            c.cs_flags,
            notify,
            &[Self::seg(addr, mkey_be, size)],
        );
        self.write(idx + 1, &s);
        self.mark_ready_and_submit(idx, 2);
        idx + 1
    }

    /// `wqe_prepare_send_empw` + submit: one enhanced multi-packet WQE sending each
    /// `(addr, mkey_be, size)` as its own frame; returns its ticket.
    pub fn send_multi(&self, pkts: &[(u64, u32, u32)], notify: bool) -> u64 {
        let segs: Vec<DataSeg> = pkts.iter().map(|&(a, k, n)| Self::seg(a, k, n)).collect();
        let c = self.cfg();
        let probe = wqe::empw_wqe(0, c.sq_num, c.cs_flags, notify, &segs);
        let bbs = (probe.len() / wqe::WQE_BB) as u64;
        let idx = self.reserve(bbs);
        let w = wqe::empw_wqe(idx as u16, c.sq_num, c.cs_flags, notify, &segs);
        self.write(idx, &w);
        self.mark_ready_and_submit(idx, bbs);
        idx
    }

    /// Posts a WQE written by the caller (`bytes`: whole 64-byte blocks, as many as its DS
    /// needs); the control segment's index is set to the reserved one. Returns the index.
    pub fn post_raw(&self, bytes: &[u8]) -> u64 {
        assert!(!bytes.is_empty() && bytes.len().is_multiple_of(wqe::WQE_BB));
        let bbs = (bytes.len() / wqe::WQE_BB) as u64;
        let idx = self.reserve(bbs);
        let mut w = bytes.to_vec();
        let mut ctrl = Ctrl::decode(&w);
        ctrl.wqe_index = idx as u16;
        w[..16].copy_from_slice(&ctrl.encode());
        self.write(idx, &w);
        self.mark_ready_and_submit(idx, bbs);
        idx
    }

    fn cqe(&self, k: u64) -> (bool, Cqe) {
        let c = self.cfg();
        let slot = (c.cqe_addr as usize + (k & u64::from(c.cqe_mask)) as usize * 64) as *const u8;
        // SAFETY: `cqe_addr` holds cqe_num 64-byte entries (per `new`).
        let b = unsafe { cqe::read(slot) };
        (cqe::present(b[cqe::OP_OWN], k, c.cqe_num), Cqe::decode(&b))
    }

    /// The completion number `k` once present (spins), as `poll_completion_at` reads it.
    pub fn completion(&self, k: u64) -> Cqe {
        loop {
            let (ok, c) = self.cqe(k);
            if ok {
                return c;
            }
            std::hint::spin_loop();
        }
    }

    /// `txq_poll_completion`: waits (blocking) or checks (non-blocking) for `num_cqe`
    /// completions; returns how many completed. UNEXPECTED when one of them is an error.
    pub fn poll_completion(&self, num_cqe: u32, blocking: bool) -> DocaResult<u32> {
        let n = u64::from(num_cqe);
        // SAFETY: the handle is live; counters are accessed atomically.
        let rsvd = unsafe { ring::word(&mut (*self.h).cqe_rsvd) };
        let start = if blocking {
            rsvd.fetch_add(n, Ordering::AcqRel)
        } else {
            // Reserve only when everything is there, so nothing is lost on a partial check.
            let cur = rsvd.load(Ordering::Acquire);
            let mut avail = 0;
            while avail < n && self.cqe(cur + avail).0 {
                avail += 1;
            }
            if avail < n
                || rsvd
                    .compare_exchange(cur, cur + n, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                return Ok(avail as u32);
            }
            cur
        };
        let mut err = false;
        for k in start..start + n {
            err |= crate::mlx5::cqe::is_error(self.completion(k).opcode);
        }
        // SAFETY: as above.
        unsafe { ring::word(&mut (*self.h).cqe_ci) }.fetch_max(start + n, Ordering::AcqRel);
        if err {
            Err(DocaError::UNEXPECTED)
        } else {
            Ok(num_cqe)
        }
    }
}
