//! Queues of the soft NIC with their rings in memory a kernel reaches, and the GPU-side
//! descriptors that point at them.
//!
//! * [`GpuCq`]: a ring of 64-byte CQEs (initialised to `op_own` 0xF1: opcode INVALID,
//!   owner 1, so pass 0 finds nothing) plus its doorbell record.
//! * [`GpuRq`]: a ring of 16-byte receive WQEs with its doorbell record, completing on a
//!   `GpuCq`; several QPs may share one (DOCA RDMA's receive queue).
//! * [`GpuQp`]: a send queue of 64-byte WQE slots, its doorbell block (the send DBR word and
//!   the 64-byte `sq_db` area: CPU-proxy slot, doorbell register or BlueFlame image), a
//!   send `GpuCq` at least as large as the SQ, and optionally a `GpuRq`.
//!
//! Ownership follows the NIC's: a QP holds its CQs and RQ, an RQ its CQ. Each object drops
//! its NIC queue before its memory, so the proxy never touches freed rings (a QP completes
//! what its ring still holds with flush errors into its CQ first).

use super::layout::{nic_handler, qpn_forms, DevVerbsCq, DevVerbsQp, MEM_TYPE_HOST};
use super::mem::{Placement, SharedMem};
use crate::error::{DocaError, DocaResult};
use doca_soft_nic::rdma::{self as nic, Nic, SqDoorbell};
use std::sync::Arc;

/// Largest SQ and RQ (the NIC's limit).
pub(crate) const MAX_WQES: u32 = 1 << 15;
/// Largest CQ.
pub(crate) const MAX_CQES: u32 = 1 << 22;

/// A completion queue whose CQE ring kernels poll.
pub(crate) struct GpuCq {
    cq: nic::Cq,
    // CQEs, then one 64-byte line holding the doorbell record.
    ring: SharedMem,
    num: u32,
}

impl GpuCq {
    /// A CQ of `num` CQEs (a power of two) on `nic`, its ring on `place`.
    pub(crate) fn new(nic: &Nic, place: &Placement, num: u32) -> DocaResult<Arc<GpuCq>> {
        if !num.is_power_of_two() || num > MAX_CQES {
            return Err(DocaError::INVALID_VALUE);
        }
        let ring = SharedMem::new(place, num as usize * 64 + 64, 64)?;
        // Every CQE: opcode INVALID (0xF), owner 1 (nothing present in pass 0).
        for k in 0..num as usize {
            ring.write(k * 64 + 63, &[0xF1]);
        }
        // SAFETY: the ring holds `num` 64-byte aligned CQEs and lives as long as `cq` (the
        // field is dropped first, and no QP or RQ of ours outlives this value: they hold an
        // Arc of it).
        let cq = unsafe { nic.create_cq(ring.cpu_at(0), num) }?;
        Ok(Arc::new(GpuCq { cq, ring, num }))
    }

    /// The NIC's CQ.
    pub(crate) fn cq(&self) -> &nic::Cq {
        &self.cq
    }

    /// CQ number.
    pub(crate) fn cqn(&self) -> u32 {
        self.cq.cqn()
    }

    /// CQEs in the ring.
    pub(crate) fn num(&self) -> u32 {
        self.num
    }

    /// CPU address of the CQE ring (tests: the CPU playing the GPU polls it).
    pub(crate) fn ring_cpu(&self) -> *mut u8 {
        self.ring.cpu_at(0)
    }

    /// The GPU-side descriptor (`struct doca_gpu_dev_verbs_cq`), counters at 0.
    pub(crate) fn descriptor(&self) -> DevVerbsCq {
        DevVerbsCq {
            cqe_daddr: self.ring.dev_at(0),
            cq_num: self.cqn(),
            cqe_num: self.num,
            dbrec: self.ring.dev_at(self.num as usize * 64),
            cqe_ci: 0,
            cqe_mask: self.num - 1,
            cqe_size: 64,
            cqe_rsvd: 0,
            mem_type: MEM_TYPE_HOST,
        }
    }
}

/// A receive queue whose ring kernels fill.
pub(crate) struct GpuRq {
    rq: nic::Rq,
    // Receive WQEs, then one 64-byte line holding the doorbell record.
    ring: SharedMem,
    num: u32,
    cq: Arc<GpuCq>,
}

impl GpuRq {
    /// An RQ of `num` receive WQEs (a power of two) completing on `cq`; `cqe_inline`:
    /// messages of at most 32 bytes land in the CQE.
    pub(crate) fn new(
        nic: &Nic,
        place: &Placement,
        num: u32,
        cq: &Arc<GpuCq>,
        cqe_inline: bool,
    ) -> DocaResult<Arc<GpuRq>> {
        if !num.is_power_of_two() || num > MAX_WQES || cq.num() < num {
            return Err(DocaError::INVALID_VALUE);
        }
        let ring = SharedMem::new(place, num as usize * 16 + 64, 64)?;
        let dbrec = ring.cpu_at(num as usize * 16) as *const u32;
        // SAFETY: ring and record live as long as `rq` (dropped first; QPs using it hold
        // an Arc of this value).
        let rq = unsafe { nic.create_rq(ring.cpu_at(0), num, dbrec, cq.cq(), cqe_inline) }?;
        Ok(Arc::new(GpuRq {
            rq,
            ring,
            num,
            cq: cq.clone(),
        }))
    }

    /// The NIC's RQ.
    pub(crate) fn rq(&self) -> &nic::Rq {
        &self.rq
    }

    /// Receive WQEs in the ring.
    pub(crate) fn num(&self) -> u32 {
        self.num
    }

    /// Its CQ.
    pub(crate) fn cq(&self) -> &Arc<GpuCq> {
        &self.cq
    }

    /// CPU address of the ring (16-byte receive WQEs).
    pub(crate) fn ring_cpu(&self) -> *mut u8 {
        self.ring.cpu_at(0)
    }

    /// CPU address of the doorbell record.
    pub(crate) fn dbrec_cpu(&self) -> *mut u32 {
        self.ring.cpu_at(self.num as usize * 16).cast()
    }

    /// A descriptor of which only the receive half is meaningful (DOCA RDMA's shared
    /// receive queue): RQ ring, doorbell record, receive CQ; `nic_handler` as given.
    pub(crate) fn descriptor(&self, handler: u32) -> DevVerbsQp {
        let mut d = DevVerbsQp {
            nic_handler: handler,
            mem_type: MEM_TYPE_HOST,
            ..Default::default()
        };
        self.fill_rq(&mut d, 0);
        d
    }

    fn fill_rq(&self, d: &mut DevVerbsQp, qpn: u32) {
        d.rq_num = qpn;
        d.rq_wqe_num = self.num;
        d.rq_wqe_mask = self.num - 1;
        d.rq_wqe_daddr = self.ring.dev_at(0);
        d.rq_dbrec = self.ring.dev_at(self.num as usize * 16);
        d.rcv_wqe_size = 16;
        d.cq_rq = self.cq.descriptor();
    }
}

/// How the device publishes a QP's send producer index (`nic_handler` values of
/// `doca_gpunetio_verbs_def.h`; AUTO resolves to CPU_PROXY here).
pub(crate) fn resolve_handler(h: u32) -> DocaResult<u32> {
    match h {
        nic_handler::AUTO | nic_handler::CPU_PROXY => Ok(nic_handler::CPU_PROXY),
        nic_handler::GPU_SM_DB | nic_handler::GPU_SM_NO_DBR => Ok(h),
        nic_handler::GPU_SM_BF => {
            // Under AUTO dispatch the device treats BF like the CPU proxy, while explicit
            // submit_bf writes WQE images: one watched doorbell cannot serve both.
            sdk_err!(
                "gpuqp",
                "NIC handler GPU_SM_BF (BlueFlame) is not supported by the soft NIC"
            );
            Err(DocaError::NOT_SUPPORTED)
        }
        _ => Err(DocaError::INVALID_VALUE),
    }
}

/// Offsets in a QP's doorbell block.
const SND_DBR_OFF: usize = 4;
const SQ_DB_OFF: usize = 64;
const DB_BLOCK: usize = 128;

/// A queue pair whose send ring kernels fill.
pub(crate) struct GpuQp {
    qp: nic::Qp,
    sq: SharedMem,
    db: SharedMem,
    num: u32,
    handler: u32,
    send_cq: Arc<GpuCq>,
    rq: Option<Arc<GpuRq>>,
}

impl GpuQp {
    /// A QP with `sq_wqes` send slots (a power of two), published the way `handler`
    /// says (AUTO = CPU_PROXY), completing on `send_cq` (at least as large), receiving
    /// through `rq` (none: incoming sends are refused). Created in the reset state:
    /// [`GpuQp::qp`]`.connect(..)` brings it up.
    pub(crate) fn new(
        nic: &Nic,
        place: &Placement,
        sq_wqes: u32,
        handler: u32,
        send_cq: &Arc<GpuCq>,
        rq: Option<&Arc<GpuRq>>,
    ) -> DocaResult<GpuQp> {
        let handler = resolve_handler(handler)?;
        if !sq_wqes.is_power_of_two() || sq_wqes > MAX_WQES || send_cq.num() < sq_wqes {
            return Err(DocaError::INVALID_VALUE);
        }
        let sq = SharedMem::new(place, sq_wqes as usize * 64, 64)?;
        let db = SharedMem::new(place, DB_BLOCK, 64)?;
        let doorbell = match handler {
            nic_handler::CPU_PROXY => SqDoorbell::ProxySlot(db.cpu_at(SQ_DB_OFF) as *const u64),
            nic_handler::GPU_SM_DB => SqDoorbell::Record(db.cpu_at(SND_DBR_OFF) as *const u32),
            _ => SqDoorbell::Register(db.cpu_at(SQ_DB_OFF) as *const u64),
        };
        // SAFETY: the ring and the doorbell block live as long as `qp` (dropped first).
        let qp = unsafe {
            nic.create_qp(
                sq.cpu_at(0),
                sq_wqes,
                doorbell,
                send_cq.cq(),
                rq.map(|r| r.rq()),
            )
        }?;
        Ok(GpuQp {
            qp,
            sq,
            db,
            num: sq_wqes,
            handler,
            send_cq: send_cq.clone(),
            rq: rq.cloned(),
        })
    }

    /// The NIC's QP (connect, status).
    pub(crate) fn qp(&self) -> &nic::Qp {
        &self.qp
    }

    /// QP number.
    pub(crate) fn qpn(&self) -> u32 {
        self.qp.qpn()
    }

    /// Send slots.
    pub(crate) fn sq_num(&self) -> u32 {
        self.num
    }

    /// The concrete NIC handler.
    pub(crate) fn handler(&self) -> u32 {
        self.handler
    }

    /// The send CQ.
    pub(crate) fn send_cq(&self) -> &Arc<GpuCq> {
        &self.send_cq
    }

    /// The RQ, if any.
    pub(crate) fn rq(&self) -> Option<&Arc<GpuRq>> {
        self.rq.as_ref()
    }

    /// CPU address of the send ring.
    pub(crate) fn sq_cpu(&self) -> *mut u8 {
        self.sq.cpu_at(0)
    }

    /// CPU address of the `sq_db` area (CPU-proxy slot / doorbell register, 64 bytes).
    pub(crate) fn sq_db_cpu(&self) -> *mut u64 {
        self.db.cpu_at(SQ_DB_OFF).cast()
    }

    /// CPU address of the send doorbell record word.
    pub(crate) fn sq_dbrec_cpu(&self) -> *mut u32 {
        self.db.cpu_at(SND_DBR_OFF).cast()
    }

    /// The GPU-side descriptor (`struct doca_gpu_dev_verbs_qp`), every counter at 0: QP
    /// number forms, masks, ring and doorbell addresses, both CQs, the NIC handler.
    pub(crate) fn descriptor(&self) -> DevVerbsQp {
        let qpn = self.qpn();
        let (s8, s8be, ds) = qpn_forms(qpn);
        let mut d = DevVerbsQp {
            sq_num: qpn,
            sq_num_shift8: s8,
            sq_num_shift8_be: s8be,
            sq_num_shift8_be_1ds: ds[0],
            sq_num_shift8_be_2ds: ds[1],
            sq_num_shift8_be_3ds: ds[2],
            sq_num_shift8_be_4ds: ds[3],
            sq_wqe_num: self.num as u16,
            sq_wqe_mask: (self.num - 1) as u16,
            sq_wqe_daddr: self.sq.dev_at(0),
            sq_dbrec: self.db.dev_at(SND_DBR_OFF),
            sq_db: self.db.dev_at(SQ_DB_OFF),
            cq_sq: self.send_cq.descriptor(),
            nic_handler: self.handler,
            mem_type: MEM_TYPE_HOST,
            need_mcst: false,
            ..Default::default()
        };
        if let Some(rq) = &self.rq {
            rq.fill_rq(&mut d, qpn);
        }
        d
    }
}
