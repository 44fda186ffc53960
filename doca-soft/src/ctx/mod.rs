//! `doca_ctx`: the state machine every DOCA context shares, and the interface a context
//! kind (Eth queue, UROM service, worker, domain, ...) implements to plug into it.
//!
//! A context object (say an RX queue) owns a boxed [`Ctx`] and an `Arc` of its shared state,
//! which implements [`CtxOps`]; the `Ctx` keeps a clone of that `Arc`. The C handle
//! `struct doca_ctx *` is a pointer to the `Ctx`. State transitions follow DOCA:
//!
//! * `doca_ctx_start` on an IDLE context calls [`CtxOps::start`]: `Done` moves to RUNNING
//!   at once and returns SUCCESS; `Pending` moves to STARTING and returns IN_PROGRESS, and
//!   the context later completes the start from inside [`CtxOps::progress`] with
//!   [`Ctx::set_state`] (so the transition happens inside a progress call that reports
//!   progress).
//! * `doca_ctx_stop` likewise with STOPPING / IDLE.
//! * Setters called after start get BAD_STATE: context kinds check with [`Ctx::require_idle`].
//!
//! Callbacks (state changes, task completions) are never called with a lock held.
//!
//! The progress engine ([`pe`]) and the task header ([`task`]) live here too: a context
//! points to its engine and completes its tasks, an engine progresses its contexts, a task
//! belongs to a context.

pub(crate) mod notify;
pub(crate) mod on_dev;
pub(crate) mod pe;
pub(crate) mod task;

use crate::error::{to_c, DocaError, DocaResult};
use crate::gpu::GpuShared;
use crate::sync::lock;
use crate::types::DocaData;
use pe::Pe;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use task::Task;

/// `DOCA_CTX_STATE_IDLE`.
pub const STATE_IDLE: u32 = 0;
/// `DOCA_CTX_STATE_STARTING`.
pub const STATE_STARTING: u32 = 1;
/// `DOCA_CTX_STATE_RUNNING`.
pub const STATE_RUNNING: u32 = 2;
/// `DOCA_CTX_STATE_STOPPING`.
pub const STATE_STOPPING: u32 = 3;

/// `doca_ctx_state_changed_callback_t`.
pub type StateChangedCb =
    Option<unsafe extern "C" fn(user_data: DocaData, ctx: *mut Ctx, prev: u32, next: u32)>;

/// Outcome of a start or stop request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transition {
    /// The context reached RUNNING (start) or IDLE (stop) at once.
    Done,
    /// The context is STARTING or STOPPING; a later [`CtxOps::progress`] call finishes the
    /// transition with [`Ctx::set_state`].
    Pending,
}

/// What a context kind implements. All methods are called without the context's lock held.
pub(crate) trait CtxOps: Send + Sync {
    /// Short name used in log messages ("eth_rxq", "urom_worker", ...).
    fn kind(&self) -> &'static str;
    /// Whether `doca_ctx_start` requires the context to be connected to a PE first.
    fn needs_pe(&self) -> bool {
        false
    }
    /// Called by `doca_ctx_start` while IDLE.
    fn start(&self, ctx: &Ctx) -> DocaResult<Transition>;
    /// Called by `doca_ctx_stop` while RUNNING or STARTING.
    fn stop(&self, ctx: &Ctx) -> DocaResult<Transition>;
    /// Called by `doca_pe_progress` for each connected context; returns how many things it
    /// completed (tasks, events, state transitions). Must return 0 when nothing happened.
    fn progress(&self, _ctx: &Ctx) -> u32 {
        0
    }
    /// Called by `doca_task_submit` for a task of this context (the context is RUNNING).
    /// On success the task is in flight; the context completes it later with
    /// [`Ctx::complete_task`] from inside `progress`.
    fn submit(&self, _ctx: &Ctx, _task: *mut Task) -> DocaResult<()> {
        Err(DocaError::NOT_SUPPORTED)
    }
    /// Called by `doca_pe_request_notification` for each connected context: arm a wake-up
    /// and say how the engine learns of new work (see [`notify::Wakeup`]). Default:
    /// [`Wakeup::Unknown`](notify::Wakeup::Unknown), which makes the request
    /// NOT_SUPPORTED; a kind overriding this must hand back a descriptor it keeps open
    /// while connected, or say Quiet/Ready.
    fn arm_wakeup(&self, _ctx: &Ctx) -> notify::Wakeup {
        notify::Wakeup::Unknown
    }
    /// `doca_ctx_set_datapath_on_gpu` (called while IDLE). Default: not supported.
    fn set_datapath_on_gpu(&self, _gpu: &Arc<GpuShared>) -> DocaResult<()> {
        Err(DocaError::NOT_SUPPORTED)
    }
}

struct CtxInner {
    state: u32,
    user_data: DocaData,
    state_cb: StateChangedCb,
}

/// The C `struct doca_ctx`.
pub struct Ctx {
    ops: Arc<dyn CtxOps>,
    inner: Mutex<CtxInner>,
    pe: AtomicPtr<Pe>,
    inflight: AtomicUsize,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("kind", &self.ops.kind())
            .field("state", &self.state())
            .finish()
    }
}

impl Ctx {
    /// A new IDLE context driven by `ops`.
    pub(crate) fn new(ops: Arc<dyn CtxOps>) -> Box<Ctx> {
        Box::new(Ctx {
            ops,
            inner: Mutex::new(CtxInner {
                state: STATE_IDLE,
                user_data: DocaData { u64: 0 },
                state_cb: None,
            }),
            pe: AtomicPtr::new(std::ptr::null_mut()),
            inflight: AtomicUsize::new(0),
        })
    }

    /// The context kind's operations.
    pub(crate) fn ops(&self) -> &Arc<dyn CtxOps> {
        &self.ops
    }

    /// Current state (`STATE_*`).
    pub(crate) fn state(&self) -> u32 {
        self.lock().state
    }

    /// BAD_STATE unless the context is IDLE (for setters).
    pub(crate) fn require_idle(&self) -> DocaResult<()> {
        self.idle_or(DocaError::BAD_STATE)
    }

    /// `err` unless the context is IDLE (each kind's destroy says which error).
    pub(crate) fn idle_or(&self, err: DocaError) -> DocaResult<()> {
        if self.state() == STATE_IDLE {
            Ok(())
        } else {
            Err(err)
        }
    }

    /// The context as a C handle (its address; the box that holds it keeps it in place).
    pub(crate) fn handle(&self) -> *mut Ctx {
        self as *const Ctx as *mut Ctx
    }

    /// BAD_STATE unless the context is RUNNING.
    pub(crate) fn require_running(&self) -> DocaResult<()> {
        if self.state() == STATE_RUNNING {
            Ok(())
        } else {
            Err(DocaError::BAD_STATE)
        }
    }

    /// The context's user data.
    pub(crate) fn user_data(&self) -> DocaData {
        self.lock().user_data
    }

    /// The PE this context is connected to, or null.
    pub(crate) fn pe(&self) -> *mut Pe {
        self.pe.load(Ordering::Acquire)
    }

    pub(crate) fn set_pe(&self, pe: *mut Pe) {
        self.pe.store(pe, Ordering::Release);
    }

    /// Tasks submitted and not yet completed.
    pub(crate) fn inflight(&self) -> usize {
        self.inflight.load(Ordering::Acquire)
    }

    /// Moves to `next` and reports the change to the state-changed callback. Context kinds
    /// call this from `progress` to finish a pending transition.
    pub(crate) fn set_state(&self, next: u32) {
        let (prev, cb, ud) = {
            let mut g = self.lock();
            let prev = g.state;
            g.state = next;
            (prev, g.state_cb, g.user_data)
        };
        if prev != next {
            if let Some(cb) = cb {
                // SAFETY: the application registered `cb` with this signature; the context
                // pointer stays valid for the duration of the call.
                unsafe { cb(ud, self as *const Ctx as *mut Ctx, prev, next) };
            }
        }
    }

    /// Finishes an in-flight task: records `status`, then calls its completion callback
    /// with the task's and the context's user data.
    ///
    /// `task` must be a task that was submitted to this context and not yet completed;
    /// context kinds only pass pointers they accepted in [`CtxOps::submit`], which
    /// `doca_task_submit` validated, so this stays a safe function of the runtime's
    /// internal API.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub(crate) fn complete_task(&self, task: *mut Task, status: DocaResult<()>) {
        self.inflight.fetch_sub(1, Ordering::AcqRel);
        let ud = self.user_data();
        // SAFETY: `task` was submitted to this context and is still owned by the runtime
        // until its completion callback runs.
        unsafe { Task::complete(task, to_c(status), ud) };
    }

    pub(crate) fn note_submitted(&self) {
        self.inflight.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn note_completed_without_callback(&self) {
        self.inflight.fetch_sub(1, Ordering::AcqRel);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CtxInner> {
        lock(&self.inner)
    }

    /// Sets the user data passed to the state-changed callback and task completions.
    pub(crate) fn set_user_data(&self, user_data: DocaData) {
        self.lock().user_data = user_data;
    }

    /// Sets the state-changed callback (IDLE only).
    pub(crate) fn set_state_changed_cb(&self, cb: StateChangedCb) -> DocaResult<()> {
        self.require_idle()?;
        self.lock().state_cb = cb;
        Ok(())
    }

    /// Puts the context's data path on `gpu` (IDLE only; NOT_SUPPORTED for kinds without a
    /// GPU data path).
    pub(crate) fn set_datapath_on_gpu(&self, gpu: &Arc<GpuShared>) -> DocaResult<()> {
        self.require_idle()?;
        self.ops.set_datapath_on_gpu(gpu)
    }

    /// `doca_ctx_start`: RUNNING at once (Ok) or STARTING (IN_PROGRESS); see the module
    /// documentation.
    pub(crate) fn start(&self) -> DocaResult<()> {
        self.require_idle()?;
        if self.ops.needs_pe() && self.pe().is_null() {
            return Err(DocaError::BAD_STATE);
        }
        match self.ops.start(self)? {
            Transition::Done => {
                self.set_state(STATE_RUNNING);
                Ok(())
            }
            Transition::Pending => {
                self.set_state(STATE_STARTING);
                Err(DocaError::IN_PROGRESS)
            }
        }
    }

    /// `doca_ctx_stop`: IDLE at once (Ok) or STOPPING (IN_PROGRESS).
    pub(crate) fn stop(&self) -> DocaResult<()> {
        let s = self.state();
        if s != STATE_RUNNING && s != STATE_STARTING {
            return Err(DocaError::BAD_STATE);
        }
        match self.ops.stop(self)? {
            Transition::Done => {
                self.set_state(STATE_IDLE);
                Ok(())
            }
            Transition::Pending => {
                self.set_state(STATE_STOPPING);
                Err(DocaError::IN_PROGRESS)
            }
        }
    }
}
