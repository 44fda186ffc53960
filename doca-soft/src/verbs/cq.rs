//! DOCA Verbs completion queues: a `gpuqp::GpuCq` (a ring of 64-byte mlx5 CQEs the soft
//! NIC writes, initialised to `op_own` 0xF1) made from a `doca_verbs_cq_attr`.

use super::attr::CqAttr;
use super::context::{ContextShared, VerbsContext};
use super::umem::Umem;
use crate::error::{DocaError, DocaResult};
use crate::gpuqp::GpuCq;
use crate::gpuqp::Placement;
use std::sync::Arc;

/// Where queue memory goes: next to the GPU memory of the program's umem (pinned memory
/// mapped into that GPU), else host memory (the CPU plays the GPU).
pub(crate) fn placement_of(umem: Option<&Umem>) -> Placement {
    match umem.and_then(Umem::gpu) {
        Some(g) => Placement::Gpu(g),
        None => Placement::Host,
    }
}

/// The C `struct doca_verbs_cq`.
pub struct VerbsCq {
    ctx: Arc<ContextShared>,
    cq: Arc<GpuCq>,
    attr: CqAttr,
}

impl VerbsCq {
    /// A CQ on `ctx` as `attr` describes it. `umem` is the attribute's external umem,
    /// resolved by the caller.
    pub(crate) fn new(
        ctx: &VerbsContext,
        attr: &CqAttr,
        umem: Option<&Umem>,
    ) -> DocaResult<VerbsCq> {
        if attr.cq_size == 0 {
            sdk_err!(
                "verbs",
                "CQ create: no size (doca_verbs_cq_attr_set_cq_size)"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        let num = attr.cq_size.next_power_of_two();
        if let (Some(u), Some((_, off))) = (umem, attr.umem) {
            // The ring, and the 8-byte doorbell record DOCA's samples put after it.
            u.check_room(off, num as u64 * 64, "CQ create")?;
        }
        let place = placement_of(umem);
        let cq = GpuCq::new(ctx.shared().nic(), &place, num)?;
        Ok(VerbsCq {
            ctx: ctx.shared().clone(),
            cq,
            attr: *attr,
        })
    }

    /// The queue of the soft NIC.
    pub(crate) fn gpu_cq(&self) -> &Arc<GpuCq> {
        &self.cq
    }

    /// The context.
    pub(crate) fn ctx(&self) -> &Arc<ContextShared> {
        &self.ctx
    }

    /// The attributes it was made with.
    pub(crate) fn attr(&self) -> &CqAttr {
        &self.attr
    }

    /// CQ number.
    pub(crate) fn cqn(&self) -> u32 {
        self.cq.cqn()
    }

    /// Entries (a power of two).
    pub(crate) fn num(&self) -> u32 {
        self.cq.num()
    }

    /// CPU address of the CQE ring.
    pub(crate) fn ring(&self) -> *mut u8 {
        self.cq.ring_cpu()
    }

    /// CPU address of the consumer-index record (after the ring; the arm record follows).
    pub(crate) fn dbrec(&self) -> *mut u32 {
        // SAFETY: the ring is followed by a 64-byte line holding the records (gpuqp).
        unsafe { self.cq.ring_cpu().add(self.num() as usize * 64) }.cast()
    }

    /// `IN_USE` while a QP uses it.
    pub(crate) fn ensure_unused(&self) -> DocaResult<()> {
        if Arc::strong_count(&self.cq) > 1 {
            sdk_err!("verbs", "CQ {} destroy: a QP still uses it", self.cqn());
            return Err(DocaError::IN_USE);
        }
        Ok(())
    }
}
