//! The DOCA Flow C API (`include/doca_flow.h`), exported with the `_v1` names where the
//! header maps the public name onto one.
//!
//! Choices (documented for users):
//! * Entries take effect as soon as `*_add_entry` returns, whatever the flags;
//!   `doca_flow_entries_process` has nothing left to wait for. It also arms the port (a pcap
//!   port starts its replay then).
//! * Pipe types other than BASIC and CONTROL, shared resources, meters, actions that modify
//!   packets and match conditions are NOT_SUPPORTED (actions are accepted and ignored when
//!   they are given only as pipe configuration).
//! * Handles are validated: a stale pointer gets NOT_FOUND (entries), BAD_STATE (ports, pipes
//!   of a stopped port) or INVALID_VALUE, never undefined behaviour.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use super::classify::{Entry, Fwd, Pipe, PipeKind};
use super::state::{state, EntryHandle, FlowCfg, FlowPort, PipeCfg, PipeHandle, PortCfg, State};
use super::sys;
use super::translate::{basic_entry_matches, basic_template, control_matches, Layout};
use crate::dev::{dev_ref, Dev};
use crate::error::{to_c, DocaError, DocaResult};
use crate::port::Port;

type R = DocaResult<()>;

fn nonnull<T>(p: *const T) -> DocaResult<()> {
    if p.is_null() {
        Err(DocaError::INVALID_VALUE)
    } else {
        Ok(())
    }
}

/// Borrows a builder object from its C pointer.
///
/// # Safety
/// `p` must be null or a pointer returned by the matching `_create` and not destroyed.
unsafe fn obj<'a, T>(p: *mut T) -> DocaResult<&'a mut T> {
    // SAFETY: guaranteed by the caller.
    unsafe { p.as_mut() }.ok_or(DocaError::INVALID_VALUE)
}

fn c_str(p: *const c_char) -> DocaResult<String> {
    nonnull(p)?;
    // SAFETY: p is non-null and the C API requires a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    Ok(s.to_string_lossy().into_owned())
}

/// Reads an optional C struct argument.
fn opt<'a, T>(p: *const T) -> Option<&'a T> {
    // SAFETY: the C API passes null or a valid pointer for the call's duration.
    unsafe { p.as_ref() }
}

fn port_mut<'a>(st: &State, h: usize) -> DocaResult<&'a mut FlowPort> {
    if !st.ports.contains(&h) {
        return Err(DocaError::BAD_STATE);
    }
    // SAFETY: registered handles are live boxes; the state lock serializes access.
    Ok(unsafe { &mut *(h as *mut FlowPort) })
}

fn pipe_mut<'a>(st: &State, h: usize) -> DocaResult<&'a mut PipeHandle> {
    if !st.pipes.contains(&h) {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: as in port_mut.
    Ok(unsafe { &mut *(h as *mut PipeHandle) })
}

fn box_out<T>(v: T, out: *mut *mut T) -> usize {
    let p = Box::into_raw(Box::new(v));
    // SAFETY: out was checked non-null by the caller.
    unsafe { out.write(p) };
    p as usize
}

// ---- library ---------------------------------------------------------------------------

/// `doca_flow_cfg_create`.
#[no_mangle]
pub extern "C" fn doca_flow_cfg_create(cfg: *mut *mut FlowCfg) -> u32 {
    to_c((|| {
        nonnull(cfg)?;
        let c = FlowCfg {
            pipe_queues: 1,
            ..FlowCfg::default()
        };
        box_out(c, cfg);
        Ok(())
    })())
}

/// `doca_flow_cfg_destroy`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_destroy(cfg: *mut FlowCfg) -> u32 {
    to_c((|| {
        nonnull(cfg)?;
        // SAFETY: cfg came from doca_flow_cfg_create (caller contract).
        drop(unsafe { Box::from_raw(cfg) });
        Ok(())
    })())
}

/// `doca_flow_cfg_set_pipe_queues`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_pipe_queues(cfg: *mut FlowCfg, n: u16) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        if n == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        c.pipe_queues = n;
        Ok(())
    })())
}

/// `doca_flow_cfg_set_mode_args`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_mode_args(
    cfg: *mut FlowCfg,
    mode: *const c_char,
) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        c.mode_args = c_str(mode)?;
        Ok(())
    })())
}

/// `doca_flow_cfg_set_nr_counters`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_cfg_set_nr_counters(cfg: *mut FlowCfg, n: u32) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        unsafe { obj(cfg) }?.nr_counters = n;
        Ok(())
    })())
}

/// `doca_flow_init` (exported as `doca_flow_init_v1`). BAD_STATE when already initialized.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_init_v1(cfg: *mut FlowCfg) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        let mut st = state();
        if st.cfg.is_some() {
            return Err(DocaError::BAD_STATE);
        }
        st.cfg = Some(FlowCfg {
            pipe_queues: c.pipe_queues,
            mode_args: c.mode_args.clone(),
            nr_counters: c.nr_counters,
        });
        Ok(())
    })())
}

/// `doca_flow_destroy`: stops every port still started, then forgets the configuration.
#[no_mangle]
pub extern "C" fn doca_flow_destroy() {
    let mut st = state();
    let ports: Vec<usize> = st.ports.iter().copied().collect();
    for p in ports {
        let _ = stop_port(&mut st, p);
    }
    st.cfg = None;
}

// ---- ports -----------------------------------------------------------------------------

/// `doca_flow_port_cfg_create`.
#[no_mangle]
pub extern "C" fn doca_flow_port_cfg_create(cfg: *mut *mut PortCfg) -> u32 {
    to_c((|| {
        nonnull(cfg)?;
        let c = PortCfg {
            port_id: 0,
            dev: std::ptr::null(),
            devargs: String::new(),
        };
        box_out(c, cfg);
        Ok(())
    })())
}

/// `doca_flow_port_cfg_destroy`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_destroy(cfg: *mut PortCfg) -> u32 {
    to_c((|| {
        nonnull(cfg)?;
        // SAFETY: cfg came from doca_flow_port_cfg_create.
        drop(unsafe { Box::from_raw(cfg) });
        Ok(())
    })())
}

/// `doca_flow_port_cfg_set_port_id`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_port_id(cfg: *mut PortCfg, id: u16) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        unsafe { obj(cfg) }?.port_id = id;
        Ok(())
    })())
}

/// `doca_flow_port_cfg_set_dev`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_dev(cfg: *mut PortCfg, dev: *mut Dev) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        nonnull(dev)?;
        c.dev = dev;
        Ok(())
    })())
}

/// `doca_flow_port_cfg_set_devargs`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_cfg_set_devargs(
    cfg: *mut PortCfg,
    args: *const c_char,
) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        c.devargs = c_str(args)?;
        Ok(())
    })())
}

/// `doca_flow_port_start`: BAD_STATE before `doca_flow_init`, INVALID_VALUE without a
/// device, ALREADY_EXIST when the port id is started.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_start(cfg: *const PortCfg, out: *mut *mut FlowPort) -> u32 {
    to_c((|| {
        nonnull(out)?;
        let c = opt(cfg).ok_or(DocaError::INVALID_VALUE)?;
        let mut st = state();
        if st.cfg.is_none() {
            return Err(DocaError::BAD_STATE);
        }
        // SAFETY: the device pointer was given through set_dev and must still be open.
        let dev = unsafe { dev_ref(c.dev) }?;
        for &p in &st.ports {
            if port_mut(&st, p)?.port_id == c.port_id {
                return Err(DocaError::ALREADY_EXIST);
            }
        }
        let port = Port::for_dev(dev.info())?;
        port.acquire()?;
        dev.add_user();
        let h = box_out(
            FlowPort {
                port_id: c.port_id,
                dev: c.dev,
                port,
                pipes: Vec::new(),
                has_root: false,
            },
            out,
        );
        st.ports.insert(h);
        Ok(())
    })())
}

fn stop_port(st: &mut State, h: usize) -> R {
    let pipes = std::mem::take(&mut port_mut(st, h)?.pipes);
    for p in pipes {
        destroy_pipe(st, p);
    }
    let fp = port_mut(st, h)?;
    fp.port.set_flow_root(None);
    fp.port.release();
    // SAFETY: the device cannot be closed while this port uses it (add_user at start).
    if let Ok(dev) = unsafe { dev_ref(fp.dev) } {
        dev.remove_user();
    }
    st.ports.remove(&h);
    // SAFETY: h was a registered live box; it is unregistered now and freed once.
    drop(unsafe { Box::from_raw(h as *mut FlowPort) });
    Ok(())
}

/// `doca_flow_port_stop`: destroys the port's pipes and stops steering.
#[no_mangle]
pub extern "C" fn doca_flow_port_stop(port: *mut FlowPort) -> u32 {
    to_c((|| {
        nonnull(port)?;
        let mut st = state();
        stop_port(&mut st, port as usize)
    })())
}

// ---- pipe configuration ------------------------------------------------------------------

/// `doca_flow_pipe_cfg_create`: BAD_STATE when the port is not started.
#[no_mangle]
pub extern "C" fn doca_flow_pipe_cfg_create(cfg: *mut *mut PipeCfg, port: *mut FlowPort) -> u32 {
    to_c((|| {
        nonnull(cfg)?;
        nonnull(port)?;
        let st = state();
        port_mut(&st, port as usize)?;
        box_out(
            PipeCfg {
                port: port as usize,
                name: String::new(),
                kind: sys::DOCA_FLOW_PIPE_BASIC,
                is_root: false,
                domain: sys::DOCA_FLOW_PIPE_DOMAIN_DEFAULT,
                nr_entries: 0,
                template: Vec::new(),
                layout: Layout::default(),
                counters: false,
                miss_counter: false,
            },
            cfg,
        );
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_destroy`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_destroy(cfg: *mut PipeCfg) -> u32 {
    to_c((|| {
        nonnull(cfg)?;
        // SAFETY: cfg came from doca_flow_pipe_cfg_create.
        drop(unsafe { Box::from_raw(cfg) });
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_set_name`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_name(
    cfg: *mut PipeCfg,
    name: *const c_char,
) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        c.name = c_str(name)?;
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_set_type`: INVALID_VALUE for an unknown type.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_type(cfg: *mut PipeCfg, kind: u32) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        if kind > sys::DOCA_FLOW_PIPE_HASH {
            return Err(DocaError::INVALID_VALUE);
        }
        c.kind = kind;
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_set_is_root`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_is_root(cfg: *mut PipeCfg, is_root: bool) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        unsafe { obj(cfg) }?.is_root = is_root;
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_set_domain`: INVALID_VALUE for an unknown domain.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_domain(cfg: *mut PipeCfg, domain: u32) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        if domain > sys::DOCA_FLOW_PIPE_DOMAIN_SECURE_EGRESS {
            return Err(DocaError::INVALID_VALUE);
        }
        c.domain = domain;
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_set_nr_entries`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_nr_entries(cfg: *mut PipeCfg, n: u32) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        unsafe { obj(cfg) }?.nr_entries = n;
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_set_miss_counter`.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_miss_counter(cfg: *mut PipeCfg, on: bool) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        unsafe { obj(cfg) }?.miss_counter = on;
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_set_match` (`_v1`): the BASIC template (ignored by CONTROL pipes).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_match_v1(
    cfg: *mut PipeCfg,
    m: *const sys::doca_flow_match_v1,
    mask: *const sys::doca_flow_match_v1,
) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        let m = opt(m).ok_or(DocaError::INVALID_VALUE)?;
        c.template = basic_template(m, opt(mask))?;
        c.layout = Layout::of(m);
        Ok(())
    })())
}

fn monitor_counts(m: &sys::doca_flow_monitor_v1) -> DocaResult<bool> {
    if m.meter_type != sys::DOCA_FLOW_RESOURCE_TYPE_NONE {
        sdk_err!("flow", "meters are not supported");
        return Err(DocaError::NOT_SUPPORTED);
    }
    match m.counter_type {
        sys::DOCA_FLOW_RESOURCE_TYPE_NONE => Ok(false),
        sys::DOCA_FLOW_RESOURCE_TYPE_NON_SHARED => Ok(true),
        sys::DOCA_FLOW_RESOURCE_TYPE_SHARED => {
            sdk_err!("flow", "shared counters are not supported");
            Err(DocaError::NOT_SUPPORTED)
        }
        _ => Err(DocaError::INVALID_VALUE),
    }
}

/// `doca_flow_pipe_cfg_set_monitor` (`_v1`): NON_SHARED counters are supported.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_monitor_v1(
    cfg: *mut PipeCfg,
    monitor: *const sys::doca_flow_monitor_v1,
) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        let c = unsafe { obj(cfg) }?;
        let m = opt(monitor).ok_or(DocaError::INVALID_VALUE)?;
        c.counters = monitor_counts(m)?;
        Ok(())
    })())
}

/// `doca_flow_pipe_cfg_set_actions` (`_v1`): accepted and ignored (packets are not modified).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_cfg_set_actions_v1(
    cfg: *mut PipeCfg,
    actions: *const *mut sys::doca_flow_actions_v1,
    _masks: *const *mut sys::doca_flow_actions_v1,
    _descs: *const *mut sys::doca_flow_action_descs_v1,
    nr_actions: usize,
) -> u32 {
    to_c((|| {
        // SAFETY: caller contract of obj.
        unsafe { obj(cfg) }?;
        if actions.is_null() && nr_actions > 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        if nr_actions > 0 {
            sdk_warn!("flow", "pipe actions are ignored by the software runtime");
        }
        Ok(())
    })())
}

// ---- pipes -----------------------------------------------------------------------------

/// Translates a C forward.
fn fwd_of(st: &State, f: &sys::doca_flow_fwd_v1) -> DocaResult<Fwd> {
    match f.type_ {
        sys::DOCA_FLOW_FWD_NONE => Ok(Fwd::None),
        sys::DOCA_FLOW_FWD_DROP => Ok(Fwd::Drop),
        sys::DOCA_FLOW_FWD_RSS => {
            // SAFETY: type RSS selects the rss view of the union.
            let r = unsafe { f.__bindgen_anon_1.__bindgen_anon_1 };
            if r.rss_type == sys::DOCA_FLOW_RESOURCE_TYPE_SHARED {
                return Err(DocaError::NOT_SUPPORTED);
            }
            // SAFETY: non-shared RSS uses the rss member.
            let cfg = unsafe { r.__bindgen_anon_1.rss };
            if cfg.nr_queues <= 0 || cfg.queues_array.is_null() {
                return Err(DocaError::INVALID_VALUE);
            }
            // SAFETY: the caller passes nr_queues readable ids at queues_array.
            let q = unsafe { std::slice::from_raw_parts(cfg.queues_array, cfg.nr_queues as usize) };
            Ok(Fwd::Rss {
                queues: q.to_vec(),
                flags: cfg.outer_flags,
            })
        }
        sys::DOCA_FLOW_FWD_PIPE => {
            // SAFETY: type PIPE selects the next_pipe view.
            let next = unsafe { f.__bindgen_anon_1.__bindgen_anon_3.next_pipe } as usize;
            if next == 0 {
                return Err(DocaError::INVALID_VALUE);
            }
            let p = pipe_mut(st, next)?;
            Ok(Fwd::Pipe(Arc::downgrade(&p.pipe)))
        }
        t if t <= sys::DOCA_FLOW_FWD_HASH_PIPE || t == sys::DOCA_FLOW_FWD_CHANGEABLE => {
            sdk_err!("flow", "forward type {t} is not supported");
            Err(DocaError::NOT_SUPPORTED)
        }
        _ => Err(DocaError::INVALID_VALUE),
    }
}

/// `doca_flow_pipe_create` (`_v1`): BASIC and CONTROL pipes.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_create_v1(
    cfg: *const PipeCfg,
    fwd: *const sys::doca_flow_fwd_v1,
    fwd_miss: *const sys::doca_flow_fwd_v1,
    out: *mut *mut sys::doca_flow_pipe,
) -> u32 {
    to_c((|| {
        nonnull(out)?;
        let c = opt(cfg).ok_or(DocaError::INVALID_VALUE)?;
        let mut st = state();
        let fp = port_mut(&st, c.port)?;
        let kind = match c.kind {
            sys::DOCA_FLOW_PIPE_BASIC => PipeKind::Basic,
            sys::DOCA_FLOW_PIPE_CONTROL => PipeKind::Control,
            _ => return Err(DocaError::NOT_SUPPORTED),
        };
        if c.domain != sys::DOCA_FLOW_PIPE_DOMAIN_DEFAULT {
            return Err(DocaError::NOT_SUPPORTED);
        }
        if kind == PipeKind::Control && (!fwd.is_null() || !fwd_miss.is_null()) {
            return Err(DocaError::INVALID_VALUE);
        }
        if c.is_root && fp.has_root {
            return Err(DocaError::ALREADY_EXIST);
        }
        let f = opt(fwd).map_or(Ok(Fwd::None), |f| fwd_of(&st, f))?;
        let miss = opt(fwd_miss).map_or(Ok(Fwd::None), |f| fwd_of(&st, f))?;
        let name = if c.name.is_empty() { "pipe" } else { &c.name };
        let pipe = Arc::new(Pipe::new(name, kind, f, miss, c.miss_counter));
        if c.is_root {
            fp.port.set_flow_root(Some(pipe.clone()));
            fp.has_root = true;
        }
        let h = Box::into_raw(Box::new(PipeHandle {
            port: c.port,
            pipe,
            template: c.template.clone(),
            layout: c.layout,
            counters: c.counters,
            is_root: c.is_root,
            entries: Vec::new(),
        })) as usize;
        fp.pipes.push(h);
        st.pipes.insert(h);
        // SAFETY: out checked non-null.
        unsafe { out.write(h as *mut sys::doca_flow_pipe) };
        Ok(())
    })())
}

fn destroy_pipe(st: &mut State, h: usize) {
    if !st.pipes.remove(&h) {
        return;
    }
    // SAFETY: h was registered (live); unregistered now and freed once.
    let ph = unsafe { Box::from_raw(h as *mut PipeHandle) };
    for e in &ph.entries {
        if st.entries.remove(e) {
            // SAFETY: registered entry boxes are live; freed once.
            drop(unsafe { Box::from_raw(*e as *mut EntryHandle) });
        }
    }
    if let Ok(fp) = port_mut(st, ph.port) {
        fp.pipes.retain(|p| *p != h);
        if ph.is_root {
            fp.port.set_flow_root(None);
            fp.has_root = false;
        }
    }
}

/// `doca_flow_pipe_destroy`: removes the pipe and its entries (unknown pipes are ignored).
#[no_mangle]
pub extern "C" fn doca_flow_pipe_destroy(pipe: *mut sys::doca_flow_pipe) {
    let mut st = state();
    destroy_pipe(&mut st, pipe as usize);
}

// ---- entries ---------------------------------------------------------------------------

fn check_queue(st: &State, pipe_queue: u16) -> R {
    let n = st.cfg.as_ref().map_or(0, |c| c.pipe_queues);
    if pipe_queue >= n {
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(())
}

fn check_flags(flags: u32) -> R {
    let known = sys::DOCA_FLOW_ENTRY_FLAGS_NO_WAIT | sys::DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH;
    if flags & !known != 0 {
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(())
}

fn add_entry(
    st: &mut State,
    pipe: usize,
    entry: Entry,
    out: *mut *mut sys::doca_flow_pipe_entry,
) -> R {
    let ph = pipe_mut(st, pipe)?;
    let e = ph.pipe.add(entry);
    let h = Box::into_raw(Box::new(EntryHandle { pipe, entry: e })) as usize;
    ph.entries.push(h);
    st.entries.insert(h);
    if !out.is_null() {
        // SAFETY: out is non-null and points to caller storage.
        unsafe { out.write(h as *mut sys::doca_flow_pipe_entry) };
    }
    Ok(())
}

fn entry_counts(default: bool, monitor: *const sys::doca_flow_monitor_v1) -> DocaResult<bool> {
    match opt(monitor) {
        Some(m) => Ok(default || monitor_counts(m)?),
        None => Ok(default),
    }
}

/// `doca_flow_pipe_basic_add_entry` (`_v1`, 10 arguments).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_basic_add_entry_v1(
    pipe_queue: u16,
    pipe: *mut sys::doca_flow_pipe,
    m: *const sys::doca_flow_match_v1,
    _action_idx: u8,
    _actions: *const sys::doca_flow_actions_v1,
    monitor: *const sys::doca_flow_monitor_v1,
    fwd: *const sys::doca_flow_fwd_v1,
    flags: u32,
    _usr_ctx: *mut c_void,
    out: *mut *mut sys::doca_flow_pipe_entry,
) -> u32 {
    to_c((|| {
        nonnull(pipe)?;
        let mut st = state();
        check_queue(&st, pipe_queue)?;
        check_flags(flags)?;
        let ph = pipe_mut(&st, pipe as usize)?;
        if ph.kind() != PipeKind::Basic {
            return Err(DocaError::INVALID_VALUE);
        }
        let matches = basic_entry_matches(&ph.template, ph.layout, opt(m))?;
        let counts = entry_counts(ph.counters, monitor)?;
        let fwd = opt(fwd).map_or(Ok(Fwd::None), |f| fwd_of(&st, f))?;
        let e = Entry {
            matches,
            priority: 0,
            fwd,
            counter: counts.then(Default::default),
        };
        add_entry(&mut st, pipe as usize, e, out)
    })())
}

/// `doca_flow_pipe_control_add_entry` (`_v1`, 13 arguments).
#[no_mangle]
pub unsafe extern "C" fn doca_flow_pipe_control_add_entry_v1(
    pipe_queue: u16,
    pipe: *mut sys::doca_flow_pipe,
    m: *const sys::doca_flow_match_v1,
    mask: *const sys::doca_flow_match_v1,
    condition: *const sys::doca_flow_match_condition_v1,
    _actions: *const sys::doca_flow_actions_v1,
    _actions_mask: *const sys::doca_flow_actions_v1,
    _action_descs: *const sys::doca_flow_action_descs_v1,
    monitor: *const sys::doca_flow_monitor_v1,
    priority: u32,
    fwd: *const sys::doca_flow_fwd_v1,
    _usr_ctx: *mut c_void,
    out: *mut *mut sys::doca_flow_pipe_entry,
) -> u32 {
    to_c((|| {
        nonnull(pipe)?;
        let f = opt(fwd).ok_or(DocaError::INVALID_VALUE)?;
        if !condition.is_null() {
            return Err(DocaError::NOT_SUPPORTED);
        }
        let mut st = state();
        check_queue(&st, pipe_queue)?;
        let ph = pipe_mut(&st, pipe as usize)?;
        if ph.kind() != PipeKind::Control {
            return Err(DocaError::INVALID_VALUE);
        }
        let zero = sys::doca_flow_match_v1::default();
        let matches = control_matches(opt(m).unwrap_or(&zero), opt(mask))?;
        let counts = entry_counts(ph.counters, monitor)?;
        let fwd = fwd_of(&st, f)?;
        if matches!(fwd, Fwd::None) {
            return Err(DocaError::INVALID_VALUE);
        }
        let e = Entry {
            matches,
            priority,
            fwd,
            counter: counts.then(Default::default),
        };
        add_entry(&mut st, pipe as usize, e, out)
    })())
}

/// `doca_flow_entries_process`: entries are already active; arms the port.
#[no_mangle]
pub extern "C" fn doca_flow_entries_process(
    port: *mut FlowPort,
    pipe_queue: u16,
    _timeout: u64,
    _max_processed_entries: u32,
) -> u32 {
    to_c((|| {
        nonnull(port)?;
        let st = state();
        let fp = port_mut(&st, port as usize)?;
        check_queue(&st, pipe_queue)?;
        fp.port.arm();
        Ok(())
    })())
}

/// `doca_flow_pipe_remove_entry`: NOT_FOUND for an unknown (or removed) entry.
#[no_mangle]
pub extern "C" fn doca_flow_pipe_remove_entry(
    pipe_queue: u16,
    flags: u32,
    entry: *mut sys::doca_flow_pipe_entry,
) -> u32 {
    to_c((|| {
        nonnull(entry)?;
        let mut st = state();
        check_queue(&st, pipe_queue)?;
        check_flags(flags)?;
        let h = entry as usize;
        if !st.entries.remove(&h) {
            return Err(DocaError::NOT_FOUND);
        }
        // SAFETY: h was a registered live entry box; unregistered now, freed once.
        let eh = unsafe { Box::from_raw(h as *mut EntryHandle) };
        if let Ok(ph) = pipe_mut(&st, eh.pipe) {
            ph.pipe.remove(&eh.entry);
            ph.entries.retain(|e| *e != h);
        }
        Ok(())
    })())
}

fn write_query(out: *mut sys::doca_flow_resource_query_v1, (pkts, bytes): (u64, u64)) {
    let mut q = sys::doca_flow_resource_query_v1::default();
    q.__bindgen_anon_1.counter.total_pkts = pkts;
    q.__bindgen_anon_1.counter.total_bytes = bytes;
    // SAFETY: out was checked non-null by the caller.
    unsafe { out.write(q) };
}

/// `doca_flow_resource_query_entry` (`_v1`): packets and bytes of a counting entry;
/// NOT_SUPPORTED when the entry has no counter.
#[no_mangle]
pub extern "C" fn doca_flow_resource_query_entry_v1(
    entry: *mut sys::doca_flow_pipe_entry,
    query: *mut sys::doca_flow_resource_query_v1,
) -> u32 {
    to_c((|| {
        nonnull(entry)?;
        nonnull(query)?;
        let st = state();
        let h = entry as usize;
        if !st.entries.contains(&h) {
            return Err(DocaError::NOT_FOUND);
        }
        // SAFETY: registered entries are live boxes.
        let eh = unsafe { &*(h as *const EntryHandle) };
        let c = eh.entry.counter.as_ref().ok_or(DocaError::NOT_SUPPORTED)?;
        write_query(query, c.get());
        Ok(())
    })())
}

/// `doca_flow_resource_query_pipe_miss` (`_v1`): NOT_SUPPORTED without a miss counter.
#[no_mangle]
pub extern "C" fn doca_flow_resource_query_pipe_miss_v1(
    pipe: *mut sys::doca_flow_pipe,
    query: *mut sys::doca_flow_resource_query_v1,
) -> u32 {
    to_c((|| {
        nonnull(pipe)?;
        nonnull(query)?;
        let st = state();
        let ph = pipe_mut(&st, pipe as usize)?;
        let c = ph
            .pipe
            .miss_counter
            .as_ref()
            .ok_or(DocaError::NOT_SUPPORTED)?;
        write_query(query, c.get());
        Ok(())
    })())
}
