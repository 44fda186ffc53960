//! `doca_flow.h`, the library: global configuration, tune configuration, init and destroy.

use std::ffi::{c_char, c_void};

use super::{not_supported, string_arg};
use crate::capi::toolkit::{
    call, call_value, handle, handle_mut, new_handle, non_null, take_handle,
};
use crate::error::DocaError;
use crate::flow::cfg::{EntryProcessCb, FlowCfg, PipeProcessCb, TuneCfg, UnbindCb};
use crate::flow::state::{run_callbacks, state};
use crate::flow::sys::*;

/// `doca_flow_cfg_create(&cfg)`: one pipe queue, mode "vnf", SYSTEM resources.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_create(cfg: *mut *mut FlowCfg) -> u32 {
    call("doca_flow_cfg_create", || {
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(cfg, FlowCfg::new()) }
    })
}

/// `doca_flow_cfg_destroy(cfg)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_destroy(cfg: *mut FlowCfg) -> u32 {
    call("doca_flow_cfg_destroy", || {
        // SAFETY: C API contract (null or a cfg from doca_flow_cfg_create, given up).
        drop(unsafe { take_handle(cfg) }?);
        Ok(())
    })
}

/// `doca_flow_cfg_set_pipe_queues(cfg, n)`: at least 1.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_pipe_queues(cfg: *mut FlowCfg, n: u16) -> u32 {
    call("doca_flow_cfg_set_pipe_queues", || {
        // SAFETY: C API contract (null or live).
        let c = unsafe { handle_mut(cfg) }?;
        if n == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        c.pipe_queues = n;
        Ok(())
    })
}

/// `doca_flow_cfg_set_mode_args(cfg, mode)`: "vnf" or "switch", then modifiers.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_mode_args(
    cfg: *mut FlowCfg,
    mode: *const c_char,
) -> u32 {
    call("doca_flow_cfg_set_mode_args", || {
        // SAFETY: C API contract (null or live; null or NUL-terminated).
        let c = unsafe { handle_mut(cfg) }?;
        let m = unsafe { string_arg(mode) }?;
        c.set_mode_args(&m)
    })
}

/// `doca_flow_cfg_set_queue_depth(cfg, depth)`: at least 1 (a capacity the runtime never
/// runs out of: completions are queued without limit while a callback is registered).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_queue_depth(cfg: *mut FlowCfg, depth: u32) -> u32 {
    call("doca_flow_cfg_set_queue_depth", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        if depth == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        c.queue_depth = depth;
        Ok(())
    })
}

/// `doca_flow_cfg_set_nr_counters(cfg, n)`: SYSTEM mode, the most non-shared counters in
/// use at once (entries beyond get FULL).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_nr_counters(cfg: *mut FlowCfg, n: u32) -> u32 {
    call("doca_flow_cfg_set_nr_counters", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.nr_counters = n;
        Ok(())
    })
}

/// `doca_flow_cfg_set_nr_meters(cfg, n)`: recorded (meters are NOT_SUPPORTED where used).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_nr_meters(cfg: *mut FlowCfg, n: u32) -> u32 {
    call("doca_flow_cfg_set_nr_meters", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.nr_meters = n;
        Ok(())
    })
}

/// `doca_flow_cfg_set_nr_shared_resource(cfg, n, type)`: SYSTEM mode ids of a kind.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_nr_shared_resource(
    cfg: *mut FlowCfg,
    n: u32,
    kind: u32,
) -> u32 {
    call("doca_flow_cfg_set_nr_shared_resource", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        let slot = c
            .nr_shared
            .get_mut(kind as usize)
            .ok_or(DocaError::INVALID_VALUE)?;
        *slot = n;
        Ok(())
    })
}

/// `doca_flow_cfg_set_nr_acl_collisions(cfg, n)`: recorded (ACL pipes are NOT_SUPPORTED).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_nr_acl_collisions(cfg: *mut FlowCfg, n: u8) -> u32 {
    call("doca_flow_cfg_set_nr_acl_collisions", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.nr_acl_collisions = n;
        Ok(())
    })
}

/// `doca_flow_cfg_set_resource_mode(cfg, mode)`: SYSTEM or PORT.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_resource_mode(cfg: *mut FlowCfg, mode: u32) -> u32 {
    call("doca_flow_cfg_set_resource_mode", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        c.port_mode = match mode {
            DOCA_FLOW_RESOURCE_MODE_SYSTEM => false,
            DOCA_FLOW_RESOURCE_MODE_PORT => true,
            _ => return Err(DocaError::INVALID_VALUE),
        };
        Ok(())
    })
}

/// `doca_flow_cfg_set_cb_entry_process(cfg, cb)` (NULL: none).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_cb_entry_process(
    cfg: *mut FlowCfg,
    cb: Option<EntryProcessCb>,
) -> u32 {
    call("doca_flow_cfg_set_cb_entry_process", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.cb_entry = cb;
        Ok(())
    })
}

/// `doca_flow_cfg_set_cb_pipe_process(cfg, cb)` (NULL: none).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_cb_pipe_process(
    cfg: *mut FlowCfg,
    cb: Option<PipeProcessCb>,
) -> u32 {
    call("doca_flow_cfg_set_cb_pipe_process", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.cb_pipe = cb;
        Ok(())
    })
}

/// `doca_flow_cfg_set_cb_shared_resource_unbind(cfg, cb)` (NULL: none).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_cb_shared_resource_unbind(
    cfg: *mut FlowCfg,
    cb: Option<UnbindCb>,
) -> u32 {
    call("doca_flow_cfg_set_cb_shared_resource_unbind", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.cb_unbind = cb;
        Ok(())
    })
}

/// `doca_flow_cfg_set_rss_key(cfg, key, len)`: copied; seeds the RSS hash.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_rss_key(
    cfg: *mut FlowCfg,
    key: *const u8,
    len: u32,
) -> u32 {
    call("doca_flow_cfg_set_rss_key", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        non_null(key)?;
        if len == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: the caller passes len readable bytes.
        c.rss_key = Some(unsafe { std::slice::from_raw_parts(key, len as usize) }.to_vec());
        Ok(())
    })
}

/// `doca_flow_cfg_set_definitions(cfg, defs)`: NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_definitions(
    cfg: *mut FlowCfg,
    defs: *const c_void,
) -> u32 {
    call("doca_flow_cfg_set_definitions", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?;
        non_null(defs)?;
        not_supported("Flow definitions (custom fields)")
    })
}

/// `doca_flow_cfg_set_tune_cfg(cfg, tune)`: profile NONE is accepted; others are
/// NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_tune_cfg(cfg: *mut FlowCfg, tune: *mut TuneCfg) -> u32 {
    call("doca_flow_cfg_set_tune_cfg", || {
        // SAFETY: C API contract (null or live handles).
        let (_, t) = unsafe { (handle_mut(cfg)?, handle(tune)?) };
        if t.profile != DOCA_FLOW_TUNE_PROFILE_NONE {
            return not_supported("Flow tuning profiles other than NONE");
        }
        Ok(())
    })
}

/// `doca_flow_tune_cfg_create(&tune)`: profile NONE.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_tune_cfg_create(tune: *mut *mut TuneCfg) -> u32 {
    call("doca_flow_tune_cfg_create", || {
        // SAFETY: C API contract.
        unsafe { new_handle(tune, TuneCfg::default()) }
    })
}

/// `doca_flow_tune_cfg_destroy(tune)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_tune_cfg_destroy(tune: *mut TuneCfg) -> u32 {
    call("doca_flow_tune_cfg_destroy", || {
        // SAFETY: C API contract.
        drop(unsafe { take_handle(tune) }?);
        Ok(())
    })
}

/// `doca_flow_tune_cfg_set_profile(tune, profile)`: NONE (0), PIPELINE (30) or FULL (60).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_tune_cfg_set_profile(tune: *mut TuneCfg, profile: u32) -> u32 {
    call("doca_flow_tune_cfg_set_profile", || {
        // SAFETY: C API contract.
        let t = unsafe { handle_mut(tune) }?;
        if ![0, 30, 60].contains(&profile) {
            return Err(DocaError::INVALID_VALUE);
        }
        t.profile = profile;
        Ok(())
    })
}

/// `doca_flow_init(cfg)` (exported as `doca_flow_init_v1`): BAD_STATE when already
/// initialized.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_init_v1(cfg: *mut FlowCfg) -> u32 {
    call("doca_flow_init", || {
        // SAFETY: C API contract.
        let c = unsafe { handle(cfg) }?;
        state().init(c)
    })
}

/// `doca_flow_destroy()`: stops every port still started, then forgets the configuration.
#[no_mangle]
pub extern "C" fn doca_flow_destroy() {
    call_value("doca_flow_destroy", (), || {
        let cbs = state().destroy();
        run_callbacks(cbs);
    })
}
