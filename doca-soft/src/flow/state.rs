//! The Flow library's global state: whether `doca_flow_init` ran (and with which
//! configuration), the registry of live handles (a stale or foreign pointer gets an error
//! code, not undefined behaviour), and the callbacks collected while the state is locked,
//! run after it is released (a callback may call back into Flow).
//!
//! The objects it holds are defined in `handles`; the operations live next to their
//! objects: `port` (ports, and `doca_flow_destroy`, which stops them), `pipe` (pipes),
//! `entry` (entries, completions, aging), `resources` (shared resources), `fwd` (forwards
//! and the pipe graph).

use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

use once_cell::sync::Lazy;

use super::cfg::{FlowCfg, RESOURCE_KINDS};
use super::handles::{EntryHandle, FlowPort, PipeHandle};
use super::pools::Pools;
use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::PortLink;
use crate::sync::lock;

/// Global Flow state.
#[derive(Default)]
pub(crate) struct State {
    /// The configuration given to `doca_flow_init` (None: not initialized).
    pub(crate) cfg: Option<FlowCfg>,
    /// Started ports, in start order.
    pub(crate) ports: Vec<usize>,
    /// Live pipes.
    pub(crate) pipes: HashSet<usize>,
    /// Live entries.
    pub(crate) entries: HashSet<usize>,
    /// Port forwards by port id (bound while a port with that id is started).
    pub(crate) links: HashMap<u16, Arc<PortLink>>,
    /// SYSTEM-mode shared resources.
    pub(crate) shared: Pools,
    /// Non-shared counters in use (checked against `nr_counters` in SYSTEM mode).
    pub(crate) counters_used: u32,
}

static STATE: Lazy<Mutex<State>> = Lazy::new(|| Mutex::new(State::default()));

/// Locks the Flow state (control path only; the receive lanes never take it).
pub(crate) fn state() -> MutexGuard<'static, State> {
    lock(&STATE)
}

/// A callback to run once the state is unlocked.
pub(crate) enum Callback {
    /// An entry operation completed.
    Entry {
        cb: super::cfg::EntryProcessCb,
        entry: usize,
        queue: u16,
        status: u32,
        op: u32,
        ctx: *mut c_void,
    },
    /// A pipe event.
    Pipe {
        cb: super::cfg::PipeProcessCb,
        pipe: usize,
        status: u32,
        op: u32,
        ctx: *mut c_void,
    },
    /// A shared resource was unbound.
    Unbind {
        cb: super::cfg::UnbindCb,
        kind: u32,
        id: u32,
        obj: *mut c_void,
    },
}

impl Callback {
    /// Runs the callback (the state must not be locked by the caller).
    pub(crate) fn run(self) {
        // SAFETY (all three): the application registered these functions for exactly
        // these arguments; the handles passed are live (entries removed by this batch are
        // freed only after their callbacks ran).
        match self {
            Callback::Entry {
                cb,
                entry,
                queue,
                status,
                op,
                ctx,
            } => unsafe {
                cb(
                    entry as *mut sys::doca_flow_pipe_entry,
                    queue,
                    status,
                    op,
                    ctx,
                )
            },
            Callback::Pipe {
                cb,
                pipe,
                status,
                op,
                ctx,
            } => unsafe { cb(pipe as *mut sys::doca_flow_pipe, status, op, ctx) },
            Callback::Unbind { cb, kind, id, obj } => unsafe { cb(kind, id, obj) },
        }
    }
}

/// Runs callbacks collected under the lock, after it is released.
pub(crate) fn run_callbacks(cbs: Vec<Callback>) {
    for c in cbs {
        c.run();
    }
}

impl State {
    /// A started port, by handle; BAD_STATE when it is not one (stopped, or foreign).
    pub(crate) fn port_mut<'a>(&self, h: usize) -> DocaResult<&'a mut FlowPort> {
        if !self.ports.contains(&h) {
            return Err(DocaError::BAD_STATE);
        }
        // SAFETY: registered handles are live boxes; the state lock serializes access, and
        // callers never hold two references to one port.
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

    /// A live entry, by handle; NOT_FOUND when it is not one (or is being removed).
    pub(crate) fn entry_mut<'a>(&self, h: usize) -> DocaResult<&'a mut EntryHandle> {
        if !self.entries.contains(&h) {
            return Err(DocaError::NOT_FOUND);
        }
        // SAFETY: as in port_mut.
        let e = unsafe { &mut *(h as *mut EntryHandle) };
        if e.removed {
            return Err(DocaError::NOT_FOUND);
        }
        Ok(e)
    }

    /// The configuration; BAD_STATE before `doca_flow_init`.
    pub(crate) fn cfg(&self) -> DocaResult<&FlowCfg> {
        self.cfg.as_ref().ok_or(DocaError::BAD_STATE)
    }

    /// BAD_STATE before `doca_flow_init`.
    pub(crate) fn require_init(&self) -> DocaResult<()> {
        self.cfg().map(|_| ())
    }

    /// `doca_flow_init`: BAD_STATE when already initialized.
    pub(crate) fn init(&mut self, cfg: &FlowCfg) -> DocaResult<()> {
        if self.cfg.is_some() {
            return Err(DocaError::BAD_STATE);
        }
        self.cfg = Some(cfg.clone());
        self.shared = Pools::new(if cfg.port_mode {
            [0; RESOURCE_KINDS]
        } else {
            cfg.nr_shared
        });
        self.counters_used = 0;
        Ok(())
    }

    /// INVALID_VALUE for a pipe queue beyond the configured ones.
    pub(crate) fn check_queue(&self, pipe_queue: u16) -> DocaResult<()> {
        let n = self.cfg.as_ref().map_or(0, |c| c.pipe_queues);
        if pipe_queue >= n {
            sdk_err!(
                "flow",
                "pipe queue {pipe_queue} is beyond the {n} configured"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }
}
