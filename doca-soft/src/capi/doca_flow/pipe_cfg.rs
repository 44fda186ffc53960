//! `doca_flow.h`, pipe configuration: type, match and action templates, sizes and callbacks.

use std::ffi::{c_char, c_void};

use super::{action_bytes, descs_of, match_bytes, not_supported, string_arg};
use crate::capi::toolkit::{call, handle, handle_mut, new_handle, non_null, take_handle};
use crate::error::DocaError;
use crate::flow::actions::ActionSet;
use crate::flow::cfg::PipeCfg;
use crate::flow::handles::FlowPort;
use crate::flow::monitor::Monitor;
use crate::flow::state::state;
use crate::flow::sys::*;

/// `doca_flow_pipe_cfg_create(&cfg, port)`: BAD_STATE when the port is not started.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_create(
    cfg: *mut *mut PipeCfg,
    port: *mut FlowPort,
) -> u32 {
    call("doca_flow_pipe_cfg_create", || {
        non_null(cfg)?;
        non_null(port)?;
        state().port_mut(port as usize)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(cfg, PipeCfg::new(port as usize)) }
    })
}

/// `doca_flow_pipe_cfg_destroy(cfg)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_destroy(cfg: *mut PipeCfg) -> u32 {
    call("doca_flow_pipe_cfg_destroy", || {
        // SAFETY: C API contract (null or a cfg from create, given up).
        drop(unsafe { take_handle(cfg) }?);
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_name(cfg, name)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_name(
    cfg: *mut PipeCfg,
    name: *const c_char,
) -> u32 {
    call("doca_flow_pipe_cfg_set_name", || {
        // SAFETY: C API contract (null or live; null or NUL-terminated).
        let c = unsafe { handle_mut(cfg) }?;
        c.name = unsafe { string_arg(name) }?;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_label(cfg, label)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_label(
    cfg: *mut PipeCfg,
    label: *const c_char,
) -> u32 {
    call("doca_flow_pipe_cfg_set_label", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        c.label = unsafe { string_arg(label) }?;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_type(cfg, type)`: INVALID_VALUE for an unknown type.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_type(cfg: *mut PipeCfg, kind: u32) -> u32 {
    call("doca_flow_pipe_cfg_set_type", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.set_type(kind)
    })
}

/// `doca_flow_pipe_cfg_set_domain(cfg, domain)`: INVALID_VALUE for an unknown domain,
/// ALREADY_EXIST when set twice.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_domain(cfg: *mut PipeCfg, domain: u32) -> u32 {
    call("doca_flow_pipe_cfg_set_domain", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.set_domain(domain)
    })
}

/// `doca_flow_pipe_cfg_set_is_root(cfg, is_root)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_is_root(cfg: *mut PipeCfg, is_root: bool) -> u32 {
    call("doca_flow_pipe_cfg_set_is_root", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.is_root = is_root;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_match(cfg, match, mask)` (`_v1`): copied; compiled at pipe
/// creation. The match may be NULL when a mask is given (HASH pipes).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_match_v1(
    cfg: *mut PipeCfg,
    m: *const doca_flow_match_v1,
    mask: *const doca_flow_match_v1,
) -> u32 {
    call("doca_flow_pipe_cfg_set_match", || {
        // SAFETY: C API contract (null or live; null or valid structs).
        let (c, m, k) = unsafe { (handle_mut(cfg)?, match_bytes(m), match_bytes(mask)) };
        if m.is_none() && k.is_none() {
            return Err(DocaError::INVALID_VALUE);
        }
        let m = Box::new(m.copied().unwrap_or([0; crate::packet::key::KEY_BYTES]));
        // Checked now, so a bad match fails here rather than at pipe creation.
        crate::flow::matching::compile_template(&m, k)?;
        c.match_ = Some((m, k.map(|k| Box::new(*k))));
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_actions(cfg, actions, masks, descs, n)` (`_v1`): arrays of `n`
/// pointers (masks and descriptors optional), copied; checked now.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_actions_v1(
    cfg: *mut PipeCfg,
    actions: *const *mut doca_flow_actions_v1,
    masks: *const *mut doca_flow_actions_v1,
    descs: *const *mut doca_flow_action_descs_v1,
    nr_actions: usize,
) -> u32 {
    call("doca_flow_pipe_cfg_set_actions", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        non_null(actions)?;
        if nr_actions == 0 || nr_actions > 256 {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut sets = Vec::with_capacity(nr_actions);
        for i in 0..nr_actions {
            // SAFETY: the caller passes nr_actions pointers in each non-null array.
            let (a, k, d) = unsafe {
                (
                    *actions.add(i),
                    if masks.is_null() {
                        std::ptr::null_mut()
                    } else {
                        *masks.add(i)
                    },
                    if descs.is_null() {
                        std::ptr::null_mut()
                    } else {
                        *descs.add(i)
                    },
                )
            };
            // SAFETY: each pointer is NULL or a valid struct (C API contract).
            let a = unsafe { action_bytes(a) }.ok_or(DocaError::INVALID_VALUE)?;
            let set = ActionSet {
                actions: Box::new(*a),
                // SAFETY: as above.
                mask: unsafe { action_bytes(k) }.map(|k| Box::new(*k)),
                // SAFETY: as above.
                descs: unsafe { descs_of(d) }?,
            };
            crate::flow::actions::compile(&set, None, true)?;
            sets.push(set);
        }
        c.actions = sets;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_monitor(cfg, monitor)` (`_v1`): counters and aging; meters are
/// NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_monitor_v1(
    cfg: *mut PipeCfg,
    monitor: *const doca_flow_monitor_v1,
) -> u32 {
    call("doca_flow_pipe_cfg_set_monitor", || {
        // SAFETY: C API contract.
        let (c, m) = unsafe { (handle_mut(cfg)?, handle(monitor)?) };
        c.monitor = Monitor::of(m)?;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_ordered_lists(cfg, lists, n)` (`_v1`): NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_ordered_lists_v1(
    cfg: *mut PipeCfg,
    lists: *const *mut doca_flow_ordered_list_v1,
    n: usize,
) -> u32 {
    call("doca_flow_pipe_cfg_set_ordered_lists", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?;
        non_null(lists)?;
        if n == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        not_supported("ordered lists")
    })
}

/// `doca_flow_pipe_cfg_set_nr_entries(cfg, n)`: capacity (HASH pipes: the slots); at
/// least 1.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_nr_entries(cfg: *mut PipeCfg, n: u32) -> u32 {
    call("doca_flow_pipe_cfg_set_nr_entries", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        if n == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        c.nr_entries = n;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_is_resizable(cfg, on)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_is_resizable(cfg: *mut PipeCfg, on: bool) -> u32 {
    call("doca_flow_pipe_cfg_set_is_resizable", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.is_resizable = on;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_excluded_queue(cfg, queue)`: entries through that queue are
/// refused; it gets no pipe events.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_excluded_queue(
    cfg: *mut PipeCfg,
    queue: u16,
) -> u32 {
    call("doca_flow_pipe_cfg_set_excluded_queue", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.excluded_queue = Some(queue);
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_miss_counter(cfg, on)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_miss_counter(cfg: *mut PipeCfg, on: bool) -> u32 {
    call("doca_flow_pipe_cfg_set_miss_counter", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.miss_counter = on;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_congestion_level_threshold(cfg, pct)`: in (0, 100].
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_congestion_level_threshold(
    cfg: *mut PipeCfg,
    pct: u8,
) -> u32 {
    call("doca_flow_pipe_cfg_set_congestion_level_threshold", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.set_congestion(pct)
    })
}

/// `doca_flow_pipe_cfg_set_user_ctx(cfg, ctx)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_user_ctx(
    cfg: *mut PipeCfg,
    ctx: *mut c_void,
) -> u32 {
    call("doca_flow_pipe_cfg_set_user_ctx", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.user_ctx = ctx;
        Ok(())
    })
}

/// `doca_flow_pipe_cfg_set_hash_map_algorithm(cfg, flags)`: HASH pipes; HASH and IDENTITY
/// are implemented (others are NOT_SUPPORTED at pipe creation).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_hash_map_algorithm(
    cfg: *mut PipeCfg,
    flags: u32,
) -> u32 {
    call("doca_flow_pipe_cfg_set_hash_map_algorithm", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.set_hash_algorithm(flags)
    })
}
