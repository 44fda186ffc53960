//! `doca_flow.h`: DOCA Flow, emulated on the soft NIC's ports (BASIC and CONTROL pipes,
//! matches on the outer headers, RSS, pipe and drop forwards, per-entry counters). The
//! versioned functions are exported with their `_v1` names, as the header maps them.
//!
//! Entries take effect as soon as they are added; `doca_flow_entries_process` has nothing
//! left to wait for and arms the port (a pcap port starts its replay). Pipe types other
//! than BASIC and CONTROL, shared resources, meters, packet-modifying actions and match
//! conditions are NOT_SUPPORTED (pipe actions are accepted and ignored). Stale handles get
//! NOT_FOUND (entries), BAD_STATE (ports, pipes of a stopped port) or INVALID_VALUE.

use std::ffi::{c_char, c_void};

use super::toolkit::{call, call_value, handle, handle_mut, new_handle, non_null};
use super::toolkit::{str_lossy, take_handle, write_out};
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::flow::state::state;

pub use crate::flow::state::{FlowCfg, FlowPort, PipeCfg, PortCfg};
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

// ---- library ---------------------------------------------------------------------------

/// `doca_flow_cfg_create(&cfg)`: one pipe queue.
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

/// `doca_flow_cfg_set_mode_args(cfg, mode)`: recorded (modes do not change the emulation).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_mode_args(
    cfg: *mut FlowCfg,
    mode: *const c_char,
) -> u32 {
    call("doca_flow_cfg_set_mode_args", || {
        // SAFETY: C API contract (null or live; null or NUL-terminated).
        let c = unsafe { handle_mut(cfg) }?;
        c.mode_args = unsafe { string_arg(mode) }?;
        Ok(())
    })
}

/// `doca_flow_cfg_set_nr_counters(cfg, n)`: recorded.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_nr_counters(cfg: *mut FlowCfg, n: u32) -> u32 {
    call("doca_flow_cfg_set_nr_counters", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.nr_counters = n;
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
    call_value("doca_flow_destroy", (), || state().destroy())
}

// ---- ports -----------------------------------------------------------------------------

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

/// `doca_flow_port_start(cfg, &port)`: BAD_STATE before `doca_flow_init`, INVALID_VALUE
/// without a device, ALREADY_EXIST when the port id is started.
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
        let p = st.start_port(c.port_id, dev)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, p) }
    })
}

/// `doca_flow_port_stop(port)`: destroys the port's pipes and stops steering.
#[no_mangle]
pub extern "C" fn doca_flow_port_stop(port: *mut FlowPort) -> u32 {
    call("doca_flow_port_stop", || {
        non_null(port)?;
        state().stop_port(port as usize)
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

/// `doca_flow_pipe_cfg_set_type(cfg, type)`: INVALID_VALUE for an unknown type.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_type(cfg: *mut PipeCfg, kind: u32) -> u32 {
    call("doca_flow_pipe_cfg_set_type", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.set_type(kind)
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

/// `doca_flow_pipe_cfg_set_domain(cfg, domain)`: INVALID_VALUE for an unknown domain.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_domain(cfg: *mut PipeCfg, domain: u32) -> u32 {
    call("doca_flow_pipe_cfg_set_domain", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.set_domain(domain)
    })
}

/// `doca_flow_pipe_cfg_set_nr_entries(cfg, n)`: recorded.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_nr_entries(cfg: *mut PipeCfg, n: u32) -> u32 {
    call("doca_flow_pipe_cfg_set_nr_entries", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?.nr_entries = n;
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

/// `doca_flow_pipe_cfg_set_match(cfg, match, mask)` (`_v1`): the BASIC template (ignored
/// by CONTROL pipes).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_match_v1(
    cfg: *mut PipeCfg,
    m: *const doca_flow_match_v1,
    mask: *const doca_flow_match_v1,
) -> u32 {
    call("doca_flow_pipe_cfg_set_match", || {
        // SAFETY: C API contract (null or live; null or valid structs).
        let (c, m, mask) = unsafe { (handle_mut(cfg)?, handle(m)?, opt(mask)) };
        c.set_match(m, mask)
    })
}

/// `doca_flow_pipe_cfg_set_monitor(cfg, monitor)` (`_v1`): NON_SHARED counters are
/// supported.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_monitor_v1(
    cfg: *mut PipeCfg,
    monitor: *const doca_flow_monitor_v1,
) -> u32 {
    call("doca_flow_pipe_cfg_set_monitor", || {
        // SAFETY: C API contract.
        let (c, m) = unsafe { (handle_mut(cfg)?, handle(monitor)?) };
        c.set_monitor(m)
    })
}

/// `doca_flow_pipe_cfg_set_actions(cfg, actions, masks, descs, nr_actions)` (`_v1`):
/// accepted and ignored (packets are not modified).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_actions_v1(
    cfg: *mut PipeCfg,
    actions: *const *mut doca_flow_actions_v1,
    _masks: *const *mut doca_flow_actions_v1,
    _descs: *const *mut doca_flow_action_descs_v1,
    nr_actions: usize,
) -> u32 {
    call("doca_flow_pipe_cfg_set_actions", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(cfg) }?;
        if actions.is_null() && nr_actions > 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        if nr_actions > 0 {
            sdk_warn!("flow", "pipe actions are ignored by the software runtime");
        }
        Ok(())
    })
}

// ---- pipes -----------------------------------------------------------------------------

/// `doca_flow_pipe_create(cfg, fwd, fwd_miss, &pipe)` (`_v1`): BASIC and CONTROL pipes.
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

/// `doca_flow_pipe_destroy(pipe)`: removes the pipe and its entries (unknown pipes are
/// ignored).
#[no_mangle]
pub extern "C" fn doca_flow_pipe_destroy(pipe: *mut doca_flow_pipe) {
    call_value("doca_flow_pipe_destroy", (), || {
        state().destroy_pipe(pipe as usize)
    })
}

// ---- entries ---------------------------------------------------------------------------

/// `doca_flow_pipe_basic_add_entry` (`_v1`, 10 arguments): the pipe's template filled with
/// the match's values.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_basic_add_entry_v1(
    pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    m: *const doca_flow_match_v1,
    _action_idx: u8,
    _actions: *const doca_flow_actions_v1,
    monitor: *const doca_flow_monitor_v1,
    fwd: *const doca_flow_fwd_v1,
    flags: u32,
    _usr_ctx: *mut c_void,
    out: *mut *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_basic_add_entry", || {
        non_null(pipe)?;
        // SAFETY: C API contract (each struct null or valid for the call).
        let (m, monitor, fwd) = unsafe { (opt(m), opt(monitor), opt(fwd)) };
        let e = state().add_basic_entry(pipe_queue, pipe as usize, m, monitor, fwd, flags)?;
        if !out.is_null() {
            // SAFETY: C API contract (writable when non-null).
            unsafe { write_out(out, e.cast()) }?;
        }
        Ok(())
    })
}

/// `doca_flow_pipe_control_add_entry` (`_v1`, 13 arguments): a match under a mask, a
/// priority and a forward; match conditions are NOT_SUPPORTED.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_flow_pipe_control_add_entry_v1(
    pipe_queue: u16,
    pipe: *mut doca_flow_pipe,
    m: *const doca_flow_match_v1,
    mask: *const doca_flow_match_v1,
    condition: *const doca_flow_match_condition_v1,
    _actions: *const doca_flow_actions_v1,
    _actions_mask: *const doca_flow_actions_v1,
    _action_descs: *const doca_flow_action_descs_v1,
    monitor: *const doca_flow_monitor_v1,
    priority: u32,
    fwd: *const doca_flow_fwd_v1,
    _usr_ctx: *mut c_void,
    out: *mut *mut doca_flow_pipe_entry,
) -> u32 {
    call("doca_flow_pipe_control_add_entry", || {
        non_null(pipe)?;
        // SAFETY: C API contract (each struct null or valid for the call).
        let (m, mask, monitor, fwd) = unsafe { (opt(m), opt(mask), opt(monitor), opt(fwd)) };
        let e = state().add_control_entry(
            pipe_queue,
            pipe as usize,
            m,
            mask,
            !condition.is_null(),
            monitor,
            priority,
            fwd,
        )?;
        if !out.is_null() {
            // SAFETY: C API contract (writable when non-null).
            unsafe { write_out(out, e.cast()) }?;
        }
        Ok(())
    })
}

/// `doca_flow_entries_process(port, pipe_queue, timeout, max_processed_entries)`: entries
/// are already active; arms the port.
#[no_mangle]
pub extern "C" fn doca_flow_entries_process(
    port: *mut FlowPort,
    pipe_queue: u16,
    _timeout: u64,
    _max_processed_entries: u32,
) -> u32 {
    call("doca_flow_entries_process", || {
        non_null(port)?;
        state().process_entries(port as usize, pipe_queue)
    })
}

/// `doca_flow_pipe_remove_entry(pipe_queue, flags, entry)`: NOT_FOUND for an unknown (or
/// removed) entry.
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
