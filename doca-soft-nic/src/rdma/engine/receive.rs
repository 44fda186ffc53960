//! The receive side of the proxy loop (see `rq` for the receive queues' state): incoming
//! sends and writes with immediate placed into posted receives, the unexpected queue, and
//! receive CQEs.

use super::Engine;
use crate::rdma::mkey::Access;
use crate::rdma::peer::token;
use crate::rdma::rq::*;
use crate::rdma::sq::{syndrome_of, Conn};
use crate::rdma::ucp::{self, Issue};
use crate::rdma::ucp_am::AmMsg;
use crate::rdma::wire::{Msg, MsgKind};
use doca_soft_packet::mlx5::cqe;
use doca_soft_packet::mlx5::rdma::{self as wqe, RecvWqe};
use doca_soft_packet::mlx5::{cqe_opcode, syndrome};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

fn resp_opcode(kind: MsgKind) -> u8 {
    match kind {
        MsgKind::Send => cqe_opcode::RESP_SEND,
        MsgKind::SendImm => cqe_opcode::RESP_SEND_IMM,
        MsgKind::WriteImm => cqe_opcode::RESP_WR_IMM,
    }
}

fn imm_of(m: &Msg) -> Option<[u8; 4]> {
    matches!(m.kind, MsgKind::SendImm | MsgKind::WriteImm).then_some(m.imm)
}

fn carries_data(m: &Msg) -> bool {
    m.kind != MsgKind::WriteImm
}

impl Engine {
    /// A MSG arrived.
    pub(super) fn on_msg(&mut self, mut am: AmMsg) {
        let Some(m) = Msg::decode(am.header()) else {
            self.net.worker.am_release(&mut am);
            return;
        };
        let peer = m.token;
        if self.net.ready_peer(peer).is_none() {
            self.net.worker.am_release(&mut am);
            return;
        }
        let refuse = match self.qps.get(&m.dst_qpn) {
            None => Some(syndrome::REMOTE_INVAL_REQ_ERR),
            Some(qp) if qp.error.is_some() => Some(syndrome::REMOTE_OP_ERR),
            Some(qp) => match (qp.conn, qp.rq) {
                (_, None) => Some(syndrome::REMOTE_INVAL_REQ_ERR),
                (Conn::To { peer: p, qpn }, _) if p != peer || qpn != m.src_qpn => {
                    Some(syndrome::REMOTE_INVAL_REQ_ERR)
                }
                _ => None,
            },
        };
        if let Some(s) = refuse {
            self.net.worker.am_release(&mut am);
            self.net.send_ack(peer, m.src_qpn, m.wqe, s);
            return;
        }
        let rq_id = self.qps[&m.dst_qpn].rq.unwrap_or_default();
        let bytes = if carries_data(&m) { m.len } else { 0 };
        let Some(rq) = self.rqs.get_mut(&rq_id) else {
            self.net.worker.am_release(&mut am);
            self.net
                .send_ack(peer, m.src_qpn, m.wqe, syndrome::REMOTE_INVAL_REQ_ERR);
            return;
        };
        if rq.unexpected.len() >= MAX_UNEXPECTED
            || self.unexpected_bytes + bytes > MAX_UNEXPECTED_BYTES
        {
            // Only counts when no receive is free right now.
            rq.refresh();
            if !(rq.unexpected.is_empty() && rq.ci < rq.pi) {
                self.net.worker.am_release(&mut am);
                self.net
                    .shared
                    .stats
                    .rnr_drops
                    .fetch_add(1, Ordering::Relaxed);
                self.net
                    .send_ack(peer, m.src_qpn, m.wqe, syndrome::RNR_RETRY_EXC_ERR);
                return;
            }
        }
        self.unexpected_bytes += bytes;
        rq.unexpected.push_back(Incoming { peer, msg: m, am });
        self.match_rq(rq_id);
    }

    /// Delivers waiting messages into posted receives and writes finished receive CQEs.
    pub(super) fn match_rq(&mut self, rq_id: u32) -> bool {
        let mut busy = false;
        loop {
            let Some(rq) = self.rqs.get_mut(&rq_id) else {
                return busy;
            };
            let Some(front) = rq.unexpected.front() else {
                break;
            };
            let (dst, peer) = (front.msg.dst_qpn, front.peer);
            let qp_ok = self.qps.get(&dst).is_some_and(|q| q.error.is_none());
            if !qp_ok || self.net.ready_peer(peer).is_none() {
                let mut inc = rq.unexpected.pop_front().expect("front exists");
                if carries_data(&inc.msg) {
                    self.unexpected_bytes -= inc.msg.len;
                }
                self.net.worker.am_release(&mut inc.am);
                self.net.send_ack(
                    inc.peer,
                    inc.msg.src_qpn,
                    inc.msg.wqe,
                    syndrome::REMOTE_OP_ERR,
                );
                busy = true;
                continue;
            }
            if rq.ci == rq.pi {
                rq.refresh();
                if rq.ci == rq.pi {
                    break;
                }
            }
            let inc = rq.unexpected.pop_front().expect("front exists");
            if carries_data(&inc.msg) {
                self.unexpected_bytes -= inc.msg.len;
            }
            let index = rq.ci;
            rq.ci += 1;
            let rwqe = wqe::parse_recv(&rq.ring.read(index));
            self.deliver(rq_id, index, rwqe, inc);
            busy = true;
        }
        busy | self.retire_rq(rq_id)
    }

    fn deliver(&mut self, rq_id: u32, index: u64, rwqe: RecvWqe, mut inc: Incoming) {
        let m = inc.msg;
        sdk_dbg!(
            "nic",
            "RQ {rq_id}: receive {index} takes {:?} of {} bytes for QP {:#x} (buffer {:#x}, key {:#x})",
            m.kind,
            m.len,
            m.dst_qpn,
            rwqe.addr,
            rwqe.key
        );
        let ack_ok = Some((inc.peer, m.src_qpn, m.wqe, 0u8));
        let opcode = resp_opcode(m.kind);
        let imm = imm_of(&m);
        let mut p = Pending {
            index,
            img: cqe::resp(opcode, index as u16, m.dst_qpn, m.len as u32, imm, None),
            done: true,
            ack: ack_ok,
            _region: None,
            bounce: None,
            inline_len: 0,
        };
        let cqe_inline = self.rqs[&rq_id].cqe_inline;
        let peer = inc.peer;
        let fail = move |p: &mut Pending, local: u8, remote: u8| {
            p.img = cqe::error(cqe_opcode::RESP_ERR, local, 0, index as u16, m.dst_qpn);
            p.ack = Some((peer, m.src_qpn, m.wqe, remote));
            local
        };
        let mut qp_error = None;
        if m.kind == MsgKind::WriteImm {
            // No data moves: the write already landed.
        } else if m.len > rwqe.capacity {
            qp_error = Some(fail(
                &mut p,
                syndrome::LOCAL_LENGTH_ERR,
                syndrome::REMOTE_INVAL_REQ_ERR,
            ));
        } else if cqe_inline && m.len <= 32 {
            match inc.am.data() {
                Some(d) => {
                    p.img = cqe::resp(opcode, index as u16, m.dst_qpn, m.len as u32, imm, Some(d));
                }
                None => {
                    let mut b = Box::new([0u8; 32]);
                    let t = token::make(token::RECV, rq_id, index as u32);
                    // SAFETY: the bounce buffer lives in the pending entry until completion.
                    match unsafe {
                        self.net.worker.am_recv_into(
                            &mut inc.am,
                            b.as_mut_ptr(),
                            m.len as usize,
                            None,
                            t,
                        )
                    } {
                        Issue::Done => {
                            p.img = cqe::resp(
                                opcode,
                                index as u16,
                                m.dst_qpn,
                                m.len as u32,
                                imm,
                                Some(&b[..m.len as usize]),
                            );
                        }
                        Issue::Pending => {
                            p.done = false;
                            p.inline_len = m.len as usize;
                            p.bounce = Some(b);
                        }
                        Issue::Failed(s) => {
                            qp_error = Some(fail(&mut p, syndrome_of(s), syndrome::REMOTE_OP_ERR));
                        }
                    }
                }
            }
        } else if m.len > 0 {
            match self
                .local
                .check(rwqe.key, rwqe.addr, m.len, Access::LOCAL_WRITE)
            {
                None => {
                    sdk_warn!(
                        "nic",
                        "QP {:#x}: receive {index}: key {:#x} does not cover {} bytes at {:#x}",
                        m.dst_qpn,
                        rwqe.key,
                        m.len,
                        rwqe.addr
                    );
                    qp_error = Some(fail(
                        &mut p,
                        syndrome::LOCAL_PROT_ERR,
                        syndrome::REMOTE_OP_ERR,
                    ));
                }
                Some(region) => {
                    let t = token::make(token::RECV, rq_id, index as u32);
                    // SAFETY: the buffer is registered memory covering the message, pinned
                    // by the pending entry.
                    let is = unsafe {
                        self.net.worker.am_recv_into(
                            &mut inc.am,
                            rwqe.addr as *mut u8,
                            m.len as usize,
                            Some(&region.memh),
                            t,
                        )
                    };
                    match is {
                        Issue::Done => {}
                        Issue::Pending => p.done = false,
                        Issue::Failed(s) => {
                            qp_error = Some(fail(&mut p, syndrome_of(s), syndrome::REMOTE_OP_ERR));
                        }
                    }
                    p._region = Some(region);
                }
            }
        }
        self.net.worker.am_release(&mut inc.am);
        if let Some(s) = qp_error {
            if let Some(qp) = self.qps.get_mut(&m.dst_qpn) {
                qp.set_error(s, &self.net);
            }
        }
        if let Some(rq) = self.rqs.get_mut(&rq_id) {
            rq.pending.push_back(p);
        }
    }

    /// Receive data finished landing.
    pub(super) fn recv_done(&mut self, rq_id: u32, index: u32, status: ucp::Status) {
        let Some(rq) = self.rqs.get_mut(&rq_id) else {
            return;
        };
        let Some(p) = rq
            .pending
            .iter_mut()
            .find(|p| p.index as u32 == index && !p.done)
        else {
            return;
        };
        p.done = true;
        let (opcode, qpn) = (
            p.img[63] >> 4,
            u32::from_be_bytes([0, p.img[57], p.img[58], p.img[59]]),
        );
        if status != ucp::OK {
            let (peer, src, wqe, _) = p.ack.unwrap_or_default();
            p.img = cqe::error(
                cqe_opcode::RESP_ERR,
                syndrome_of(status),
                0,
                index as u16,
                qpn,
            );
            p.ack = Some((peer, src, wqe, syndrome::REMOTE_OP_ERR));
        } else if let Some(b) = p.bounce.take() {
            let mut img = p.img;
            img[..p.inline_len].copy_from_slice(&b[..p.inline_len]);
            img[63] = (opcode << 4) | cqe::INLINE_SCATTER_32;
            p.img = img;
        }
    }

    /// Writes the CQEs of finished receives, in receive order; sends their ACKs.
    pub(super) fn retire_rq(&mut self, rq_id: u32) -> bool {
        let mut busy = false;
        loop {
            let Some(rq) = self.rqs.get_mut(&rq_id) else {
                return busy;
            };
            if !rq.pending.front().is_some_and(|p| p.done) {
                break;
            }
            let p = rq.pending.pop_front().expect("front exists");
            let cqn = rq.cqn;
            if let Some(cq) = self.cqs.get_mut(&cqn) {
                cq.push(&p.img);
                self.net.shared.stats.cqes.fetch_add(1, Ordering::Relaxed);
            }
            if p.img[63] >> 4 != cqe_opcode::RESP_ERR {
                self.net
                    .shared
                    .stats
                    .delivered
                    .fetch_add(1, Ordering::Relaxed);
            }
            if let Some((peer, qpn, wqe, s)) = p.ack {
                self.net.send_ack(peer, qpn, wqe, s);
            }
            busy = true;
        }
        busy
    }

    /// Completes every posted receive of `rq_id` with a flush error and refuses what
    /// waits (its QP is in error or gone).
    pub(super) fn flush_rq(&mut self, rq_id: u32, qpn: u32) -> bool {
        let mut busy = self.retire_rq(rq_id);
        let Some(rq) = self.rqs.get_mut(&rq_id) else {
            return busy;
        };
        let mut refused = Vec::new();
        while let Some(mut inc) = rq.unexpected.pop_front() {
            if carries_data(&inc.msg) {
                self.unexpected_bytes -= inc.msg.len;
            }
            self.net.worker.am_release(&mut inc.am);
            refused.push((inc.peer, inc.msg.src_qpn, inc.msg.wqe));
        }
        if !rq.pending.is_empty() {
            // Data still landing: flush after it.
            for (peer, src, wqe) in refused {
                self.net.send_ack(peer, src, wqe, syndrome::REMOTE_OP_ERR);
            }
            return true;
        }
        rq.refresh();
        while rq.ci < rq.pi {
            let img = cqe::error(
                cqe_opcode::RESP_ERR,
                syndrome::WR_FLUSH_ERR,
                0,
                rq.ci as u16,
                qpn,
            );
            if let Some(cq) = self.cqs.get_mut(&rq.cqn) {
                cq.push(&img);
            }
            rq.ci += 1;
            busy = true;
        }
        for (peer, src, wqe) in refused {
            self.net.send_ack(peer, src, wqe, syndrome::REMOTE_OP_ERR);
            busy = true;
        }
        busy
    }

    /// Drops what waits from peer `peer` (it is gone).
    pub(super) fn drop_unexpected_from(&mut self, peer: u32) {
        for rq in self.rqs.values_mut() {
            let mut keep = VecDeque::with_capacity(rq.unexpected.len());
            while let Some(mut inc) = rq.unexpected.pop_front() {
                if inc.peer == peer {
                    if carries_data(&inc.msg) {
                        self.unexpected_bytes -= inc.msg.len;
                    }
                    self.net.worker.am_release(&mut inc.am);
                } else {
                    keep.push_back(inc);
                }
            }
            rq.unexpected = keep;
        }
    }

    /// Releases every held message (shutdown).
    pub(super) fn release_all_unexpected(&mut self) {
        for rq in self.rqs.values_mut() {
            while let Some(mut inc) = rq.unexpected.pop_front() {
                self.net.worker.am_release(&mut inc.am);
            }
        }
        self.unexpected_bytes = 0;
    }
}
