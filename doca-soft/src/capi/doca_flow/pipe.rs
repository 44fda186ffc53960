//! `doca_flow.h`, pipes: create, destroy, miss update, resize, hash and dump.

use std::ffi::CString;

use super::{match_bytes, opt};
use crate::capi::toolkit::{call, call_value, call_void, handle, non_null, write_out};
use crate::error::DocaError;
use crate::flow::cfg::PipeCfg;
use crate::flow::handles::Resize;
use crate::flow::state::{run_callbacks, state};
use crate::flow::sys::*;

/// `doca_flow_pipe_create(cfg, fwd, fwd_miss, &pipe)` (`_v1`): BASIC, CONTROL and HASH.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_create_v1(
    cfg: *const PipeCfg,
    fwd: *const doca_flow_fwd_v1,
    fwd_miss: *const doca_flow_fwd_v1,
    out: *mut *mut doca_flow_pipe,
) -> u32 {
    call("doca_flow_pipe_create", || {
        non_null(out)?;
        // SAFETY: C API contract (null or live; null or valid structs).
        let (c, fwd, miss) = unsafe { (handle(cfg)?, opt(fwd), opt(fwd_miss)) };
        let p = state().create_pipe(c, fwd, miss)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, p.cast()) }
    })
}

/// `doca_flow_pipe_destroy(pipe)`: removes the pipe and its entries (an unknown pipe is
/// logged and ignored).
#[no_mangle]
pub extern "C" fn doca_flow_pipe_destroy(pipe: *mut doca_flow_pipe) {
    call_value("doca_flow_pipe_destroy", (), || {
        let cbs = state().destroy_pipe(pipe as usize);
        run_callbacks(cbs);
    })
}

/// `doca_flow_pipe_update_miss(pipe, fwd_miss)` (`_v1`).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_update_miss_v1(
    pipe: *mut doca_flow_pipe,
    fwd_miss: *const doca_flow_fwd_v1,
) -> u32 {
    call("doca_flow_pipe_update_miss", || {
        non_null(pipe)?;
        // SAFETY: C API contract.
        let f = unsafe { handle(fwd_miss) }?;
        state().update_miss(pipe as usize, f)
    })
}

/// `doca_flow_pipe_resize(pipe, congestion, nr_cb, relocate_cb)`: NOT_PERMITTED unless the
/// pipe is resizable; completes in the next `doca_flow_entries_process` (RESIZED).
#[no_mangle]
pub extern "C" fn doca_flow_pipe_resize(
    pipe: *mut doca_flow_pipe,
    new_congestion_level: u8,
    nr_entries_changed_cb: doca_flow_pipe_resize_nr_entries_changed_cb,
    entry_relocation_cb: doca_flow_pipe_resize_entry_relocate_cb,
) -> u32 {
    call("doca_flow_pipe_resize", || {
        non_null(pipe)?;
        let r = Resize {
            nr_entries_changed: nr_entries_changed_cb,
            relocate: entry_relocation_cb,
            new_nr_entries: 0,
        };
        state().resize_pipe(pipe as usize, new_congestion_level, r)
    })
}

/// `doca_flow_pipe_calc_hash(pipe, match, &hash)` (`_v1`): the hash of `match`'s values of
/// the pipe's template (a HASH pipe's slot is this modulo its entries).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_calc_hash_v1(
    pipe: *mut doca_flow_pipe,
    m: *const doca_flow_match_v1,
    hash: *mut u32,
) -> u32 {
    call("doca_flow_pipe_calc_hash", || {
        non_null(pipe)?;
        non_null(hash)?;
        // SAFETY: C API contract.
        let m = unsafe { match_bytes(m) }.ok_or(DocaError::INVALID_VALUE)?;
        let h = state().calc_hash(pipe as usize, m)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(hash, h) }
    })
}

/// `doca_flow_pipe_dump(pipe, f)`: one line describing the pipe.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_dump(pipe: *mut doca_flow_pipe, f: *mut libc::FILE) {
    call_void("doca_flow_pipe_dump", || {
        non_null(pipe)?;
        non_null(f)?;
        let text = state().describe_pipe(pipe as usize)?;
        let c = CString::new(text).map_err(|_| DocaError::UNEXPECTED)?;
        // SAFETY: `f` is an open FILE (C API contract); `c` is NUL-terminated.
        unsafe { libc::fputs(c.as_ptr(), f) };
        Ok(())
    })
}
