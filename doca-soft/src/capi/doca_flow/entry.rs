//! `doca_flow.h`, entries: the add and update calls of each pipe type (BASIC, CONTROL,
//! HASH; LPM, ACL and ordered lists refused), removal, queue processing, status and aging.

use std::ffi::{c_int, c_void};

use super::{action_bytes, descs_of, match_bytes, not_supported, opt};
use crate::capi::toolkit::{call, call_value, non_null, write_out};
use crate::error::DocaResult;
use crate::flow::entry::EntryArgs;
use crate::flow::handles::FlowPort;
use crate::flow::state::{run_callbacks, state};
use crate::flow::sys::*;

/// The arguments of a BASIC or HASH entry call: the pipe's action set `action_idx` with the
/// entry's values, no mask and no descriptors.
///
/// # Safety
/// Each non-null struct pointer is valid for the call.
unsafe fn indexed_args<'a>(
    pipe_queue: u16,
    action_idx: u8,
    actions: *const doca_flow_actions_v1,
    monitor: *const doca_flow_monitor_v1,
    fwd: *const doca_flow_fwd_v1,
    flags: u32,
    usr_ctx: *mut c_void,
) -> EntryArgs<'a> {
    // SAFETY: caller contract.
    unsafe {
        EntryArgs {
            pipe_queue,
            action_idx,
            actions: action_bytes(actions),
            actions_mask: None,
            descs: Vec::new(),
            monitor: opt(monitor),
            fwd: opt(fwd),
            flags,
            usr_ctx,
        }
    }
}

/// Writes a new entry handle to an optional out-parameter.
///
/// # Safety
/// A non-null `out` is writable.
unsafe fn entry_out(
    out: *mut *mut doca_flow_pipe_entry,
    e: *mut crate::flow::handles::EntryHandle,
) -> DocaResult<()> {
    if !out.is_null() {
        // SAFETY: caller contract.
        unsafe { write_out(out, e.cast()) }?;
    }
    Ok(())
}

/// `doca_flow_pipe_basic_add_entry` (`_v1`): the pipe's template filled with the match's
/// values, the pipe's actions `action_idx` with the entry's values; completes as ADD.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_basic_add_entry_v1(
    pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    m: *const doca_flow_match_v1,
    action_idx: u8,
    actions: *const doca_flow_actions_v1,
    monitor: *const doca_flow_monitor_v1,
    fwd: *const doca_flow_fwd_v1,
    flags: u32,
    usr_ctx: *mut c_void,
    out: *mut *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_basic_add_entry", || {
        non_null(pipe)?;
        // SAFETY: C API contract (each struct null or valid for the call).
        let args = unsafe {
            indexed_args(
                pipe_queue, action_idx, actions, monitor, fwd, flags, usr_ctx,
            )
        };
        // SAFETY: as above.
        let m = unsafe { match_bytes(m) };
        let e = state().add_basic_entry(pipe as usize, m, args)?;
        // SAFETY: C API contract.
        unsafe { entry_out(out, e) }
    })
}

/// `doca_flow_pipe_basic_update_entry` (`_v1`): new actions, monitor or forward; completes
/// as UPD.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_basic_update_entry_v1(
    pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    action_idx: u8,
    actions: *const doca_flow_actions_v1,
    monitor: *const doca_flow_monitor_v1,
    fwd: *const doca_flow_fwd_v1,
    flags: u32,
    entry: *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_basic_update_entry", || {
        non_null(pipe)?;
        non_null(entry)?;
        // SAFETY: C API contract.
        let args = unsafe {
            indexed_args(
                pipe_queue,
                action_idx,
                actions,
                monitor,
                fwd,
                flags,
                std::ptr::null_mut(),
            )
        };
        state().update_basic_entry(pipe as usize, entry as usize, args)
    })
}

/// `doca_flow_pipe_control_add_entry` (`_v1`, 13 arguments): match, mask, actions with mask
/// and descriptors, monitor, priority (lower wins) and forward (required); match
/// conditions are NOT_SUPPORTED.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_control_add_entry_v1(
    pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    m: *const doca_flow_match_v1,
    mask: *const doca_flow_match_v1,
    condition: *const doca_flow_match_condition_v1,
    actions: *const doca_flow_actions_v1,
    actions_mask: *const doca_flow_actions_v1,
    action_descs: *const doca_flow_action_descs_v1,
    monitor: *const doca_flow_monitor_v1,
    priority: u32,
    fwd: *const doca_flow_fwd_v1,
    usr_ctx: *mut c_void,
    out: *mut *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_control_add_entry", || {
        non_null(pipe)?;
        // SAFETY: C API contract (each struct null or valid for the call).
        let args = unsafe {
            EntryArgs {
                pipe_queue,
                action_idx: 0,
                actions: action_bytes(actions),
                actions_mask: action_bytes(actions_mask),
                descs: descs_of(action_descs)?,
                monitor: opt(monitor),
                fwd: opt(fwd),
                flags: 0,
                usr_ctx,
            }
        };
        // SAFETY: as above.
        let (m, k) = unsafe { (match_bytes(m), match_bytes(mask)) };
        let e =
            state().add_control_entry(pipe as usize, m, k, !condition.is_null(), priority, args)?;
        // SAFETY: C API contract.
        unsafe { entry_out(out, e) }
    })
}

/// `doca_flow_pipe_hash_add_entry` (`_v1`): the entry at slot `entry_index`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_hash_add_entry_v1(
    pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    entry_index: u32,
    action_idx: u8,
    actions: *const doca_flow_actions_v1,
    monitor: *const doca_flow_monitor_v1,
    fwd: *const doca_flow_fwd_v1,
    flags: u32,
    usr_ctx: *mut c_void,
    out: *mut *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_hash_add_entry", || {
        non_null(pipe)?;
        // SAFETY: C API contract.
        let args = unsafe {
            indexed_args(
                pipe_queue, action_idx, actions, monitor, fwd, flags, usr_ctx,
            )
        };
        let e = state().add_hash_entry(pipe as usize, entry_index, args)?;
        // SAFETY: C API contract.
        unsafe { entry_out(out, e) }
    })
}

/// Entry calls of pipe types the runtime cannot create: INVALID_VALUE for NULL, else
/// NOT_SUPPORTED (logged).
fn unsupported_entry(pipe: *mut doca_flow_pipe, what: &str) -> DocaResult<()> {
    non_null(pipe)?;
    not_supported(what)
}

/// `doca_flow_pipe_lpm_add_entry` (`_v1`): NOT_SUPPORTED.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_lpm_add_entry_v1(
    _pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    _m: *const doca_flow_match_v1,
    _mask: *const doca_flow_match_v1,
    _action_idx: u8,
    _actions: *const doca_flow_actions_v1,
    _monitor: *const doca_flow_monitor_v1,
    _fwd: *const doca_flow_fwd_v1,
    _flags: u32,
    _usr_ctx: *mut c_void,
    _out: *mut *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_lpm_add_entry", || {
        unsupported_entry(pipe, "LPM entries")
    })
}

/// `doca_flow_pipe_lpm_update_entry` (`_v1`): NOT_SUPPORTED.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_lpm_update_entry_v1(
    _pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    _action_idx: u8,
    _actions: *const doca_flow_actions_v1,
    _monitor: *const doca_flow_monitor_v1,
    _fwd: *const doca_flow_fwd_v1,
    _flags: u32,
    _entry: *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_lpm_update_entry", || {
        unsupported_entry(pipe, "LPM entries")
    })
}

/// `doca_flow_pipe_acl_add_entry` (`_v1`): NOT_SUPPORTED.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_acl_add_entry_v1(
    _pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    _m: *const doca_flow_match_v1,
    _mask: *const doca_flow_match_v1,
    _action_idx: u8,
    _actions: *const doca_flow_actions_v1,
    _priority: u32,
    _fwd: *const doca_flow_fwd_v1,
    _flags: u32,
    _usr_ctx: *mut c_void,
    _out: *mut *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_acl_add_entry", || {
        unsupported_entry(pipe, "ACL entries")
    })
}

/// `doca_flow_pipe_acl_update_entry` (`_v1`): NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_acl_update_entry_v1(
    _pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    _action_idx: u8,
    _actions: *const doca_flow_actions_v1,
    _fwd: *const doca_flow_fwd_v1,
    _flags: u32,
    _entry: *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_acl_update_entry", || {
        unsupported_entry(pipe, "ACL entries")
    })
}

/// `doca_flow_pipe_ordered_list_add_entry` (`_v1`): NOT_SUPPORTED.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_ordered_list_add_entry_v1(
    _pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    _idx: u32,
    _list: *const doca_flow_ordered_list_v1,
    _fwd: *const doca_flow_fwd_v1,
    _flags: u32,
    _user_ctx: *mut c_void,
    _out: *mut *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_ordered_list_add_entry", || {
        unsupported_entry(pipe, "ordered-list entries")
    })
}

/// `doca_flow_pipe_remove_entry(pipe_queue, flags, entry)`: stops matching now; the DEL
/// completes with the next processing of `pipe_queue`. NOT_FOUND for an unknown or removed
/// entry.
#[no_mangle]
pub extern "C" fn doca_flow_pipe_remove_entry(
    pipe_queue: u16,
    flags: u32,
    entry: *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_remove_entry", || {
        non_null(entry)?;
        state().remove_entry(pipe_queue, flags, entry as usize)
    })
}

/// `doca_flow_entries_process(port, pipe_queue, timeout, max)`: completes up to `max` (0:
/// all) pending operations of the queue and runs their callbacks (completions are immediate,
/// so the timeout is never waited); delivers pipe events; arms the port.
#[no_mangle]
pub extern "C" fn doca_flow_entries_process(
    port: *mut FlowPort,
    pipe_queue: u16,
    _timeout: u64,
    max_processed_entries: u32,
) -> u32 {
    call("doca_flow_entries_process", || {
        non_null(port)?;
        let (cbs, free) = state().process(port as usize, pipe_queue, max_processed_entries)?;
        run_callbacks(cbs);
        let mut st = state();
        for e in free {
            st.free_entry(e);
        }
        Ok(())
    })
}

/// `doca_flow_pipe_entry_get_status(entry)`: IN_PROCESS until processed, then SUCCESS;
/// ERROR for an unknown entry.
#[no_mangle]
pub extern "C" fn doca_flow_pipe_entry_get_status(entry: *mut doca_flow_pipe_entry) -> u32 {
    call_value(
        "doca_flow_pipe_entry_get_status",
        DOCA_FLOW_ENTRY_STATUS_ERROR,
        || state().entry_status(entry as usize),
    )
}

/// `doca_flow_aging_handle(port, queue, quota, max_entries)`: the number of entries aged
/// now (reported as op AGED), or -1 when none (a full scan). -1 on bad arguments too.
#[no_mangle]
pub extern "C" fn doca_flow_aging_handle(
    port: *mut FlowPort,
    queue: u16,
    _quota: u64,
    max_entries: u64,
) -> c_int {
    call_value("doca_flow_aging_handle", -1, || {
        if port.is_null() {
            return -1;
        }
        let r = state().handle_aging(port as usize, queue, max_entries);
        match r {
            Ok((n, cbs)) => {
                run_callbacks(cbs);
                n
            }
            Err(e) => {
                sdk_err!("flow", "doca_flow_aging_handle: {e:?}");
                -1
            }
        }
    })
}
