//! `doca_ctx.h`: the state machine every context shares (start, stop, state, user data,
//! the GPU data path).

use std::ffi::c_void;

use super::toolkit::{call, handle, non_null, write_out};
pub use crate::ctx::{Ctx, StateChangedCb};
pub use crate::ctx::{STATE_IDLE, STATE_RUNNING, STATE_STARTING, STATE_STOPPING};
use crate::gpu::Gpu;
use crate::types::DocaData;

/// `doca_ctx_start(ctx)`: SUCCESS when RUNNING at once, IN_PROGRESS when the context
/// finishes starting inside a later `doca_pe_progress`.
#[no_mangle]
pub unsafe extern "C" fn doca_ctx_start(ctx: *mut Ctx) -> u32 {
    call("doca_ctx_start", || {
        // SAFETY: C API contract (null or a live context).
        unsafe { handle(ctx) }?.start()
    })
}

/// `doca_ctx_stop(ctx)`: SUCCESS when IDLE at once, IN_PROGRESS when stopping goes on in
/// `doca_pe_progress`; BAD_STATE unless RUNNING or STARTING.
#[no_mangle]
pub unsafe extern "C" fn doca_ctx_stop(ctx: *mut Ctx) -> u32 {
    call("doca_ctx_stop", || {
        // SAFETY: C API contract.
        unsafe { handle(ctx) }?.stop()
    })
}

/// `doca_ctx_get_state(ctx, &state)`.
#[no_mangle]
pub unsafe extern "C" fn doca_ctx_get_state(ctx: *const Ctx, state: *mut u32) -> u32 {
    call("doca_ctx_get_state", || {
        // SAFETY: C API contract (null or live; null or writable).
        unsafe { write_out(state, handle(ctx)?.state()) }
    })
}

/// `doca_ctx_set_state_changed_cb(ctx, cb)` (IDLE only).
#[no_mangle]
pub unsafe extern "C" fn doca_ctx_set_state_changed_cb(ctx: *mut Ctx, cb: StateChangedCb) -> u32 {
    call("doca_ctx_set_state_changed_cb", || {
        // SAFETY: C API contract.
        unsafe { handle(ctx) }?.set_state_changed_cb(cb)
    })
}

/// `doca_ctx_set_user_data(ctx, user_data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_ctx_set_user_data(ctx: *mut Ctx, user_data: DocaData) -> u32 {
    call("doca_ctx_set_user_data", || {
        // SAFETY: C API contract.
        unsafe { handle(ctx) }?.set_user_data(user_data);
        Ok(())
    })
}

/// `doca_ctx_get_user_data(ctx, &user_data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_ctx_get_user_data(ctx: *const Ctx, user_data: *mut DocaData) -> u32 {
    call("doca_ctx_get_user_data", || {
        // SAFETY: C API contract.
        unsafe { write_out(user_data, handle(ctx)?.user_data()) }
    })
}

/// `doca_ctx_get_num_inflight_tasks(ctx, &num)`.
#[no_mangle]
pub unsafe extern "C" fn doca_ctx_get_num_inflight_tasks(ctx: *const Ctx, num: *mut usize) -> u32 {
    call("doca_ctx_get_num_inflight_tasks", || {
        // SAFETY: C API contract.
        unsafe { write_out(num, handle(ctx)?.inflight()) }
    })
}

/// `doca_ctx_set_datapath_on_gpu(ctx, gpu)` (IDLE only; NOT_SUPPORTED for contexts without
/// a GPU data path).
#[no_mangle]
pub unsafe extern "C" fn doca_ctx_set_datapath_on_gpu(ctx: *mut Ctx, gpu: *mut c_void) -> u32 {
    call("doca_ctx_set_datapath_on_gpu", || {
        // SAFETY: C API contract.
        let c = unsafe { handle(ctx) }?;
        non_null(gpu)?;
        // SAFETY: C API contract: a non-null `gpu` is a live `struct doca_gpu`.
        let g = unsafe { handle(gpu as *const Gpu) }?;
        c.set_datapath_on_gpu(g.shared())
    })
}
