//! Commands from the handles: creating, connecting and destroying queues, importing keys.

use super::Engine;
use crate::error::DocaError;
use crate::rdma::gid::Gid;
use crate::rdma::mkey::Access;
use crate::rdma::peer::PeerState;
use crate::rdma::rq::RqState;
use crate::rdma::shared::{Cmd, QpState as PubState};
use crate::rdma::sq::{Conn, Env, QpState};
use doca_soft_packet::mlx5::syndrome;
use std::sync::atomic::Ordering;

impl Engine {
    pub(super) fn commands(&mut self) -> bool {
        if !self.net.shared.has_cmds.swap(false, Ordering::AcqRel) {
            return false;
        }
        let cmds = std::mem::take(
            &mut *self
                .net
                .shared
                .cmds
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        let busy = !cmds.is_empty();
        for c in cmds {
            self.command(c);
        }
        busy
    }

    pub(super) fn alloc_id(next: &mut u32, used: impl Fn(u32) -> bool) -> u32 {
        loop {
            let id = *next;
            *next = if *next >= 0xff_ffff { 1 } else { *next + 1 };
            if !used(id) {
                return id;
            }
        }
    }

    pub(super) fn command(&mut self, c: Cmd) {
        match c {
            Cmd::CreateCq { ring, reply } => {
                let cqs = &self.cqs;
                let cqn = Self::alloc_id(&mut self.next_cqn, |i| cqs.contains_key(&i));
                self.cqs.insert(cqn, ring);
                let _ = reply.send(cqn);
            }
            Cmd::DestroyCq { cqn, reply } => {
                self.cqs.remove(&cqn);
                let _ = reply.send(());
            }
            Cmd::CreateRq {
                ring,
                cqn,
                cqe_inline,
                reply,
            } => {
                if !self.cqs.contains_key(&cqn) {
                    let _ = reply.send(Err(DocaError::INVALID_VALUE));
                    return;
                }
                let (rqs, zombies) = (&self.rqs, &self.rq_zombies);
                let id = Self::alloc_id(&mut self.next_rq, |i| {
                    rqs.contains_key(&i) || zombies.contains_key(&i)
                });
                self.rqs.insert(id, RqState::new(ring, cqn, cqe_inline));
                self.rq_ids.push(id);
                let _ = reply.send(Ok(id));
            }
            Cmd::DestroyRq { id, reply } => {
                self.rq_ids.retain(|&i| i != id);
                if let Some(rq) = self.rqs.remove(&id) {
                    if rq.ucx_busy() {
                        self.rq_zombies.insert(id, rq);
                    }
                }
                let _ = reply.send(());
            }
            Cmd::CreateQp {
                sq,
                cqn,
                rq,
                status,
                reply,
            } => {
                if !self.cqs.contains_key(&cqn) || rq.is_some_and(|r| !self.rqs.contains_key(&r)) {
                    let _ = reply.send(Err(DocaError::INVALID_VALUE));
                    return;
                }
                let (qps, zombies) = (&self.qps, &self.qp_zombies);
                let qpn = Self::alloc_id(&mut self.next_qpn, |i| {
                    qps.contains_key(&i) || zombies.contains_key(&i)
                });
                if let Some(r) = rq.and_then(|r| self.rqs.get_mut(&r)) {
                    r.users.push(qpn);
                }
                status.set(PubState::Reset);
                self.qps.insert(qpn, QpState::new(qpn, sq, cqn, rq, status));
                let _ = reply.send(Ok(qpn));
            }
            Cmd::ConnectQp {
                qpn,
                gid,
                peer,
                remote_qpn,
                reply,
            } => {
                let r = match self.qps.get(&qpn) {
                    None => Err(DocaError::NOT_FOUND),
                    Some(q) if q.conn != Conn::None || q.error.is_some() => {
                        Err(DocaError::BAD_STATE)
                    }
                    Some(_) => {
                        let p = self.net.peer_for(gid, peer);
                        let ready = self.net.peers[p as usize].state == PeerState::Ready;
                        let qp = self.qps.get_mut(&qpn).expect("checked");
                        qp.conn = Conn::To {
                            peer: p,
                            qpn: remote_qpn,
                        };
                        if ready {
                            qp.on_connected();
                        } else {
                            qp.status.set(PubState::Connecting);
                        }
                        if self.net.peers[p as usize].state == PeerState::Dead {
                            qp.peer_lost(&self.net);
                        }
                        Ok(())
                    }
                };
                let _ = reply.send(r);
            }
            Cmd::DestroyQp { qpn, reply } => {
                self.destroy_qp(qpn);
                let _ = reply.send(());
            }
            Cmd::ErrorQp { qpn, reply } => {
                let r = match self.qps.get_mut(&qpn) {
                    None => Err(DocaError::NOT_FOUND),
                    Some(q) => {
                        // A verbs modify to ERR: what the ring holds and everything posted
                        // later completes with flush errors.
                        q.set_error(syndrome::WR_FLUSH_ERR, &self.net);
                        Ok(())
                    }
                };
                let _ = reply.send(r);
            }
            Cmd::ImportKey { export, reply } => {
                let r = match Gid::decode(&export.gid) {
                    None => Err(DocaError::INVALID_VALUE),
                    Some(addr) => {
                        self.net.seed_key(
                            export.gid,
                            addr,
                            export.key,
                            (export.addr, export.len),
                            Access(export.access),
                            export.packed,
                        );
                        Ok(())
                    }
                };
                let _ = reply.send(r);
            }
        }
    }

    pub(super) fn destroy_qp(&mut self, qpn: u32) {
        let Some(mut qp) = self.qps.remove(&qpn) else {
            return;
        };
        let mut env = Env {
            net: &mut self.net,
            cqs: &mut self.cqs,
            local: &mut self.local,
        };
        qp.flush_all(&mut env);
        if let Some(rq_id) = qp.rq {
            let last = match self.rqs.get_mut(&rq_id) {
                Some(rq) => {
                    rq.users.retain(|&q| q != qpn);
                    rq.users.is_empty()
                }
                None => false,
            };
            if last {
                self.flush_rq(rq_id, qpn);
            }
        }
        if qp.ucx_busy() {
            self.qp_zombies.insert(qpn, qp);
        }
    }
}
