//! The Flow library's objects behind the C handles, and the registry that validates
//! handles (a stale or foreign pointer gets an error code, not undefined behaviour).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use once_cell::sync::Lazy;

use super::classify::{Entry, Pipe, PipeKind};
use super::translate::{Layout, TemplateField};
use crate::port::Port;

/// `struct doca_flow_cfg`.
#[derive(Debug, Default)]
pub struct FlowCfg {
    /// Pipe queues (entry-insertion queues); at least 1.
    pub pipe_queues: u16,
    /// Mode string (recorded; modes do not change the emulation).
    pub mode_args: String,
    /// Counter budget.
    pub nr_counters: u32,
}

/// `struct doca_flow_port_cfg`.
#[derive(Debug)]
pub struct PortCfg {
    /// Flow port id.
    pub port_id: u16,
    /// The device (`struct doca_dev *`), not owned.
    pub dev: *const crate::dev::Dev,
    /// DPDK-style device arguments (recorded, unused).
    pub devargs: String,
}

/// `struct doca_flow_port`: a started Flow port.
pub struct FlowPort {
    /// Flow port id.
    pub port_id: u16,
    /// The device (`struct doca_dev *`); marked in use while the port is started.
    pub dev: *const crate::dev::Dev,
    /// The soft port it steers.
    pub port: Arc<Port>,
    /// Pipes created on this port (handles, for teardown at port stop).
    pub pipes: Vec<usize>,
    /// Whether a root pipe exists.
    pub has_root: bool,
}

/// `struct doca_flow_pipe_cfg`.
#[derive(Debug)]
pub struct PipeCfg {
    /// Port handle the pipe will be created on.
    pub port: usize,
    /// Name.
    pub name: String,
    /// `enum doca_flow_pipe_type` value.
    pub kind: u32,
    /// Root pipe of the port.
    pub is_root: bool,
    /// `enum doca_flow_pipe_domain` value.
    pub domain: u32,
    /// Entry budget (recorded).
    pub nr_entries: u32,
    /// BASIC template (from `set_match`) and the layout entries are read with.
    pub template: Vec<TemplateField>,
    /// Layout of the pipe's match.
    pub layout: Layout,
    /// Entries count packets (monitor counter NON_SHARED).
    pub counters: bool,
    /// The pipe counts misses.
    pub miss_counter: bool,
}

/// `struct doca_flow_pipe`.
pub struct PipeHandle {
    /// Port handle.
    pub port: usize,
    /// The table.
    pub pipe: Arc<Pipe>,
    /// BASIC template.
    pub template: Vec<TemplateField>,
    /// Layout entries are read with.
    pub layout: Layout,
    /// Entries count by default.
    pub counters: bool,
    /// Root pipe of its port.
    pub is_root: bool,
    /// Entry handles of this pipe.
    pub entries: Vec<usize>,
}

impl PipeHandle {
    /// BASIC or CONTROL.
    pub fn kind(&self) -> PipeKind {
        self.pipe.kind
    }
}

/// `struct doca_flow_pipe_entry`.
pub struct EntryHandle {
    /// Pipe handle.
    pub pipe: usize,
    /// The entry in the pipe's table.
    pub entry: Arc<Entry>,
}

/// Global Flow state: whether `doca_flow_init` ran, and the live handles.
#[derive(Default)]
pub struct State {
    /// The configuration given to `doca_flow_init` (None: not initialized).
    pub cfg: Option<FlowCfg>,
    /// Started ports.
    pub ports: HashSet<usize>,
    /// Live pipes.
    pub pipes: HashSet<usize>,
    /// Live entries.
    pub entries: HashSet<usize>,
}

static STATE: Lazy<Mutex<State>> = Lazy::new(|| Mutex::new(State::default()));

/// Locks the Flow state (control path only; the dispatcher never takes it).
pub fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}
