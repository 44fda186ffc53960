//! The producer side of an RX ring: what the port's dispatcher calls for frames classified
//! to a queue. It plays a ConnectX receive queue on DOCA 3.3's ring format: packet slot k
//! is RQ WQE k (one mlx5 data segment each), and every frame gets an `mlx5_cqe64`
//! (RESP_SEND, byte count, `sec << 32 | ns` timestamp, the slot in `wqe_counter`, owner bit
//! = pass parity). Frames are staged into consecutive packet slots; at the end of a
//! dispatcher batch (`flush`) staged runs of contiguous slots reach device memory in one
//! copy each, then their completions are written, each one's `op_own` byte last with
//! release ordering (that byte is what the receiver polls). A frame that does not fit
//! (`pkt_num` completions not yet consumed, per the receiver's 64-bit `cqe_ci`) is dropped
//! and counted; unconsumed entries are never overwritten.
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
use super::ring::{self, BufDesc, Doorbells, RxqHandle, RX_MAX_SLOTS, SOFT_QPN};
use crate::error::{DocaError, DocaResult};
use crate::port::{DropReason, RxSink};
use doca_soft_packet::mlx5::{self, cqe, Cqe, DataSeg};
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
    /// Completions below this index are published (op_own written); those from here to
    /// `next` have their bodies written and are published at flush.
    published: u64,
}

/// An RX queue's ring and its producer state.
pub struct RxRing {
    handle: SharedBlock,
    cqes: SharedBlock,
    /// RQ WQEs, per-slot buffer descriptors for the legacy device API and the doorbell
    /// records (kept alive with the ring).
    _rq: SharedBlock,
    _bufs: SharedBlock,
    _dbs: SharedBlock,
    pkt: PktBuf,
    pkt_num: u32,
    max_pkt: u32,
    staging: Mutex<Staging>,
    stopped: AtomicBool,
    counters: RxqCounters,
}

impl RxRing {
    /// A ring over `pkt` with slots of `max_pkt` bytes; rings and the handle live in
    /// device-mapped memory of `device` (host memory when None). The slot count is the
    /// largest power of two that fits the buffer (at most [`RX_MAX_SLOTS`]): mlx5 rings are
    /// powers of two, and completion k then names slot k & mask, as 3.3 reads it.
    pub fn new(
        pkt: PktBuf,
        max_pkt: u32,
        device: Option<&Arc<dyn DeviceMem>>,
    ) -> DocaResult<RxRing> {
        if max_pkt == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        let fit = pkt.len / max_pkt as usize;
        if fit == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        let fit = u32::try_from(fit).unwrap_or(u32::MAX).min(RX_MAX_SLOTS);
        let pkt_num = 1u32 << (31 - fit.leading_zeros());
        let n = pkt_num as usize;
        let handle = SharedBlock::new(std::mem::size_of::<RxqHandle>(), device)?;
        let cqes = SharedBlock::new(n * mlx5::CQE_SIZE, device)?;
        let rq = SharedBlock::new(n * 16, device)?;
        let bufs = SharedBlock::new(n * std::mem::size_of::<BufDesc>(), device)?;
        let dbs = SharedBlock::new(std::mem::size_of::<Doorbells>(), device)?;
        // SAFETY: the block holds `n` 64-byte completions (device-mapped: CPU-writable).
        unsafe { cqe::init_ring(cqes.cpu(), pkt_num) };
        for slot in 0..n {
            let addr = pkt.addr + (slot * max_pkt as usize) as u64;
            let d = BufDesc {
                addr,
                mkey: pkt.mkey.to_be(),
                rsvd: 0,
            };
            let w = DataSeg {
                byte_count: max_pkt,
                lkey_raw: pkt.mkey.to_be(),
                addr,
            }
            .encode();
            // SAFETY: slot < n entries of each block (device-mapped: CPU-writable).
            unsafe {
                std::ptr::write((bufs.cpu() as *mut BufDesc).add(slot), d);
                std::ptr::copy_nonoverlapping(w.as_ptr(), rq.cpu().add(slot * 16), 16);
            }
        }
        // Every slot is posted: the RQ doorbell record holds the producer index pkt_num.
        let db = dbs.cpu() as *mut Doorbells;
        // SAFETY: the block holds a zeroed Doorbells.
        unsafe { (*db).wq_db_rec.value = u64::from((pkt_num & 0xffff).to_be()) };
        let at = |off: usize| dbs.dev() + off as u64;
        let h = RxqHandle {
            pkt_addr: pkt.addr,
            pkt_mkey: pkt.mkey.to_be(),
            pkt_num,
            max_pkt_sz: max_pkt,
            wqe_addr: rq.dev(),
            wqe_db_rec: at(std::mem::offset_of!(Doorbells, wq_db_rec)),
            wqe_pi: u64::from(pkt_num),
            wqe_num: pkt_num,
            wqe_mask: pkt_num - 1,
            cqe_num: pkt_num,
            cqe_mask: pkt_num - 1,
            cqe_addr: cqes.dev(),
            cq_db_rec: at(std::mem::offset_of!(Doorbells, cq_db_rec)),
            buf_addr: bufs.dev(),
            ..Default::default()
        };
        // SAFETY: the block is at least size_of::<RxqHandle>() bytes and page aligned (or
        // device-mapped memory with the allocator's alignment).
        unsafe { std::ptr::write(handle.cpu() as *mut RxqHandle, h) };
        Ok(RxRing {
            handle,
            cqes,
            _rq: rq,
            _bufs: bufs,
            _dbs: dbs,
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
                published: 0,
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

    fn cqe_ptr(&self, idx: u64) -> *mut u8 {
        let i = (idx & u64::from(self.pkt_num - 1)) as usize;
        // SAFETY: i < pkt_num entries of the completion block.
        unsafe { self.cqes.cpu().add(i * mlx5::CQE_SIZE) }
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
            st.ci = unsafe { ring::load_word(&mut (*self.handle_cpu()).cqe_ci) };
        }
        if st.next.wrapping_sub(st.ci) >= u64::from(self.pkt_num) {
            self.counters
                .dropped_ring_full
                .fetch_add(1, Ordering::Relaxed);
            return Err(DropReason::RingFull);
        }
        let slot = (st.next & u64::from(self.pkt_num - 1)) as u32;
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
        let c = Cqe {
            opcode: mlx5::cqe_opcode::RESP_SEND,
            owner: cqe::owner_of(st.next, self.pkt_num),
            byte_cnt: frame.len() as u32,
            timestamp: mlx5::time_to_sec_ns(timestamp_ns),
            qpn: SOFT_QPN,
            wqe_counter: slot as u16,
            syndrome: 0,
        };
        // SAFETY: entry `next` is free (the full check above) and not present until its
        // op_own is written at flush; only this producer, under the lock, writes it.
        unsafe { cqe::write_body(self.cqe_ptr(st.next), &c) };
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
        if st.published == st.next {
            return;
        }
        // The frames' bytes are in place (host slots written at push, device runs copied
        // above): publish their completions in order, each op_own with release ordering.
        for idx in st.published..st.next {
            let op_own = (mlx5::cqe_opcode::RESP_SEND << 4) | cqe::owner_of(idx, self.pkt_num);
            // SAFETY: the body of entry `idx` was written at push, under this lock.
            unsafe { cqe::publish(self.cqe_ptr(idx), op_own) };
        }
        self.counters
            .delivered
            .fetch_add(st.next - st.published, Ordering::Relaxed);
        st.published = st.next;
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
