//! Starting the head WQE of a send queue: parse it, check its keys and ranges, and hand
//! it to UCX (or to the peer, for sends and atomics), keeping the order rules of `sq/mod.rs`.

use super::{syndrome_of, wait_reached, Class, Conn, Env, QpState, Slot, Stage, Step};
use crate::rdma::mkey::{self, Access};
use crate::rdma::peer::{token, KeyLookup, Net, PeerState};
use crate::rdma::ucp::Issue;
use crate::rdma::wire::{self, Msg, MsgKind};
use doca_soft_packet::mlx5::rdma::{self as wqe, Op, Sge, Wqe, MAX_SGE};
use doca_soft_packet::mlx5::syndrome;

impl QpState {
    /// Fails the head WQE with `synd`.
    fn fail(&mut self, synd: u8, net: &Net) -> Step {
        let i = self.next_exec;
        self.slot(i).synd = synd;
        self.set_error(synd, net);
        Step::Next
    }

    pub(super) fn issue(&mut self, env: &mut Env<'_>) -> Step {
        let i = self.next_exec;
        let wqe = match self.cur {
            Some(w) => w,
            None => {
                let raw = self.sq.read(i);
                let parsed = wqe::parse(&raw, i as u16, self.qpn);
                if let Ok(w) = &parsed {
                    sdk_dbg!("nic", "QP {:#x}: WQE {i}: {:?}", self.qpn, w.op);
                }
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
                        return self.fail(syndrome::LOCAL_QP_OP_ERR, env.net);
                    }
                }
            }
        };
        match wqe.op {
            Op::Nop | Op::Dump => return Step::Next,
            Op::Wait { max_index, cqn } => {
                return match env.cqs.get(&cqn) {
                    None => self.fail(syndrome::LOCAL_QP_OP_ERR, env.net),
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
            _ => return self.fail(syndrome::TRANSPORT_RETRY_EXC_ERR, env.net),
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
            Err(self.fail(syndrome::REMOTE_ACCESS_ERR, env.net))
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
                    return Err(self.fail(syndrome::LOCAL_PROT_ERR, env.net));
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
                    return self.fail(syndrome::TRANSPORT_RETRY_EXC_ERR, env.net);
                };
                let KeyLookup::Ready { rkey: rk, .. } = env.net.rkey(peer, rkey) else {
                    return self.fail(syndrome::REMOTE_ACCESS_ERR, env.net);
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
            return self.fail(syndrome::TRANSPORT_RETRY_EXC_ERR, env.net);
        };
        let KeyLookup::Ready { rkey: rk, .. } = env.net.rkey(peer, rkey) else {
            return self.fail(syndrome::REMOTE_ACCESS_ERR, env.net);
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
            if !raddr.is_multiple_of(8) {
                return self.fail(syndrome::REMOTE_INVAL_REQ_ERR, env.net);
            }
            let Some(region) = env
                .local
                .check(result.key, result.addr, 8, Access::LOCAL_WRITE)
            else {
                return self.fail(syndrome::LOCAL_PROT_ERR, env.net);
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
            return self.fail(syndrome::TRANSPORT_RETRY_EXC_ERR, env.net);
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
            return self.fail(syndrome::TRANSPORT_RETRY_EXC_ERR, env.net);
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
            // The entries are registered memory, but their sum is the caller's: a gather
            // the allocator refuses fails the WQE instead of aborting the process.
            let mut buf = Vec::new();
            if usize::try_from(total)
                .ok()
                .and_then(|t| buf.try_reserve_exact(t).ok())
                .is_none()
            {
                sdk_err!("nic", "no memory to gather a {total}-byte message");
                return self.fail(syndrome::LOCAL_QP_OP_ERR, env.net);
            }
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
                return self.fail(syndrome::LOCAL_QP_OP_ERR, env.net);
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
