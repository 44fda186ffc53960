//! The proxy thread: one per NIC instance. It owns the UCX worker and every queue of the
//! NIC, and loops:
//!
//! 1. commands from the handles (create, connect, destroy);
//! 2. `ucp_worker_progress` until idle, then what it produced: connection requests and
//!    endpoint failures, received active messages, finished requests;
//! 3. every receive queue (deliver waiting messages into newly posted receives), then every
//!    send queue (doorbell, new WQEs, finished CQEs).
//!
//! Sleeping: after [`spin`](Tuning::spin) of idleness the thread sleeps on the worker's
//! event descriptor and its own eventfd (which [`super::Nic::wake`] and every command
//! signal). Doorbells written by a GPU raise no event, so while any QP exists the sleep is
//! bounded ([`sleep_max`](Tuning::sleep_max), reached by doubling from 5 µs); with no QP
//! at all it sleeps until woken. `DOCA_SOFT_NIC_SPIN_US` (default 50) and
//! `DOCA_SOFT_NIC_SLEEP_US` (default 100, at most 10 000) tune both.
//!
//! A peer connection not ready after `DOCA_SOFT_NIC_CONNECT_MS` (default 20 000) fails like a
//! lost peer.

use super::cq_ring::CqRing;
use super::gid::Gid;
use super::local::LocalKeys;
use super::mkey::{self, Access, AtomicOp};
use super::peer::{token, Net};
use super::rq::RqState;
use super::shared::Shared;
use super::sq::{Conn, Env, QpState};
use super::ucp::{self, NetEvent, Worker};
use super::ucp_am::{self, AmMsg};
use super::wire::{self, Ack, Atomic, AtomicRep};
use crate::error::DocaResult;
use doca_soft_packet::mlx5::syndrome;
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::Ordering;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod commands;
mod idle;
mod receive;

use idle::Tuning;

/// Everything the proxy thread owns. Field order is drop order: queues, then the network
/// side (endpoints, then the worker).
pub(super) struct Engine {
    pub(super) qps: HashMap<u32, QpState>,
    pub(super) rqs: HashMap<u32, RqState>,
    pub(super) cqs: HashMap<u32, CqRing>,
    pub(super) local: LocalKeys,
    pub(super) unexpected_bytes: u64,
    qp_zombies: HashMap<u32, QpState>,
    rq_zombies: HashMap<u32, RqState>,
    rq_ids: Vec<u32>,
    next_qpn: u32,
    next_cqn: u32,
    next_rq: u32,
    done: Vec<(u64, ucp::Status)>,
    events: Vec<NetEvent>,
    inbox: Vec<AmMsg>,
    tuning: Tuning,
    seen_generation: u64,
    last_expire: Instant,
    last_busy: Instant,
    sleep: Duration,
    listener: Option<ucp::Listener>,
    // The CUDA registration count when this thread last made a GPU context current, and
    // its hold on that context.
    bound_cuda: u64,
    cuda_ctx: Option<Box<dyn Send>>,
    pub(super) net: Net,
}

fn instance_id() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    (std::process::id().rotate_left(16)
        ^ t.subsec_nanos()
        ^ (t.as_secs() as u32)
        ^ n.wrapping_mul(0x9e37_79b9))
    .max(1)
}

/// The proxy thread's body: sets up the worker and listener, reports (GID, port), loops.
pub(super) fn run(
    shared: Arc<Shared>,
    bind: Ipv4Addr,
    ready: SyncSender<DocaResult<([u8; 16], u16)>>,
) {
    let setup = || -> DocaResult<(Engine, [u8; 16], u16)> {
        let worker = Worker::new()?;
        for id in wire::ALL_IDS {
            worker.set_am_handler(id)?;
        }
        let (listener, port) = worker.listen(SocketAddrV4::new(bind, 0))?;
        let gid = Gid {
            ip: bind,
            port,
            instance: instance_id(),
        }
        .encode();
        let net = Net::new(worker, gid, shared.clone())?;
        Ok((
            Engine {
                qps: HashMap::new(),
                rqs: HashMap::new(),
                cqs: HashMap::new(),
                local: LocalKeys::default(),
                unexpected_bytes: 0,
                qp_zombies: HashMap::new(),
                rq_zombies: HashMap::new(),
                rq_ids: Vec::new(),
                next_qpn: 0x100,
                next_cqn: 0x40,
                next_rq: 1,
                done: Vec::with_capacity(1024),
                events: Vec::new(),
                inbox: Vec::with_capacity(256),
                tuning: Tuning::from_env(),
                seen_generation: mkey::generation(),
                last_expire: Instant::now(),
                last_busy: Instant::now(),
                sleep: Duration::ZERO,
                listener: Some(listener),
                bound_cuda: 0,
                cuda_ctx: None,
                net,
            },
            gid,
            port,
        ))
    };
    let mut engine = match setup() {
        Ok((e, gid, port)) => {
            let _ = ready.send(Ok((gid, port)));
            e
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    drop(ready);
    while !shared.stop.load(Ordering::Acquire) {
        let busy = engine.step();
        engine.idle(busy);
    }
    engine.shutdown();
}

impl Engine {
    /// One round of the loop; true if anything happened.
    fn step(&mut self) -> bool {
        let mut busy = self.commands();
        self.bind_cuda();
        while self.net.worker.progress() {
            busy = true;
        }
        busy |= self.network_events();
        busy |= self.messages();
        busy |= self.completions();
        busy |= self.queues();
        self.revocations();
        if self.last_expire.elapsed() > Duration::from_millis(100) {
            self.last_expire = Instant::now();
            let mut died = Vec::new();
            self.net.expire(self.tuning.connect, &mut died);
            for p in died {
                self.peer_died(p);
            }
        }
        self.net.reap_closes();
        self.reap_zombies();
        busy
    }

    /// Makes the GPU context of the latest CUDA registration current on this thread when
    /// it changed: UCX runs its CUDA copies (puts, gets, message data in device memory) in
    /// the calling thread's context, and without one they fail.
    fn bind_cuda(&mut self) {
        let epoch = mkey::cuda_epoch();
        if epoch == self.bound_cuda {
            return;
        }
        self.bound_cuda = epoch;
        match mkey::bind_device_context() {
            Ok(held) => {
                self.cuda_ctx = Some(held);
                sdk_dbg!("nic", "proxy bound the GPU context of CUDA registration {epoch}")
            }
            Err(e) => sdk_warn!(
                "nic",
                "proxy could not bind a GPU context for CUDA registration {epoch}: {e}; transfers of CUDA memory may fail"
            ),
        }
    }

    /// Tells peers about deregistrations since the last look.
    fn revocations(&mut self) {
        if mkey::generation() == self.seen_generation {
            return;
        }
        let (keys, now) = mkey::revoked_since(self.seen_generation);
        self.seen_generation = now;
        match keys {
            Some(k) if k.is_empty() => {}
            Some(k) => self.net.revoke(&k, false),
            None => self.net.revoke(&[], true),
        }
    }

    fn reap_zombies(&mut self) {
        if !self.qp_zombies.is_empty() {
            self.qp_zombies.retain(|_, q| q.ucx_busy());
        }
        if !self.rq_zombies.is_empty() {
            self.rq_zombies.retain(|_, r| r.ucx_busy());
        }
    }

    fn network_events(&mut self) -> bool {
        ucp::take_events(&mut self.events);
        if self.events.is_empty() {
            return false;
        }
        let events = std::mem::take(&mut self.events);
        for e in &events {
            match *e {
                NetEvent::ConnRequest(req) => self.net.accept(req),
                NetEvent::EpFailed(t, s) => {
                    sdk_dbg!("nic", "endpoint {t:#x} failed: {}", ucp::status_str(s));
                    if let Some(p) = self.net.on_ep_failed(t) {
                        self.peer_died(p);
                    }
                }
            }
        }
        self.events = events;
        self.events.clear();
        true
    }

    fn peer_died(&mut self, p: u32) {
        for qp in self.qps.values_mut() {
            if matches!(qp.conn, Conn::To { peer, .. } if peer == p) {
                qp.peer_lost(&self.net);
            }
        }
        self.drop_unexpected_from(p);
    }

    fn peer_ready(&mut self, p: u32) {
        for qp in self.qps.values_mut() {
            if matches!(qp.conn, Conn::To { peer, .. } if peer == p) {
                qp.on_connected();
            }
        }
    }

    fn messages(&mut self) -> bool {
        ucp_am::take_inbox(&mut self.inbox);
        if self.inbox.is_empty() {
            return false;
        }
        let mut inbox = std::mem::take(&mut self.inbox);
        for mut m in inbox.drain(..) {
            match m.id {
                wire::AM_HELLO => {
                    if let Some(p) = self.net.on_hello(&mut m) {
                        self.peer_ready(p);
                    }
                    self.net.worker.am_release(&mut m);
                }
                wire::AM_KEY_REQ => self.net.on_key_req(&mut m),
                wire::AM_KEY_REP => self.net.on_key_rep(&mut m),
                wire::AM_KEY_REVOKE => self.net.on_key_revoke(&mut m),
                wire::AM_MSG => self.on_msg(m),
                wire::AM_ACK => {
                    self.net.worker.am_release(&mut m);
                    if let Some(a) = Ack::decode(m.header()) {
                        self.on_ack(a);
                    }
                }
                wire::AM_ATOMIC => {
                    self.net.worker.am_release(&mut m);
                    if let Some(a) = Atomic::decode(m.header()) {
                        self.on_atomic(a);
                    }
                }
                wire::AM_ATOMIC_REP => {
                    self.net.worker.am_release(&mut m);
                    if let Some(r) = AtomicRep::decode(m.header()) {
                        if let Some(qp) = self.qps.get_mut(&r.qpn) {
                            if matches!(qp.conn, Conn::To { peer, .. } if peer == r.token) {
                                qp.atomic_reply(r.wqe, r.syndrome, r.old, &self.net);
                            }
                        }
                    }
                }
                _ => self.net.worker.am_release(&mut m),
            }
        }
        self.inbox = inbox;
        true
    }

    fn on_ack(&mut self, a: Ack) {
        // The token in an ACK is our token for its sender: it must be the QP's peer.
        let Some(qp) = self.qps.get_mut(&a.qpn) else {
            return;
        };
        if matches!(qp.conn, Conn::To { peer, .. } if peer == a.token) {
            qp.ack(a.wqe, a.syndrome, &self.net);
        }
    }

    /// A peer's atomic on our memory: checked against the registry (the key must allow
    /// remote atomics and cover the aligned word), executed, answered.
    fn on_atomic(&mut self, a: Atomic) {
        let Some((ep, token)) = self.net.ready_peer(a.token) else {
            return;
        };
        let op = if a.cswap {
            AtomicOp::CompareSwap {
                compare: a.compare,
                swap: a.operand,
            }
        } else {
            AtomicOp::FetchAdd(a.operand)
        };
        let (synd, old) = match self.local.get(a.key) {
            Some(r) if r.access.has(Access::REMOTE_ATOMIC) && r.covers(a.addr, 8) => {
                if !a.addr.is_multiple_of(8) {
                    (syndrome::REMOTE_INVAL_REQ_ERR, 0)
                } else {
                    match mkey::atomic64(r, a.addr, op) {
                        Ok(old) => (0, old),
                        Err(_) => (syndrome::REMOTE_OP_ERR, 0),
                    }
                }
            }
            _ => (syndrome::REMOTE_ACCESS_ERR, 0),
        };
        let rep = AtomicRep {
            token,
            qpn: a.qpn,
            wqe: a.wqe,
            syndrome: synd,
            old,
        }
        .encode();
        self.net.ctrl_send(ep, wire::AM_ATOMIC_REP, &rep, None);
    }

    fn completions(&mut self) -> bool {
        ucp::take_done(&mut self.done);
        if self.done.is_empty() {
            return false;
        }
        let done = std::mem::take(&mut self.done);
        for &(t, s) in &done {
            let (kind, hi, lo) = token::split(t);
            match kind {
                token::OP => {
                    if let Some(qp) = self.qps.get_mut(&hi) {
                        qp.op_done(lo, s, &self.net);
                    } else if let Some(z) = self.qp_zombies.get_mut(&hi) {
                        z.op_done(lo, s, &self.net);
                    }
                }
                token::FLUSH => {
                    if let Some(qp) = self.qps.get_mut(&hi) {
                        qp.flush_done(s, &self.net);
                    }
                }
                token::RECV => {
                    if self.rqs.contains_key(&hi) {
                        self.recv_done(hi, lo, s);
                    } else if let Some(z) = self.rq_zombies.remove(&hi) {
                        self.rqs.insert(hi, z);
                        self.recv_done(hi, lo, s);
                        if let Some(z) = self.rqs.remove(&hi) {
                            self.rq_zombies.insert(hi, z);
                        }
                    }
                }
                token::CTRL => self.net.ctrl_done(t),
                token::WIRED => {
                    if let Some(p) = self.net.on_wired(lo, s) {
                        self.peer_ready(p);
                    }
                }
                _ => {}
            }
        }
        self.done = done;
        self.done.clear();
        true
    }

    fn queues(&mut self) -> bool {
        let mut busy = false;
        for k in 0..self.rq_ids.len() {
            let id = self.rq_ids[k];
            busy |= self.match_rq(id);
            // Flush once no user can receive any more: at least one in error and the
            // others in error or never connected (DOCA RDMA shares one RQ among the QPs of
            // all its connections, some of which may stay unused).
            let owner_failed = self.rqs.get(&id).and_then(|rq| {
                let mut failed = None;
                for q in &rq.users {
                    match self.qps.get(q) {
                        Some(qp) if qp.error.is_some() => failed = failed.or(Some(*q)),
                        Some(qp) if matches!(qp.conn, Conn::None) => {}
                        _ => return None,
                    }
                }
                failed
            });
            if let Some(q) = owner_failed {
                busy |= self.flush_rq(id, q);
            }
        }
        let mut env = Env {
            net: &mut self.net,
            cqs: &mut self.cqs,
            local: &mut self.local,
        };
        for qp in self.qps.values_mut() {
            busy |= qp.progress(&mut env);
        }
        busy
    }

    fn shutdown(&mut self) {
        let qpns: Vec<u32> = self.qps.keys().copied().collect();
        for q in qpns {
            self.destroy_qp(q);
        }
        self.release_all_unexpected();
        self.net.close_all();
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            while self.net.worker.progress() {}
            let _ = self.completions();
            let _ = self.messages();
            let _ = self.network_events();
            self.reap_zombies();
            let closed = self.net.reap_closes();
            if (closed && self.qp_zombies.is_empty() && self.rq_zombies.is_empty())
                || Instant::now() > deadline
            {
                break;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        // Anything UCX still holds after the deadline is leaked rather than freed under it.
        for (_, z) in self.qp_zombies.drain() {
            std::mem::forget(z);
        }
        for (_, z) in self.rq_zombies.drain() {
            std::mem::forget(z);
        }
        self.listener = None;
        self.release_all_unexpected();
    }
}
