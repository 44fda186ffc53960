//! `doca_dma`: memory copies, from the CPU (memcpy tasks through a PE) or from GPU kernels
//! (the GPU data path).
//!
//! * CPU data path (the default): `doca_dma_task_memcpy_set_conf` before start, a PE
//!   connected (start is BAD_STATE without one); a submitted task copies the source
//!   buffer's data to the end of the destination buffer's data (whose length grows by it)
//!   and completes, through the success or the error callback, at the next
//!   `doca_pe_progress`. Host and GPU memory on either side.
//! * GPU data path (`doca_ctx_set_datapath_on_gpu` before start, no PE): start builds the
//!   handle and its request ring ([`ring`]) and a proxy thread that runs the requests as
//!   CUDA copies on its own stream, completing in order. The testing hooks can put the
//!   ring in host memory with CPU copies instead ([`Dma::set_host_datapath`]).

pub(crate) mod copy;
pub(crate) mod ring;
pub(crate) mod stream;
pub(crate) mod task;

use crate::ctx::on_dev::{DataPath, OnDev};
use crate::ctx::task::Task;
use crate::ctx::{Ctx, CtxOps, Transition, STATE_RUNNING};
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::gpu::GpuShared;
use crate::gpuqp::Placement;
use crate::sync::lock;
use ring::{DmaProxy, DmaRing, DESC_NUM};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use task::{MemcpyCb, MemcpyTask};

/// Most memcpy tasks a context holds.
pub(crate) const MAX_TASKS: u32 = 1 << 16;
/// Largest buffer a memcpy task copies.
pub(crate) const MAX_BUF_SIZE: u64 = 1 << 31;

#[derive(Default)]
struct Cfg {
    ordered: bool,
    ok_cb: MemcpyCb,
    err_cb: MemcpyCb,
    num_tasks: u32,
    conf_set: bool,
}

enum Run {
    Cpu,
    Gpu(DmaProxy),
}

/// Shared state of a DMA context (its operations).
pub(crate) struct DmaInner {
    cfg: Mutex<Cfg>,
    datapath: Mutex<DataPath>,
    run: Mutex<Option<Run>>,
    /// Tasks allocated and not freed.
    allocated: Mutex<u32>,
    /// Finished tasks waiting for the next progress: (task, status).
    done: Mutex<VecDeque<(usize, DocaResult<()>)>>,
}

/// The C `struct doca_dma`.
pub struct Dma(OnDev<DmaInner>);

impl Dma {
    /// A context on `dev` (IN_USE for the device until destroy).
    pub(crate) fn new(dev: &Dev) -> Dma {
        let inner = Arc::new(DmaInner {
            cfg: Mutex::new(Cfg::default()),
            datapath: Mutex::new(DataPath::Cpu),
            run: Mutex::new(None),
            allocated: Mutex::new(0),
            done: Mutex::new(VecDeque::new()),
        });
        Dma(OnDev::new(dev, inner))
    }

    /// Before destroy: BAD_STATE unless IDLE, IN_USE while tasks are allocated.
    pub(crate) fn close(&self) -> DocaResult<()> {
        self.0.ctx.require_idle()?;
        let n = *lock(&self.0.inner.allocated);
        if n > 0 {
            sdk_err!("dma", "destroying a DMA context with {n} tasks not freed");
            return Err(DocaError::IN_USE);
        }
        self.0.close()
    }

    /// The context as a C handle.
    pub(crate) fn ctx_ptr(&self) -> *mut Ctx {
        self.0.ctx_ptr()
    }

    /// `set_ordered_completions` (IDLE only).
    pub(crate) fn set_ordered(&self, on: bool) -> DocaResult<()> {
        self.0.ctx.require_idle()?;
        lock(&self.0.inner.cfg).ordered = on;
        Ok(())
    }

    /// `get_ordered_completions`.
    pub(crate) fn ordered(&self) -> bool {
        lock(&self.0.inner.cfg).ordered
    }

    /// `task_memcpy_set_conf` (IDLE only): callbacks and task count (1 to MAX_TASKS).
    pub(crate) fn set_conf(&self, ok: MemcpyCb, err: MemcpyCb, num: u32) -> DocaResult<()> {
        self.0.ctx.require_idle()?;
        if ok.is_none() || err.is_none() || num == 0 || num > MAX_TASKS {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut c = lock(&self.0.inner.cfg);
        c.ok_cb = ok;
        c.err_cb = err;
        c.num_tasks = num;
        c.conf_set = true;
        Ok(())
    }

    /// Testing: the GPU data path with its ring in host memory and CPU copies (IDLE only).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub(crate) fn set_host_datapath(&self) -> DocaResult<()> {
        self.0.ctx.require_idle()?;
        *lock(&self.0.inner.datapath) = DataPath::Host;
        Ok(())
    }

    /// `doca_dma_get_gpu_handle`: BAD_STATE before start or on the CPU data path.
    pub(crate) fn gpu_handle(&self) -> DocaResult<u64> {
        if self.0.ctx.state() != STATE_RUNNING {
            return Err(DocaError::BAD_STATE);
        }
        match &*lock(&self.0.inner.run) {
            Some(Run::Gpu(p)) => Ok(p.handle()),
            _ => {
                sdk_err!(
                    "dma",
                    "doca_dma_get_gpu_handle: the context is not on the GPU data path"
                );
                Err(DocaError::BAD_STATE)
            }
        }
    }

    /// Requests the proxy skipped so far (testing).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub(crate) fn skipped(&self) -> u64 {
        match &*lock(&self.0.inner.run) {
            Some(Run::Gpu(p)) => p.stats().skipped.load(std::sync::atomic::Ordering::Relaxed),
            _ => 0,
        }
    }

    /// `task_memcpy_alloc_init` (RUNNING, CPU data path): NO_MEMORY beyond the configured
    /// task count.
    pub(crate) fn alloc_task(&self) -> DocaResult<MemcpyTask> {
        if self.0.ctx.state() != STATE_RUNNING {
            return Err(DocaError::BAD_STATE);
        }
        if !matches!(&*lock(&self.0.inner.run), Some(Run::Cpu)) {
            sdk_err!("dma", "memcpy tasks need the CPU data path");
            return Err(DocaError::NOT_SUPPORTED);
        }
        let num = lock(&self.0.inner.cfg).num_tasks;
        let mut n = lock(&self.0.inner.allocated);
        if *n >= num {
            return Err(DocaError::NO_MEMORY);
        }
        *n += 1;
        Ok(MemcpyTask::new(&self.0.ctx, Arc::downgrade(&self.0.inner)))
    }
}

impl DmaInner {
    /// A task was freed.
    pub(crate) fn task_freed(&self) {
        let mut n = lock(&self.allocated);
        *n = n.saturating_sub(1);
    }
}

impl CtxOps for DmaInner {
    fn kind(&self) -> &'static str {
        "dma"
    }

    fn needs_pe(&self) -> bool {
        matches!(&*lock(&self.datapath), DataPath::Cpu)
    }

    fn start(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        let run = match lock(&self.datapath).clone() {
            DataPath::Cpu => {
                if !lock(&self.cfg).conf_set {
                    sdk_err!("dma", "start: doca_dma_task_memcpy_set_conf was not called");
                    return Err(DocaError::BAD_STATE);
                }
                Run::Cpu
            }
            DataPath::Gpu(g) => {
                let ring = DmaRing::new(&Placement::Gpu(g.clone()), DESC_NUM)?;
                Run::Gpu(DmaProxy::start(ring, Some(g))?)
            }
            DataPath::Host => {
                let ring = DmaRing::new(&Placement::Host, DESC_NUM)?;
                Run::Gpu(DmaProxy::start(ring, None)?)
            }
        };
        *lock(&self.run) = Some(run);
        Ok(Transition::Done)
    }

    fn stop(&self, ctx: &Ctx) -> DocaResult<Transition> {
        // Tasks still waiting for progress complete now (their copies already ran).
        self.progress(ctx);
        lock(&self.run).take();
        Ok(Transition::Done)
    }

    fn progress(&self, ctx: &Ctx) -> u32 {
        let done: Vec<_> = lock(&self.done).drain(..).collect();
        let (ok, err) = {
            let c = lock(&self.cfg);
            (c.ok_cb, c.err_cb)
        };
        let n = done.len() as u32;
        for (t, status) in done {
            let task = t as *mut Task;
            // SAFETY: `t` is a memcpy task submitted to this context, still in flight.
            unsafe { task::set_completion(task, if status.is_ok() { ok } else { err }) };
            ctx.complete_task(task, status);
        }
        n
    }

    fn submit(&self, _ctx: &Ctx, t: *mut Task) -> DocaResult<()> {
        // SAFETY: only memcpy tasks are allocated against a DMA context; live while
        // submitted.
        let status = unsafe { task::run(t) };
        if let Err(e) = status {
            if e == DocaError::INVALID_VALUE {
                return Err(e);
            }
        }
        lock(&self.done).push_back((t as usize, status));
        Ok(())
    }

    fn set_datapath_on_gpu(&self, gpu: &Arc<GpuShared>) -> DocaResult<()> {
        *lock(&self.datapath) = DataPath::Gpu(gpu.clone());
        Ok(())
    }
}
