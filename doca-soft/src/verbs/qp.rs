//! DOCA Verbs queue pairs: a `gpuqp::GpuQp` (send ring, doorbells, optional receive ring on
//! the soft NIC) made from a `doca_verbs_qp_init_attr`, and its state machine
//! (`doca_verbs_qp_modify`, rules in `transition.rs`).
//!
//! What each transition does to the soft NIC's QP: INIT -> RTR connects it to the peer QP
//! (the AH attribute's GID names the peer's NIC, DEST_QP_NUM its QP); -> ERR puts it in
//! error (everything posted completes with flush errors); -> RST is only possible before
//! the connection (a connected QP of the soft NIC cannot be reset: destroy and recreate it,
//! `NOT_SUPPORTED` with a log line). A QP the NIC put in error (peer lost, error
//! completion) reports ERR from then on. Path MTU, PSNs, timeouts, retry counts, P_Key and
//! service level are checked and kept but change nothing: the transport is UCX.
//!
//! The send doorbell the NIC watches is fixed at create: the doorbell record for
//! `DBR_VALID` QPs, the doorbell register for `NO_DBR_EXT` QPs. Every NIC handler of an
//! export then works: GPU_SM_DB writes both, GPU_SM_NO_DBR the register, and the CPU proxy
//! (`doca_gpu_verbs_cpu_proxy_progress`) forwards the producer index from its own slot
//! into the watched one.

use super::attr::{self, mask, QpAttr, QpInitAttr, QpState};
use super::context::{ContextShared, PdShared, VerbsPd, MAX_RD_ATOMIC};
use super::cq::{placement_of, VerbsCq};
use super::transition;
use super::umem::Umem;
use crate::error::{DocaError, DocaResult};
use crate::gpuqp::nic_handler;
use crate::gpuqp::Placement;
use crate::gpuqp::{GpuQp, GpuRq};
use doca_soft_nic::rdma as nic;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What modify and query change and read.
struct Runtime {
    state: QpState,
    attr: QpAttr,
    /// Every attribute bit applied so far.
    applied: u32,
    /// The NIC QP was asked to connect (it cannot be reset afterwards).
    connected: bool,
}

/// The C `struct doca_verbs_qp`.
pub struct VerbsQp {
    pd: Arc<PdShared>,
    gq: GpuQp,
    init: QpInitAttr,
    place: Placement,
    /// Address of the work-queue umem's first byte used (umem start + offset), if any.
    wq_umem_addr: Option<u64>,
    rt: Mutex<Runtime>,
    exports: AtomicUsize,
}

/// The objects a QP init attribute names, resolved by the C layer.
pub(crate) struct QpParts<'a> {
    pub pd: &'a VerbsPd,
    pub send_cq: &'a VerbsCq,
    pub recv_cq: Option<&'a VerbsCq>,
    pub umem: Option<&'a Umem>,
    pub dbr_umem: Option<&'a Umem>,
}

fn invalid(what: std::fmt::Arguments<'_>) -> DocaError {
    sdk_err!("verbs", "QP create: {what}");
    DocaError::INVALID_VALUE
}

impl VerbsQp {
    /// A QP on context `ctx` as `init` describes it.
    pub(crate) fn new(
        ctx: &Arc<ContextShared>,
        init: &QpInitAttr,
        p: QpParts<'_>,
    ) -> DocaResult<VerbsQp> {
        if init.qp_type != attr::QP_TYPE_RC {
            sdk_err!(
                "verbs",
                "QP create: only RC QPs are supported by doca-soft (UC asked)"
            );
            return Err(DocaError::NOT_SUPPORTED);
        }
        if init.dbr_umem_id.is_some()
            || init.wq_umem_id.is_some()
            || init.uar_id.is_some()
            || init.pdn.is_some()
        {
            sdk_err!(
                "verbs",
                "QP create: queues given by umem id, UAR id or PD number (the DPA path) are not supported by doca-soft; use the external umem/UAR/PD setters"
            );
            return Err(DocaError::NOT_SUPPORTED);
        }
        if init.send_dbr_mode == attr::SEND_DBR_MODE_NO_DBR_INT {
            sdk_err!(
                "verbs",
                "QP create: send DBR mode NO_DBR_INT (DPA) is not supported by doca-soft"
            );
            return Err(DocaError::NOT_SUPPORTED);
        }
        let same = |c: &Arc<ContextShared>| Arc::ptr_eq(c, ctx);
        if !same(p.pd.shared().ctx())
            || !same(p.send_cq.ctx())
            || p.recv_cq.is_some_and(|c| !same(c.ctx()))
        {
            return Err(invalid(format_args!(
                "PD and CQs must come from the QP's context"
            )));
        }
        let ext = init.external_datapath;
        if p.send_cq.attr().external_datapath != ext
            || p.recv_cq.is_some_and(|c| c.attr().external_datapath != ext)
        {
            return Err(invalid(format_args!(
                "external data path must be the same on the QP and its CQs"
            )));
        }
        if !ext && (init.core_direct_master || init.cqe_inline != 0 || init.send_dbr_mode != 0) {
            return Err(invalid(format_args!(
                "core-direct master, CQE inline and send DBR mode need the external (GPU) data path"
            )));
        }
        if init.sq_wr == 0 {
            return Err(invalid(format_args!("no send queue size (set_sq_wr)")));
        }
        let sq = init.sq_wr.next_power_of_two();
        let rq = if init.rq_wr == 0 {
            0
        } else {
            init.rq_wr.next_power_of_two()
        };
        if p.send_cq.num() < sq {
            return Err(invalid(format_args!(
                "send CQ of {} entries is smaller than the send queue ({sq} WQEs): GPU pollers need a CQE slot per WQE slot",
                p.send_cq.num()
            )));
        }
        let rq_cq = match (rq, p.recv_cq) {
            (0, _) => None,
            (_, None) => return Err(invalid(format_args!("a receive queue needs a receive CQ"))),
            (n, Some(c)) if c.num() < n => {
                return Err(invalid(format_args!(
                    "receive CQ of {} entries is smaller than the receive queue ({n} WQEs)",
                    c.num()
                )))
            }
            (_, Some(c)) => Some(c),
        };
        if let (Some(u), Some((_, off))) = (p.umem, init.umem) {
            u.check_room(
                off,
                rq as u64 * 16 + sq as u64 * 64,
                "QP create (work queue umem)",
            )?;
        }
        if let (Some(u), Some((_, off))) = (p.dbr_umem, init.dbr_umem) {
            u.check_room(off, 8, "QP create (doorbell record umem)")?;
        }
        let place = placement_of(p.umem);
        let nic = ctx.nic();
        let grq = match rq_cq {
            Some(c) => Some(GpuRq::new(
                nic,
                &place,
                rq,
                c.gpu_cq(),
                init.cqe_inline != 0,
            )?),
            None => None,
        };
        let handler = if init.send_dbr_mode == attr::SEND_DBR_MODE_NO_DBR_EXT {
            nic_handler::GPU_SM_NO_DBR
        } else {
            nic_handler::GPU_SM_DB
        };
        let gq = GpuQp::new(nic, &place, sq, handler, p.send_cq.gpu_cq(), grq.as_ref())?;
        Ok(VerbsQp {
            pd: p.pd.shared().clone(),
            gq,
            init: *init,
            place,
            wq_umem_addr: p.umem.zip(init.umem).map(|(u, (_, off))| u.addr() + off),
            rt: Mutex::new(Runtime {
                state: QpState::Rst,
                attr: QpAttr::default(),
                applied: 0,
                connected: false,
            }),
            exports: AtomicUsize::new(0),
        })
    }

    /// The soft NIC's QP with its rings.
    pub(crate) fn gpu_qp(&self) -> &GpuQp {
        &self.gq
    }

    /// The init attributes it was made with.
    pub(crate) fn init_attr(&self) -> &QpInitAttr {
        &self.init
    }

    /// Where its rings live.
    pub(crate) fn placement(&self) -> &Placement {
        &self.place
    }

    /// Address of the work-queue umem (start + offset), if it has one.
    pub(crate) fn wq_umem_addr(&self) -> Option<u64> {
        self.wq_umem_addr
    }

    /// The PD.
    pub(crate) fn pd(&self) -> &Arc<PdShared> {
        &self.pd
    }

    /// QP number.
    pub(crate) fn qpn(&self) -> u32 {
        self.gq.qpn()
    }

    fn rt(&self) -> std::sync::MutexGuard<'_, Runtime> {
        self.rt.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The state, ERR once the NIC put the QP in error.
    fn effective(&self, rt: &Runtime) -> QpState {
        match self.gq.qp().status().0 {
            nic::QpState::Error => QpState::Err,
            _ => rt.state,
        }
    }

    /// `doca_verbs_qp_modify`.
    pub(crate) fn modify(&self, a: &QpAttr, attr_mask: i32) -> DocaResult<()> {
        let mut rt = self.rt();
        let cur = self.effective(&rt);
        let to = transition::validate(cur, attr_mask, a.next_state, a.current_state)?;
        let m = attr_mask as u32;
        let has = |b: u32| m & b != 0;
        if has(mask::PORT_NUM) && a.port_num != 1 {
            sdk_err!(
                "verbs",
                "QP modify: port {} does not exist (soft NICs have port 1)",
                a.port_num
            );
            return Err(DocaError::INVALID_VALUE);
        }
        if has(mask::PKEY_INDEX) && a.pkey_index != 0 {
            sdk_err!(
                "verbs",
                "QP modify: P_Key index {} does not exist (the table has one entry)",
                a.pkey_index
            );
            return Err(DocaError::INVALID_VALUE);
        }
        if (has(mask::MAX_QP_RD_ATOMIC) && a.max_rd_atomic > MAX_RD_ATOMIC)
            || (has(mask::MAX_DEST_RD_ATOMIC) && a.max_dest_rd_atomic > MAX_RD_ATOMIC)
        {
            sdk_err!(
                "verbs",
                "QP modify: read/atomic depth above the device's {MAX_RD_ATOMIC}"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        if has(mask::DEST_QP_NUM) && a.dest_qp_num == 0 {
            sdk_err!("verbs", "QP modify: destination QP number 0");
            return Err(DocaError::INVALID_VALUE);
        }
        let ah = if has(mask::AH_ATTR) {
            match a.ah {
                Some(ah) if ah.gid_set => Some(ah),
                _ => {
                    sdk_err!("verbs", "QP modify: AH attribute missing or without a GID");
                    return Err(DocaError::INVALID_VALUE);
                }
            }
        } else {
            None
        };
        match (cur, to) {
            (QpState::Init, QpState::Rtr) => {
                let ah = ah.expect("AH_ATTR is required INIT -> RTR");
                self.gq.qp().connect(&ah.gid, a.dest_qp_num).inspect_err(|&e| {
                    if e == DocaError::INVALID_VALUE {
                        sdk_err!(
                            "verbs",
                            "QP modify: the AH GID is not a doca-soft NIC's (query it with doca_verbs on the peer)"
                        );
                    }
                })?;
                rt.connected = true;
            }
            (_, QpState::Err) => self.gq.qp().set_error()?,
            (from, QpState::Rst) if rt.connected && from != QpState::Rst => {
                sdk_err!(
                    "verbs",
                    "QP modify: a connected soft-NIC QP cannot go back to RST; destroy it and create a new one"
                );
                return Err(DocaError::NOT_SUPPORTED);
            }
            _ => {}
        }
        let t = &mut rt.attr;
        if has(mask::ALLOW_REMOTE_WRITE) {
            t.allow_remote_write = a.allow_remote_write;
        }
        if has(mask::ALLOW_REMOTE_READ) {
            t.allow_remote_read = a.allow_remote_read;
        }
        if has(mask::ATOMIC_MODE) {
            t.atomic_mode = a.atomic_mode;
        }
        if has(mask::PKEY_INDEX) {
            t.pkey_index = a.pkey_index;
        }
        if has(mask::PORT_NUM) {
            t.port_num = a.port_num;
        }
        if has(mask::MIN_RNR_TIMER) {
            t.min_rnr_timer = a.min_rnr_timer;
        }
        if has(mask::PATH_MTU) {
            t.path_mtu = a.path_mtu;
        }
        if has(mask::RQ_PSN) {
            t.rq_psn = a.rq_psn;
        }
        if has(mask::SQ_PSN) {
            t.sq_psn = a.sq_psn;
        }
        if has(mask::DEST_QP_NUM) {
            t.dest_qp_num = a.dest_qp_num;
        }
        if has(mask::ACK_TIMEOUT) {
            t.ack_timeout = a.ack_timeout;
        }
        if has(mask::RETRY_CNT) {
            t.retry_cnt = a.retry_cnt;
        }
        if has(mask::RNR_RETRY) {
            t.rnr_retry = a.rnr_retry;
        }
        if ah.is_some() {
            t.ah = ah;
        }
        if has(mask::MAX_QP_RD_ATOMIC) {
            t.max_rd_atomic = a.max_rd_atomic;
        }
        if has(mask::MAX_DEST_RD_ATOMIC) {
            t.max_dest_rd_atomic = a.max_dest_rd_atomic;
        }
        rt.applied |= m & !(mask::NEXT_STATE | mask::CURRENT_STATE);
        rt.state = to;
        Ok(())
    }

    /// `doca_verbs_qp_query`: the attributes applied so far with the current state, and
    /// the mask of what they hold (CURRENT_STATE and every attribute ever applied).
    pub(crate) fn query(&self) -> (QpAttr, QpInitAttr, i32) {
        let rt = self.rt();
        let mut a = rt.attr;
        let s = self.effective(&rt);
        a.current_state = s;
        a.next_state = s;
        (a, self.init, (rt.applied | mask::CURRENT_STATE) as i32)
    }

    /// The receive queue, if any.
    pub(crate) fn rq(&self) -> Option<&Arc<GpuRq>> {
        self.gq.rq()
    }

    /// Counts an export (`doca_gpu_verbs_export_qp`).
    pub(crate) fn add_export(&self) {
        self.exports.fetch_add(1, Ordering::AcqRel);
    }

    /// Forgets an export (`doca_gpu_verbs_unexport_qp`).
    pub(crate) fn remove_export(&self) {
        self.exports.fetch_sub(1, Ordering::AcqRel);
    }

    /// `IN_USE` while exported.
    pub(crate) fn ensure_unused(&self) -> DocaResult<()> {
        let n = self.exports.load(Ordering::Acquire);
        if n > 0 {
            sdk_err!("verbs", "QP {} destroy: still exported to a GPU {n} times (doca_gpu_verbs_unexport_qp first)", self.qpn());
            return Err(DocaError::IN_USE);
        }
        Ok(())
    }
}
