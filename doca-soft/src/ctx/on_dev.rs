//! A context opened on a device (DMA, RDMA, Ethernet RX and TX queues): the C-visible
//! context, the kind's shared state behind it, and the device, which stays in use (IN_USE
//! for `doca_dev_close`) from create to destroy.

use std::sync::Arc;

use super::{Ctx, CtxOps};
use crate::dev::Dev;
use crate::error::DocaResult;
use crate::gpu::GpuShared;

/// The context, the kind's state `I` (the context's operations) and the device it uses.
pub(crate) struct OnDev<I> {
    /// The context (boxed: its address is the C handle).
    pub(crate) ctx: Box<Ctx>,
    /// The kind's state, shared with the context as its operations.
    pub(crate) inner: Arc<I>,
    dev: *const Dev,
}

impl<I: CtxOps + 'static> OnDev<I> {
    /// An IDLE context driven by `inner`, marking `dev` in use.
    pub(crate) fn new(dev: &Dev, inner: Arc<I>) -> OnDev<I> {
        dev.add_user();
        OnDev {
            ctx: Ctx::new(inner.clone()),
            inner,
            dev: dev as *const Dev,
        }
    }
}

impl<I> OnDev<I> {
    /// Before destroy: BAD_STATE unless IDLE; leaves the PE and releases the device.
    pub(crate) fn close(&self) -> DocaResult<()> {
        self.ctx.require_idle()?;
        self.ctx.detach_from_pe();
        // SAFETY: the device outlives its users (doca_dev_close is IN_USE until released).
        if let Some(d) = unsafe { self.dev.as_ref() } {
            d.remove_user();
        }
        Ok(())
    }

    /// The context as a C handle.
    pub(crate) fn ctx_ptr(&self) -> *mut Ctx {
        self.ctx.handle()
    }
}

/// Where the data path of a context on a device runs (DMA, RDMA).
#[derive(Clone, Default)]
pub(crate) enum DataPath {
    /// Not chosen: DOCA's CPU data path (tasks; a kind without one refuses it at start).
    #[default]
    Cpu,
    /// `doca_ctx_set_datapath_on_gpu`.
    Gpu(Arc<GpuShared>),
    /// Testing: rings and handles in host memory.
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    Host,
}
