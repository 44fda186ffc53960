//! The consumer side of a TX ring: the proxy that plays the NIC on DOCA 3.3's ring format.
//! It takes the WQEs producers submitted (the producer index in the CPU proxy slot,
//! `*cpu_proxy_pi`), parses each like a ConnectX send queue would (`doca_soft_packet::mlx5`: control
//! segment, Ethernet segment with checksum flags and optional inline header, data segments;
//! wait-on-time WAITs; enhanced multi-packet sends; NOPs), reads the frame bytes (host
//! memory directly, device memory through copies), applies checksum offload, holds at a
//! wait-on-time WQE until CLOCK_REALTIME reaches it, sends on the port, and reports WQEs
//! that asked for a completion (CQ_UPDATE) and failures: `mlx5_cqe64` entries (REQ, or
//! REQ_ERR with a syndrome) in the CQ when completions are on the GPU, else events the
//! queue raises on its PE. It returns consumed WQE slots to the producers through
//! `*cpu_proxy_ci`.
//!
//! Frames are read a batch of WQEs at a time ([`FrameSource::read_many`]): frames in
//! device-only GPU memory come over in one gather (nearby frames as one span, one stream
//! synchronisation for the batch), since a synchronised copy costs about 10 us whatever its
//! size. Frames behind a WAIT whose time has not come are read with the batch, ahead of
//! time, and kept until it is due, so a scheduled burst leaves with only the sends between
//! its time and the port.
//!
//! Frames are sent in batches ([`FrameOut::send_batch`]: one `sendmmsg` per 64 frames on an
//! AF_PACKET port): a pass builds every frame that is due into one reused buffer, in ring
//! order, and hands them over together; a WAIT whose time has not come ends the batch. A
//! WQE is completed, and its slots are returned, after its frames were handed over; a frame
//! the port refuses fails its own WQE only.

use super::counters::TxqCounters;
use super::mem::{DeviceMem, FrameSeg, FrameSource, SharedBlock};
use super::ring::{self, Doorbells, TxqHandle, NIC_HANDLER_CPU_PROXY, SOFT_QPN, TX_MAX_WQES};
use crate::error::{DocaError, DocaResult};
use doca_soft_packet::checksum;
use doca_soft_packet::mlx5::wqe::{self, Kind, WqeError};
use doca_soft_packet::mlx5::{self, cqe, cqe_opcode, syndrome, Cqe, Ctrl};
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Where a TX queue's frames go (the port).
pub trait FrameOut: Send + Sync {
    /// Sends one frame.
    fn send(&self, frame: &[u8]) -> DocaResult<()>;
    /// Sends several frames in order; returns how many went out (a prefix of `frames`) and
    /// the error that stopped the rest, if any (the frame at that position failed; the
    /// ones after it were not tried). A port overrides it with one system call per batch
    /// ([`crate::port::Port::send_batch`]); the default sends one at a time.
    fn send_batch(&self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        crate::port::send_each(frames, |f| self.send(f))
    }
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

/// A TX ring (handle, WQE slots, completions, doorbells).
pub struct TxRing {
    handle: SharedBlock,
    wqes: SharedBlock,
    cqes: SharedBlock,
    dbs: SharedBlock,
    wqe_num: u32,
}

impl TxRing {
    /// Allocates the ring in device-mapped memory of `device` (host memory when None):
    /// `max_burst` rounded up to a power of two WQE slots (64 to [`TX_MAX_WQES`]), as many
    /// completions.
    pub fn new(cfg: TxRingCfg, device: Option<&Arc<dyn DeviceMem>>) -> DocaResult<TxRing> {
        if cfg.max_burst == 0 || cfg.max_burst > 1 << 20 {
            return Err(DocaError::INVALID_VALUE);
        }
        let wqe_num = cfg.max_burst.next_power_of_two().clamp(64, TX_MAX_WQES);
        let n = wqe_num as usize;
        let handle = SharedBlock::new(std::mem::size_of::<TxqHandle>(), device)?;
        let wqes = SharedBlock::new(n * wqe::WQE_BB, device)?;
        let cqes = SharedBlock::new(n * mlx5::CQE_SIZE, device)?;
        let dbs = SharedBlock::new(std::mem::size_of::<Doorbells>(), device)?;
        // SAFETY: the block holds `n` completions (device-mapped: CPU-writable).
        unsafe { cqe::init_ring(cqes.cpu(), wqe_num) };
        let at = |off: usize| dbs.dev() + off as u64;
        let shift8 = |ds: u32| ((SOFT_QPN << 8) | ds).to_be();
        let mut cs_flags = 0;
        if cfg.l3_csum {
            cs_flags |= mlx5::CS_L3;
        }
        if cfg.l4_csum {
            cs_flags |= mlx5::CS_L4;
        }
        let h = TxqHandle {
            sq_wqe_addr: wqes.dev(),
            sq_db_rec: at(std::mem::offset_of!(Doorbells, wq_db_rec)),
            sq_db: at(std::mem::offset_of!(Doorbells, db)),
            sq_num: SOFT_QPN,
            sq_num_shift8_be: shift8(0),
            sq_num_shift8_be_2ds: shift8(2),
            sq_num_shift8_be_3ds: shift8(3),
            sq_num_shift8_be_4ds: shift8(4),
            sq_wqe_num: wqe_num as u16,
            sq_wqe_mask: (wqe_num - 1) as u16,
            cs_flags,
            wait_on_time: u8::from(cfg.wait_on_time),
            completion_on_gpu: u8::from(cfg.completion_on_gpu),
            cqe_addr: cqes.dev(),
            cq_db_rec: at(std::mem::offset_of!(Doorbells, cq_db_rec)),
            cqe_num: wqe_num,
            cqe_mask: wqe_num - 1,
            cpu_proxy_pi: at(std::mem::offset_of!(Doorbells, proxy_pi)),
            cpu_proxy_ci: at(std::mem::offset_of!(Doorbells, proxy_ci)),
            nic_handler: NIC_HANDLER_CPU_PROXY,
            ..Default::default()
        };
        // SAFETY: the block holds at least one TxqHandle and is suitably aligned.
        unsafe { std::ptr::write(handle.cpu() as *mut TxqHandle, h) };
        Ok(TxRing {
            handle,
            wqes,
            cqes,
            dbs,
            wqe_num,
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

    /// WQE slots.
    #[cfg(any(test, feature = "testing"))]
    pub fn desc_num(&self) -> u32 {
        self.wqe_num
    }

    fn h(&self) -> &TxqHandle {
        // SAFETY: the handle block holds a TxqHandle for the ring's lifetime; only the
        // immutable configuration fields are read through this reference.
        unsafe { &*self.handle_cpu() }
    }

    fn dbs(&self) -> *mut Doorbells {
        self.dbs.cpu() as *mut Doorbells
    }

    /// Copies WQE slot `idx` (64 bytes) into `out`.
    fn read_bb(&self, idx: u64, out: &mut [u8]) {
        let i = (idx & u64::from(self.wqe_num - 1)) as usize;
        // SAFETY: i < wqe_num slots; the producer submitted it (below the proxy slot, read
        // with acquire ordering, which orders this copy after the producer's writes).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.wqes.cpu().add(i * wqe::WQE_BB),
                out.as_mut_ptr(),
                wqe::WQE_BB,
            );
        }
    }

    fn cqe_slot(&self, idx: u64) -> *mut u8 {
        let i = (idx & u64::from(self.wqe_num - 1)) as usize;
        // SAFETY: i < cqe_num entries.
        unsafe { self.cqes.cpu().add(i * mlx5::CQE_SIZE) }
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

/// WQEs whose frames are read together: device memory is copied in one gather (one
/// stream synchronisation, ~10 us whatever the size) per batch instead of one per frame.
const READ_BATCH: usize = 256;

/// Frames handed to the port per [`FrameOut::send_batch`] call (one `sendmmsg` on an
/// AF_PACKET port): on `lo` the kernel's receive of each frame runs inside the sender's
/// system call, so larger batches save little more.
const SEND_BATCH: usize = 64;

/// What one staged WQE asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    /// Frames: `frames` consecutive entries of `Pass::frames`.
    Send {
        cs_flags: u8,
        first: usize,
        frames: usize,
    },
    /// Hold until this CLOCK_REALTIME (ns).
    Wait(u64),
    /// Nothing to send.
    Nop,
    /// Cannot be executed: complete with this syndrome.
    Fail(u8),
}

/// One staged WQE.
#[derive(Debug, Clone, Copy)]
struct Staged {
    /// WQE index (64-bit; the control segment carries its low 16 bits).
    idx: u64,
    /// Basic blocks it takes.
    bbs: u32,
    notify: bool,
    work: Work,
    /// Outcome once processed: 0, or the error syndrome of its last failed frame.
    status: u8,
    /// Bytes of its frames (the completion's byte count).
    bytes: u32,
}

/// A frame built and waiting in `Pass::out` for the next batch send.
#[derive(Debug, Clone)]
struct Outgoing {
    /// Its bytes in `Pass::out`.
    range: Range<usize>,
    /// The WQE it belongs to (entry of `Pass::wqes`).
    wqe: usize,
}

/// One frame of a staged send: inline header bytes in `Pass::inline`, then segments
/// `segs[first..first + n]`.
#[derive(Debug, Clone)]
struct Frame {
    inline: Range<usize>,
    first: usize,
    n: usize,
}

/// The staged batch and the working state of progress passes, reused so steady-state
/// sending allocates nothing. A batch outlives the pass that staged it when that pass stops
/// at a WAIT: its frames were read ahead, so when the time comes only the sends remain
/// (submitted WQEs and their frames do not change until consumed).
#[derive(Default)]
struct Pass {
    /// Next entry of `wqes` to process.
    pos: usize,
    /// Completions written so far (the proxy's CQ producer index).
    cq_pi: u64,
    /// First entry of `wqes` processed but not yet completed (its frames may still be
    /// waiting in `out`); completions and the consumer index follow the batch send.
    settled: usize,
    /// Trace of the last WAIT passed (`DOCA_SOFT_TX_TRACE`): (due, passed at) ns.
    trace_wait: Option<(u64, u64)>,
    /// Frames built for the next batch send, back to back (offloads applied here).
    out: Vec<u8>,
    /// The frames in `out`, in send order.
    outgoing: Vec<Outgoing>,
    /// One WQE's bytes (several blocks when it spans them).
    raw: Vec<u8>,
    /// The batch's WQEs.
    wqes: Vec<Staged>,
    frames: Vec<Frame>,
    inline: Vec<u8>,
    /// The batch's data segments as the WQEs hold them.
    dsegs: Vec<mlx5::DataSeg>,
    segs: Vec<FrameSeg>,
    /// The segments' bytes, and where each landed (or why it could not be read).
    bytes: Vec<u8>,
    got: Vec<DocaResult<Range<usize>>>,
}

impl Pass {
    fn clear(&mut self) {
        self.pos = 0;
        self.settled = 0;
        self.out.clear();
        self.outgoing.clear();
        self.wqes.clear();
        self.frames.clear();
        self.inline.clear();
        self.dsegs.clear();
        self.segs.clear();
        self.bytes.clear();
        self.got.clear();
    }

    /// Index of the next WQE to process, if one is staged.
    fn next_idx(&self) -> Option<u64> {
        self.wqes.get(self.pos).map(|w| w.idx)
    }
}

/// Why a progress pass stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stall {
    WaitOnTime(u64),
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

    /// Processes every submitted WQE it can; returns how many WQE slots it consumed.
    /// Stops at a WAIT whose time has not come and when the CQ is full; never blocks.
    ///
    /// Frames are built into one buffer and handed to the port `SEND_BATCH` at a time
    /// (one `sendmmsg` on an AF_PACKET port), in ring order; a WQE is completed, and its
    /// slots returned, once its frames were sent. A WAIT whose time has not come ends the
    /// batch: what is before it is sent, what is behind it waits.
    pub fn progress(&self) -> u32 {
        // One pass at a time (a proxy thread and the application's progress calls may race).
        let Ok(mut pass) = self.busy.try_lock() else {
            return 0;
        };
        let pass = &mut *pass;
        let db = self.ring.dbs();
        // SAFETY: the doorbell block is live for the ring's lifetime; proxy_ci is written
        // only here, proxy_pi by the producers.
        let mut done = unsafe { ring::load_acquire(&mut (*db).proxy_ci) };
        // SAFETY: as above.
        let pi = unsafe { ring::load_acquire(&mut (*db).proxy_pi) };
        let mut consumed = 0u32;
        loop {
            // Keep the batch staged by an earlier pass when it starts where we are.
            if pass.next_idx() != Some(done) {
                if done >= pi {
                    break;
                }
                self.stage(pass, done, pi);
                if pass.wqes.is_empty() {
                    break; // a WQE not wholly submitted yet
                }
            }
            while pass.pos < pass.wqes.len() {
                match self.process(pass) {
                    Ok(()) => pass.pos += 1,
                    // The CQ has room once the WQEs in flight are completed: settle them
                    // and look again.
                    Err(Stall::CqFull) if pass.settled < pass.pos => {
                        consumed += self.settle(pass, &mut done);
                    }
                    Err(stall) => {
                        consumed += self.settle(pass, &mut done);
                        let until = match stall {
                            Stall::WaitOnTime(t) => t.max(1),
                            Stall::CqFull => 0,
                        };
                        self.stalled_until.store(until, Ordering::Release);
                        return consumed;
                    }
                }
            }
            consumed += self.settle(pass, &mut done);
        }
        self.stalled_until.store(0, Ordering::Release);
        consumed
    }

    /// Sends the frames built so far, then completes the WQEs processed since the last
    /// settle, in order, and returns their slots to the producers; returns how many
    /// slots that was.
    fn settle(&self, pass: &mut Pass, done: &mut u64) -> u32 {
        self.send_out(pass);
        let mut consumed = 0u32;
        for k in pass.settled..pass.pos {
            let w = pass.wqes[k];
            if w.notify || w.status != 0 {
                self.complete(w.idx, w.status, w.bytes, pass);
            }
            *done += u64::from(w.bbs);
            consumed += w.bbs;
        }
        pass.settled = pass.pos;
        if consumed > 0 {
            let db = self.ring.dbs();
            // SAFETY: as in `progress`; releases the slots (and the completions written
            // above) to the producers.
            unsafe { ring::store_release(&mut (*db).proxy_ci, *done) };
        }
        consumed
    }

    /// Hands the frames waiting in `pass.out` to the port, [`SEND_BATCH`] per call, in
    /// order; a frame the port refuses marks its WQE failed and the rest are still tried
    /// (as separate sends would be).
    fn send_out(&self, pass: &mut Pass) {
        let n = pass.outgoing.len();
        let mut i = 0;
        while i < n {
            let k = (n - i).min(SEND_BATCH);
            let mut refs: [&[u8]; SEND_BATCH] = [&[]; SEND_BATCH];
            for (r, o) in refs.iter_mut().zip(&pass.outgoing[i..i + k]) {
                *r = &pass.out[o.range.clone()];
            }
            // Anything short of `k` without an error is a port breaking its contract:
            // counted as a failed frame all the same, so the loop always moves on.
            let (sent, _) = self.out.send_batch(&refs[..k]);
            let sent = sent.min(k);
            self.counters.sent.fetch_add(sent as u64, Ordering::Relaxed);
            i += sent;
            if sent < k {
                self.counters.errors.fetch_add(1, Ordering::Relaxed);
                let w = pass.outgoing[i].wqe;
                pass.wqes[w].status = syndrome::LOCAL_LENGTH_ERR;
                i += 1;
            }
        }
        if n > 0 {
            if let Some((due, passed)) = pass.trace_wait.take() {
                let sent = ring::realtime_ns();
                eprintln!(
                    "doca-soft tx trace: WAIT due {due} ns passed +{} ns, first frame after it sent +{} ns",
                    passed.saturating_sub(due),
                    sent.saturating_sub(due)
                );
            }
        }
        pass.out.clear();
        pass.outgoing.clear();
    }

    /// Parses up to [`READ_BATCH`] submitted WQEs from `done` (below `pi`) and reads their
    /// frames, including frames behind a WAIT whose time has not come (read once, ahead).
    fn stage(&self, pass: &mut Pass, done: u64, pi: u64) {
        pass.clear();
        let mut idx = done;
        while idx < pi && pass.wqes.len() < READ_BATCH {
            pass.raw.resize(wqe::WQE_BB, 0);
            self.ring.read_bb(idx, &mut pass.raw[..wqe::WQE_BB]);
            let ctrl = Ctrl::decode(&pass.raw);
            let bbs = wqe::wqe_bbs(ctrl.ds);
            if idx + u64::from(bbs) > pi {
                break;
            }
            pass.raw.resize(bbs as usize * wqe::WQE_BB, 0);
            for k in 1..bbs as usize {
                let (_, rest) = pass.raw.split_at_mut(k * wqe::WQE_BB);
                self.ring.read_bb(idx + k as u64, &mut rest[..wqe::WQE_BB]);
            }
            let seg0 = pass.dsegs.len();
            let inl0 = pass.inline.len();
            let work = match wqe::parse_into(&ctrl, &pass.raw, &mut pass.inline, &mut pass.dsegs) {
                Ok(Kind::Send { cs_flags }) => {
                    let first = pass.frames.len();
                    self.push_frame(pass, inl0, seg0, pass.dsegs.len());
                    Work::Send {
                        cs_flags,
                        first,
                        frames: 1,
                    }
                }
                Ok(Kind::MultiPacket { cs_flags }) => {
                    let first = pass.frames.len();
                    let end = pass.dsegs.len();
                    let no_inline = pass.inline.len();
                    for k in seg0..end {
                        self.push_frame(pass, no_inline, k, k + 1);
                    }
                    Work::Send {
                        cs_flags,
                        first,
                        frames: end - seg0,
                    }
                }
                Ok(Kind::WaitOnTime(t)) => Work::Wait(mlx5::sec_ns_to_time(t)),
                Ok(Kind::Nop) => Work::Nop,
                Err(WqeError::Unsupported(_) | WqeError::Malformed) => {
                    Work::Fail(syndrome::LOCAL_QP_OP_ERR)
                }
            };
            pass.wqes.push(Staged {
                idx,
                bbs,
                notify: ctrl.notify(),
                work,
                status: 0,
                bytes: 0,
            });
            idx += u64::from(bbs);
        }
        self.src
            .read_many(&pass.segs, &mut pass.bytes, &mut pass.got);
    }

    /// Adds a frame made of inline bytes `pass.inline[inl0..]` and data segments
    /// `pass.dsegs[s0..s1]`.
    fn push_frame(&self, pass: &mut Pass, inl0: usize, s0: usize, s1: usize) {
        let first = pass.segs.len();
        for d in &pass.dsegs[s0..s1] {
            pass.segs.push(FrameSeg {
                addr: d.addr,
                mkey_be: d.lkey_raw,
                len: d.byte_count as usize,
            });
        }
        pass.frames.push(Frame {
            inline: inl0..pass.inline.len(),
            first,
            n: s1 - s0,
        });
    }

    /// Handles staged WQE `pass.pos`: builds its frames into the batch (sending the batch
    /// when it is full), or passes its WAIT or NOP; its completion waits for the settle.
    fn process(&self, pass: &mut Pass) -> Result<(), Stall> {
        // Every WQE in flight may need a completion (CQ_UPDATE, or an error): make sure
        // they all fit first.
        let in_flight = (pass.pos - pass.settled) as u64;
        if self.ring.h().completion_on_gpu != 0 && self.cq_full(pass.cq_pi + in_flight) {
            return Err(Stall::CqFull);
        }
        let at = pass.pos;
        match pass.wqes[at].work {
            Work::Nop => {}
            Work::Wait(due) => {
                let now = ring::realtime_ns();
                if now < due {
                    return Err(Stall::WaitOnTime(due));
                }
                if trace_on() {
                    pass.trace_wait = Some((due, now));
                }
            }
            Work::Send {
                cs_flags,
                first,
                frames,
            } => {
                for f in first..first + frames {
                    if let Err(syn) = self.build(f, cs_flags, at, pass) {
                        self.counters.errors.fetch_add(1, Ordering::Relaxed);
                        pass.wqes[at].status = syn;
                    }
                    if pass.outgoing.len() >= SEND_BATCH {
                        self.send_out(pass);
                    }
                }
            }
            Work::Fail(syn) => {
                self.counters.errors.fetch_add(1, Ordering::Relaxed);
                pass.wqes[at].status = syn;
            }
        }
        Ok(())
    }

    fn cq_full(&self, cq_pi: u64) -> bool {
        let hp = self.ring.handle_cpu();
        // SAFETY: the handle is live for the ring's lifetime; pollers write cqe_ci.
        let ci = unsafe { ring::load_word(&mut (*hp).cqe_ci) };
        cq_pi.wrapping_sub(ci) >= u64::from(self.ring.wqe_num)
    }

    /// Builds frame `f` of the staged batch (WQE `wqe`) at the end of `pass.out`, with its
    /// checksum offloads applied, and queues it for the next batch send; Err is the error
    /// syndrome (nothing queued).
    fn build(&self, f: usize, cs_flags: u8, wqe: usize, pass: &mut Pass) -> Result<(), u8> {
        let fr = pass.frames[f].clone();
        let start = pass.out.len();
        pass.out.extend_from_slice(&pass.inline[fr.inline]);
        for got in &pass.got[fr.first..fr.first + fr.n] {
            let Ok(r) = got.as_ref() else {
                pass.out.truncate(start);
                return Err(syndrome::LOCAL_PROT_ERR);
            };
            pass.out.extend_from_slice(&pass.bytes[r.clone()]);
        }
        let frame = &mut pass.out[start..];
        if frame.is_empty() {
            return Err(syndrome::LOCAL_LENGTH_ERR);
        }
        let l3 = cs_flags & mlx5::CS_L3 != 0;
        let l4 = cs_flags & mlx5::CS_L4 != 0;
        if l3 || l4 {
            checksum::apply_offloads(frame, l3, l4);
        }
        let len = frame.len();
        pass.wqes[wqe].bytes = pass.wqes[wqe].bytes.saturating_add(len as u32);
        pass.outgoing.push(Outgoing {
            range: start..start + len,
            wqe,
        });
        Ok(())
    }

    /// Reports WQE `idx`: a CQE (REQ, or REQ_ERR with syndrome `syn`) when completions are
    /// on the GPU, else a PE event (status 0, or the doca_error_t of the failure).
    fn complete(&self, idx: u64, syn: u8, bytes: u32, pass: &mut Pass) {
        let ts = ring::realtime_ns();
        self.counters.completed.fetch_add(1, Ordering::Relaxed);
        if self.ring.h().completion_on_gpu != 0 {
            let n = pass.cq_pi;
            let c = Cqe {
                opcode: if syn == 0 {
                    cqe_opcode::REQ
                } else {
                    cqe_opcode::REQ_ERR
                },
                owner: cqe::owner_of(n, self.ring.wqe_num),
                byte_cnt: bytes,
                timestamp: mlx5::time_to_sec_ns(ts),
                qpn: SOFT_QPN,
                wqe_counter: idx as u16,
                syndrome: syn,
            };
            // SAFETY: entry n is free (cq_full checked before processing) and only this
            // proxy, under the pass lock, writes completions.
            unsafe { cqe::write(self.ring.cqe_slot(n), &c) };
            pass.cq_pi = n + 1;
        } else if self.events_enabled.load(Ordering::Acquire) {
            let status = match syn {
                0 => 0,
                syndrome::LOCAL_PROT_ERR => DocaError::INVALID_VALUE.0,
                syndrome::LOCAL_QP_OP_ERR => DocaError::NOT_SUPPORTED.0,
                _ => DocaError::IO_FAILED.0,
            };
            let mut e = self.events.lock().unwrap_or_else(|p| p.into_inner());
            e.push_back(TxEvent {
                wqe_index: idx,
                timestamp_ns: ts,
                status,
            });
        }
    }
}
