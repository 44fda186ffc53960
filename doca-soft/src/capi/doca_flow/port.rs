//! `doca_flow.h`, ports: start, stop, pairing, default miss, entropy and targets.

use super::write_query;
use crate::capi::toolkit::{call, call_ptr, call_void, handle, non_null, write_out};
use crate::error::DocaError;
use crate::flow::cfg::PortCfg;
use crate::flow::fwd::KERNEL_TARGET;
use crate::flow::handles::FlowPort;
use crate::flow::state::{run_callbacks, state};
use crate::flow::sys::*;

/// `doca_flow_port_start(cfg, &port)`: BAD_STATE before `doca_flow_init`, INVALID_VALUE
/// without a device, ALREADY_EXIST when the port id is started or the device already has a
/// Flow port.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_start(cfg: *const PortCfg, out: *mut *mut FlowPort) -> u32 {
    call("doca_flow_port_start", || {
        non_null(out)?;
        // SAFETY: C API contract (null or live).
        let c = unsafe { handle(cfg) }?;
        let mut st = state();
        st.require_init()?;
        // SAFETY: the device given through set_dev must still be open (C API contract).
        let dev = unsafe { handle(c.dev) }?;
        let p = st.start_port(c, dev)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, p) }
    })
}

/// `doca_flow_port_stop(port)`: destroys the port's pipes and stops steering.
#[no_mangle]
pub extern "C" fn doca_flow_port_stop(port: *mut FlowPort) -> u32 {
    call("doca_flow_port_stop", || {
        non_null(port)?;
        let cbs = state().stop_port(port as usize)?;
        run_callbacks(cbs);
        Ok(())
    })
}

/// `doca_flow_port_pair(port, pair)`: INVALID_VALUE for a port and itself.
#[no_mangle]
pub extern "C" fn doca_flow_port_pair(port: *mut FlowPort, pair: *mut FlowPort) -> u32 {
    call("doca_flow_port_pair", || {
        non_null(port)?;
        non_null(pair)?;
        state().pair_ports(port as usize, pair as usize)
    })
}

/// `doca_flow_port_priv_data(port)`: the user area (NULL when its size is 0 or the port is
/// not started).
#[no_mangle]
pub extern "C" fn doca_flow_port_priv_data(port: *mut FlowPort) -> *mut u8 {
    call_ptr("doca_flow_port_priv_data", || {
        non_null(port)?;
        let st = state();
        let fp = st.port_mut(port as usize)?;
        if fp.priv_data.is_empty() {
            return Ok(std::ptr::null_mut());
        }
        Ok(fp.priv_data.as_mut_ptr())
    })
}

/// `doca_flow_port_operation_state_modify(port, state)`.
#[no_mangle]
pub extern "C" fn doca_flow_port_operation_state_modify(port: *mut FlowPort, st_: u32) -> u32 {
    call("doca_flow_port_operation_state_modify", || {
        non_null(port)?;
        if st_ > DOCA_FLOW_PORT_OPERATION_STATE_UNCONNECTED {
            return Err(DocaError::INVALID_VALUE);
        }
        state().port_mut(port as usize)?.operation_state = st_;
        Ok(())
    })
}

/// `doca_flow_port_switch_get(port)`: the switch manager (first port started) in switch
/// mode; NULL in vnf mode.
#[no_mangle]
pub extern "C" fn doca_flow_port_switch_get(port: *const FlowPort) -> *mut FlowPort {
    call_ptr("doca_flow_port_switch_get", || {
        Ok(state()
            .switch_port(port as usize)
            .map_or(std::ptr::null_mut(), |p| p as *mut FlowPort))
    })
}

/// `doca_flow_port_pipes_flush(port)`: destroys every pipe of the port.
#[no_mangle]
pub extern "C" fn doca_flow_port_pipes_flush(port: *mut FlowPort) {
    call_void("doca_flow_port_pipes_flush", || {
        non_null(port)?;
        let cbs = state().flush_pipes(port as usize)?;
        run_callbacks(cbs);
        Ok(())
    })
}

/// `doca_flow_port_update_default_miss(port, type, counter_en)`: KERNEL or DROP.
#[no_mangle]
pub extern "C" fn doca_flow_port_update_default_miss(
    port: *mut FlowPort,
    kind: u32,
    counter_en: bool,
) -> u32 {
    call("doca_flow_port_update_default_miss", || {
        non_null(port)?;
        state().update_default_miss(port as usize, kind, counter_en)
    })
}

/// `doca_flow_port_query_default_miss(port, &query)` (`_v1`).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_query_default_miss_v1(
    port: *mut FlowPort,
    query: *mut doca_flow_resource_query_v1,
) -> u32 {
    call("doca_flow_port_query_default_miss", || {
        non_null(port)?;
        non_null(query)?;
        let counts = state().query_default_miss(port as usize)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_query(query, counts) }
    })
}

/// `doca_flow_port_calc_entropy(port, header, &entropy)` (`_v1`): a 16-bit hash of the L3
/// addresses and (when `is_transport`) the ports, written big-endian.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_calc_entropy_v1(
    port: *mut FlowPort,
    header: *mut doca_flow_entropy_format_v1,
    entropy: *mut u16,
) -> u32 {
    call("doca_flow_port_calc_entropy", || {
        non_null(port)?;
        non_null(entropy)?;
        // SAFETY: C API contract.
        let h = unsafe { handle(header) }?;
        state().port_mut(port as usize)?;
        if h.l3_type > DOCA_FLOW_L3_TYPE_IP6 {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut bytes = Vec::with_capacity(40);
        // SAFETY: the union holds plain data; l3_type selects the view.
        unsafe {
            match h.l3_type {
                DOCA_FLOW_L3_TYPE_IP4 => {
                    let ip = h.__bindgen_anon_1.ip4;
                    bytes.extend_from_slice(&ip.src_ip.to_ne_bytes());
                    bytes.extend_from_slice(&ip.dst_ip.to_ne_bytes());
                    bytes.push(ip.next_proto);
                }
                DOCA_FLOW_L3_TYPE_IP6 => {
                    let ip = h.__bindgen_anon_1.ip6;
                    for w in ip.src_ip.iter().chain(ip.dst_ip.iter()) {
                        bytes.extend_from_slice(&w.to_ne_bytes());
                    }
                    bytes.push(ip.next_proto);
                }
                _ => {}
            }
        }
        if h.is_transport {
            bytes.extend_from_slice(&h.transport.src_port.to_ne_bytes());
            bytes.extend_from_slice(&h.transport.dst_port.to_ne_bytes());
        }
        let x = crate::packet::rss::seed_of_key(&bytes);
        let e = (x ^ (x >> 16) ^ (x >> 32) ^ (x >> 48)) as u16;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(entropy, e.to_be()) }
    })
}

/// `doca_flow_get_target(type, &target)`: the kernel target.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_get_target(
    kind: u32,
    target: *mut *mut doca_flow_target,
) -> u32 {
    call("doca_flow_get_target", || {
        non_null(target)?;
        if kind != DOCA_FLOW_TARGET_KERNEL {
            return Err(DocaError::INVALID_VALUE);
        }
        state().require_init()?;
        let t = &KERNEL_TARGET as *const u8 as *mut doca_flow_target;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(target, t) }
    })
}
