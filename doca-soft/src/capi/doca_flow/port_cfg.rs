//! `doca_flow.h`, port configuration: the settings a port starts with.

use std::ffi::{c_char, c_void};

use super::{not_supported, string_arg};
use crate::capi::toolkit::{call, handle_mut, new_handle, non_null, take_handle};
use crate::dev::Dev;
use crate::error::DocaError;
use crate::flow::cfg::PortCfg;
use crate::flow::sys::*;

/// `doca_flow_port_cfg_create(&cfg)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_create(cfg: *mut *mut PortCfg) -> u32 {
    call("doca_flow_port_cfg_create", || {
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(cfg, PortCfg::new()) }
    })
}

/// `doca_flow_port_cfg_destroy(cfg)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_destroy(cfg: *mut PortCfg) -> u32 {
    call("doca_flow_port_cfg_destroy", || {
        // SAFETY: C API contract (null or a cfg from create, given up).
        drop(unsafe { take_handle(cfg) }?);
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_port_id(cfg, id)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_port_id(cfg: *mut PortCfg, id: u16) -> u32 {
    call("doca_flow_port_cfg_set_port_id", || {
        // SAFETY: C API contract (null or live).
        unsafe { handle_mut(cfg) }?.port_id = id;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_dev(cfg, dev)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_dev(cfg: *mut PortCfg, dev: *mut Dev) -> u32 {
    call("doca_flow_port_cfg_set_dev", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        non_null(dev)?;
        c.dev = dev;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_dev_rep(cfg, rep)`: representors are NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_dev_rep(
    cfg: *mut PortCfg,
    rep: *mut c_void,
) -> u32 {
    call("doca_flow_port_cfg_set_dev_rep", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?;
        non_null(rep)?;
        not_supported("Flow ports on representors")
    })
}

/// `doca_flow_port_cfg_set_devargs(cfg, args)`: recorded.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_devargs(
    cfg: *mut PortCfg,
    args: *const c_char,
) -> u32 {
    call("doca_flow_port_cfg_set_devargs", || {
        // SAFETY: C API contract (null or live; null or NUL-terminated).
        let c = unsafe { handle_mut(cfg) }?;
        c.devargs = unsafe { string_arg(args) }?;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_priv_data_size(cfg, size)`: the per-port user area.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_priv_data_size(
    cfg: *mut PortCfg,
    size: u16,
) -> u32 {
    call("doca_flow_port_cfg_set_priv_data_size", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.priv_data_size = size;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_actions_mem_size(cfg, size)`: a power of two of at least 64.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_actions_mem_size(
    cfg: *mut PortCfg,
    size: u32,
) -> u32 {
    call("doca_flow_port_cfg_set_actions_mem_size", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        if size < 64 || !size.is_power_of_two() {
            return Err(DocaError::INVALID_VALUE);
        }
        c.actions_mem_size = size;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_nr_resources(cfg, kind, n)`: PORT mode pool sizes.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_nr_resources(
    cfg: *mut PortCfg,
    kind: u32,
    n: u32,
) -> u32 {
    call("doca_flow_port_cfg_set_nr_resources", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        let slot = c
            .nr_resources
            .get_mut(kind as usize)
            .ok_or(DocaError::INVALID_VALUE)?;
        *slot = n;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_operation_state(cfg, state)`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_operation_state(cfg: *mut PortCfg, st: u32) -> u32 {
    call("doca_flow_port_cfg_set_operation_state", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        if st > DOCA_FLOW_PORT_OPERATION_STATE_UNCONNECTED {
            return Err(DocaError::INVALID_VALUE);
        }
        c.operation_state = st;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_ipsec_sn_offload_disable(cfg)`: recorded.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_ipsec_sn_offload_disable(cfg: *mut PortCfg) -> u32 {
    call("doca_flow_port_cfg_set_ipsec_sn_offload_disable", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.ipsec_sn_offload_disabled = true;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_service_threads_core(cfg, core)`: recorded.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_service_threads_core(
    cfg: *mut PortCfg,
    core: u32,
) -> u32 {
    call("doca_flow_port_cfg_set_service_threads_core", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.service_core = core;
        Ok(())
    })
}

/// `doca_flow_port_cfg_set_service_threads_cycle(cfg, ms)`: recorded.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_service_threads_cycle(
    cfg: *mut PortCfg,
    ms: u32,
) -> u32 {
    call("doca_flow_port_cfg_set_service_threads_cycle", || {
        // SAFETY: C API contract.
        let c = unsafe { handle_mut(cfg) }?;
        if ms == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        c.service_cycle_ms = ms;
        Ok(())
    })
}
