//! The few `doca_ctx` calls the UROM contexts (service, worker, domain) share: connecting
//! to a progress engine, reading the state, starting and stopping.

use crate::error::{check, DocaError, Result};
use doca_gpunetio::ProgressEngine;
use doca_sys as sys;

pub(crate) use sys::doca_ctx_states as State;

/// Connects `ctx` to `pe` (the context must be IDLE and `pe` must outlive it: the owner
/// keeps a clone of the engine).
pub(crate) fn connect(pe: &ProgressEngine, ctx: *mut sys::doca_ctx) -> Result<()> {
    // SAFETY: the engine is live while `pe` is; the caller owns the live context.
    check("doca_pe_connect_ctx", unsafe {
        sys::doca_pe_connect_ctx(pe.as_raw(), ctx)
    })
}

/// The state of a live context (IDLE if it cannot be read).
pub(crate) fn state(ctx: *mut sys::doca_ctx) -> State {
    let mut s = State::DOCA_CTX_STATE_IDLE;
    // SAFETY: the caller owns the live context; `s` is a valid out-pointer.
    unsafe { sys::doca_ctx_get_state(ctx, &mut s) };
    s
}

/// Starts a context; `Ok(true)` when RUNNING at once, `Ok(false)` when the start goes on
/// through progress (IN_PROGRESS).
pub(crate) fn start(ctx: *mut sys::doca_ctx) -> Result<bool> {
    // SAFETY: the caller owns the live, configured context.
    let rc = unsafe { sys::doca_ctx_start(ctx) };
    if rc == DocaError::IN_PROGRESS.raw() {
        return Ok(false);
    }
    check("doca_ctx_start", rc).map(|_| true)
}

/// Requests a stop; `Ok(())` also when the stop goes on through progress (IN_PROGRESS).
pub(crate) fn request_stop(ctx: *mut sys::doca_ctx) -> Result<()> {
    // SAFETY: the caller owns the live context.
    let rc = unsafe { sys::doca_ctx_stop(ctx) };
    if rc == DocaError::IN_PROGRESS.raw() {
        return Ok(());
    }
    check("doca_ctx_stop", rc)
}
