//! Verbs contexts, protection domains and what a device reports about itself.

use doca_common::error::{check, Error, Result};
use doca_common::{Device, DocaError};
use doca_sys as sys;
use std::ptr::NonNull;
use std::sync::Arc;

/// A port GID (16 bytes). With the software runtime it names the device's soft NIC; on
/// hardware it is the port's RoCE/IB GID.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Gid(pub [u8; 16]);

/// How a port links to the network (`ibv_port_attr.link_layer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkLayer {
    /// InfiniBand: peers are addressed by LID.
    InfiniBand,
    /// Ethernet (RoCE): peers are addressed by GID over IP.
    Ethernet,
}

/// Port 1's attributes as the verbs samples use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Local identifier (InfiniBand; 0 on Ethernet).
    pub lid: u16,
    /// Link layer.
    pub link_layer: LinkLayer,
}

/// What a device supports (`doca_verbs_query_device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceAttr {
    /// Outstanding RDMA reads/atomics a QP may issue.
    pub max_qp_rd_atom: u8,
    /// Outstanding RDMA reads/atomics a QP may receive.
    pub max_qp_init_rd_atom: u8,
    /// Whether small receives can be delivered inside the CQE.
    pub cqe_inline: bool,
    /// Whether QPs may run without a send doorbell record (`NO_DBR_EXT`).
    pub send_dbr_mode_no_dbr: bool,
}

pub(crate) struct CtxInner {
    raw: NonNull<sys::doca_verbs_context>,
    device: Device,
}

// SAFETY: a verbs context is used from any thread by DOCA's own samples (proxy threads);
// this crate only creates objects from it, each call self-contained.
unsafe impl Send for CtxInner {}
// SAFETY: as above.
unsafe impl Sync for CtxInner {}

impl Drop for CtxInner {
    fn drop(&mut self) {
        // SAFETY: created by doca_verbs_context_create; every object made from it (PDs
        // hold an Arc of this) is gone.
        let rc = unsafe { sys::doca_verbs_context_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_verbs_context_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A DOCA Verbs context on a device (`doca_verbs_context`): where PDs, CQs and QPs come
/// from. Cheap to clone; keeps its [`Device`] open. `Send + Sync`.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<CtxInner>,
}

impl Context {
    /// Opens a context on `device` (`doca_verbs_context_create` on its devinfo).
    pub fn open(device: &Device) -> Result<Context> {
        // SAFETY: the device is open; its devinfo lives as long as it does.
        let info = unsafe { sys::doca_dev_as_devinfo(device.as_raw()) };
        if info.is_null() {
            return Err(Error::NotFound("doca_dev_as_devinfo returned NULL".into()));
        }
        let mut raw = std::ptr::null_mut();
        // SAFETY: a live devinfo; a valid out-pointer.
        check("doca_verbs_context_create", unsafe {
            sys::doca_verbs_context_create(
                info,
                sys::DOCA_VERBS_CONTEXT_CREATE_FLAGS_NONE,
                &mut raw,
            )
        })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::NotFound("doca_verbs_context_create returned NULL".into()))?;
        Ok(Context {
            inner: Arc::new(CtxInner {
                raw,
                device: device.clone(),
            }),
        })
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// What the device supports.
    pub fn device_attr(&self) -> Result<DeviceAttr> {
        let mut a = std::ptr::null_mut();
        // SAFETY: a live context; a valid out-pointer.
        check("doca_verbs_query_device", unsafe {
            sys::doca_verbs_query_device(self.as_raw(), &mut a)
        })?;
        // SAFETY: `a` is the attribute object just returned, freed below.
        let out = unsafe {
            DeviceAttr {
                max_qp_rd_atom: sys::doca_verbs_device_attr_get_max_qp_rd_atom(a),
                max_qp_init_rd_atom: sys::doca_verbs_device_attr_get_max_qp_init_rd_atom(a),
                cqe_inline: sys::doca_verbs_device_attr_get_is_cqe_inline_supported(a)
                    == sys::doca_error_t::DOCA_SUCCESS,
                send_dbr_mode_no_dbr: sys::doca_verbs_device_attr_get_is_send_dbr_mode_supported(
                    a,
                    sys::doca_verbs_qp_send_dbr_mode::DOCA_VERBS_QP_SEND_DBR_MODE_NO_DBR_EXT,
                ) == sys::doca_error_t::DOCA_SUCCESS,
            }
        };
        // SAFETY: from doca_verbs_query_device, freed once.
        check("doca_verbs_device_attr_free", unsafe {
            sys::doca_verbs_device_attr_free(a)
        })?;
        Ok(out)
    }

    /// The GID of port 1 at `index` (what peers put in their address handle).
    ///
    /// On hardware DOCA's samples read it with rdma-core's `ibv_query_gid`; the software
    /// runtime has no libibverbs and answers through its extension `doca_soft_verbs.h`.
    /// With the `sdk` backend this returns `NOT_SUPPORTED`: use rdma-core on the context
    /// of `doca_verbs_bridge_get_ibv_ctx` there.
    pub fn gid(&self, index: u32) -> Result<Gid> {
        #[cfg(doca_backend = "soft")]
        {
            let mut g = sys::doca_verbs_gid { raw: [0; 16] };
            // SAFETY: a live context; a valid out-pointer.
            check("doca_soft_verbs_query_gid", unsafe {
                sys::doca_soft_verbs_query_gid(self.as_raw(), index, &mut g)
            })?;
            Ok(Gid(g.raw))
        }
        #[cfg(not(doca_backend = "soft"))]
        {
            let _ = index;
            Err(Error::doca(
                "ibv_query_gid (not wrapped for the sdk backend)",
                DocaError::NOT_SUPPORTED,
            ))
        }
    }

    /// Port 1's LID and link layer (soft NICs: LID 0, Ethernet). Same backends as
    /// [`Context::gid`].
    pub fn port(&self) -> Result<PortInfo> {
        #[cfg(doca_backend = "soft")]
        {
            let (mut lid, mut ll) = (0u16, 0u8);
            // SAFETY: a live context; valid out-pointers.
            check("doca_soft_verbs_query_port", unsafe {
                sys::doca_soft_verbs_query_port(self.as_raw(), &mut lid, &mut ll)
            })?;
            Ok(PortInfo {
                lid,
                link_layer: if ll == 1 {
                    LinkLayer::InfiniBand
                } else {
                    LinkLayer::Ethernet
                },
            })
        }
        #[cfg(not(doca_backend = "soft"))]
        {
            Err(Error::doca(
                "ibv_query_port (not wrapped for the sdk backend)",
                DocaError::NOT_SUPPORTED,
            ))
        }
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_verbs_context {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("verbs::Context")
            .field("device", self.inner.device.info())
            .finish()
    }
}

pub(crate) struct PdInner {
    raw: NonNull<sys::doca_verbs_pd>,
    ctx: Context,
}

// SAFETY: as for the context: a PD is only used to create objects, each call
// self-contained.
unsafe impl Send for PdInner {}
// SAFETY: as above.
unsafe impl Sync for PdInner {}

impl Drop for PdInner {
    fn drop(&mut self) {
        // SAFETY: created by doca_verbs_pd_create; every QP and memory region on it (they
        // hold an Arc of this) is gone.
        let rc = unsafe { sys::doca_verbs_pd_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_verbs_pd_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A protection domain (`doca_verbs_pd`): QPs and memory regions on it may work together.
/// Cheap to clone; keeps its context. `Send + Sync`.
#[derive(Clone)]
pub struct Pd {
    pub(crate) inner: Arc<PdInner>,
}

impl Pd {
    /// A new PD on `ctx`.
    pub fn new(ctx: &Context) -> Result<Pd> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a live context; a valid out-pointer.
        check("doca_verbs_pd_create", unsafe {
            sys::doca_verbs_pd_create(ctx.as_raw(), &mut raw)
        })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::NotFound("doca_verbs_pd_create returned NULL".into()))?;
        Ok(Pd {
            inner: Arc::new(PdInner {
                raw,
                ctx: ctx.clone(),
            }),
        })
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// The `doca_dev` sharing this PD (`doca_verbs_pd_as_doca_dev`; owned by the PD): what
    /// UARs, umems, memory maps and the GPU export are made on.
    pub fn doca_dev(&self) -> Result<*mut sys::doca_dev> {
        let mut d = std::ptr::null_mut();
        // SAFETY: a live PD; a valid out-pointer.
        check("doca_verbs_pd_as_doca_dev", unsafe {
            sys::doca_verbs_pd_as_doca_dev(self.as_raw(), &mut d)
        })?;
        if d.is_null() {
            return Err(Error::doca(
                "doca_verbs_pd_as_doca_dev",
                DocaError::NOT_FOUND,
            ));
        }
        Ok(d)
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_verbs_pd {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for Pd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("verbs::Pd").finish_non_exhaustive()
    }
}
