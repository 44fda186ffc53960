//! Host helpers for the `worker_graph` plugin: one command, LOOPBACK (type 0), echoing a
//! 64-bit value. Command and notification are both `{ u64 type; u64 data }`.

use crate::error::{DocaError, Error, Result};
use crate::service::{PluginInfo, Service};
use crate::worker::{Notification, NotificationRef, Worker};

/// `UROM_WORKER_CMD_GRAPH_LOOPBACK` / `UROM_WORKER_NOTIFY_GRAPH_LOOPBACK`.
pub const LOOPBACK: u64 = 0;
/// Plugin name.
pub const PLUGIN_NAME: &str = "worker_graph";

/// Encodes a loopback command.
pub fn loopback_cmd(data: u64) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[..8].copy_from_slice(&LOOPBACK.to_le_bytes());
    c[8..].copy_from_slice(&data.to_le_bytes());
    c
}

/// Decodes a loopback notification into its data.
pub fn parse_loopback(n: &Notification) -> std::result::Result<u64, DocaError> {
    parse_loopback_ref(n.as_ref())
}

/// [`parse_loopback`] of a borrowed notification.
pub fn parse_loopback_ref(n: NotificationRef<'_>) -> std::result::Result<u64, DocaError> {
    n.status?;
    if n.data.len() != 16 || n.data[..8] != LOOPBACK.to_le_bytes() {
        return Err(DocaError::UNEXPECTED);
    }
    Ok(u64::from_le_bytes(
        n.data[8..16].try_into().expect("8 bytes"),
    ))
}

/// The graph plugin as offered by a service.
#[derive(Debug, Clone)]
pub struct Graph {
    /// Plugin info (id used for commands and the worker mask).
    pub plugin: PluginInfo,
}

impl Graph {
    /// Finds the plugin; UNSUPPORTED_VERSION unless it reports version 1.
    pub fn find(service: &Service) -> Result<Graph> {
        let plugin = service.plugin(PLUGIN_NAME)?;
        if plugin.version != 0x01 {
            return Err(Error::doca("Graph::find", DocaError::UNSUPPORTED_VERSION));
        }
        Ok(Graph { plugin })
    }

    /// Loopback with a callback (runs inside the worker's progress). Allocates nothing
    /// when `cb` fits in 24 bytes (see [`Worker::submit_ref`]).
    pub fn loopback_with(
        &self,
        w: &Worker,
        data: u64,
        cb: impl FnOnce(std::result::Result<u64, DocaError>) + Send + 'static,
    ) -> Result<()> {
        w.submit_ref(self.plugin.id, &loopback_cmd(data), move |n| {
            cb(parse_loopback_ref(n))
        })
    }

    /// Loopback, blocking.
    pub fn loopback(&self, w: &Worker, data: u64) -> Result<u64> {
        let n = w.command(self.plugin.id, &loopback_cmd(data))?;
        parse_loopback(&n).map_err(|code| Error::doca("graph loopback", code))
    }
}
