//! `doca_flow.h`: DOCA Flow on the soft NIC's ports. The versioned functions are exported
//! with their `_v1` names, as the header maps them.
//!
//! # What is emulated
//!
//! * Library, port and pipe configuration, SYSTEM and PORT resource modes, queues with
//!   completion callbacks: an entry takes effect when it is added, and its operation (ADD,
//!   UPD, DEL) completes with status SUCCESS in `doca_flow_entries_process` on its queue,
//!   which runs the entry callback. Pipe events (congestion, resize, destroy) go to the
//!   pipe callback.
//! * BASIC pipes (match template with constant and changeable fields, exact lookup), CONTROL
//!   pipes (per-entry match, mask and priority; a lower priority number wins), HASH pipes
//!   (HASH or IDENTITY map, entries at indexes). Matches cover the programmable metadata,
//!   the parser metadata (port id, L2/L3/L4 types of both layers, fragmentation, header and
//!   checksum validity), the outer and inner Ethernet, VLAN, IPv4, IPv6, TCP, UDP, ICMP and
//!   RoCE v2 headers, and the VXLAN (and -GPE, -GBP), GRE, GTP-U, ESP and GENEVE tunnel
//!   fields.
//! * Actions rewriting the outer headers (with checksums fixed), VLAN pop and push,
//!   metadata writes, ADD descriptors; forwards to RSS (own or shared configuration, inner
//!   hashing, symmetric), a port, a pipe or hash pipe, the kernel, drop, and per-entry
//!   forwards (CHANGEABLE); counters (own and shared), miss counters, the default miss,
//!   aging, resize, hashes and entropy, pipe dumps, MPLS label helpers.
//!
//! # What is refused
//!
//! NOT_SUPPORTED, with one log line naming the feature, at the call asking for it: LPM, CT,
//! ACL and ordered-list pipes and their entry calls, egress and secure domains, meters,
//! match conditions, decap, encap, tunnel rewrites, NAT64, crypto (all of
//! `doca_flow_crypto.h`), COPY descriptors, PSP/IPsec/meter/encap/decap shared resources,
//! representors, GENEVE option parsers, Flow definitions (all of
//! `doca_flow_definitions.h`), tune profiles other than NONE, matching fields the parser
//! cannot see (`parser_meta.random`, syndromes, meter colour, MPLS, PSP, NVGRE, GENEVE
//! options).
//!
//! Stale handles get NOT_FOUND (entries), BAD_STATE (ports) or INVALID_VALUE (pipes), never
//! undefined behaviour.

use std::ffi::{c_char, c_int, c_void, CString};

use super::toolkit::{call, call_ptr, call_value, call_void, handle, handle_mut, new_handle};
use super::toolkit::{non_null, str_lossy, take_handle, write_out};
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::flow::actions::{ActionBytes, ActionSet, Desc};
use crate::flow::cfg::RESOURCE_KINDS;
use crate::flow::entry::EntryArgs;
use crate::flow::fwd::KERNEL_TARGET;
use crate::flow::matching::MatchBytes;
use crate::flow::monitor::Monitor;
use crate::flow::pipe::Resize;
use crate::flow::state::{run_callbacks, state};

pub use crate::flow::cfg::{
    EntryProcessCb, FlowCfg, PipeCfg, PipeProcessCb, PortCfg, TuneCfg, UnbindCb,
};
pub use crate::flow::port::FlowPort;
pub use crate::flow::sys::*;

/// A required string argument (INVALID_VALUE for NULL; bytes that are not UTF-8 replaced).
///
/// # Safety
/// A non-null `p` is NUL-terminated.
unsafe fn string_arg(p: *const c_char) -> DocaResult<String> {
    // SAFETY: caller contract.
    unsafe { str_lossy(p) }
        .map(|s| s.into_owned())
        .ok_or(DocaError::INVALID_VALUE)
}

/// An optional C struct argument.
///
/// # Safety
/// A non-null `p` points to a valid `T` for the duration of the call.
unsafe fn opt<'a, T>(p: *const T) -> Option<&'a T> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }
}

/// The bytes of a match struct (NULL: none).
///
/// # Safety
/// A non-null `p` points to a `struct doca_flow_match` the caller initialised.
unsafe fn match_bytes<'a>(p: *const doca_flow_match_v1) -> Option<&'a MatchBytes> {
    // SAFETY: caller contract; the struct is 536 bytes (asserted in flow::layout).
    unsafe { p.cast::<MatchBytes>().as_ref() }
}

/// The bytes of an actions struct (NULL: none).
///
/// # Safety
/// A non-null `p` points to a `struct doca_flow_actions` the caller initialised.
unsafe fn action_bytes<'a>(p: *const doca_flow_actions_v1) -> Option<&'a ActionBytes> {
    // SAFETY: caller contract; the struct is 1024 bytes (asserted in flow::layout).
    unsafe { p.cast::<ActionBytes>().as_ref() }
}

/// The descriptors of an action-descriptor array (NULL: none), strings copied.
///
/// # Safety
/// A non-null `p` points to a valid struct whose array holds `nb_action_desc` entries with
/// NULL or NUL-terminated field strings.
unsafe fn descs_of(p: *const doca_flow_action_descs_v1) -> DocaResult<Vec<Desc>> {
    // SAFETY: caller contract.
    let Some(d) = (unsafe { p.as_ref() }) else {
        return Ok(Vec::new());
    };
    if d.nb_action_desc == 0 {
        return Ok(Vec::new());
    }
    if d.desc_array.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: caller contract (nb_action_desc readable entries).
    let arr = unsafe { std::slice::from_raw_parts(d.desc_array, usize::from(d.nb_action_desc)) };
    Ok(arr
        .iter()
        .map(|a| {
            // SAFETY: the union holds plain data; every type uses field_op.
            let op = unsafe { a.__bindgen_anon_1.field_op };
            Desc {
                kind: a.type_,
                // SAFETY: caller contract (NULL or NUL-terminated).
                dst: unsafe { str_lossy(op.dst.field_string) }.map(|s| s.into_owned()),
                dst_bit_offset: op.dst.bit_offset,
                width: op.width,
            }
        })
        .collect())
}

/// Writes packets and bytes as a counter query result.
///
/// # Safety
/// A non-null `out` is writable.
unsafe fn write_query(
    out: *mut doca_flow_resource_query_v1,
    (pkts, bytes): (u64, u64),
) -> DocaResult<()> {
    let mut q = doca_flow_resource_query_v1::default();
    q.__bindgen_anon_1.counter.total_pkts = pkts;
    q.__bindgen_anon_1.counter.total_bytes = bytes;
    // SAFETY: caller contract.
    unsafe { write_out(out, q) }
}

/// One log line and NOT_SUPPORTED.
fn not_supported(what: &str) -> DocaResult<()> {
    sdk_err!("flow", "{what} is not supported");
    Err(DocaError::NOT_SUPPORTED)
}

// ---- global configuration and library lifecycle -----------------------------------------

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

// ---- port configuration ------------------------------------------------------------------

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

// ---- ports -----------------------------------------------------------------------------

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

// ---- pipe configuration ------------------------------------------------------------------

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

// ---- pipes -----------------------------------------------------------------------------

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

// ---- entries ---------------------------------------------------------------------------

/// Writes a new entry handle to an optional out-parameter.
///
/// # Safety
/// A non-null `out` is writable.
unsafe fn entry_out(
    out: *mut *mut doca_flow_pipe_entry,
    e: *mut crate::flow::entry::EntryHandle,
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
            EntryArgs {
                pipe_queue,
                action_idx,
                actions: action_bytes(actions),
                actions_mask: None,
                descs: Vec::new(),
                monitor: opt(monitor),
                fwd: opt(fwd),
                flags,
                usr_ctx: std::ptr::null_mut(),
            }
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

// ---- shared resources ------------------------------------------------------------------

/// Reads `n` ids.
///
/// # Safety
/// A non-null `ids` holds `n` readable ids.
unsafe fn ids_arg<'a>(ids: *const u32, n: u32) -> DocaResult<&'a [u32]> {
    if ids.is_null() || n == 0 {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: caller contract.
    Ok(unsafe { std::slice::from_raw_parts(ids, n as usize) })
}

/// Writes counter results into `out[..n]`.
///
/// # Safety
/// A non-null `out` holds `results.len()` writable structs.
unsafe fn write_results(
    out: *mut doca_flow_resource_query_v1,
    results: &[(u64, u64)],
) -> DocaResult<()> {
    for (i, r) in results.iter().enumerate() {
        // SAFETY: caller contract.
        unsafe { write_query(out.add(i), *r) }?;
    }
    Ok(())
}

/// `doca_flow_shared_resource_set_cfg(type, id, cfg)` (`_v1`): SYSTEM mode; counters and
/// RSS.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_shared_resource_set_cfg_v1(
    kind: u32,
    id: u32,
    cfg: *mut doca_flow_shared_resource_cfg_v1,
) -> u32 {
    call("doca_flow_shared_resource_set_cfg", || {
        // SAFETY: C API contract (null or valid).
        let c = unsafe { opt(cfg) };
        state().set_shared_cfg(kind, id, c)
    })
}

/// `doca_flow_shared_resources_bind(type, ids, n, obj)`: to NULL (global), a port or a
/// pipe.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_shared_resources_bind(
    kind: u32,
    ids: *mut u32,
    n: u32,
    obj: *mut c_void,
) -> u32 {
    call("doca_flow_shared_resources_bind", || {
        // SAFETY: C API contract.
        let ids = unsafe { ids_arg(ids, n) }?;
        state().bind_shared(kind, ids, obj as usize)
    })
}

/// `doca_flow_shared_resources_query(type, ids, data, n)` (`_v1`): SYSTEM mode counters.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_shared_resources_query_v1(
    kind: u32,
    ids: *mut u32,
    data: *mut doca_flow_resource_query_v1,
    n: u32,
) -> u32 {
    call("doca_flow_shared_resources_query", || {
        non_null(data)?;
        // SAFETY: C API contract.
        let ids = unsafe { ids_arg(ids, n) }?;
        let r = state().query_shared(kind, ids)?;
        // SAFETY: C API contract (n writable results).
        unsafe { write_results(data, &r) }
    })
}

/// `doca_flow_port_shared_resource_get(port, type, &id)`: PORT mode; EMPTY when none left.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_shared_resource_get(
    port: *mut FlowPort,
    kind: u32,
    id: *mut u32,
) -> u32 {
    call("doca_flow_port_shared_resource_get", || {
        non_null(port)?;
        non_null(id)?;
        let x = state().take_port_shared(port as usize, kind)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(id, x) }
    })
}

/// `doca_flow_port_shared_resource_put(port, type, id)`: PORT mode.
#[no_mangle]
pub extern "C" fn doca_flow_port_shared_resource_put(
    port: *mut FlowPort,
    kind: u32,
    id: u32,
) -> u32 {
    call("doca_flow_port_shared_resource_put", || {
        non_null(port)?;
        state().put_port_shared(port as usize, kind, id)
    })
}

/// `doca_flow_port_shared_resource_set_cfg(port, type, id, cfg)` (`_v1`): PORT mode.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_shared_resource_set_cfg_v1(
    port: *mut FlowPort,
    kind: u32,
    id: u32,
    cfg: *mut doca_flow_shared_resource_cfg_v1,
) -> u32 {
    call("doca_flow_port_shared_resource_set_cfg", || {
        non_null(port)?;
        // SAFETY: C API contract.
        let c = unsafe { opt(cfg) };
        state().set_port_shared_cfg(port as usize, kind, id, c)
    })
}

/// `doca_flow_port_shared_resources_query(port, type, ids, data, n)` (`_v1`): PORT mode.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_shared_resources_query_v1(
    port: *mut FlowPort,
    kind: u32,
    ids: *mut u32,
    data: *mut doca_flow_resource_query_v1,
    n: u32,
) -> u32 {
    call("doca_flow_port_shared_resources_query", || {
        non_null(port)?;
        non_null(data)?;
        // SAFETY: C API contract.
        let ids = unsafe { ids_arg(ids, n) }?;
        let r = state().query_port_shared(port as usize, kind, ids)?;
        // SAFETY: C API contract.
        unsafe { write_results(data, &r) }
    })
}

const _: () = assert!(RESOURCE_KINDS == 7);

// ---- queries ---------------------------------------------------------------------------

/// `doca_flow_resource_query_entry(entry, &query)` (`_v1`): packets and bytes of a counting
/// entry; NOT_SUPPORTED when the entry has no counter.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_resource_query_entry_v1(
    entry: *mut doca_flow_pipe_entry,
    query: *mut doca_flow_resource_query_v1,
) -> u32 {
    call("doca_flow_resource_query_entry", || {
        non_null(entry)?;
        non_null(query)?;
        let counts = state().query_entry(entry as usize)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_query(query, counts) }
    })
}

/// `doca_flow_resource_query_pipe_miss(pipe, &query)` (`_v1`): NOT_SUPPORTED without a miss
/// counter.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_resource_query_pipe_miss_v1(
    pipe: *mut doca_flow_pipe,
    query: *mut doca_flow_resource_query_v1,
) -> u32 {
    call("doca_flow_resource_query_pipe_miss", || {
        non_null(pipe)?;
        non_null(query)?;
        let counts = state().query_pipe_miss(pipe as usize)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_query(query, counts) }
    })
}

// ---- parser and helpers ----------------------------------------------------------------

/// `doca_flow_parser_geneve_opt_create(port, tlv_list, n, &parser)`: NOT_SUPPORTED.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_parser_geneve_opt_create(
    port: *const FlowPort,
    tlv_list: *const doca_flow_parser_geneve_opt_cfg,
    nb_options: u8,
    parser: *mut *mut doca_flow_parser,
) -> u32 {
    call("doca_flow_parser_geneve_opt_create", || {
        non_null(port)?;
        non_null(tlv_list)?;
        non_null(parser)?;
        if nb_options == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        not_supported("GENEVE option parsers")
    })
}

/// `doca_flow_parser_geneve_opt_destroy(parser)`: no parser can exist; INVALID_VALUE.
#[no_mangle]
pub extern "C" fn doca_flow_parser_geneve_opt_destroy(parser: *mut doca_flow_parser) -> u32 {
    call("doca_flow_parser_geneve_opt_destroy", || {
        non_null(parser)?;
        // No parser is ever created, so any handle is foreign.
        Err(DocaError::INVALID_VALUE)
    })
}

/// `doca_flow_mpls_label_encode(label, tc, ttl, bos, &mpls)`: label (20 bits), traffic
/// class (3), bottom of stack, TTL (8) in one big-endian word.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_mpls_label_encode(
    label: u32,
    traffic_class: u8,
    ttl: u8,
    bottom_of_stack: bool,
    mpls: *mut doca_flow_header_mpls,
) -> u32 {
    call("doca_flow_mpls_label_encode", || {
        non_null(mpls)?;
        if label >= 1 << 20 || traffic_class >= 8 {
            return Err(DocaError::INVALID_VALUE);
        }
        let w = (label << 12)
            | (u32::from(traffic_class) << 9)
            | (u32::from(bottom_of_stack) << 8)
            | u32::from(ttl);
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(mpls, doca_flow_header_mpls { label: w.to_be() }) }
    })
}

/// `doca_flow_mpls_label_decode(mpls, &label, &tc, &ttl, &bos)`: the reverse, host order.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_mpls_label_decode(
    mpls: *const doca_flow_header_mpls,
    label: *mut u32,
    traffic_class: *mut u8,
    ttl: *mut u8,
    bottom_of_stack: *mut bool,
) -> u32 {
    call("doca_flow_mpls_label_decode", || {
        // SAFETY: C API contract.
        let m = unsafe { handle(mpls) }?;
        for p in [
            label as *const u8,
            traffic_class,
            ttl,
            bottom_of_stack as *const u8,
        ] {
            non_null(p)?;
        }
        let w = u32::from_be(m.label);
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(label, w >> 12)?;
            write_out(traffic_class, ((w >> 9) & 7) as u8)?;
            write_out(bottom_of_stack, (w >> 8) & 1 == 1)?;
            write_out(ttl, w as u8)?;
        }
        Ok(())
    })
}
