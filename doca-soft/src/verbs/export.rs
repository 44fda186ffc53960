//! Exporting a DOCA Verbs QP to GPU code (`doca_gpu_verbs_export_qp`): the GPU-side
//! descriptor (`struct doca_gpu_dev_verbs_qp`, built by `gpuqp`) placed in device memory,
//! and the CPU proxy of QPs exported with `DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY`.
//!
//! NIC handlers (what the device's `submit<AUTO>` dispatches on):
//! * AUTO resolves to GPU_SM_DB: the device writes the doorbell record and the doorbell
//!   register, both in pinned memory the soft NIC polls.
//! * GPU_SM_DB: as above. GPU_SM_NO_DBR: the register only; the QP must have been created
//!   with send DBR mode NO_DBR_EXT (the NIC then watches the register), else
//!   `INVALID_VALUE`.
//! * CPU_PROXY: the descriptor's `sq_db` is a slot of its own where the device stores the
//!   64-bit producer index; `doca_gpu_verbs_cpu_proxy_progress` forwards it to the doorbell
//!   the NIC watches, as DOCA's CPU proxy forwards it to the hardware doorbell. Nothing is
//!   sent before a progress call sees the index.
//! * GPU_SM_BF (BlueFlame): `NOT_SUPPORTED` with a log line (under AUTO dispatch the device
//!   treats it like the CPU proxy while explicit BlueFlame writes WQE images; no DOCA
//!   sample uses it).
//!
//! The QP cannot be destroyed while exported (`IN_USE`); `doca_gpu_verbs_unexport_qp`
//! releases the descriptor.

use super::cq::VerbsCq;
use super::qp::VerbsQp;
use crate::error::{DocaError, DocaResult};
use crate::gpuqp::nic_handler;
use crate::gpuqp::{DeviceCopy, Placement, SharedMem};
use doca_soft_nic::rdma::Nic;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Which doorbell the CPU proxy writes.
enum Target {
    /// The send doorbell record: BE32(prod & 0xFFFF).
    Record(*mut u32),
    /// The doorbell register: BE32(prod << 8), then BE32(QPN << 8).
    Register(*mut u64, u32),
}

/// The CPU proxy of one exported QP.
struct Proxy {
    slot: SharedMem,
    forwarded: AtomicU64,
    target: Target,
}

/// The C `struct doca_gpu_verbs_qp`: an exported QP.
pub struct GpuVerbsQp {
    qp: *const VerbsQp,
    desc: DeviceCopy,
    handler: u32,
    proxy: Option<Proxy>,
    nic: Nic,
    warned: AtomicBool,
    qpn: u32,
    _gpu: Option<Arc<crate::gpu::GpuShared>>,
}

// SAFETY: `qp` points to a QP that cannot be destroyed while this export lives (its
// destroy is IN_USE); the proxy's raw doorbell pointers point into that QP's memory; all
// shared accesses are atomic.
unsafe impl Send for GpuVerbsQp {}
// SAFETY: as above.
unsafe impl Sync for GpuVerbsQp {}

/// Where an export's descriptor goes.
pub(crate) enum ExportTo {
    /// Device memory of this GPU (`doca_gpu_verbs_export_qp`).
    Gpu(Arc<crate::gpu::GpuShared>),
    /// Host memory: a CPU thread plays the GPU (the `testing` hooks).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    Host,
}

/// The concrete handler AUTO and the others resolve to for `qp`.
fn resolve(qp: &VerbsQp, h: u32) -> DocaResult<u32> {
    let no_dbr = qp.init_attr().send_dbr_mode == super::attr::SEND_DBR_MODE_NO_DBR_EXT;
    match h {
        nic_handler::AUTO | nic_handler::GPU_SM_DB => Ok(nic_handler::GPU_SM_DB),
        nic_handler::CPU_PROXY => Ok(nic_handler::CPU_PROXY),
        nic_handler::GPU_SM_NO_DBR if no_dbr => Ok(h),
        nic_handler::GPU_SM_NO_DBR => {
            sdk_err!(
                "verbs",
                "export: NIC handler GPU_SM_NO_DBR needs a QP created with send DBR mode NO_DBR_EXT"
            );
            Err(DocaError::INVALID_VALUE)
        }
        nic_handler::GPU_SM_BF => {
            sdk_err!(
                "verbs",
                "export: NIC handler GPU_SM_BF (BlueFlame) is not supported by doca-soft"
            );
            Err(DocaError::NOT_SUPPORTED)
        }
        _ => {
            sdk_err!("verbs", "export: unknown NIC handler {h}");
            Err(DocaError::INVALID_VALUE)
        }
    }
}

impl GpuVerbsQp {
    /// Exports `qp` (created with the external data path) with `handler`; `cq_sq` and
    /// `cq_rq` must be the QP's CQs (`cq_rq` None when it has no receive queue);
    /// `umem_dev_ptr` the address of its work-queue umem when it has one.
    pub(crate) fn new(
        to: ExportTo,
        qp: &VerbsQp,
        handler: u32,
        umem_dev_ptr: u64,
        cq_sq: &VerbsCq,
        cq_rq: Option<&VerbsCq>,
    ) -> DocaResult<GpuVerbsQp> {
        if !qp.init_attr().external_datapath {
            sdk_err!(
                "verbs",
                "export: QP {} was created without the external data path",
                qp.qpn()
            );
            return Err(DocaError::INVALID_VALUE);
        }
        let gq = qp.gpu_qp();
        if !Arc::ptr_eq(gq.send_cq(), cq_sq.gpu_cq()) {
            sdk_err!(
                "verbs",
                "export: CQ {} is not the send CQ of QP {}",
                cq_sq.cqn(),
                qp.qpn()
            );
            return Err(DocaError::INVALID_VALUE);
        }
        match (gq.rq(), cq_rq) {
            (Some(rq), Some(c)) if Arc::ptr_eq(rq.cq(), c.gpu_cq()) => {}
            (None, _) => {}
            _ => {
                sdk_err!(
                    "verbs",
                    "export: the receive CQ given is not the one of QP {}",
                    qp.qpn()
                );
                return Err(DocaError::INVALID_VALUE);
            }
        }
        match qp.wq_umem_addr() {
            Some(a) if a != umem_dev_ptr => {
                sdk_err!(
                    "verbs",
                    "export: {umem_dev_ptr:#x} is not the work-queue umem of QP {} ({a:#x})",
                    qp.qpn()
                );
                return Err(DocaError::INVALID_VALUE);
            }
            _ if umem_dev_ptr == 0 => return Err(DocaError::INVALID_VALUE),
            _ => {}
        }
        let handler = resolve(qp, handler)?;
        let (place, gpu) = match &to {
            ExportTo::Gpu(g) => {
                if qp.placement().gpu().is_none() {
                    sdk_err!(
                        "verbs",
                        "export: QP {} has its rings in host memory (its work-queue umem is not GPU memory: use doca_umem_gpu_create)",
                        qp.qpn()
                    );
                    return Err(DocaError::INVALID_VALUE);
                }
                (Placement::Gpu(g.clone()), Some(g.clone()))
            }
            ExportTo::Host => (Placement::Host, None),
        };
        let mut d = gq.descriptor();
        let proxy = if handler == nic_handler::CPU_PROXY {
            let slot = SharedMem::new(qp.placement(), 64, 64)?;
            d.sq_db = slot.dev_at(0);
            d.nic_handler = nic_handler::CPU_PROXY;
            let target = if qp.init_attr().send_dbr_mode == super::attr::SEND_DBR_MODE_NO_DBR_EXT {
                Target::Register(gq.sq_db_cpu(), (qp.qpn() << 8).to_be())
            } else {
                Target::Record(gq.sq_dbrec_cpu())
            };
            Some(Proxy {
                slot,
                forwarded: AtomicU64::new(0),
                target,
            })
        } else {
            d.nic_handler = handler;
            None
        };
        let desc = DeviceCopy::new(&place, &d.to_bytes(), 64)?;
        qp.add_export();
        Ok(GpuVerbsQp {
            qp,
            desc,
            handler,
            proxy,
            nic: qp.pd().ctx().nic().clone(),
            warned: AtomicBool::new(false),
            qpn: qp.qpn(),
            _gpu: gpu,
        })
    }

    /// Device address of the descriptor (`doca_gpu_verbs_get_qp_dev`).
    pub(crate) fn dev_ptr(&self) -> u64 {
        self.desc.dev()
    }

    /// Whether a CPU proxy rings the doorbell.
    pub(crate) fn cpu_proxy(&self) -> bool {
        self.proxy.is_some()
    }

    /// The descriptor bytes as they are now (device counters included).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub(crate) fn read_descriptor(&self, out: &mut [u8]) -> DocaResult<()> {
        self.desc.read(0, out)
    }

    /// `doca_gpu_verbs_cpu_proxy_progress`: forwards the producer index the device wrote
    /// to the proxy slot; `NOT_SUPPORTED` (logged once) for QPs whose doorbell the GPU rings.
    pub(crate) fn progress(&self) -> DocaResult<()> {
        let Some(p) = &self.proxy else {
            if !self.warned.swap(true, Ordering::Relaxed) {
                sdk_err!(
                    "verbs",
                    "cpu_proxy_progress: QP {} was exported with a GPU-rung doorbell (handler {})",
                    self.qpn,
                    self.handler
                );
            }
            return Err(DocaError::NOT_SUPPORTED);
        };
        // SAFETY: an aligned 8-byte slot inside `p.slot` (64 bytes, 64-aligned).
        let slot = unsafe { &*(p.slot.cpu_at(0) as *const AtomicU64) };
        let prod = slot.load(Ordering::Acquire);
        let last = p.forwarded.load(Ordering::Acquire);
        if prod <= last
            || p.forwarded
                .compare_exchange(last, prod, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return Ok(());
        }
        match p.target {
            Target::Record(r) => {
                // SAFETY: the QP's aligned doorbell record word, alive while exported.
                let w = unsafe { &*(r as *const AtomicU32) };
                w.store(((prod & 0xffff) as u32).to_be(), Ordering::Release);
            }
            Target::Register(r, qpn_be) => {
                let mut img = [0u8; 8];
                img[..4].copy_from_slice(&((prod as u32) << 8).to_be_bytes());
                img[4..].copy_from_slice(&qpn_be.to_ne_bytes());
                // SAFETY: the QP's aligned doorbell register, alive while exported.
                let w = unsafe { &*(r as *const AtomicU64) };
                w.store(u64::from_ne_bytes(img), Ordering::Release);
            }
        }
        self.nic.wake();
        Ok(())
    }
}

impl Drop for GpuVerbsQp {
    fn drop(&mut self) {
        // SAFETY: the QP cannot be destroyed while exported (see the type's Send comment).
        unsafe { &*self.qp }.remove_export();
    }
}
