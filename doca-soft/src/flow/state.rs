//! The Flow library's objects behind the C handles, the registry that validates handles
//! (a stale or foreign pointer gets an error code, not undefined behaviour), and the
//! operations of the C API on them.
//!
//! Choices (documented for users):
//! * Entries take effect as soon as they are added, whatever the flags; processing entries
//!   has nothing left to wait for. It also arms the port (a pcap port starts its replay).
//! * Pipe types other than BASIC and CONTROL, shared resources, meters, actions that modify
//!   packets and match conditions are NOT_SUPPORTED (actions are accepted and ignored when
//!   they are given only as pipe configuration).
//! * A stale handle gets NOT_FOUND (entries), BAD_STATE (ports, pipes of a stopped port) or
//!   INVALID_VALUE, never undefined behaviour.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use once_cell::sync::Lazy;

use super::sys;
use super::translate::{
    basic_entry_matches, basic_template, control_matches, monitor_counts, Layout, TemplateField,
};
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{Entry, Fwd, Pipe, PipeKind};
use crate::port::Port;
use crate::sync::lock;

/// `struct doca_flow_cfg`.
#[derive(Debug, Default, Clone)]
pub struct FlowCfg {
    /// Pipe queues (entry-insertion queues); at least 1.
    pub(crate) pipe_queues: u16,
    /// Mode string (recorded; modes do not change the emulation).
    pub(crate) mode_args: String,
    /// Counter budget.
    pub(crate) nr_counters: u32,
}

/// `struct doca_flow_port_cfg`.
#[derive(Debug)]
pub struct PortCfg {
    /// Flow port id.
    pub(crate) port_id: u16,
    /// The device (`struct doca_dev *`), not owned.
    pub(crate) dev: *const Dev,
    /// DPDK-style device arguments (recorded, unused).
    pub(crate) devargs: String,
}

/// `struct doca_flow_port`: a started Flow port.
pub struct FlowPort {
    /// Flow port id.
    pub(crate) port_id: u16,
    /// The device (`struct doca_dev *`); marked in use while the port is started.
    pub(crate) dev: *const Dev,
    /// The soft port it steers.
    pub(crate) port: Arc<Port>,
    /// Pipes created on this port (handles, for teardown at port stop).
    pub(crate) pipes: Vec<usize>,
    /// Whether a root pipe exists.
    pub(crate) has_root: bool,
}

/// `struct doca_flow_pipe_cfg`.
#[derive(Debug)]
pub struct PipeCfg {
    /// Port handle the pipe will be created on.
    pub(crate) port: usize,
    /// Name.
    pub(crate) name: String,
    /// `enum doca_flow_pipe_type` value.
    pub(crate) kind: u32,
    /// Root pipe of the port.
    pub(crate) is_root: bool,
    /// `enum doca_flow_pipe_domain` value.
    pub(crate) domain: u32,
    /// Entry budget (recorded).
    pub(crate) nr_entries: u32,
    /// BASIC template (from `set_match`) and the layout entries are read with.
    pub(crate) template: Vec<TemplateField>,
    /// Layout of the pipe's match.
    pub(crate) layout: Layout,
    /// Entries count packets (monitor counter NON_SHARED).
    pub(crate) counters: bool,
    /// The pipe counts misses.
    pub(crate) miss_counter: bool,
}

/// `struct doca_flow_pipe`.
pub(crate) struct PipeHandle {
    /// Port handle.
    pub(crate) port: usize,
    /// The table.
    pub(crate) pipe: Arc<Pipe>,
    /// BASIC template.
    pub(crate) template: Vec<TemplateField>,
    /// Layout entries are read with.
    pub(crate) layout: Layout,
    /// Entries count by default.
    pub(crate) counters: bool,
    /// Root pipe of its port.
    pub(crate) is_root: bool,
    /// Entry handles of this pipe.
    pub(crate) entries: Vec<usize>,
}

impl PipeHandle {
    /// BASIC or CONTROL.
    pub(crate) fn kind(&self) -> PipeKind {
        self.pipe.kind
    }
}

/// `struct doca_flow_pipe_entry`.
pub(crate) struct EntryHandle {
    /// Pipe handle.
    pub(crate) pipe: usize,
    /// The entry in the pipe's table.
    pub(crate) entry: Arc<Entry>,
}

/// Global Flow state: whether `doca_flow_init` ran, and the live handles.
#[derive(Default)]
pub(crate) struct State {
    /// The configuration given to `doca_flow_init` (None: not initialized).
    pub(crate) cfg: Option<FlowCfg>,
    /// Started ports.
    pub(crate) ports: HashSet<usize>,
    /// Live pipes.
    pub(crate) pipes: HashSet<usize>,
    /// Live entries.
    pub(crate) entries: HashSet<usize>,
}

static STATE: Lazy<Mutex<State>> = Lazy::new(|| Mutex::new(State::default()));

/// Locks the Flow state (control path only; the dispatcher never takes it).
pub(crate) fn state() -> MutexGuard<'static, State> {
    lock(&STATE)
}

impl FlowCfg {
    /// What `doca_flow_cfg_create` makes: one pipe queue.
    pub(crate) fn new() -> FlowCfg {
        FlowCfg {
            pipe_queues: 1,
            ..FlowCfg::default()
        }
    }
}

impl PortCfg {
    /// What `doca_flow_port_cfg_create` makes: port 0, no device.
    pub(crate) fn new() -> PortCfg {
        PortCfg {
            port_id: 0,
            dev: std::ptr::null(),
            devargs: String::new(),
        }
    }
}

impl PipeCfg {
    /// What `doca_flow_pipe_cfg_create` makes for the port handle `port`: a BASIC pipe of
    /// the default domain, no match.
    pub(crate) fn new(port: usize) -> PipeCfg {
        PipeCfg {
            port,
            name: String::new(),
            kind: sys::DOCA_FLOW_PIPE_BASIC,
            is_root: false,
            domain: sys::DOCA_FLOW_PIPE_DOMAIN_DEFAULT,
            nr_entries: 0,
            template: Vec::new(),
            layout: Layout::default(),
            counters: false,
            miss_counter: false,
        }
    }

    /// `set_type`: INVALID_VALUE for an unknown type.
    pub(crate) fn set_type(&mut self, kind: u32) -> DocaResult<()> {
        if kind > sys::DOCA_FLOW_PIPE_HASH {
            return Err(DocaError::INVALID_VALUE);
        }
        self.kind = kind;
        Ok(())
    }

    /// `set_domain`: INVALID_VALUE for an unknown domain.
    pub(crate) fn set_domain(&mut self, domain: u32) -> DocaResult<()> {
        if domain > sys::DOCA_FLOW_PIPE_DOMAIN_SECURE_EGRESS {
            return Err(DocaError::INVALID_VALUE);
        }
        self.domain = domain;
        Ok(())
    }

    /// `set_match`: the BASIC template (ignored by CONTROL pipes).
    pub(crate) fn set_match(
        &mut self,
        m: &sys::doca_flow_match_v1,
        mask: Option<&sys::doca_flow_match_v1>,
    ) -> DocaResult<()> {
        self.template = basic_template(m, mask)?;
        self.layout = Layout::of(m);
        Ok(())
    }

    /// `set_monitor`: NON_SHARED counters are supported.
    pub(crate) fn set_monitor(&mut self, m: &sys::doca_flow_monitor_v1) -> DocaResult<()> {
        self.counters = monitor_counts(m)?;
        Ok(())
    }
}

/// What `State::check_flags` accepts.
const KNOWN_ENTRY_FLAGS: u32 =
    sys::DOCA_FLOW_ENTRY_FLAGS_NO_WAIT | sys::DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH;

impl State {
    /// A started port, by handle; BAD_STATE when it is not one (stopped, or foreign).
    pub(crate) fn port_mut<'a>(&self, h: usize) -> DocaResult<&'a mut FlowPort> {
        if !self.ports.contains(&h) {
            return Err(DocaError::BAD_STATE);
        }
        // SAFETY: registered handles are live boxes; the state lock serializes access.
        Ok(unsafe { &mut *(h as *mut FlowPort) })
    }

    /// A live pipe, by handle; INVALID_VALUE when it is not one.
    pub(crate) fn pipe_mut<'a>(&self, h: usize) -> DocaResult<&'a mut PipeHandle> {
        if !self.pipes.contains(&h) {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: as in port_mut.
        Ok(unsafe { &mut *(h as *mut PipeHandle) })
    }

    /// BAD_STATE before `doca_flow_init`.
    pub(crate) fn require_init(&self) -> DocaResult<()> {
        if self.cfg.is_none() {
            return Err(DocaError::BAD_STATE);
        }
        Ok(())
    }

    /// `doca_flow_init`: BAD_STATE when already initialized.
    pub(crate) fn init(&mut self, cfg: &FlowCfg) -> DocaResult<()> {
        if self.cfg.is_some() {
            return Err(DocaError::BAD_STATE);
        }
        self.cfg = Some(cfg.clone());
        Ok(())
    }

    /// `doca_flow_destroy`: stops every port still started, then forgets the configuration.
    pub(crate) fn destroy(&mut self) {
        let ports: Vec<usize> = self.ports.iter().copied().collect();
        for p in ports {
            let _ = self.stop_port(p);
        }
        self.cfg = None;
    }

    /// `doca_flow_port_start`: BAD_STATE before init, ALREADY_EXIST when the port id is
    /// started. The device is in use until the port stops.
    pub(crate) fn start_port(&mut self, port_id: u16, dev: &Dev) -> DocaResult<*mut FlowPort> {
        self.require_init()?;
        for &p in &self.ports {
            if self.port_mut(p)?.port_id == port_id {
                return Err(DocaError::ALREADY_EXIST);
            }
        }
        let port = Port::for_dev(dev.info())?;
        port.acquire()?;
        dev.add_user();
        let h = Box::into_raw(Box::new(FlowPort {
            port_id,
            dev: dev as *const Dev,
            port,
            pipes: Vec::new(),
            has_root: false,
        }));
        self.ports.insert(h as usize);
        Ok(h)
    }

    /// `doca_flow_port_stop`: destroys the port's pipes and stops steering.
    pub(crate) fn stop_port(&mut self, h: usize) -> DocaResult<()> {
        let pipes = std::mem::take(&mut self.port_mut(h)?.pipes);
        for p in pipes {
            self.destroy_pipe(p);
        }
        let fp = self.port_mut(h)?;
        fp.port.set_flow_root(None);
        fp.port.release();
        // SAFETY: the device cannot be closed while this port uses it (add_user at start).
        if let Some(dev) = unsafe { fp.dev.as_ref() } {
            dev.remove_user();
        }
        self.ports.remove(&h);
        // SAFETY: h was a registered live box; it is unregistered now and freed once.
        drop(unsafe { Box::from_raw(h as *mut FlowPort) });
        Ok(())
    }

    /// Translates a C forward.
    pub(crate) fn fwd_of(&self, f: &sys::doca_flow_fwd_v1) -> DocaResult<Fwd> {
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
                let q =
                    unsafe { std::slice::from_raw_parts(cfg.queues_array, cfg.nr_queues as usize) };
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
                let p = self.pipe_mut(next)?;
                Ok(Fwd::Pipe(Arc::downgrade(&p.pipe)))
            }
            t if t <= sys::DOCA_FLOW_FWD_HASH_PIPE || t == sys::DOCA_FLOW_FWD_CHANGEABLE => {
                sdk_err!("flow", "forward type {t} is not supported");
                Err(DocaError::NOT_SUPPORTED)
            }
            _ => Err(DocaError::INVALID_VALUE),
        }
    }

    /// `doca_flow_pipe_create`: BASIC and CONTROL pipes of the default domain; a CONTROL
    /// pipe takes no forwards; a port has one root pipe.
    pub(crate) fn create_pipe(
        &mut self,
        c: &PipeCfg,
        fwd: Option<&sys::doca_flow_fwd_v1>,
        fwd_miss: Option<&sys::doca_flow_fwd_v1>,
    ) -> DocaResult<*mut PipeHandle> {
        let fp = self.port_mut(c.port)?;
        let kind = match c.kind {
            sys::DOCA_FLOW_PIPE_BASIC => PipeKind::Basic,
            sys::DOCA_FLOW_PIPE_CONTROL => PipeKind::Control,
            _ => return Err(DocaError::NOT_SUPPORTED),
        };
        if c.domain != sys::DOCA_FLOW_PIPE_DOMAIN_DEFAULT {
            return Err(DocaError::NOT_SUPPORTED);
        }
        if kind == PipeKind::Control && (fwd.is_some() || fwd_miss.is_some()) {
            return Err(DocaError::INVALID_VALUE);
        }
        if c.is_root && fp.has_root {
            return Err(DocaError::ALREADY_EXIST);
        }
        let f = fwd.map_or(Ok(Fwd::None), |f| self.fwd_of(f))?;
        let miss = fwd_miss.map_or(Ok(Fwd::None), |f| self.fwd_of(f))?;
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
        }));
        fp.pipes.push(h as usize);
        self.pipes.insert(h as usize);
        Ok(h)
    }

    /// `doca_flow_pipe_destroy`: removes the pipe and its entries (unknown pipes are
    /// ignored).
    pub(crate) fn destroy_pipe(&mut self, h: usize) {
        if !self.pipes.remove(&h) {
            return;
        }
        // SAFETY: h was registered (live); unregistered now and freed once.
        let ph = unsafe { Box::from_raw(h as *mut PipeHandle) };
        for e in &ph.entries {
            if self.entries.remove(e) {
                // SAFETY: registered entry boxes are live; freed once.
                drop(unsafe { Box::from_raw(*e as *mut EntryHandle) });
            }
        }
        if let Ok(fp) = self.port_mut(ph.port) {
            fp.pipes.retain(|p| *p != h);
            if ph.is_root {
                fp.port.set_flow_root(None);
                fp.has_root = false;
            }
        }
    }

    /// INVALID_VALUE for a pipe queue beyond the configured ones.
    pub(crate) fn check_queue(&self, pipe_queue: u16) -> DocaResult<()> {
        let n = self.cfg.as_ref().map_or(0, |c| c.pipe_queues);
        if pipe_queue >= n {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }

    /// INVALID_VALUE for unknown entry flags.
    pub(crate) fn check_flags(flags: u32) -> DocaResult<()> {
        if flags & !KNOWN_ENTRY_FLAGS != 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }

    fn add_entry(&mut self, pipe: usize, entry: Entry) -> DocaResult<*mut EntryHandle> {
        let ph = self.pipe_mut(pipe)?;
        let e = ph.pipe.add(entry);
        let h = Box::into_raw(Box::new(EntryHandle { pipe, entry: e }));
        ph.entries.push(h as usize);
        self.entries.insert(h as usize);
        Ok(h)
    }

    /// `doca_flow_pipe_basic_add_entry`: the pipe's template filled with `m`'s values.
    pub(crate) fn add_basic_entry(
        &mut self,
        pipe_queue: u16,
        pipe: usize,
        m: Option<&sys::doca_flow_match_v1>,
        monitor: Option<&sys::doca_flow_monitor_v1>,
        fwd: Option<&sys::doca_flow_fwd_v1>,
        flags: u32,
    ) -> DocaResult<*mut EntryHandle> {
        self.check_queue(pipe_queue)?;
        Self::check_flags(flags)?;
        let ph = self.pipe_mut(pipe)?;
        if ph.kind() != PipeKind::Basic {
            return Err(DocaError::INVALID_VALUE);
        }
        let matches = basic_entry_matches(&ph.template, ph.layout, m)?;
        let counts = entry_counts(ph.counters, monitor)?;
        let fwd = fwd.map_or(Ok(Fwd::None), |f| self.fwd_of(f))?;
        let e = Entry {
            matches,
            priority: 0,
            fwd,
            counter: counts.then(Default::default),
        };
        self.add_entry(pipe, e)
    }

    /// `doca_flow_pipe_control_add_entry`: a match under a mask, a priority and a forward
    /// (required); match conditions are NOT_SUPPORTED.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_control_entry(
        &mut self,
        pipe_queue: u16,
        pipe: usize,
        m: Option<&sys::doca_flow_match_v1>,
        mask: Option<&sys::doca_flow_match_v1>,
        has_condition: bool,
        monitor: Option<&sys::doca_flow_monitor_v1>,
        priority: u32,
        fwd: Option<&sys::doca_flow_fwd_v1>,
    ) -> DocaResult<*mut EntryHandle> {
        let f = fwd.ok_or(DocaError::INVALID_VALUE)?;
        if has_condition {
            return Err(DocaError::NOT_SUPPORTED);
        }
        self.check_queue(pipe_queue)?;
        let ph = self.pipe_mut(pipe)?;
        if ph.kind() != PipeKind::Control {
            return Err(DocaError::INVALID_VALUE);
        }
        let zero = sys::doca_flow_match_v1::default();
        let matches = control_matches(m.unwrap_or(&zero), mask)?;
        let counts = entry_counts(ph.counters, monitor)?;
        let fwd = self.fwd_of(f)?;
        if matches!(fwd, Fwd::None) {
            return Err(DocaError::INVALID_VALUE);
        }
        let e = Entry {
            matches,
            priority,
            fwd,
            counter: counts.then(Default::default),
        };
        self.add_entry(pipe, e)
    }

    /// `doca_flow_entries_process`: entries are already active; arms the port.
    pub(crate) fn process_entries(&self, port: usize, pipe_queue: u16) -> DocaResult<()> {
        let fp = self.port_mut(port)?;
        self.check_queue(pipe_queue)?;
        fp.port.arm();
        Ok(())
    }

    /// `doca_flow_pipe_remove_entry`: NOT_FOUND for an unknown (or removed) entry.
    pub(crate) fn remove_entry(&mut self, pipe_queue: u16, flags: u32, h: usize) -> DocaResult<()> {
        self.check_queue(pipe_queue)?;
        Self::check_flags(flags)?;
        if !self.entries.remove(&h) {
            return Err(DocaError::NOT_FOUND);
        }
        // SAFETY: h was a registered live entry box; unregistered now, freed once.
        let eh = unsafe { Box::from_raw(h as *mut EntryHandle) };
        if let Ok(ph) = self.pipe_mut(eh.pipe) {
            ph.pipe.remove(&eh.entry);
            ph.entries.retain(|e| *e != h);
        }
        Ok(())
    }

    /// Packets and bytes of a counting entry; NOT_FOUND for an unknown entry,
    /// NOT_SUPPORTED when it has no counter.
    pub(crate) fn query_entry(&self, h: usize) -> DocaResult<(u64, u64)> {
        if !self.entries.contains(&h) {
            return Err(DocaError::NOT_FOUND);
        }
        // SAFETY: registered entries are live boxes.
        let eh = unsafe { &*(h as *const EntryHandle) };
        let c = eh.entry.counter.as_ref().ok_or(DocaError::NOT_SUPPORTED)?;
        Ok(c.get())
    }

    /// Packets and bytes a pipe missed; NOT_SUPPORTED without a miss counter.
    pub(crate) fn query_pipe_miss(&self, h: usize) -> DocaResult<(u64, u64)> {
        let ph = self.pipe_mut(h)?;
        let c = ph
            .pipe
            .miss_counter
            .as_ref()
            .ok_or(DocaError::NOT_SUPPORTED)?;
        Ok(c.get())
    }
}

fn entry_counts(default: bool, monitor: Option<&sys::doca_flow_monitor_v1>) -> DocaResult<bool> {
    match monitor {
        Some(m) => Ok(default || monitor_counts(m)?),
        None => Ok(default),
    }
}
