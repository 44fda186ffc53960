//! The send side of a QP: taking WQEs from the ring in index order, running them with UCX,
//! and writing their completions in the same order.
//!
//! Each WQE gets a slot (one per ring entry, allocated with the QP) that holds everything
//! UCX may still read or write while it runs (inline payload, atomic operand and result)
//! and what its completion waits for:
//! * the UCX operations it started (`ucx_pending`);
//! * for RDMA writes, a completed endpoint flush issued after it (`rma_seq` <=
//!   `rma_flushed`): only then is the data visible at the peer, and only then may its CQE
//!   (or any later one) be written;
//! * for sends and writes with immediate, the peer's ACK (the data sits in a posted
//!   receive, or was refused).
//!
//! Ordering between operations of one QP: a send or the notification of a write with
//! immediate leaves only once every earlier write is flushed (so the receiver finds the
//! data it is told about); a change between writes, reads and atomics is fenced with
//! `ucp_worker_fence` (so a signal lands after the data it signals). WQEs after a WAIT wait
//! until the named CQ has produced the awaited CQE.
//!
//! Errors: the first failing WQE completes with its error CQE, the QP enters the error
//! state, and every later WQE (also those already running) completes with a flush error.

use super::api::{NicEvent, QpState as PubState, QpStatusCell};
use super::cqe::{self, syndrome, CqRing};
use super::mkey::{self, Access, Region};
use super::peer::{token, KeyLookup, Net, PeerState};
use super::ring::SqRing;
use super::ucp::{self, Issue};
use super::wire::{self, Msg, MsgKind};
use super::wqe::{self, Op, Sge, Wqe, MAX_INLINE, MAX_SGE};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One WQE in flight.
pub(super) struct Slot {
    index: u64,
    opcode: u8,
    signaled: bool,
    ucx_pending: u8,
    await_ack: bool,
    rma_seq: u64,
    synd: u8,
    byte_cnt: u32,
    /// Local registrations UCX reads or writes (kept alive until completion).
    regions: [Option<Arc<Region>>; MAX_SGE],
    /// Where the fetched value of an atomic goes.
    result: Option<(Arc<Region>, u64)>,
    fetched: u64,
    inline: [u8; MAX_INLINE],
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            index: u64::MAX,
            opcode: 0,
            signaled: false,
            ucx_pending: 0,
            await_ack: false,
            rma_seq: 0,
            synd: 0,
            byte_cnt: 0,
            regions: [None, None, None],
            result: None,
            fetched: 0,
            inline: [0; MAX_INLINE],
        }
    }
}

/// The class of a one-sided UCX operation (a change of class is fenced).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    None,
    Write,
    Read,
}

/// Where the head WQE stands when the queue has to wait.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Not started.
    Fresh,
    /// A write with immediate whose data is out; the notification follows the flush.
    Notify,
}

/// The connection of a QP.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Conn {
    /// Not connected yet (WQEs wait).
    None,
    /// Connected (or connecting) to QP `qpn` of peer `peer`.
    To { peer: u32, qpn: u32 },
}

/// A QP as the proxy runs it.
pub(super) struct QpState {
    pub qpn: u32,
    pub sq: SqRing,
    pub send_cqn: u32,
    pub rq: Option<u32>,
    pub status: Arc<QpStatusCell>,
    pub conn: Conn,
    /// First error syndrome, once in error.
    pub error: Option<u8>,
    error_cqe_written: bool,
    pi: u64,
    next_exec: u64,
    next_cqe: u64,
    pub slots: Box<[Slot]>,
    cur: Option<Wqe>,
    stage: Stage,
    rma_issued: u64,
    rma_flushed: u64,
    flush_inflight: bool,
    flush_target: u64,
    class: Class,
}

/// What the SQ logic needs besides the QP.
pub(super) struct Env<'a> {
    pub net: &'a mut Net,
    pub cqs: &'a mut HashMap<u32, CqRing>,
    pub local: &'a mut LocalKeys,
}

/// The engine's cache of local registrations (dropped whenever one is deregistered).
#[derive(Default)]
pub(super) struct LocalKeys {
    generation: u64,
    map: HashMap<u32, Arc<Region>>,
}

impl LocalKeys {
    /// The registration of `key`.
    pub(super) fn get(&mut self, key: u32) -> Option<&Arc<Region>> {
        let g = mkey::generation();
        if g != self.generation {
            self.map.clear();
            self.generation = g;
        }
        match self.map.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.into_mut()),
            std::collections::hash_map::Entry::Vacant(e) => Some(e.insert(mkey::lookup(key)?)),
        }
    }

    /// The registration of `key` if it covers `[addr, addr + len)` with `need` rights.
    pub(super) fn check(
        &mut self,
        key: u32,
        addr: u64,
        len: u64,
        need: Access,
    ) -> Option<Arc<Region>> {
        let r = self.get(key)?;
        (r.covers(addr, len) && r.access.has(need)).then(|| r.clone())
    }
}

/// Whether CQ `produced` CQEs include CQE number `max_index` (mod 2^32).
fn wait_reached(produced: u64, max_index: u32) -> bool {
    (produced as u32).wrapping_sub(max_index.wrapping_add(1)) as i32 >= 0
}

/// The CQE syndrome for a failed UCX operation.
pub(super) fn syndrome_of(status: ucp::Status) -> u8 {
    use crate::ucx::sys;
    match status {
        sys::ucs_status_t_UCS_ERR_INVALID_PARAM | sys::ucs_status_t_UCS_ERR_UNSUPPORTED => {
            syndrome::LOCAL_QP_OP
        }
        sys::ucs_status_t_UCS_ERR_INVALID_ADDR => syndrome::REMOTE_ACCESS,
        _ => syndrome::TRANSPORT_RETRY_EXC,
    }
}

enum Step {
    /// The WQE is issued (or completed, or failed): take the next one.
    Next,
    /// The WQE must wait (key, flush, WAIT, connection).
    Stop,
}

impl QpState {
    /// A new QP in the reset state.
    pub(super) fn new(
        qpn: u32,
        sq: SqRing,
        send_cqn: u32,
        rq: Option<u32>,
        status: Arc<QpStatusCell>,
    ) -> QpState {
        let slots = (0..sq.size()).map(|_| Slot::default()).collect();
        QpState {
            qpn,
            sq,
            send_cqn,
            rq,
            status,
            conn: Conn::None,
            error: None,
            error_cqe_written: false,
            pi: 0,
            next_exec: 0,
            next_cqe: 0,
            slots,
            cur: None,
            stage: Stage::Fresh,
            rma_issued: 0,
            rma_flushed: 0,
            flush_inflight: false,
            flush_target: 0,
            class: Class::None,
        }
    }

    fn slot(&mut self, index: u64) -> &mut Slot {
        let mask = self.slots.len() as u64 - 1;
        &mut self.slots[(index & mask) as usize]
    }

    /// Enters the error state (first error wins) and tells the host.
    pub(super) fn set_error(&mut self, synd: u8, net: &Net) {
        if self.error.is_some() {
            return;
        }
        self.error = Some(synd);
        self.status.set_error(synd);
        net.shared.push_event(NicEvent::QpError {
            qpn: self.qpn,
            syndrome: synd,
        });
    }

    /// The peer is gone: everything waiting on it fails.
    pub(super) fn peer_lost(&mut self, net: &Net) {
        self.set_error(syndrome::TRANSPORT_RETRY_EXC, net);
        let flushed = self.rma_flushed;
        for i in self.next_cqe..self.next_exec {
            let s = self.slot(i);
            let unconfirmed = s.await_ack || (s.rma_seq != 0 && s.rma_seq > flushed);
            s.await_ack = false;
            if unconfirmed && s.synd == 0 {
                s.synd = syndrome::TRANSPORT_RETRY_EXC;
            }
        }
        self.rma_flushed = self.rma_issued;
        self.flush_inflight = false;
    }

    /// Whether a connection-level operation to the peer is possible now.
    pub(super) fn on_connected(&mut self) {
        if self.error.is_none() {
            self.status.set(PubState::Ready);
        }
    }

    /// A UCX operation of WQE `idx` finished.
    pub(super) fn op_done(&mut self, idx: u32, status: ucp::Status, net: &Net) {
        let s = self.slot(idx as u64);
        if s.index as u32 != idx || s.ucx_pending == 0 {
            return;
        }
        s.ucx_pending -= 1;
        if status != ucp::OK && s.synd == 0 {
            s.synd = syndrome_of(status);
            let synd = s.synd;
            self.set_error(synd, net);
        }
    }

    /// The flush of this QP's endpoint finished.
    pub(super) fn flush_done(&mut self, status: ucp::Status, net: &Net) {
        self.flush_inflight = false;
        self.rma_flushed = self.rma_flushed.max(self.flush_target);
        if status != ucp::OK {
            // The writes it covered are not known to have landed: fail them.
            let synd = syndrome_of(status);
            let target = self.flush_target;
            for i in self.next_cqe..self.next_exec {
                let s = self.slot(i);
                if s.rma_seq != 0 && s.rma_seq <= target && s.synd == 0 {
                    s.synd = synd;
                }
            }
            self.set_error(synd, net);
        }
    }

    /// The peer acknowledged (or refused) the MSG of WQE `idx`.
    pub(super) fn ack(&mut self, idx: u32, synd: u8, net: &Net) {
        let s = self.slot(idx as u64);
        if s.index as u32 != idx || !s.await_ack {
            return;
        }
        s.await_ack = false;
        if synd != 0 && s.synd == 0 {
            s.synd = synd;
            self.set_error(synd, net);
        }
    }

    /// The target of the atomic of WQE `idx` answered.
    pub(super) fn atomic_reply(&mut self, idx: u32, synd: u8, old: u64, net: &Net) {
        let s = self.slot(idx as u64);
        if s.index as u32 != idx || !s.await_ack {
            return;
        }
        s.await_ack = false;
        s.fetched = old;
        if synd != 0 && s.synd == 0 {
            s.synd = synd;
            self.set_error(synd, net);
        }
    }

    /// Whether UCX still holds slot memory (then the slots must outlive the QP).
    pub(super) fn ucx_busy(&self) -> bool {
        self.slots.iter().any(|s| s.ucx_pending > 0)
    }

    /// Runs what the ring holds and writes what completed; true if anything happened.
    pub(super) fn progress(&mut self, env: &mut Env<'_>) -> bool {
        let mut busy = false;
        match self.sq.producer(self.next_exec) {
            Ok(pi) => self.pi = self.pi.max(pi),
            Err(bad) => {
                if self.error.is_none() {
                    sdk_err!(
                        "nic",
                        "QP {:#x}: doorbell announces WQE {} past the ring",
                        self.qpn,
                        bad.value
                    );
                    self.set_error(syndrome::LOCAL_QP_OP, env.net);
                }
            }
        }
        while self.next_exec < self.pi {
            if self.error.is_some() {
                let i = self.next_exec;
                let raw = self.sq.read(i);
                let s = self.slot(i);
                *s = Slot::default();
                s.index = i;
                s.opcode = wqe::opcode_of(&raw);
                s.synd = syndrome::WR_FLUSH;
                self.next_exec += 1;
                self.cur = None;
                busy = true;
                continue;
            }
            match self.issue(env) {
                Step::Next => {
                    self.next_exec += 1;
                    self.cur = None;
                    self.stage = Stage::Fresh;
                    env.net.shared.stats.wqes.fetch_add(1, Ordering::Relaxed);
                    busy = true;
                }
                Step::Stop => break,
            }
        }
        self.maybe_flush(env.net);
        busy | self.retire(env)
    }

    /// Starts an endpoint flush if writes wait for one and none is running.
    fn maybe_flush(&mut self, net: &mut Net) {
        if self.flush_inflight || self.rma_flushed >= self.rma_issued {
            return;
        }
        let peer = match self.conn {
            Conn::To { peer, .. } => net.ready_peer(peer),
            Conn::None => None,
        };
        let Some((ep, _)) = peer else {
            // Nobody to flush to: the writes fail with the peer (their CQEs are errors).
            self.rma_flushed = self.rma_issued;
            return;
        };
        self.flush_target = self.rma_issued;
        match ep.flush(token::make(token::FLUSH, self.qpn, 0)) {
            Issue::Done => self.rma_flushed = self.flush_target,
            Issue::Pending => self.flush_inflight = true,
            Issue::Failed(s) => self.set_error(syndrome_of(s), net),
        }
    }

    /// Writes the CQEs of finished WQEs, in order.
    fn retire(&mut self, env: &mut Env<'_>) -> bool {
        let mut busy = false;
        while self.next_cqe < self.next_exec {
            let i = self.next_cqe;
            let flushed = self.rma_flushed;
            let flushing = self.error_cqe_written;
            let s = self.slot(i);
            let waiting_flush = s.rma_seq > flushed && s.synd == 0;
            if s.ucx_pending > 0 || s.await_ack || waiting_flush {
                break;
            }
            let mut synd = s.synd;
            if synd == 0 && !flushing {
                if let Some((region, addr)) = s.result.take() {
                    if mkey::write_local(&region, addr, &s.fetched.to_ne_bytes()).is_err() {
                        synd = syndrome::LOCAL_PROT;
                    }
                }
            }
            let s = self.slot(i);
            let (opcode, signaled, byte_cnt) = (s.opcode, s.signaled, s.byte_cnt);
            s.regions = [None, None, None];
            s.result = None;
            let img = if self.error_cqe_written {
                Some(cqe::error(
                    cqe::op::REQ_ERR,
                    syndrome::WR_FLUSH,
                    opcode,
                    i as u16,
                    self.qpn,
                ))
            } else if synd != 0 {
                self.error_cqe_written = true;
                self.set_error(synd, env.net);
                Some(cqe::error(
                    cqe::op::REQ_ERR,
                    synd,
                    opcode,
                    i as u16,
                    self.qpn,
                ))
            } else if signaled {
                Some(cqe::req(i as u16, self.qpn, byte_cnt))
            } else {
                None
            };
            if let Some(img) = img {
                if let Some(cq) = env.cqs.get_mut(&self.send_cqn) {
                    cq.push(&img);
                    env.net.shared.stats.cqes.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.next_cqe += 1;
            busy = true;
        }
        busy
    }

    /// Completes every WQE in the ring with a flush error (destroy).
    pub(super) fn flush_all(&mut self, env: &mut Env<'_>) {
        if let Ok(pi) = self.sq.producer(self.next_exec) {
            self.pi = self.pi.max(pi);
        }
        self.set_error(syndrome::WR_FLUSH, env.net);
        self.error_cqe_written = true;
        while self.next_cqe < self.pi {
            let i = self.next_cqe;
            let opcode = if i < self.next_exec {
                self.slot(i).opcode
            } else {
                wqe::opcode_of(&self.sq.read(i))
            };
            let img = cqe::error(
                cqe::op::REQ_ERR,
                syndrome::WR_FLUSH,
                opcode,
                i as u16,
                self.qpn,
            );
            if let Some(cq) = env.cqs.get_mut(&self.send_cqn) {
                cq.push(&img);
            }
            self.next_cqe += 1;
        }
        self.next_exec = self.next_exec.max(self.next_cqe);
    }

    /// Fails the head WQE with `synd`.
    fn fail(&mut self, synd: u8, net: &Net) -> Step {
        let i = self.next_exec;
        self.slot(i).synd = synd;
        self.set_error(synd, net);
        Step::Next
    }

    fn issue(&mut self, env: &mut Env<'_>) -> Step {
        let i = self.next_exec;
        let wqe = match self.cur {
            Some(w) => w,
            None => {
                let raw = self.sq.read(i);
                let parsed = wqe::parse(&raw, i as u16, self.qpn);
                let s = self.slot(i);
                *s = Slot::default();
                s.index = i;
                s.opcode = wqe::opcode_of(&raw);
                match parsed {
                    Ok(w) => {
                        s.signaled = w.signaled;
                        self.cur = Some(w);
                        w
                    }
                    Err(m) => {
                        sdk_err!("nic", "QP {:#x}: WQE {i} cannot run: {m:?}", self.qpn);
                        return self.fail(syndrome::LOCAL_QP_OP, env.net);
                    }
                }
            }
        };
        match wqe.op {
            Op::Nop | Op::Dump => return Step::Next,
            Op::Wait { max_index, cqn } => {
                return match env.cqs.get(&cqn) {
                    None => self.fail(syndrome::LOCAL_QP_OP, env.net),
                    Some(cq) if wait_reached(cq.produced(), max_index) => Step::Next,
                    Some(_) => Step::Stop,
                };
            }
            _ => {}
        }
        let Conn::To {
            peer,
            qpn: remote_qpn,
        } = self.conn
        else {
            // Not connected: a verbs QP in RST/INIT cannot send; its WQEs wait for RTR.
            return Step::Stop;
        };
        match env.net.peers.get(peer as usize).map(|p| p.state) {
            Some(PeerState::Ready) => {}
            Some(PeerState::Connecting | PeerState::Wiring) => return Step::Stop,
            _ => return self.fail(syndrome::TRANSPORT_RETRY_EXC, env.net),
        }
        match wqe.op {
            Op::Write { raddr, rkey, src } => {
                self.write(env, peer, remote_qpn, &wqe, raddr, rkey, src.as_slice())
            }
            Op::WriteInline { raddr, rkey, len } => {
                let s = self.slot(i);
                s.inline = wqe.inline;
                let sge = Sge {
                    addr: s.inline.as_ptr() as u64,
                    key: 0,
                    len: len as u32,
                };
                self.write(env, peer, remote_qpn, &wqe, raddr, rkey, &[sge])
            }
            Op::Read { raddr, rkey, dst } => self.read(env, peer, raddr, rkey, dst.as_slice()),
            Op::FetchAdd {
                raddr,
                rkey,
                add,
                result,
            } => self.atomic(env, peer, raddr, rkey, None, add, result),
            Op::CompareSwap {
                raddr,
                rkey,
                compare,
                swap,
                result,
            } => self.atomic(env, peer, raddr, rkey, Some(compare), swap, result),
            Op::Send { src } => self.send(env, peer, remote_qpn, &wqe, src.as_slice(), false),
            Op::SendInline { len } => {
                let s = self.slot(i);
                s.inline = wqe.inline;
                let sge = Sge {
                    addr: s.inline.as_ptr() as u64,
                    key: 0,
                    len: len as u32,
                };
                self.send(env, peer, remote_qpn, &wqe, &[sge], true)
            }
            Op::Nop | Op::Dump | Op::Wait { .. } => Step::Next,
        }
    }

    /// Checks a remote range; `Err(step)` when the WQE waits or failed.
    fn remote(
        &mut self,
        env: &mut Env<'_>,
        peer: u32,
        rkey: u32,
        raddr: u64,
        len: u64,
        need: Access,
    ) -> Result<(), Step> {
        let ok = match env.net.rkey(peer, rkey) {
            KeyLookup::Wait => return Err(Step::Stop),
            KeyLookup::Unknown => false,
            KeyLookup::Ready {
                addr,
                len: rlen,
                access,
                ..
            } => {
                raddr >= addr
                    && raddr.checked_add(len).is_some_and(|e| e <= addr + rlen)
                    && access.has(need)
            }
        };
        if ok {
            Ok(())
        } else {
            sdk_warn!(
                "nic",
                "QP {:#x}: WQE {}: remote key {rkey:#x} does not allow {len} bytes at {raddr:#x}",
                self.qpn,
                self.next_exec
            );
            Err(self.fail(syndrome::REMOTE_ACCESS, env.net))
        }
    }

    /// Checks local entries and pins their registrations in the slot.
    fn local(&mut self, env: &mut Env<'_>, sges: &[Sge], need: Access) -> Result<(), Step> {
        let i = self.next_exec;
        for (k, sge) in sges.iter().enumerate() {
            if sge.len == 0 {
                continue;
            }
            match env.local.check(sge.key, sge.addr, sge.len as u64, need) {
                Some(r) => self.slot(i).regions[k] = Some(r),
                None => {
                    sdk_warn!(
                        "nic",
                        "QP {:#x}: WQE {i}: local key {:#x} does not cover {} bytes at {:#x}",
                        self.qpn,
                        sge.key,
                        sge.len,
                        sge.addr
                    );
                    return Err(self.fail(syndrome::LOCAL_PROT, env.net));
                }
            }
        }
        Ok(())
    }

    fn fence_for(&mut self, net: &Net, class: Class) {
        if self.class != Class::None && self.class != class {
            net.worker.fence();
        }
        self.class = class;
    }

    fn count(&mut self, issue: Issue, net: &Net) -> bool {
        let i = self.next_exec;
        match issue {
            Issue::Done => true,
            Issue::Pending => {
                self.slot(i).ucx_pending += 1;
                true
            }
            Issue::Failed(s) => {
                let synd = syndrome_of(s);
                self.slot(i).synd = synd;
                self.set_error(synd, net);
                false
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        env: &mut Env<'_>,
        peer: u32,
        remote_qpn: u32,
        wqe: &Wqe,
        raddr: u64,
        rkey: u32,
        src: &[Sge],
    ) -> Step {
        let i = self.next_exec;
        let total: u64 = src.iter().map(|s| s.len as u64).sum();
        if self.stage == Stage::Fresh {
            if let Err(step) = self.remote(env, peer, rkey, raddr, total, Access::REMOTE_WRITE) {
                return step;
            }
            let inline = matches!(wqe.op, Op::WriteInline { .. });
            if !inline {
                if let Err(step) = self.local(env, src, Access::default()) {
                    return step;
                }
            }
            if total > 0 {
                self.fence_for(env.net, Class::Write);
                let Some((ep, _)) = env.net.ready_peer(peer) else {
                    return self.fail(syndrome::TRANSPORT_RETRY_EXC, env.net);
                };
                let KeyLookup::Ready { rkey: rk, .. } = env.net.rkey(peer, rkey) else {
                    return self.fail(syndrome::REMOTE_ACCESS, env.net);
                };
                let mut off = 0u64;
                let mut issues = [Issue::Done; MAX_SGE];
                for (k, sge) in src.iter().enumerate() {
                    if sge.len == 0 {
                        continue;
                    }
                    let memh = self.slots[(i & (self.slots.len() as u64 - 1)) as usize].regions[k]
                        .as_ref()
                        .map(|r| &r.memh);
                    // SAFETY: the source is registered memory pinned by the slot, or the
                    // slot's own inline buffer, both alive until the operation completes.
                    issues[k] = unsafe {
                        ep.put(
                            sge.addr as *const u8,
                            sge.len as usize,
                            raddr + off,
                            rk,
                            memh,
                            token::make(token::OP, self.qpn, i as u32),
                        )
                    };
                    off += sge.len as u64;
                }
                for is in issues.into_iter().take(src.len()) {
                    if !self.count(is, env.net) {
                        return Step::Next;
                    }
                }
                self.rma_issued += 1;
                let seq = self.rma_issued;
                self.slot(i).rma_seq = seq;
            }
            if wqe.imm.is_none() {
                return Step::Next;
            }
            self.stage = Stage::Notify;
        }
        // Write with immediate: the notification follows the data once it is visible.
        if self.rma_flushed < self.rma_issued {
            self.maybe_flush(env.net);
            return Step::Stop;
        }
        self.message(
            env,
            peer,
            remote_qpn,
            MsgKind::WriteImm,
            wqe.imm.unwrap_or_default(),
            total,
            None,
        )
    }

    fn read(&mut self, env: &mut Env<'_>, peer: u32, raddr: u64, rkey: u32, dst: &[Sge]) -> Step {
        let i = self.next_exec;
        let total: u64 = dst.iter().map(|s| s.len as u64).sum();
        if let Err(step) = self.remote(env, peer, rkey, raddr, total, Access::REMOTE_READ) {
            return step;
        }
        if let Err(step) = self.local(env, dst, Access::LOCAL_WRITE) {
            return step;
        }
        self.fence_for(env.net, Class::Read);
        let Some((ep, _)) = env.net.ready_peer(peer) else {
            return self.fail(syndrome::TRANSPORT_RETRY_EXC, env.net);
        };
        let KeyLookup::Ready { rkey: rk, .. } = env.net.rkey(peer, rkey) else {
            return self.fail(syndrome::REMOTE_ACCESS, env.net);
        };
        let mut off = 0u64;
        let mut issues = [Issue::Done; MAX_SGE];
        for (k, sge) in dst.iter().enumerate() {
            let memh = self.slots[(i & (self.slots.len() as u64 - 1)) as usize].regions[k]
                .as_ref()
                .map(|r| &r.memh);
            // SAFETY: the destination is registered memory pinned by the slot.
            issues[k] = unsafe {
                ep.get(
                    sge.addr as *mut u8,
                    sge.len as usize,
                    raddr + off,
                    rk,
                    memh,
                    token::make(token::OP, self.qpn, i as u32),
                )
            };
            off += sge.len as u64;
        }
        self.slot(i).byte_cnt = total as u32;
        for is in issues.into_iter().take(dst.len()) {
            if !self.count(is, env.net) {
                break;
            }
        }
        Step::Next
    }

    /// An atomic runs at the target (its proxy executes it on the word and answers with
    /// the old value), after every earlier write of this QP is flushed.
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        env: &mut Env<'_>,
        peer: u32,
        raddr: u64,
        rkey: u32,
        compare: Option<u64>,
        value: u64,
        result: Sge,
    ) -> Step {
        let i = self.next_exec;
        if self.stage == Stage::Fresh {
            if raddr % 8 != 0 {
                return self.fail(syndrome::REMOTE_INVAL_REQ, env.net);
            }
            let Some(region) = env
                .local
                .check(result.key, result.addr, 8, Access::LOCAL_WRITE)
            else {
                return self.fail(syndrome::LOCAL_PROT, env.net);
            };
            let s = self.slot(i);
            s.result = Some((region, result.addr));
            s.byte_cnt = 8;
            self.stage = Stage::Notify;
        }
        if self.rma_flushed < self.rma_issued {
            self.maybe_flush(env.net);
            return Step::Stop;
        }
        let Some((ep, token_at_peer)) = env.net.ready_peer(peer) else {
            return self.fail(syndrome::TRANSPORT_RETRY_EXC, env.net);
        };
        let h = wire::Atomic {
            token: token_at_peer,
            qpn: self.qpn,
            wqe: i as u32,
            cswap: compare.is_some(),
            key: rkey,
            addr: raddr,
            operand: value,
            compare: compare.unwrap_or(0),
        }
        .encode();
        self.slot(i).await_ack = true;
        env.net.ctrl_send(ep, wire::AM_ATOMIC, &h, None);
        Step::Next
    }

    fn send(
        &mut self,
        env: &mut Env<'_>,
        peer: u32,
        remote_qpn: u32,
        wqe: &Wqe,
        src: &[Sge],
        inline: bool,
    ) -> Step {
        let total: u64 = src.iter().map(|s| s.len as u64).sum();
        if self.stage == Stage::Fresh {
            if !inline {
                if let Err(step) = self.local(env, src, Access::default()) {
                    return step;
                }
            }
            self.stage = Stage::Notify;
        }
        if self.rma_flushed < self.rma_issued {
            self.maybe_flush(env.net);
            return Step::Stop;
        }
        let kind = if wqe.imm.is_some() {
            MsgKind::SendImm
        } else {
            MsgKind::Send
        };
        self.message(
            env,
            peer,
            remote_qpn,
            kind,
            wqe.imm.unwrap_or_default(),
            total,
            Some(src),
        )
    }

    /// Sends the MSG of the head WQE (payload: `src`, gathered) and waits for its ACK.
    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        env: &mut Env<'_>,
        peer: u32,
        remote_qpn: u32,
        kind: MsgKind,
        imm: [u8; 4],
        total: u64,
        src: Option<&[Sge]>,
    ) -> Step {
        let i = self.next_exec;
        let Some((ep, token_at_peer)) = env.net.ready_peer(peer) else {
            return self.fail(syndrome::TRANSPORT_RETRY_EXC, env.net);
        };
        let h = Msg {
            token: token_at_peer,
            dst_qpn: remote_qpn,
            src_qpn: self.qpn,
            kind,
            imm,
            wqe: i as u32,
            len: total,
        }
        .encode();
        let t = token::make(token::OP, self.qpn, i as u32);
        let sges = src.unwrap_or(&[]);
        let mut nonempty = sges.iter().enumerate().filter(|(_, s)| s.len > 0);
        let first = nonempty.next();
        let more = nonempty.next().is_some();
        let is = if more {
            // Several entries: gather them into one message (rare; a control-path copy).
            let mut buf = Vec::with_capacity(total as usize);
            for s in sges {
                if s.len > 0 {
                    // SAFETY: each entry was checked against a live registration of host
                    // memory the slot pins; device memory is not gathered here.
                    buf.extend_from_slice(unsafe {
                        std::slice::from_raw_parts(s.addr as *const u8, s.len as usize)
                    });
                }
            }
            let slot_regions_host = self
                .slot(i)
                .regions
                .iter()
                .flatten()
                .all(|r| r.kind == mkey::MemKind::Host);
            if !slot_regions_host {
                return self.fail(syndrome::LOCAL_QP_OP, env.net);
            }
            self.slot(i).await_ack = true;
            env.net.ctrl_send(ep, wire::AM_MSG, &h, Some(buf));
            return Step::Next;
        } else if let Some((k, s)) = first {
            let memh = self.slots[(i & (self.slots.len() as u64 - 1)) as usize].regions[k]
                .as_ref()
                .map(|r| &r.memh);
            // SAFETY: registered memory pinned by the slot, or the slot's inline buffer.
            unsafe {
                env.net.worker.am_send(
                    ep,
                    wire::AM_MSG,
                    &h,
                    s.addr as *const u8,
                    s.len as usize,
                    memh,
                    t,
                )
            }
        } else {
            // SAFETY: no payload.
            unsafe {
                env.net
                    .worker
                    .am_send(ep, wire::AM_MSG, &h, std::ptr::null(), 0, None, t)
            }
        };
        if self.count(is, env.net) {
            self.slot(i).await_ack = true;
        }
        Step::Next
    }
}

#[cfg(test)]
mod tests {
    use super::wait_reached;

    #[test]
    fn wait_compares_cqe_numbers_modulo_2_32() {
        assert!(!wait_reached(0, 0));
        assert!(wait_reached(1, 0));
        assert!(!wait_reached(5, 5));
        assert!(wait_reached(6, 5));
        assert!(wait_reached(0x1_0000_0001, 0xffff_ffff));
        assert!(!wait_reached(0xffff_ffff, 0xffff_ffff));
    }
}
