//! `struct doca_flow_port`: a started Flow port on a device's soft port, its entry point
//! (the port root pipe the receive lanes classify from), its completion queues and pipe
//! events, and the port-level operations.
//!
//! One Flow port per soft port: a second `doca_flow_port_start` on a device that already
//! has one is ALREADY_EXIST, so no port's stop or root can replace another's.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::Arc;

use super::cfg::PortCfg;
use super::handles::FlowPort;
use super::pools::Pools;
use super::state::{Callback, State};
use super::sys;
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{Egress, Fwd, Pipe, PortLink};
use crate::port::Port;

/// A port forward target: the soft port's transmit side.
struct PortEgress(Arc<Port>);

impl Egress for PortEgress {
    fn send_frame(&self, frame: &[u8]) -> bool {
        self.0.send(frame).is_ok()
    }
}

impl State {
    /// The forward target of port id `id` (created on first use, bound while a port with
    /// that id is started).
    pub(crate) fn link(&mut self, id: u16) -> Arc<PortLink> {
        self.links.entry(id).or_default().clone()
    }

    /// `doca_flow_port_start`: BAD_STATE before init; ALREADY_EXIST when the port id is
    /// started or the device's port already has a Flow port. The device is in use until the
    /// port stops.
    pub(crate) fn start_port(&mut self, c: &PortCfg, dev: &Dev) -> DocaResult<*mut FlowPort> {
        let cfg = self.cfg()?.clone();
        let port = Port::for_spec(&dev.info().spec)?;
        for &p in &self.ports {
            let fp = self.port_mut(p)?;
            if fp.port_id == c.port_id {
                sdk_err!("flow", "port id {} is already started", c.port_id);
                return Err(DocaError::ALREADY_EXIST);
            }
            if Arc::ptr_eq(&fp.port, &port) {
                sdk_err!(
                    "flow",
                    "device {} already has Flow port {}: one Flow port per device",
                    port.name(),
                    fp.port_id
                );
                return Err(DocaError::ALREADY_EXIST);
            }
        }
        if cfg.port_mode && c.nr_resources.iter().all(|&n| n == 0) {
            sdk_warn!(
                "flow",
                "port {}: PORT resource mode without per-port resources",
                c.port_id
            );
        }
        port.acquire()?;
        dev.add_user();
        let entry_point = Arc::new(Pipe::port_root(c.port_id));
        port.set_flow_root(Some(entry_point.clone()));
        let pools = if cfg.port_mode {
            Pools::new(c.nr_resources)
        } else {
            Pools::default()
        };
        let counters = (c.nr_resources[super::cfg::RES_COUNTER], 0);
        let h = Box::into_raw(Box::new(FlowPort {
            port_id: c.port_id,
            dev: dev as *const Dev,
            port: port.clone(),
            entry_point,
            pipes: Vec::new(),
            root: None,
            queues: (0..cfg.pipe_queues).map(|_| VecDeque::new()).collect(),
            pipe_events: VecDeque::new(),
            aging: Vec::new(),
            priv_data: vec![0; usize::from(c.priv_data_size)],
            pair: None,
            operation_state: c.operation_state,
            default_miss_counted: false,
            pools,
            counters,
        }));
        self.ports.push(h as usize);
        self.link(c.port_id).set(Some(Arc::new(PortEgress(port))));
        Ok(h)
    }

    /// `doca_flow_port_stop`: destroys the port's pipes and entries and stops steering.
    /// Returns the callbacks to run (pipe DESTROYED events, unbinds).
    pub(crate) fn stop_port(&mut self, h: usize) -> DocaResult<Vec<Callback>> {
        let mut cbs = self.flush_pipes(h)?;
        let fp = self.port_mut(h)?;
        // Clear the soft port's root only if it is still ours.
        if fp
            .port
            .flow_root()
            .is_some_and(|r| Arc::ptr_eq(&r, &fp.entry_point))
        {
            fp.port.set_flow_root(None);
        }
        fp.port.release();
        // SAFETY: the device cannot be closed while this port uses it (add_user at start).
        if let Some(dev) = unsafe { fp.dev.as_ref() } {
            dev.remove_user();
        }
        if let Some(l) = self.links.get(&fp.port_id) {
            l.set(None);
        }
        cbs.extend(self.unbind_all(h as *mut c_void));
        let port_id = fp.port_id;
        for &p in &self.ports {
            if p != h {
                let other = self.port_mut(p)?;
                if other.pair == Some(h) {
                    other.pair = None;
                }
            }
        }
        self.ports.retain(|&p| p != h);
        sdk_dbg!("flow", "port {port_id} stopped");
        // SAFETY: h was a registered live box; it is unregistered now and freed once.
        drop(unsafe { Box::from_raw(h as *mut FlowPort) });
        Ok(cbs)
    }

    /// `doca_flow_destroy`: stops every port still started, then forgets the
    /// configuration. Returns the callbacks to run.
    pub(crate) fn destroy(&mut self) -> Vec<Callback> {
        let mut cbs = Vec::new();
        for p in self.ports.clone().into_iter().rev() {
            if let Ok(more) = self.stop_port(p) {
                cbs.extend(more);
            }
        }
        self.cfg = None;
        self.shared = Pools::default();
        self.links.clear();
        cbs
    }

    /// `doca_flow_port_pipes_flush`: destroys every pipe of the port.
    pub(crate) fn flush_pipes(&mut self, h: usize) -> DocaResult<Vec<Callback>> {
        let pipes = self.port_mut(h)?.pipes.clone();
        let mut cbs = Vec::new();
        // Last created first: roots (created last) go before the pipes they forward to.
        for p in pipes.into_iter().rev() {
            cbs.extend(self.destroy_pipe(p));
        }
        Ok(cbs)
    }

    /// `doca_flow_port_pair`: INVALID_VALUE for a port paired with itself.
    pub(crate) fn pair_ports(&mut self, a: usize, b: usize) -> DocaResult<()> {
        if a == b {
            sdk_err!("flow", "a port cannot be paired with itself");
            return Err(DocaError::INVALID_VALUE);
        }
        self.port_mut(b)?;
        self.port_mut(a)?.pair = Some(b);
        Ok(())
    }

    /// `doca_flow_port_switch_get`: in switch mode, the first port started (the switch
    /// manager); NULL in vnf mode.
    pub(crate) fn switch_port(&self, of: usize) -> Option<usize> {
        let cfg = self.cfg.as_ref()?;
        if !cfg.switch_mode() {
            return None;
        }
        if of != 0 && !self.ports.contains(&of) {
            return None;
        }
        self.ports.first().copied()
    }

    /// `doca_flow_port_update_default_miss`: KERNEL (frames no pipe takes are not
    /// delivered) or DROP; RSS is NOT_SUPPORTED.
    pub(crate) fn update_default_miss(
        &mut self,
        h: usize,
        kind: u32,
        count: bool,
    ) -> DocaResult<()> {
        let fp = self.port_mut(h)?;
        let miss = match kind {
            sys::DOCA_FLOW_PORT_DEFAULT_MISS_KERNEL => Fwd::None,
            sys::DOCA_FLOW_PORT_DEFAULT_MISS_DROP => Fwd::Drop,
            sys::DOCA_FLOW_PORT_DEFAULT_MISS_RSS => {
                sdk_err!("flow", "a default miss to RSS is not supported");
                return Err(DocaError::NOT_SUPPORTED);
            }
            _ => {
                sdk_err!("flow", "default miss type {kind} is out of range");
                return Err(DocaError::INVALID_VALUE);
            }
        };
        fp.entry_point.set_miss(miss);
        fp.default_miss_counted = count;
        Ok(())
    }

    /// `doca_flow_port_query_default_miss`: (packets, bytes); BAD_STATE unless counting
    /// was asked for.
    pub(crate) fn query_default_miss(&self, h: usize) -> DocaResult<(u64, u64)> {
        let fp = self.port_mut(h)?;
        if !fp.default_miss_counted {
            return Err(DocaError::BAD_STATE);
        }
        Ok(fp
            .entry_point
            .miss_counter
            .as_ref()
            .map_or((0, 0), |c| c.get()))
    }
}
