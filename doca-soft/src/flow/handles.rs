//! The objects behind the C handles: `struct doca_flow_port` ([`FlowPort`]), `struct
//! doca_flow_pipe` ([`PipeHandle`]), `struct doca_flow_pipe_entry` ([`EntryHandle`]), and what
//! they hold and queue. Data only: the registry (`state`) holds them, and the operations live
//! next to their objects (`port`, `pipe`, `entry`).

use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::Arc;

use super::actions::ActionSet;
use super::matching::Template;
use super::monitor::Monitor;
use super::pools::Pools;
use super::sys;
use crate::dev::Dev;
use crate::packet::classify::{Fwd, Pipe, Rule};
use crate::port::Port;

/// A pending entry completion.
#[derive(Debug)]
pub(crate) struct Completion {
    /// Entry handle.
    pub entry: usize,
    /// `enum doca_flow_entry_op`.
    pub op: u32,
    /// `enum doca_flow_entry_status`.
    pub status: u32,
}

/// A pending pipe event.
#[derive(Debug)]
pub(crate) struct PipeEvent {
    /// Pipe handle.
    pub pipe: usize,
    /// `enum doca_flow_pipe_op`.
    pub op: u32,
}

/// `struct doca_flow_port`.
pub struct FlowPort {
    /// Flow port id.
    pub(crate) port_id: u16,
    /// The device; marked in use while the port is started.
    pub(crate) dev: *const Dev,
    /// The soft port it steers.
    pub(crate) port: Arc<Port>,
    /// Where classification starts: holds the root pipe and the default miss.
    pub(crate) entry_point: Arc<Pipe>,
    /// Pipes created on this port (handles).
    pub(crate) pipes: Vec<usize>,
    /// The root pipe (handle).
    pub(crate) root: Option<usize>,
    /// Pending completions, per pipe queue.
    pub(crate) queues: Vec<VecDeque<Completion>>,
    /// Pending pipe events.
    pub(crate) pipe_events: VecDeque<PipeEvent>,
    /// Entries that age (handles).
    pub(crate) aging: Vec<usize>,
    /// The per-port user area.
    pub(crate) priv_data: Vec<u8>,
    /// The paired port (handle).
    pub(crate) pair: Option<usize>,
    /// `enum doca_flow_port_operation_state`.
    pub(crate) operation_state: u32,
    /// The default-miss counter can be read.
    pub(crate) default_miss_counted: bool,
    /// PORT-mode shared resources.
    pub(crate) pools: Pools,
    /// PORT mode: non-shared counters allowed and in use.
    pub(crate) counters: (u32, u32),
}

/// Most completions a queue keeps when no entry callback is registered (older ones are
/// completed silently, so a program that never processes its queue cannot grow it forever).
pub(crate) const SILENT_QUEUE_CAP: usize = 1 << 16;

/// A pending resize: the callbacks to run from the next `doca_flow_entries_process`.
#[derive(Clone, Copy)]
pub(crate) struct Resize {
    pub nr_entries_changed: sys::doca_flow_pipe_resize_nr_entries_changed_cb,
    pub relocate: sys::doca_flow_pipe_resize_entry_relocate_cb,
    pub new_nr_entries: u32,
}

/// `struct doca_flow_pipe`.
pub(crate) struct PipeHandle {
    /// Port handle.
    pub(crate) port: usize,
    /// The table.
    pub(crate) pipe: Arc<Pipe>,
    /// `enum doca_flow_pipe_type`.
    pub(crate) kind: u32,
    /// Name and label.
    pub(crate) name: String,
    pub(crate) label: String,
    /// BASIC/HASH: the match template.
    pub(crate) template: Template,
    /// The actions array.
    pub(crate) actions: Vec<ActionSet>,
    /// The monitor entries inherit.
    pub(crate) monitor: Monitor,
    /// The forward (`DOCA_FLOW_FWD_CHANGEABLE`: entries give theirs).
    pub(crate) fwd_changeable: bool,
    /// Pipes this one forwards to, with how many forwards (pipe forward, miss, entries).
    pub(crate) edges: HashMap<usize, u32>,
    /// The pipe's miss target in the graph.
    pub(crate) miss_to: Option<usize>,
    /// Root pipe of its port.
    pub(crate) is_root: bool,
    /// Entry capacity; congestion threshold (percent, 0: none) and whether it was reported.
    pub(crate) nr_entries: u32,
    pub(crate) congestion: u8,
    pub(crate) congested: bool,
    pub(crate) resizable: bool,
    pub(crate) resize: Option<Resize>,
    /// Queue excluded from the pipe.
    pub(crate) excluded_queue: Option<u16>,
    /// User context of pipe events.
    pub(crate) user_ctx: *mut c_void,
    /// HASH pipes: the map algorithm.
    pub(crate) hash_algorithm: u32,
    /// Entry handles of this pipe.
    pub(crate) entries: Vec<usize>,
}

/// `struct doca_flow_pipe_entry`.
pub(crate) struct EntryHandle {
    /// Pipe handle.
    pub(crate) pipe: usize,
    /// Port handle.
    pub(crate) port: usize,
    /// The compiled entry in the pipe's table.
    pub(crate) rule: Arc<Rule>,
    /// The queue it was added through.
    pub(crate) queue: u16,
    /// The application's context (callbacks get it back).
    pub(crate) usr_ctx: *mut c_void,
    /// `enum doca_flow_entry_status`.
    pub(crate) status: u32,
    /// Removed (a DEL completion is pending).
    pub(crate) removed: bool,
    /// The pipe it forwards to (graph edge).
    pub(crate) fwd_to: Option<usize>,
    /// Holds one of the non-shared counters of the pool.
    pub(crate) own_counter: bool,
    /// Aging period (0: none) and whether its aging was reported.
    pub(crate) aging_sec: u32,
    pub(crate) aged: bool,
}

/// A translated forward and the pipe it goes to (for the graph).
#[derive(Clone, Debug)]
pub(crate) struct Forward {
    /// The classifier's forward.
    pub fwd: Fwd,
    /// The pipe handle it forwards to, if any.
    pub to_pipe: Option<usize>,
    /// `DOCA_FLOW_FWD_CHANGEABLE`: entries give their own.
    pub changeable: bool,
}

impl Forward {
    /// No forward.
    pub(crate) fn none() -> Forward {
        Forward {
            fwd: Fwd::None,
            to_pipe: None,
            changeable: false,
        }
    }
}
