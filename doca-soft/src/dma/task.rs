//! `struct doca_dma_task_memcpy`: a task header followed by the source and destination
//! buffers. Running it copies the source's data to the end of the destination's data and
//! grows the destination's data length by that much.

use super::{copy, DmaInner};
use crate::buf::Buf;
use crate::ctx::task::{Task, TaskCompletionCb};
use crate::ctx::Ctx;
use crate::error::{DocaError, DocaResult};
use crate::types::DocaData;
use std::sync::Weak;

/// `doca_dma_task_memcpy_completion_cb_t`.
pub type MemcpyCb = Option<
    unsafe extern "C" fn(task: *mut MemcpyTask, task_user_data: DocaData, ctx_user_data: DocaData),
>;

/// The C `struct doca_dma_task_memcpy` (starts with its `struct doca_task`).
#[repr(C)]
pub struct MemcpyTask {
    task: Task,
    src: *const Buf,
    dst: *mut Buf,
    ctx: Weak<DmaInner>,
}

unsafe fn free_memcpy(t: *mut Task) {
    // SAFETY: allocated by Box (the C API's new_handle) as a MemcpyTask; freed once.
    let b = unsafe { Box::from_raw(t as *mut MemcpyTask) };
    if let Some(c) = b.ctx.upgrade() {
        c.task_freed();
    }
}

impl MemcpyTask {
    pub(crate) fn new(ctx: &Ctx, inner: Weak<DmaInner>) -> MemcpyTask {
        MemcpyTask {
            task: Task::new(ctx, free_memcpy),
            src: std::ptr::null(),
            dst: std::ptr::null_mut(),
            ctx: inner,
        }
    }

    /// Sets both buffers and the user data.
    pub(crate) fn init(&mut self, src: *const Buf, dst: *mut Buf, user_data: DocaData) {
        self.src = src;
        self.dst = dst;
        self.task.set_user_data(user_data);
    }

    pub(crate) fn src(&self) -> *const Buf {
        self.src
    }

    pub(crate) fn dst(&self) -> *mut Buf {
        self.dst
    }

    pub(crate) fn set_src(&mut self, b: *const Buf) {
        self.src = b;
    }

    pub(crate) fn set_dst(&mut self, b: *mut Buf) {
        self.dst = b;
    }

    /// The generic task.
    pub(crate) fn as_task(&mut self) -> *mut Task {
        &mut self.task
    }
}

/// Sets the callback the completion runs (success or error callback of the context).
///
/// # Safety
/// `t` is a live memcpy task.
pub(crate) unsafe fn set_completion(t: *mut Task, cb: MemcpyCb) {
    // SAFETY: the typed callback differs from the generic one only in the pointee type of
    // its first argument (a MemcpyTask starts with its Task).
    let cb = unsafe { std::mem::transmute::<MemcpyCb, TaskCompletionCb>(cb) };
    // SAFETY: caller contract.
    unsafe { (*t).set_cb(cb) };
}

/// Runs the copy of a submitted task. INVALID_VALUE (the submit fails) for missing buffers
/// or a destination without room; a failed copy is the task's error status.
///
/// # Safety
/// `t` is a live memcpy task whose buffers are live.
pub(crate) unsafe fn run(t: *mut Task) -> DocaResult<()> {
    // SAFETY: caller contract.
    let m = unsafe { &mut *(t as *mut MemcpyTask) };
    // SAFETY: buffers the program gave the task (caller contract); NULL is refused.
    let (src, dst) = unsafe {
        (
            m.src.as_ref().ok_or(DocaError::INVALID_VALUE)?,
            m.dst.as_mut().ok_or(DocaError::INVALID_VALUE)?,
        )
    };
    let (sdata, n) = src.data();
    let (head, len) = dst.head_len();
    let (ddata, dlen) = dst.data();
    let tail = ddata as usize + dlen;
    if tail + n > head as usize + len {
        sdk_err!(
            "dma",
            "memcpy: {n} bytes do not fit after the destination's {dlen} bytes of data"
        );
        return Err(DocaError::INVALID_VALUE);
    }
    copy::copy(tail as u64, sdata as u64, n)?;
    dst.data_len += n;
    Ok(())
}
