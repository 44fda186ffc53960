//! The verbs context (one open device), its protection domains and device attributes, and
//! the stand-in for rdma-core's `struct ibv_pd` that the bridges hand out.
//!
//! A context opens its device's soft NIC (one per device and process, shared with DOCA
//! RDMA: `gpuqp::nics`) when it is created, so its GID is known from the start. Objects
//! made from a context (PDs, CQs, QPs, AH attributes) keep it alive; destroying a context
//! or PD that still has objects is `IN_USE`. Device attributes are plain values (DOCA's
//! samples never free them, and that must not pin the context).

use crate::dev::{Dev, DevInfo};
use crate::error::{DocaError, DocaResult};
use doca_soft_nic::rdma::Nic;
use std::sync::{Arc, Mutex};

/// What a context and everything made from it share.
pub(crate) struct ContextShared {
    info: Arc<DevInfo>,
    nic: Nic,
    // `doca_verbs_bridge_get_ibv_ctx`: boxed so its address stays fixed.
    ibv: Box<SoftIbvContext>,
}

impl ContextShared {
    /// The device.
    pub(crate) fn info(&self) -> &Arc<DevInfo> {
        &self.info
    }

    /// The device's soft NIC.
    pub(crate) fn nic(&self) -> &Nic {
        &self.nic
    }

    /// The GID of the device's NIC (every GID index names it: one port, one GID).
    pub(crate) fn gid(&self) -> [u8; 16] {
        self.nic.gid()
    }

    /// The `struct ibv_context *` stand-in.
    pub(crate) fn ibv_context(&self) -> *mut SoftIbvContext {
        &*self.ibv as *const SoftIbvContext as *mut SoftIbvContext
    }
}

/// The C `struct doca_verbs_context`.
pub struct VerbsContext {
    shared: Arc<ContextShared>,
}

/// `DOCA_VERBS_CONTEXT_CREATE_FLAGS_NONE`, the only flag value.
pub(crate) const CONTEXT_CREATE_FLAGS_NONE: u32 = 0;

impl VerbsContext {
    /// Opens a context on `info` (starting the device's NIC if none runs).
    pub(crate) fn open(info: Arc<DevInfo>, flags: u32) -> DocaResult<VerbsContext> {
        if flags != CONTEXT_CREATE_FLAGS_NONE {
            sdk_err!(
                "verbs",
                "context flags {flags:#x}: only DOCA_VERBS_CONTEXT_CREATE_FLAGS_NONE exists"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        let nic = crate::gpuqp::nic_for(&info)?;
        Ok(VerbsContext::on(info, nic))
    }

    /// A context on the same device and NIC as `other` (`doca_verbs_bridge_verbs_context_import`).
    pub(crate) fn import(other: &ContextShared) -> VerbsContext {
        VerbsContext::on(other.info.clone(), other.nic.clone())
    }

    fn on(info: Arc<DevInfo>, nic: Nic) -> VerbsContext {
        let shared = Arc::new_cyclic(|me| ContextShared {
            info,
            nic,
            ibv: Box::new(SoftIbvContext {
                magic: IBV_CONTEXT_MAGIC,
                _pad: 0,
                ctx: me.as_ptr(),
            }),
        });
        VerbsContext { shared }
    }

    /// The shared state (what objects keep).
    pub(crate) fn shared(&self) -> &Arc<ContextShared> {
        &self.shared
    }

    /// `IN_USE` while a PD, CQ, QP or AH attribute made from it lives.
    pub(crate) fn ensure_unused(&self) -> DocaResult<()> {
        let users = Arc::strong_count(&self.shared) - 1;
        if users > 0 {
            sdk_err!(
                "verbs",
                "context destroy: {users} objects made from it still exist"
            );
            return Err(DocaError::IN_USE);
        }
        Ok(())
    }
}

/// Magic of [`SoftIbvPd`] ("dsPD").
const IBV_PD_MAGIC: u32 = 0x6473_5044;
/// Magic of [`SoftIbvContext`] ("dsCX").
const IBV_CONTEXT_MAGIC: u32 = 0x6473_4358;

/// What `doca_verbs_bridge_get_ibv_ctx` returns: a stand-in laid out like the start of
/// rdma-core's `struct ibv_context` is NOT attempted (doca-soft has no libibverbs); it is a
/// token the doca-soft bridges recognise, never to be passed to libibverbs.
#[repr(C)]
pub(crate) struct SoftIbvContext {
    magic: u32,
    _pad: u32,
    ctx: *const ContextShared,
}

// SAFETY: `ctx` points at the ContextShared that owns this token (a back pointer, only
// read, valid as long as its owner); everything else is plain data.
unsafe impl Send for SoftIbvContext {}
// SAFETY: as above; nothing is written through the pointer.
unsafe impl Sync for SoftIbvContext {}

/// What `doca_verbs_bridge_verbs_pd_get_ibv_pd` returns. Its first two fields have the
/// layout of rdma-core's `struct ibv_pd` (`context`, `handle`), so code reading
/// `pd->context` gets the context token; the rest identifies the doca-soft PD. Only the
/// doca-soft bridges (`doca_rdma_bridge_open_dev_from_pd`,
/// `doca_rdma_bridge_get_mmap_mkey_from_pd`) accept it.
#[repr(C)]
pub(crate) struct SoftIbvPd {
    context: *const SoftIbvContext,
    handle: u32,
    magic: u32,
    pd: *const PdShared,
}

/// What a PD and the QPs on it share.
pub(crate) struct PdShared {
    ctx: Arc<ContextShared>,
    pdn: u32,
    /// `VerbsPd` handles of this PD (the first, and those of `..._verbs_pd_import`).
    handles: std::sync::atomic::AtomicUsize,
}

impl PdShared {
    /// The context.
    pub(crate) fn ctx(&self) -> &Arc<ContextShared> {
        &self.ctx
    }
}

/// The C `struct doca_verbs_pd`.
pub struct VerbsPd {
    shared: Arc<PdShared>,
    // Boxed so its address stays fixed while the PD lives.
    ibv_pd: Box<SoftIbvPd>,
    // `doca_verbs_pd_as_doca_dev`: made on first use, owned by the PD.
    dev: Mutex<Option<Box<Dev>>>,
}

// SAFETY: the raw pointers in the tokens point into values this PD owns (or keeps alive
// through `shared`); they are only read.
unsafe impl Send for VerbsPd {}
// SAFETY: as above; the device slot is behind a mutex.
unsafe impl Sync for VerbsPd {}

static NEXT_PDN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

impl VerbsPd {
    /// A PD on `ctx`.
    pub(crate) fn new(ctx: &VerbsContext) -> VerbsPd {
        let pdn = NEXT_PDN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        VerbsPd::wrap(Arc::new(PdShared {
            ctx: ctx.shared.clone(),
            pdn,
            handles: Default::default(),
        }))
    }

    /// Another handle of the PD `shared` (`doca_verbs_bridge_verbs_pd_import`).
    pub(crate) fn wrap(shared: Arc<PdShared>) -> VerbsPd {
        shared
            .handles
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let ibv_pd = Box::new(SoftIbvPd {
            context: shared.ctx.ibv_context(),
            handle: shared.pdn,
            magic: IBV_PD_MAGIC,
            pd: Arc::as_ptr(&shared),
        });
        VerbsPd {
            shared,
            ibv_pd,
            dev: Mutex::new(None),
        }
    }

    /// The shared state (what QPs keep).
    pub(crate) fn shared(&self) -> &Arc<PdShared> {
        &self.shared
    }

    /// The `struct ibv_pd *` stand-in.
    pub(crate) fn ibv_pd(&self) -> *mut SoftIbvPd {
        &*self.ibv_pd as *const SoftIbvPd as *mut SoftIbvPd
    }

    /// The `struct doca_dev *` sharing this PD, owned by the PD (made on first call).
    pub(crate) fn as_doca_dev(&self) -> *mut Dev {
        let mut g = self.dev.lock().unwrap_or_else(|p| p.into_inner());
        let d = g.get_or_insert_with(|| Box::new(Dev::new(self.shared.ctx.info.clone())));
        &mut **d as *mut Dev
    }

    /// `IN_USE` while a QP made on it lives.
    pub(crate) fn ensure_unused(&self) -> DocaResult<()> {
        let handles = self
            .shared
            .handles
            .load(std::sync::atomic::Ordering::Acquire);
        let users = Arc::strong_count(&self.shared).saturating_sub(handles);
        if users > 0 {
            sdk_err!("verbs", "PD destroy: {users} QPs on it still exist");
            return Err(DocaError::IN_USE);
        }
        if let Some(d) = self.dev.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            if d.users() > 0 {
                sdk_err!(
                    "verbs",
                    "PD destroy: its doca_dev is still used by {} objects",
                    d.users()
                );
                return Err(DocaError::IN_USE);
            }
        }
        Ok(())
    }
}

impl Drop for VerbsPd {
    fn drop(&mut self) {
        self.shared
            .handles
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// The PD behind an `ibv_pd` stand-in; `INVALID_VALUE` for anything else (a real rdma-core
/// PD, a stale pointer whose magic was overwritten, NULL).
///
/// # Safety
/// A non-null `p` is either a pointer from [`VerbsPd::ibv_pd`] whose PD lives, or points to
/// at least `size_of::<SoftIbvPd>()` readable bytes.
pub(crate) unsafe fn pd_of_ibv_pd(p: *const SoftIbvPd) -> DocaResult<Arc<PdShared>> {
    // SAFETY: caller contract.
    let t = unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    if t.magic != IBV_PD_MAGIC || t.pd.is_null() {
        sdk_err!(
            "verbs",
            "not a doca-soft ibv_pd (doca-soft has no libibverbs: use doca_verbs_bridge_verbs_pd_get_ibv_pd)"
        );
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: the magic says it is our token, whose `pd` is an `Arc::as_ptr` of a PD that
    // lives (caller contract); a new strong reference is taken for the result.
    Ok(unsafe {
        Arc::increment_strong_count(t.pd);
        Arc::from_raw(t.pd)
    })
}

/// The context behind an `ibv_context` stand-in (see [`pd_of_ibv_pd`]).
///
/// # Safety
/// As [`pd_of_ibv_pd`], for [`VerbsPd::ibv_context`] pointers.
pub(crate) unsafe fn ctx_of_ibv_context<'a>(
    p: *const SoftIbvContext,
) -> DocaResult<&'a ContextShared> {
    // SAFETY: caller contract.
    let t = unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    if t.magic != IBV_CONTEXT_MAGIC || t.ctx.is_null() {
        sdk_err!(
            "verbs",
            "not a doca-soft ibv_context (doca-soft has no libibverbs)"
        );
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: our token; its context lives (caller contract).
    Ok(unsafe { &*t.ctx })
}

/// The C `struct doca_verbs_device_attr`: the soft NIC's capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceAttr {
    /// Outstanding reads/atomics a QP may issue.
    pub(crate) max_qp_rd_atom: u8,
    /// Outstanding reads/atomics a QP may receive.
    pub(crate) max_qp_init_rd_atom: u8,
}

/// Read/atomic depth the soft NIC reports (it has no such limit; 16 is ConnectX's).
pub(crate) const MAX_RD_ATOMIC: u8 = 16;

impl DeviceAttr {
    /// The attributes of every soft NIC.
    pub(crate) fn soft_nic() -> DeviceAttr {
        DeviceAttr {
            max_qp_rd_atom: MAX_RD_ATOMIC,
            max_qp_init_rd_atom: MAX_RD_ATOMIC,
        }
    }

    /// Receive data scattered into the CQE: supported.
    pub(crate) fn cqe_inline(&self) -> DocaResult<()> {
        Ok(())
    }

    /// DBR_VALID and NO_DBR_EXT are supported; NO_DBR_INT (DPA) is not.
    pub(crate) fn send_dbr_mode(&self, mode: u32) -> DocaResult<()> {
        match mode {
            0 | 1 => Ok(()),
            2 => Err(DocaError::NOT_SUPPORTED),
            _ => Err(DocaError::INVALID_VALUE),
        }
    }

    /// `DOCA_VERBS_ATOMIC_CAP_HCA`: atomics are atomic with respect to other atomics of
    /// the NIC (the target's proxy runs them; on device memory, a read-modify-write that
    /// GPU atomics do not see).
    pub(crate) fn atomic_cap(&self) -> u32 {
        1
    }
}

/// The C `struct doca_verbs_ah_attr`: an address-handle attribute of a context.
pub struct VerbsAhAttr {
    _ctx: Arc<ContextShared>,
    pub(crate) attr: super::attr::AhAttr,
}

impl VerbsAhAttr {
    /// An empty AH attribute of `ctx`.
    pub(crate) fn new(ctx: &VerbsContext) -> VerbsAhAttr {
        VerbsAhAttr {
            _ctx: ctx.shared.clone(),
            attr: Default::default(),
        }
    }
}
