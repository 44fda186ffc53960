//! Forwards: where a matching packet goes (RSS, pipe, port, drop, kernel) and the egress of
//! port forwards.

use std::sync::{Arc, RwLock, Weak};

use super::{Pipe, RssCfg};

/// Where frames are sent by a port forward: the port's transmit side.
pub trait Egress: Send + Sync {
    /// Sends one frame; false when it could not be sent.
    fn send_frame(&self, frame: &[u8]) -> bool;
}

/// A forward target port by id, bound to a started port (or to none) by `flow/`.
#[derive(Default)]
pub struct PortLink {
    target: RwLock<Option<Arc<dyn Egress>>>,
}

impl std::fmt::Debug for PortLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortLink").finish_non_exhaustive()
    }
}

impl PortLink {
    /// Binds (or unbinds) the port.
    pub fn set(&self, target: Option<Arc<dyn Egress>>) {
        *self.target.write().unwrap_or_else(|p| p.into_inner()) = target;
    }

    pub(super) fn get(&self) -> Option<Arc<dyn Egress>> {
        self.target
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// An RSS configuration shared by id (a shared RSS resource), reconfigurable at any time.
#[derive(Debug, Default)]
pub struct SharedRss {
    cfg: RwLock<Option<Arc<RssCfg>>>,
}

impl SharedRss {
    /// Sets the configuration.
    pub fn set(&self, cfg: Option<Arc<RssCfg>>) {
        *self.cfg.write().unwrap_or_else(|p| p.into_inner()) = cfg;
    }

    pub(super) fn get(&self) -> Option<Arc<RssCfg>> {
        self.cfg.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Where a matching packet goes.
#[derive(Clone, Debug, Default)]
pub enum Fwd {
    /// No forward given (for an entry: use the pipe's forward).
    #[default]
    None,
    /// Drop.
    Drop,
    /// RSS over `queues` with hash `flags` (`DOCA_FLOW_RSS_*`, outer headers).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    Rss {
        /// Target queue ids.
        queues: Vec<u16>,
        /// Hash fields.
        flags: u32,
    },
    /// RSS with the full configuration (inner fields, symmetry, key).
    RssCfg(Arc<RssCfg>),
    /// RSS by a shared resource's configuration (dropped while it has none).
    SharedRss(Arc<SharedRss>),
    /// Continue in another pipe (dropped if that pipe is gone).
    Pipe(Weak<Pipe>),
    /// Send out of a port (dropped while no port has that id).
    Port(Arc<PortLink>),
    /// To the kernel: not delivered to any queue (counted as no-match).
    Kernel,
}
