//! The consumer side of a TX ring: the proxy that plays the NIC. It takes descriptors the
//! producers published (`sq_ready`), reads the frame bytes (host memory directly, device
//! memory through copies), applies checksum offload, honours wait-on-time descriptors against
//! CLOCK_REALTIME, sends on the port, and reports NOTIFY sends and errors: CQ entries when
//! completions are on the GPU, else events the queue raises on its PE.
//!
//! Frames are read a batch of descriptors at a time ([`FrameSource::read_many`]): frames in
//! device-only GPU memory come over in one gather (nearby frames as one span, one stream
//! synchronisation for the batch), since a synchronised copy costs about 10 us whatever its
//! size. Frames behind a WAIT whose time has not come are read with the batch, ahead of
//! time, and kept until it is due, so a scheduled burst leaves with only the sends between
//! its time and the port.

use super::counters::TxqCounters;
use super::mem::{DeviceMem, FrameSeg, FrameSource, SharedBlock};
use super::ring::{self, TxCqe, TxDesc, TxqHandle, RING_VERSION};
use super::ring::{TX_FLAG_L3_CSUM, TX_FLAG_L4_CSUM, TX_FLAG_NOTIFY, TX_OP_NOP};
use super::ring::{TX_OP_SEND, TX_OP_WAIT};
use crate::error::{DocaError, DocaResult};
use crate::packet::checksum;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Where a TX queue's frames go (the port).
pub trait FrameOut: Send + Sync {
    /// Sends one frame.
    fn send(&self, frame: &[u8]) -> DocaResult<()>;
}

/// Settings of a TX ring.
#[derive(Debug, Clone, Copy, Default)]
pub struct TxRingCfg {
    /// Descriptors the producers may have in flight (rounded up to a power of two).
    pub max_burst: u32,
    /// IPv4 header checksum offload.
    pub l3_csum: bool,
    /// UDP/TCP checksum offload.
    pub l4_csum: bool,
    /// Completions to the CQ ring (else PE events).
    pub completion_on_gpu: bool,
    /// Wait-on-time offload enabled.
    pub wait_on_time: bool,
}

/// A completion reported to the CPU (PE event) in CPU-completion mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxEvent {
    /// Descriptor index.
    pub wqe_index: u64,
    /// Send time (CLOCK_REALTIME ns).
    pub timestamp_ns: u64,
    /// 0 for a NOTIFY send, else the doca_error_t of the failure.
    pub status: u32,
}

/// A TX ring (handle, descriptors, completions).
pub struct TxRing {
    handle: SharedBlock,
    descs: SharedBlock,
    cqs: SharedBlock,
    desc_num: u32,
}

impl TxRing {
    /// Allocates the ring in device-mapped memory of `device` (host memory when None).
    pub fn new(cfg: TxRingCfg, device: Option<&Arc<dyn DeviceMem>>) -> DocaResult<TxRing> {
        if cfg.max_burst == 0 || cfg.max_burst > 1 << 20 {
            return Err(DocaError::INVALID_VALUE);
        }
        let desc_num = cfg.max_burst.next_power_of_two().max(64);
        let handle = SharedBlock::new(std::mem::size_of::<TxqHandle>(), device)?;
        let descs = SharedBlock::new(desc_num as usize * std::mem::size_of::<TxDesc>(), device)?;
        let cqs = SharedBlock::new(desc_num as usize * std::mem::size_of::<TxCqe>(), device)?;
        let h = TxqHandle {
            desc_addr: descs.dev(),
            cq_addr: cqs.dev(),
            desc_num,
            desc_mask: desc_num - 1,
            cq_num: desc_num,
            cq_mask: desc_num - 1,
            l3_csum: u8::from(cfg.l3_csum),
            l4_csum: u8::from(cfg.l4_csum),
            completion_on_gpu: u8::from(cfg.completion_on_gpu),
            wait_on_time: u8::from(cfg.wait_on_time),
            nic_handler: 1,
            version: RING_VERSION,
            ..Default::default()
        };
        // SAFETY: the block holds at least one TxqHandle and is suitably aligned.
        unsafe { std::ptr::write(handle.cpu() as *mut TxqHandle, h) };
        Ok(TxRing {
            handle,
            descs,
            cqs,
            desc_num,
        })
    }

    /// Handle address for the device API (`doca_eth_txq_get_gpu_handle`).
    pub fn handle_dev(&self) -> u64 {
        self.handle.dev()
    }

    /// CPU pointer to the handle.
    pub fn handle_cpu(&self) -> *mut TxqHandle {
        self.handle.cpu() as *mut TxqHandle
    }

    /// Descriptor ring entries.
    #[cfg(any(test, feature = "testing"))]
    pub fn desc_num(&self) -> u32 {
        self.desc_num
    }

    fn h(&self) -> &TxqHandle {
        // SAFETY: the handle block holds a TxqHandle for the ring's lifetime; only the
        // immutable configuration fields are read through this reference.
        unsafe { &*self.handle_cpu() }
    }

    fn desc(&self, idx: u64) -> TxDesc {
        let i = (idx & u64::from(self.desc_num - 1)) as usize;
        // SAFETY: i < desc_num entries; the producer published it through sq_ready.
        unsafe { std::ptr::read_volatile((self.descs.cpu() as *const TxDesc).add(i)) }
    }

    fn write_cqe(&self, idx: u64, cqe: TxCqe) {
        let i = (idx & u64::from(self.desc_num - 1)) as usize;
        // SAFETY: i < cq_num entries; entry `idx` is not visible until cq_pi passes it.
        unsafe { std::ptr::write_volatile((self.cqs.cpu() as *mut TxCqe).add(i), cqe) };
    }
}

/// The proxy of one TX queue.
pub struct TxProxy {
    ring: TxRing,
    src: Arc<dyn FrameSource>,
    out: Arc<dyn FrameOut>,
    events: Mutex<VecDeque<TxEvent>>,
    events_enabled: std::sync::atomic::AtomicBool,
    busy: Mutex<Pass>,
    counters: TxqCounters,
    /// Due time (CLOCK_REALTIME ns) of the WAIT the last pass stopped at; 0 when it did not.
    stalled_until: std::sync::atomic::AtomicU64,
}

/// Whether `DOCA_SOFT_TX_TRACE` is set: each WAIT then prints to stderr how late it was
/// passed and how late the first frame behind it left (diagnosis of scheduled sends).
fn trace_on() -> bool {
    static ON: once_cell::sync::OnceCell<bool> = once_cell::sync::OnceCell::new();
    *ON.get_or_init(|| std::env::var_os("DOCA_SOFT_TX_TRACE").is_some_and(|v| v != "0"))
}

/// Descriptors whose frames are read together: device memory is copied in one gather (one
/// stream synchronisation, ~10 us whatever the size) per batch instead of one per frame.
const READ_BATCH: usize = 256;

/// The staged batch and the working state of progress passes, reused so steady-state
/// sending allocates nothing. A batch outlives the pass that staged it when that pass stops
/// at a WAIT: its frames were read ahead, so when the time comes only the sends remain
/// (published descriptors and their frames do not change until completed).
#[derive(Default)]
struct Pass {
    /// Descriptor index of `descs[0]`.
    base: u64,
    /// Next entry of `descs` to process.
    pos: usize,
    /// Trace of the last WAIT passed (`DOCA_SOFT_TX_TRACE`): (due, passed at) ns.
    trace_wait: Option<(u64, u64)>,
    /// The frame being sent (offloads are applied here).
    frame: Vec<u8>,
    /// The batch's descriptors.
    descs: Vec<TxDesc>,
    /// Per descriptor: its first segment in `segs` and how many (0 for non-SEND).
    desc_segs: Vec<(usize, usize)>,
    segs: Vec<FrameSeg>,
    /// The segments' bytes, and where each landed (or why it could not be read).
    bytes: Vec<u8>,
    got: Vec<DocaResult<Range<usize>>>,
}

impl Pass {
    fn clear(&mut self) {
        self.pos = 0;
        self.descs.clear();
        self.desc_segs.clear();
        self.segs.clear();
        self.bytes.clear();
        self.got.clear();
    }
}

/// Why a progress pass stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stall {
    WaitOnTime,
    CqFull,
}

impl TxProxy {
    /// A proxy reading frames from `src` and sending them to `out`.
    pub fn new(ring: TxRing, src: Arc<dyn FrameSource>, out: Arc<dyn FrameOut>) -> TxProxy {
        TxProxy {
            ring,
            src,
            out,
            events: Mutex::new(VecDeque::new()),
            events_enabled: std::sync::atomic::AtomicBool::new(true),
            busy: Mutex::new(Pass::default()),
            counters: TxqCounters::default(),
            stalled_until: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The ring.
    pub fn ring(&self) -> &TxRing {
        &self.ring
    }

    /// The counters.
    pub fn counters(&self) -> &TxqCounters {
        &self.counters
    }

    /// Whether CPU-mode completions are kept as events (default on). Off when nobody
    /// registered for them, so they do not pile up; they are still counted.
    pub fn set_events_enabled(&self, on: bool) {
        self.events_enabled.store(on, Ordering::Release);
    }

    /// Takes the pending PE events (CPU-completion mode).
    pub fn take_events(&self) -> Vec<TxEvent> {
        let mut e = self.events.lock().unwrap_or_else(|p| p.into_inner());
        e.drain(..).collect()
    }

    /// When the last pass stopped at a WAIT whose time had not come: its due time
    /// (CLOCK_REALTIME ns). A proxy thread uses it to stay awake for a send that is due soon
    /// instead of napping past it.
    pub fn waiting_until(&self) -> Option<u64> {
        match self.stalled_until.load(Ordering::Acquire) {
            0 => None,
            t => Some(t),
        }
    }

    /// Processes every published descriptor it can; returns how many it consumed. Stops at
    /// a WAIT whose time has not come and when the CQ ring is full; never blocks.
    pub fn progress(&self) -> u32 {
        // One pass at a time (a proxy thread and the application's progress calls may race).
        let Ok(mut pass) = self.busy.try_lock() else {
            return 0;
        };
        let pass = &mut *pass;
        let hp = self.ring.handle_cpu();
        // SAFETY: the handle is live for the ring's lifetime; sq_done is written only here.
        let mut done = unsafe { ring::load_acquire(&mut (*hp).sq_done) };
        // SAFETY: as above.
        let ready = unsafe { ring::load_acquire(&mut (*hp).sq_ready) };
        let mut consumed = 0u32;
        while done < ready || pass.pos < pass.descs.len() {
            // Keep the batch staged by an earlier pass when it starts where we are.
            if pass.pos >= pass.descs.len() || pass.base + pass.pos as u64 != done {
                if done >= ready {
                    break;
                }
                self.stage(pass, done, ready);
            }
            while pass.pos < pass.descs.len() {
                let k = pass.pos;
                let d = pass.descs[k];
                if let Err(stall) = self.process(done, &d, pass, k) {
                    let until = match stall {
                        Stall::WaitOnTime => ring::wait_on_time_to_ns(d.wait_on_time).max(1),
                        Stall::CqFull => 0,
                    };
                    self.stalled_until.store(until, Ordering::Release);
                    return consumed;
                }
                pass.pos += 1;
                done += 1;
                consumed += 1;
                // SAFETY: as above; releases the slot to the producers.
                unsafe { ring::store_release(&mut (*hp).sq_done, done) };
            }
        }
        self.stalled_until.store(0, Ordering::Release);
        consumed
    }

    /// Takes up to [`READ_BATCH`] published descriptors from `done` and reads their frames,
    /// including frames behind a WAIT whose time has not come (read once, ahead of time).
    fn stage(&self, pass: &mut Pass, done: u64, ready: u64) {
        pass.clear();
        pass.base = done;
        let mut idx = done;
        while idx < ready && pass.descs.len() < READ_BATCH {
            let d = self.ring.desc(idx);
            idx += 1;
            pass.descs.push(d);
            if d.opcode == TX_OP_SEND {
                let first = pass.segs.len();
                pass.segs.push(FrameSeg {
                    addr: d.addr,
                    mkey_be: d.mkey,
                    len: d.len as usize,
                });
                if d.len2 != 0 {
                    pass.segs.push(FrameSeg {
                        addr: d.addr2,
                        mkey_be: d.mkey2,
                        len: d.len2 as usize,
                    });
                }
                pass.desc_segs.push((first, pass.segs.len() - first));
            } else {
                pass.desc_segs.push((0, 0));
            }
        }
        self.src
            .read_many(&pass.segs, &mut pass.bytes, &mut pass.got);
    }

    /// Handles descriptor `idx` (entry `k` of the staged batch).
    fn process(&self, idx: u64, d: &TxDesc, pass: &mut Pass, k: usize) -> Result<(), Stall> {
        match d.opcode {
            TX_OP_NOP => Ok(()),
            TX_OP_WAIT => {
                let (now, due) = (
                    ring::realtime_ns(),
                    ring::wait_on_time_to_ns(d.wait_on_time),
                );
                if now < due {
                    Err(Stall::WaitOnTime)
                } else {
                    if trace_on() {
                        pass.trace_wait = Some((due, now));
                    }
                    Ok(())
                }
            }
            TX_OP_SEND => {
                let notify = d.flags & TX_FLAG_NOTIFY != 0;
                // A completion may be needed (NOTIFY, or an error): make sure it fits first.
                if self.ring.h().completion_on_gpu != 0 && self.cq_full() {
                    return Err(Stall::CqFull);
                }
                let status = match self.send_one(d, pass, k) {
                    Ok(()) => {
                        self.counters.sent.fetch_add(1, Ordering::Relaxed);
                        0
                    }
                    Err(e) => {
                        self.counters.errors.fetch_add(1, Ordering::Relaxed);
                        e.0
                    }
                };
                if let Some((due, passed)) = pass.trace_wait.take() {
                    let sent = ring::realtime_ns();
                    eprintln!(
                        "doca-soft tx trace: WAIT due {due} ns passed +{} ns, first frame after it sent +{} ns",
                        passed.saturating_sub(due),
                        sent.saturating_sub(due)
                    );
                }
                if notify || status != 0 {
                    self.complete(idx, status, pass.frame.len() as u32);
                }
                Ok(())
            }
            _ => {
                self.counters.errors.fetch_add(1, Ordering::Relaxed);
                if self.ring.h().completion_on_gpu != 0 && self.cq_full() {
                    return Err(Stall::CqFull);
                }
                self.complete(idx, DocaError::INVALID_VALUE.0, 0);
                Ok(())
            }
        }
    }

    fn cq_full(&self) -> bool {
        let hp = self.ring.handle_cpu();
        // SAFETY: the handle is live for the ring's lifetime.
        let (pi, ci) = unsafe {
            (
                ring::load_acquire(&mut (*hp).cq_pi),
                ring::load_acquire(&mut (*hp).cq_ci),
            )
        };
        pi.wrapping_sub(ci) >= u64::from(self.ring.desc_num)
    }

    fn send_one(&self, d: &TxDesc, pass: &mut Pass, k: usize) -> DocaResult<()> {
        let (first, n) = pass.desc_segs[k];
        pass.frame.clear();
        for got in &pass.got[first..first + n] {
            let r = got.as_ref().map_err(|e| *e)?;
            pass.frame.extend_from_slice(&pass.bytes[r.clone()]);
        }
        let frame = &mut pass.frame;
        if frame.is_empty() {
            return Err(DocaError::INVALID_VALUE);
        }
        let h = self.ring.h();
        let l3 = h.l3_csum != 0 || d.flags & TX_FLAG_L3_CSUM != 0;
        let l4 = h.l4_csum != 0 || d.flags & TX_FLAG_L4_CSUM != 0;
        if l3 || l4 {
            checksum::apply_offloads(frame, l3, l4);
        }
        self.out.send(frame)
    }

    fn complete(&self, idx: u64, status: u32, bytes: u32) {
        let ts = ring::realtime_ns();
        self.counters.completed.fetch_add(1, Ordering::Relaxed);
        if self.ring.h().completion_on_gpu != 0 {
            let hp = self.ring.handle_cpu();
            // SAFETY: the handle is live; cq_pi is written only by this proxy.
            let pi = unsafe { ring::load_acquire(&mut (*hp).cq_pi) };
            self.ring.write_cqe(
                pi,
                TxCqe {
                    wqe_index: idx,
                    timestamp_ns: ts,
                    status,
                    bytes,
                    rsvd: 0,
                },
            );
            // SAFETY: as above; release publishes the entry.
            unsafe { ring::store_release(&mut (*hp).cq_pi, pi + 1) };
        } else if self.events_enabled.load(Ordering::Acquire) {
            let mut e = self.events.lock().unwrap_or_else(|p| p.into_inner());
            e.push_back(TxEvent {
                wqe_index: idx,
                timestamp_ns: ts,
                status,
            });
        }
    }
}
