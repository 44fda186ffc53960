//! `doca_pe.h`: the progress engine, and the calls every task kind shares.

use super::toolkit::take_handle;
use super::toolkit::{
    call, call_ptr, call_value, handle, handle_mut, new_handle, non_null, write_out,
};
use crate::ctx::Ctx;
use crate::error::DocaError;
use crate::types::DocaData;

pub use crate::ctx::pe::Pe;
pub use crate::ctx::task::{Task, TaskCompletionCb};

/// `doca_pe_create(&pe)`.
#[no_mangle]
pub unsafe extern "C" fn doca_pe_create(pe: *mut *mut Pe) -> u32 {
    call("doca_pe_create", || {
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(pe, Pe::new()) }
    })
}

/// `doca_pe_destroy(pe)`: IN_USE while contexts are connected.
#[no_mangle]
pub unsafe extern "C" fn doca_pe_destroy(pe: *mut Pe) -> u32 {
    call("doca_pe_destroy", || {
        // SAFETY: C API contract (null or a PE from doca_pe_create, not destroyed).
        unsafe { handle(pe) }?.ensure_unused()?;
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(pe) }?);
        Ok(())
    })
}

/// `doca_pe_connect_ctx(pe, ctx)`: the context must be IDLE and connected nowhere else.
#[no_mangle]
pub unsafe extern "C" fn doca_pe_connect_ctx(pe: *mut Pe, ctx: *mut Ctx) -> u32 {
    call("doca_pe_connect_ctx", || {
        // SAFETY: C API contract (null or live, both).
        unsafe { handle(pe)?.connect(handle(ctx)?) }
    })
}

/// `doca_pe_progress(pe)`: 1 when some connected context completed something, else 0.
#[no_mangle]
pub unsafe extern "C" fn doca_pe_progress(pe: *mut Pe) -> u8 {
    call_value("doca_pe_progress", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(pe) }.map_or(0, |p| u8::from(p.progress() > 0))
    })
}

/// `doca_pe_get_notification_handle(pe, &handle)`: a descriptor that becomes readable
/// when the engine has work, once armed with `doca_pe_request_notification`.
#[no_mangle]
pub unsafe extern "C" fn doca_pe_get_notification_handle(pe: *const Pe, out: *mut i32) -> u32 {
    call("doca_pe_get_notification_handle", || {
        non_null(out)?;
        // SAFETY: C API contract (null or live; null or writable).
        let fd = unsafe { handle(pe) }?.notification_handle()?;
        // SAFETY: as above.
        unsafe { write_out(out, fd) }
    })
}

/// `doca_pe_request_notification(pe)`: arms the handle; NOT_SUPPORTED when a connected
/// context kind cannot notify (the application keeps polling).
#[no_mangle]
pub unsafe extern "C" fn doca_pe_request_notification(pe: *mut Pe) -> u32 {
    call("doca_pe_request_notification", || {
        // SAFETY: C API contract.
        unsafe { handle(pe) }?.request_notification()
    })
}

/// `doca_pe_clear_notification(pe, handle)`: clears the handle before the next progress.
#[no_mangle]
pub unsafe extern "C" fn doca_pe_clear_notification(pe: *mut Pe, handle_fd: i32) -> u32 {
    call("doca_pe_clear_notification", || {
        // SAFETY: C API contract.
        unsafe { handle(pe) }?.clear_notification(handle_fd)
    })
}

/// `doca_task_submit(task)`: BAD_STATE unless the task's context is RUNNING.
#[no_mangle]
pub unsafe extern "C" fn doca_task_submit(task: *mut Task) -> u32 {
    call("doca_task_submit", || {
        non_null(task)?;
        // SAFETY: C API contract: a live task, whose context outlives it.
        unsafe { Task::submit(task) }
    })
}

/// `doca_task_try_submit(task)`: as `doca_task_submit` (the runtime never defers).
#[no_mangle]
pub unsafe extern "C" fn doca_task_try_submit(task: *mut Task) -> u32 {
    call("doca_task_try_submit", || {
        non_null(task)?;
        // SAFETY: C API contract: a live task, whose context outlives it.
        unsafe { Task::submit(task) }
    })
}

/// `doca_task_get_status(task)`: the status recorded at completion.
#[no_mangle]
pub unsafe extern "C" fn doca_task_get_status(task: *const Task) -> u32 {
    call_value("doca_task_get_status", DocaError::UNEXPECTED.0, || {
        // SAFETY: C API contract.
        unsafe { handle(task) }.map_or(DocaError::INVALID_VALUE.0, Task::status)
    })
}

/// `doca_task_set_user_data(task, user_data)` (nothing for a NULL task).
#[no_mangle]
pub unsafe extern "C" fn doca_task_set_user_data(task: *mut Task, user_data: DocaData) {
    call_value("doca_task_set_user_data", (), || {
        // SAFETY: C API contract.
        if let Ok(t) = unsafe { handle_mut(task) } {
            t.set_user_data(user_data);
        }
    })
}

/// `doca_task_get_user_data(task)` (zero for a NULL task).
#[no_mangle]
pub unsafe extern "C" fn doca_task_get_user_data(task: *const Task) -> DocaData {
    call_value("doca_task_get_user_data", DocaData { u64: 0 }, || {
        // SAFETY: C API contract.
        unsafe { handle(task) }.map_or(DocaData { u64: 0 }, Task::user_data)
    })
}

/// `doca_task_get_ctx(task)` (NULL for a NULL task).
#[no_mangle]
pub unsafe extern "C" fn doca_task_get_ctx(task: *const Task) -> *mut Ctx {
    call_ptr("doca_task_get_ctx", || {
        // SAFETY: C API contract.
        Ok(unsafe { handle(task) }?.ctx() as *mut Ctx)
    })
}

/// `doca_task_free(task)` (a task that is not in flight; nothing for NULL).
#[no_mangle]
pub unsafe extern "C" fn doca_task_free(task: *mut Task) {
    call_value("doca_task_free", (), || {
        if !task.is_null() {
            // SAFETY: C API contract: a live task not in flight, given up by the caller.
            unsafe { Task::free(task) };
        }
    })
}
