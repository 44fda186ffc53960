//! The producer side of a TX ring, on the CPU: the same algorithm as the device API's
//! `doca_gpu_dev_eth_txq_send` / `_wait_send` / `_poll_completion`
//! (`include/doca_gpunetio_dev_eth_txq.cuh`) on the same structs. Tests drive the TX proxy
//! with it; a host-memory queue can also be fed without a GPU.

use crate::error::{DocaError, DocaResult};
use crate::eth::ring::{self, TxCqe, TxDesc, TxqHandle};
use crate::eth::ring::{TX_FLAG_L3_CSUM, TX_FLAG_L4_CSUM, TX_FLAG_NOTIFY, TX_OP_SEND, TX_OP_WAIT};
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
    /// `h` points to a live handle whose `desc_addr`/`cq_addr` are CPU pointers, alive as
    /// long as this value.
    pub unsafe fn new(h: *mut TxqHandle) -> CpuTxq {
        CpuTxq { h }
    }

    fn cfg(&self) -> &TxqHandle {
        // SAFETY: per `new`; only immutable configuration is read through it.
        unsafe { &*self.h }
    }

    /// Reserves `n` consecutive descriptor slots, waiting for the proxy to free space.
    fn reserve(&self, n: u64) -> u64 {
        // SAFETY: the handle is live; counters are accessed atomically.
        let start = unsafe { ring::counter(&mut (*self.h).sq_rsvd) }.fetch_add(n, Ordering::AcqRel);
        let num = u64::from(self.cfg().desc_num);
        // SAFETY: as above.
        while start + n - unsafe { ring::load_acquire(&mut (*self.h).sq_done) } > num {
            std::hint::spin_loop();
        }
        start
    }

    fn write(&self, idx: u64, d: TxDesc) {
        let i = (idx & u64::from(self.cfg().desc_mask)) as usize;
        // SAFETY: i < desc_num; the slot is reserved by this producer and free (reserve).
        unsafe { std::ptr::write_volatile((self.cfg().desc_addr as *mut TxDesc).add(i), d) };
    }

    /// Publishes `[start, start+n)` in order after earlier reservations.
    fn mark_ready(&self, start: u64, n: u64) {
        // SAFETY: the handle is live; counters are accessed atomically.
        let ready = unsafe { ring::counter(&mut (*self.h).sq_ready) };
        while ready.load(Ordering::Acquire) != start {
            std::hint::spin_loop();
        }
        fence(Ordering::SeqCst);
        ready.store(start + n, Ordering::Release);
    }

    fn send_desc(&self, idx: u64, addr: u64, mkey_be: u32, size: u32, notify: bool) -> TxDesc {
        let c = self.cfg();
        let mut flags = if notify { TX_FLAG_NOTIFY } else { 0 };
        if c.l3_csum != 0 {
            flags |= TX_FLAG_L3_CSUM;
        }
        if c.l4_csum != 0 {
            flags |= TX_FLAG_L4_CSUM;
        }
        TxDesc {
            addr,
            len: size,
            mkey: mkey_be,
            opcode: TX_OP_SEND,
            flags,
            wqe_index: idx,
            ..Default::default()
        }
    }

    /// `txq_send` (thread scope): one frame; returns the ticket (descriptor index).
    pub fn send(&self, addr: u64, mkey_be: u32, size: u32, notify: bool) -> u64 {
        let idx = self.reserve(1);
        self.write(idx, self.send_desc(idx, addr, mkey_be, size, notify));
        self.mark_ready(idx, 1);
        idx
    }

    /// `txq_wait_send` (thread scope): a WAIT descriptor, then the send; returns the send's
    /// ticket.
    pub fn wait_send(
        &self,
        wait_on_time: u64,
        addr: u64,
        mkey_be: u32,
        size: u32,
        notify: bool,
    ) -> u64 {
        let idx = self.reserve(2);
        self.write(
            idx,
            TxDesc {
                opcode: TX_OP_WAIT,
                wait_on_time,
                wqe_index: idx,
                ..Default::default()
            },
        );
        self.write(
            idx + 1,
            self.send_desc(idx + 1, addr, mkey_be, size, notify),
        );
        self.mark_ready(idx, 2);
        idx + 1
    }

    /// `txq_poll_completion`: waits (blocking) or checks (non-blocking) for `num_cqe`
    /// completions; returns how many completed. UNEXPECTED when one of them is an error.
    pub fn poll_completion(&self, num_cqe: u32, blocking: bool) -> DocaResult<u32> {
        let n = u64::from(num_cqe);
        // SAFETY: the handle is live; counters are accessed atomically.
        let (rsvd, pi) = unsafe {
            (
                ring::counter(&mut (*self.h).cq_rsvd),
                ring::counter(&mut (*self.h).cq_pi),
            )
        };
        let start = if blocking {
            rsvd.fetch_add(n, Ordering::AcqRel)
        } else {
            // Reserve only when everything is there, so nothing is lost on a partial check.
            let cur = rsvd.load(Ordering::Acquire);
            let avail = pi.load(Ordering::Acquire).saturating_sub(cur);
            if avail < n
                || rsvd
                    .compare_exchange(cur, cur + n, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                return Ok(avail.min(n) as u32);
            }
            cur
        };
        while pi.load(Ordering::Acquire) < start + n {
            std::hint::spin_loop();
        }
        let mut err = false;
        for k in start..start + n {
            let i = (k & u64::from(self.cfg().cq_mask)) as usize;
            // SAFETY: entry k was published (cq_pi > k) and is not reused before cq_ci moves.
            let c: TxCqe =
                unsafe { std::ptr::read_volatile((self.cfg().cq_addr as *const TxCqe).add(i)) };
            err |= c.status != 0;
        }
        // SAFETY: as above.
        unsafe { ring::counter(&mut (*self.h).cq_ci) }.fetch_max(start + n, Ordering::AcqRel);
        if err {
            Err(DocaError::UNEXPECTED)
        } else {
            Ok(num_cqe)
        }
    }
}
