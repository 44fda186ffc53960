//! The send side of a QP: taking WQEs from the ring in index order, running them with UCX,
//! and writing their completions in the same order.
//!
//! Each WQE gets a slot (one per ring entry, allocated with the QP) that holds everything
//! UCX may still read while it runs (the inline payload), what it must write back at
//! completion (the fetched value of an atomic), and what its completion waits for:
//! * the UCX operations it started (`ucx_pending`);
//! * for RDMA writes, a completed endpoint flush issued after it (`rma_seq` <=
//!   `rma_flushed`): only then is the data visible at the peer, and only then may its CQE
//!   (or any later one) be written;
//! * for sends, writes with immediate and atomics, the peer's answer (ACK: the data sits in
//!   a posted receive, or was refused; ATOMIC_REP: the old value).
//!
//! Ordering between operations of one QP: a send, the notification of a write with
//! immediate and an atomic leave only once every earlier write is flushed (so the receiver
//! finds the data it is told about, and a signal lands after the data it signals); a read
//! after writes is fenced with `ucp_worker_fence`. WQEs after a WAIT wait until the named
//! CQ has produced the awaited CQE. Not ordered: a write after a send or an atomic may
//! land before the send is placed or the atomic is executed (no DOCA pattern relies on it).
//!
//! Errors: the first failing WQE completes with its error CQE, the QP enters the error
//! state, and every later WQE (also those already running) completes with a flush error.

use super::cq_ring::CqRing;
use super::mkey::{self, Region};
use super::peer::{token, Net};
use super::ring::SqRing;
use super::shared::{NicEvent, QpState as PubState, QpStatusCell};
use super::ucp::{self, Issue};
use doca_soft_packet::mlx5::rdma::{self as wqe, Wqe, MAX_INLINE, MAX_SGE};
use doca_soft_packet::mlx5::{cqe, cqe_opcode, syndrome};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

mod issue;

use super::local::LocalKeys;

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

/// Whether CQ `produced` CQEs include CQE number `max_index` (mod 2^32).
fn wait_reached(produced: u64, max_index: u32) -> bool {
    (produced as u32).wrapping_sub(max_index.wrapping_add(1)) as i32 >= 0
}

/// The CQE syndrome for a failed UCX operation.
pub(super) fn syndrome_of(status: ucp::Status) -> u8 {
    sdk_warn!(
        "nic",
        "UCX operation failed: {}; completing with an error CQE",
        ucp::status_str(status)
    );
    match ucp::failure_of(status) {
        ucp::Failure::Local => syndrome::LOCAL_QP_OP_ERR,
        ucp::Failure::RemoteAccess => syndrome::REMOTE_ACCESS_ERR,
        ucp::Failure::Transport => syndrome::TRANSPORT_RETRY_EXC_ERR,
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
        self.set_error(syndrome::TRANSPORT_RETRY_EXC_ERR, net);
        let flushed = self.rma_flushed;
        for i in self.next_cqe..self.next_exec {
            let s = self.slot(i);
            let unconfirmed = s.await_ack || (s.rma_seq != 0 && s.rma_seq > flushed);
            s.await_ack = false;
            if unconfirmed && s.synd == 0 {
                s.synd = syndrome::TRANSPORT_RETRY_EXC_ERR;
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
                    self.set_error(syndrome::LOCAL_QP_OP_ERR, env.net);
                    // Complete one whole ring with errors (once: more would overwrite
                    // these CQEs), so that device code waiting for any WQE of the ring
                    // sees an error CQE instead of waiting forever.
                    self.pi = self.pi.max(self.next_exec + self.sq.size() as u64);
                }
            }
        }
        while self.next_exec < self.pi {
            if let Some(err) = self.error {
                let i = self.next_exec;
                let raw = self.sq.read(i);
                let first = !self.error_cqe_written;
                let s = self.slot(i);
                *s = Slot::default();
                s.index = i;
                s.opcode = wqe::opcode_of(&raw);
                // The first error CQE carries the QP's error (what put it in error).
                s.synd = if first { err } else { syndrome::WR_FLUSH_ERR };
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
                        synd = syndrome::LOCAL_PROT_ERR;
                    }
                }
            }
            let s = self.slot(i);
            let (opcode, signaled, byte_cnt) = (s.opcode, s.signaled, s.byte_cnt);
            s.regions = [None, None, None];
            s.result = None;
            let img = if self.error_cqe_written {
                Some(cqe::error(
                    cqe_opcode::REQ_ERR,
                    syndrome::WR_FLUSH_ERR,
                    opcode,
                    i as u16,
                    self.qpn,
                ))
            } else if synd != 0 {
                self.error_cqe_written = true;
                self.set_error(synd, env.net);
                Some(cqe::error(
                    cqe_opcode::REQ_ERR,
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
        self.set_error(syndrome::WR_FLUSH_ERR, env.net);
        self.error_cqe_written = true;
        while self.next_cqe < self.pi {
            let i = self.next_cqe;
            let opcode = if i < self.next_exec {
                self.slot(i).opcode
            } else {
                wqe::opcode_of(&self.sq.read(i))
            };
            let img = cqe::error(
                cqe_opcode::REQ_ERR,
                syndrome::WR_FLUSH_ERR,
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
