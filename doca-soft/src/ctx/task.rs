//! `doca_task`: the header every task kind starts with, and the generic task calls.
//!
//! A task kind (say `doca_urom_worker_cmd_task`) is a `#[repr(C)]` struct whose first field
//! is a [`Task`], so a pointer to it is also a `struct doca_task *`.

use super::Ctx;
use crate::error::{DocaError, DocaResult, SUCCESS};
use crate::types::DocaData;

/// Completion callback of any task kind: `(task, task_user_data, ctx_user_data)`.
pub type TaskCompletionCb = Option<
    unsafe extern "C" fn(task: *mut Task, task_user_data: DocaData, ctx_user_data: DocaData),
>;

/// The C `struct doca_task`: the common header of every task kind.
#[repr(C)]
pub struct Task {
    ctx: *const Ctx,
    user_data: DocaData,
    status: u32,
    cb: TaskCompletionCb,
    free_fn: unsafe fn(*mut Task),
}

impl Task {
    /// A header for a task of `ctx`; `free_fn` releases the whole task-kind struct.
    pub(crate) fn new(ctx: *const Ctx, free_fn: unsafe fn(*mut Task)) -> Task {
        Task {
            ctx,
            user_data: DocaData { u64: 0 },
            status: SUCCESS,
            cb: None,
            free_fn,
        }
    }

    /// The owning context.
    pub(crate) fn ctx(&self) -> *const Ctx {
        self.ctx
    }

    /// Sets the completion callback (task kinds transmute their typed callback: all DOCA
    /// task callbacks share this ABI).
    pub(crate) fn set_cb(&mut self, cb: TaskCompletionCb) {
        self.cb = cb;
    }

    /// Status recorded at completion (`doca_error_t`).
    pub(crate) fn status(&self) -> u32 {
        self.status
    }

    /// The task's user data (passed to its completion callback).
    pub(crate) fn user_data(&self) -> DocaData {
        self.user_data
    }

    /// Sets the task's user data.
    pub(crate) fn set_user_data(&mut self, user_data: DocaData) {
        self.user_data = user_data;
    }

    /// Submits the task to its context (which must be RUNNING); on success it is in flight
    /// until the context completes it.
    ///
    /// # Safety
    /// `task` points to a live task whose context is live (contexts refuse destruction
    /// while tasks are allocated or in flight).
    pub(crate) unsafe fn submit(task: *mut Task) -> DocaResult<()> {
        // SAFETY: caller contract.
        let t = unsafe { &*task };
        // SAFETY: caller contract (the task's context outlives it).
        let ctx = unsafe { t.ctx.as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
        ctx.require_running()?;
        ctx.note_submitted();
        let r = ctx.ops().submit(ctx, task);
        if r.is_err() {
            ctx.undo_submitted();
        }
        r
    }

    /// Releases the task through its kind's free function.
    ///
    /// # Safety
    /// `task` points to a live task that is not in flight; it is not used afterwards.
    pub(crate) unsafe fn free(task: *mut Task) {
        // SAFETY: caller contract; the task kind's free function owns the allocation.
        unsafe {
            let f = (*task).free_fn;
            f(task)
        }
    }

    /// Records `status` and runs the completion callback.
    ///
    /// # Safety
    /// `task` points to a live task; the callback may free it, so it is not touched after.
    pub(crate) unsafe fn complete(task: *mut Task, status: u32, ctx_user_data: DocaData) {
        // SAFETY: per contract, `task` is live until the callback runs.
        let (cb, ud) = unsafe {
            (*task).status = status;
            ((*task).cb, (*task).user_data)
        };
        if let Some(cb) = cb {
            // SAFETY: the application registered this callback for this task.
            unsafe { cb(task, ud, ctx_user_data) };
        }
    }
}
