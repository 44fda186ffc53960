//! The producer side of an RX ring: what the port's dispatcher calls for frames classified
//! to a queue. Frames are staged into consecutive packet slots; at the end of a dispatcher
//! batch (`flush`) staged runs of contiguous slots reach device memory in one copy each, and
//! the completions are published with release ordering. A frame that does not fit the
//! completion ring is dropped and counted; unconsumed entries are never overwritten.
//!
//! Several receive lanes may feed one ring: `push` and `flush` serialize on the staging
//! lock, each push takes the next index and writes its slot and completion under it, and a
//! flush publishes every completion written so far (whichever lane wrote it), after copying
//! the staged run. One lane's frames keep their order; frames of different lanes interleave.
//! Per push: one lock round trip and no other atomic read-modify-write (the received count
//! is kept under the lock and added at flush; the consumer index is re-read only when the
//! ring looks full).

use super::counters::RxqCounters;
use super::mem::{DeviceMem, PktBuf, SharedBlock};
use super::ring::{self, BufDesc, RxCqe, RxqHandle, RING_VERSION};
use crate::error::{DocaError, DocaResult};
use crate::port::{DropReason, RxSink};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

struct Staging {
    /// Producer index of the next frame (published or not).
    next: u64,
    /// Consumer index as last read (it only grows; re-read when the ring looks full).
    ci: u64,
    /// Frames received under the lock since the last flush (added to the counter there).
    received: u64,
    /// Slot of the first staged frame not yet copied (device buffers).
    run_first_slot: u32,
    /// Bytes of the staged run: `run_len` slots of `max_pkt` bytes (device buffers).
    run: Vec<u8>,
    run_len: u32,
}

/// An RX queue's ring and its producer state.
pub struct RxRing {
    handle: SharedBlock,
    cqes: SharedBlock,
    /// Per-slot buffer descriptors for the legacy device API (kept alive with the ring).
    _bufs: SharedBlock,
    pkt: PktBuf,
    pkt_num: u32,
    max_pkt: u32,
    staging: Mutex<Staging>,
    stopped: AtomicBool,
    counters: RxqCounters,
}

impl RxRing {
    /// A ring over `pkt` with slots of `max_pkt` bytes; rings and the handle live in
    /// device-mapped memory of `device` (host memory when None).
    pub fn new(
        pkt: PktBuf,
        max_pkt: u32,
        device: Option<&Arc<dyn DeviceMem>>,
    ) -> DocaResult<RxRing> {
        if max_pkt == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        let pkt_num = pkt.len / max_pkt as usize;
        if pkt_num == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        let pkt_num = u32::try_from(pkt_num).map_err(|_| DocaError::INVALID_VALUE)?;
        let handle = SharedBlock::new(std::mem::size_of::<RxqHandle>(), device)?;
        let cqes = SharedBlock::new(pkt_num as usize * std::mem::size_of::<RxCqe>(), device)?;
        let bufs = SharedBlock::new(pkt_num as usize * std::mem::size_of::<BufDesc>(), device)?;
        for slot in 0..pkt_num as usize {
            let d = BufDesc {
                addr: pkt.addr + (slot * max_pkt as usize) as u64,
                mkey: pkt.mkey.to_be(),
                rsvd: 0,
            };
            // SAFETY: slot < pkt_num entries of the block (device-mapped: CPU-writable).
            unsafe { std::ptr::write((bufs.cpu() as *mut BufDesc).add(slot), d) };
        }
        let h = RxqHandle {
            pkt_addr: pkt.addr,
            cqe_addr: cqes.dev(),
            buf_addr: bufs.dev(),
            pkt_mkey: pkt.mkey.to_be(),
            pkt_num,
            max_pkt_sz: max_pkt,
            cqe_num: pkt_num,
            version: RING_VERSION,
            ..Default::default()
        };
        // SAFETY: the block is at least size_of::<RxqHandle>() bytes and page aligned (or
        // device-mapped memory with the allocator's alignment).
        unsafe { std::ptr::write(handle.cpu() as *mut RxqHandle, h) };
        Ok(RxRing {
            handle,
            cqes,
            _bufs: bufs,
            pkt,
            pkt_num,
            max_pkt,
            staging: Mutex::new(Staging {
                next: 0,
                ci: 0,
                received: 0,
                run_first_slot: 0,
                run: Vec::new(),
                run_len: 0,
            }),
            stopped: AtomicBool::new(false),
            counters: RxqCounters::default(),
        })
    }

    /// Handle address for the consumer (`doca_eth_rxq_get_gpu_handle`).
    pub fn handle_dev(&self) -> u64 {
        self.handle.dev()
    }

    /// CPU pointer to the handle.
    pub fn handle_cpu(&self) -> *mut RxqHandle {
        self.handle.cpu() as *mut RxqHandle
    }

    /// Packet slots.
    #[cfg(any(test, feature = "testing"))]
    pub fn pkt_num(&self) -> u32 {
        self.pkt_num
    }

    /// The queue's counters.
    pub fn counters(&self) -> &RxqCounters {
        &self.counters
    }

    /// Stops (true) or resumes (false) accepting frames.
    pub fn set_stopped(&self, stopped: bool) {
        self.stopped.store(stopped, Ordering::Release);
    }

    fn staging(&self) -> std::sync::MutexGuard<'_, Staging> {
        self.staging.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn cqe_ptr(&self, idx: u64) -> *mut RxCqe {
        let i = (idx % u64::from(self.pkt_num)) as usize;
        // SAFETY: i < pkt_num entries of the completion block.
        unsafe { (self.cqes.cpu() as *mut RxCqe).add(i) }
    }

    /// One frame for this queue. Counted as received; dropped when too big, when the ring
    /// is full or when stopped.
    pub fn push(&self, frame: &[u8], timestamp_ns: u64) -> Result<(), DropReason> {
        if self.stopped.load(Ordering::Acquire) {
            self.counters.received.fetch_add(1, Ordering::Relaxed);
            self.counters
                .dropped_stopped
                .fetch_add(1, Ordering::Relaxed);
            return Err(DropReason::Stopped);
        }
        if frame.len() > self.max_pkt as usize {
            self.counters.received.fetch_add(1, Ordering::Relaxed);
            self.counters
                .dropped_too_big
                .fetch_add(1, Ordering::Relaxed);
            return Err(DropReason::TooBig);
        }
        let mut st = self.staging();
        st.received += 1;
        if st.next.wrapping_sub(st.ci) >= u64::from(self.pkt_num) {
            // SAFETY: the handle block holds an RxqHandle for the ring's lifetime.
            st.ci = unsafe { ring::load_acquire(&mut (*self.handle_cpu()).cqe_ci) };
        }
        if st.next.wrapping_sub(st.ci) >= u64::from(self.pkt_num) {
            self.counters
                .dropped_ring_full
                .fetch_add(1, Ordering::Relaxed);
            return Err(DropReason::RingFull);
        }
        let slot = (st.next % u64::from(self.pkt_num)) as u32;
        let slot_off = slot as usize * self.max_pkt as usize;
        if self.pkt.host.is_some() {
            if self.pkt.write(slot_off, frame).is_err() {
                self.counters.errors.fetch_add(1, Ordering::Relaxed);
                return Err(DropReason::Stopped);
            }
        } else {
            // Device memory: stage into a run of contiguous slots; a wrap ends the run.
            if st.run_len > 0 && slot != st.run_first_slot + st.run_len {
                self.copy_run(&mut st);
            }
            if st.run_len == 0 {
                st.run_first_slot = slot;
            }
            let base = st.run.len();
            st.run.resize(base + self.max_pkt as usize, 0);
            st.run[base..base + frame.len()].copy_from_slice(frame);
            st.run_len += 1;
        }
        let cqe = RxCqe {
            slot,
            bytes: frame.len() as u32,
            timestamp_ns,
        };
        // SAFETY: entry `next` is not visible to the consumer until cqe_pi passes it, and
        // the full check above guarantees the consumer is done with its previous use.
        unsafe { std::ptr::write_volatile(self.cqe_ptr(st.next), cqe) };
        st.next += 1;
        Ok(())
    }

    fn copy_run(&self, st: &mut Staging) {
        if st.run_len == 0 {
            return;
        }
        let off = st.run_first_slot as usize * self.max_pkt as usize;
        if self.pkt.write(off, &st.run).is_err() {
            self.counters.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.counters.device_copies.fetch_add(1, Ordering::Relaxed);
        st.run.clear();
        st.run_len = 0;
    }

    /// End of a dispatcher batch: copy staged runs and publish their completions.
    pub fn flush(&self) {
        let mut st = self.staging();
        self.copy_run(&mut st);
        if st.received > 0 {
            self.counters
                .received
                .fetch_add(st.received, Ordering::Relaxed);
            st.received = 0;
        }
        // SAFETY: the handle block holds an RxqHandle for the ring's lifetime.
        let pi_ptr = unsafe { &mut (*self.handle_cpu()).cqe_pi as *mut _ };
        // SAFETY: as above.
        let old = unsafe { ring::load_acquire(pi_ptr) };
        if st.next != old {
            std::sync::atomic::fence(Ordering::SeqCst);
            // SAFETY: as above; release publishes the slots and entries written before.
            unsafe { ring::store_release(pi_ptr, st.next) };
            self.counters
                .delivered
                .fetch_add(st.next - old, Ordering::Relaxed);
        }
    }
}

impl RxSink for RxRing {
    fn push(&self, frame: &[u8], timestamp_ns: u64) -> Result<(), DropReason> {
        RxRing::push(self, frame, timestamp_ns)
    }

    fn flush(&self) {
        RxRing::flush(self)
    }
}
