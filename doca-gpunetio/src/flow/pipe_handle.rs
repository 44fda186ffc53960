//! The pipe handle ([`Pipe`]) alone: what a forward ([`super::matching::Forward`]) points
//! at and what the builders in [`super::pipe`] return. Its own module so that the match and
//! forward types and the pipe builders each import it without importing each other.

use super::FlowPort;
use doca_sys as sys;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

pub(super) struct PipeInner {
    pub(super) raw: NonNull<sys::doca_flow_pipe>,
    pub(super) name: String,
    pub(super) is_control: bool,
    pub(super) port: FlowPort,
    /// Pipes this pipe's entries (or its forward) point at: they must outlive it.
    pub(super) targets: Mutex<Vec<Pipe>>,
}

// SAFETY: the pipe is used only under the Flow lock (or in Drop, which is exclusive).
unsafe impl Send for PipeInner {}
// SAFETY: as above.
unsafe impl Sync for PipeInner {}

impl Drop for PipeInner {
    fn drop(&mut self) {
        let _g = self.port.flow().lock();
        // SAFETY: created by doca_flow_pipe_create on a port that is still started (held
        // in `self.port`); destroyed once, before the pipes it forwards to (`targets` are
        // dropped after this body).
        unsafe { sys::doca_flow_pipe_destroy(self.raw.as_ptr()) };
    }
}

/// A DOCA Flow pipe: a match → forward table on a [`FlowPort`]. Destroyed when the last
/// clone, entry and pipe forwarding to it are gone. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Pipe {
    pub(super) inner: Arc<PipeInner>,
}

impl Pipe {
    /// The pipe's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The port of this pipe.
    pub fn port(&self) -> &FlowPort {
        &self.inner.port
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_flow_pipe {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipe")
            .field("name", &self.inner.name)
            .field("control", &self.inner.is_control)
            .finish()
    }
}
