//! Connections of a started `doca_rdma` (`struct doca_rdma_connection`): one per
//! connection index, made at start and valid until stop. Index i is QP i of the data path
//! (what device code calls `connection_index`).
//!
//! Out of band: `export` takes the first free connection and gives its 32-byte blob (the
//! NIC's GID and the QP number, `nic::ConnInfo`); `connect` decodes the peer's blob and
//! connects the QP (the NIC finishes in the background; WQEs posted meanwhile wait).

use super::RdmaInner;
use crate::error::{DocaError, DocaResult};
use crate::sync::lock;
use crate::types::DocaData;
use doca_soft_nic::rdma::{ConnInfo, CONN_BLOB_LEN};
use std::sync::{Arc, Mutex, Weak};

/// Where a connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Not used yet.
    Free,
    /// Exported, waiting for `doca_rdma_connect`.
    Exported,
    /// RDMA-CM server side: a peer asked, the program has not answered.
    Requested,
    /// RDMA-CM client side: asked, no answer yet.
    Connecting,
    /// Accepted on the server side; `established` is reported at the next progress.
    Accepted,
    /// Up.
    Connected,
    /// Refused, failed, or its QP went into error.
    Failed,
    /// Disconnected (by either side).
    Disconnected,
}

struct ConnState {
    phase: Phase,
    user_data: DocaData,
    /// Our blob (export) and the peer's (connect).
    local: [u8; CONN_BLOB_LEN],
    remote: Option<ConnInfo>,
}

/// The C `struct doca_rdma_connection`.
pub struct Connection {
    /// Connection index (`doca_rdma_connection_get_id`).
    id: u32,
    /// The context it belongs to.
    ctx: Weak<RdmaInner>,
    state: Mutex<ConnState>,
}

impl Connection {
    pub(crate) fn new(id: u32, ctx: Weak<RdmaInner>, local: ConnInfo) -> Connection {
        Connection {
            id,
            ctx,
            state: Mutex::new(ConnState {
                phase: Phase::Free,
                user_data: DocaData { u64: 0 },
                local: local.encode(),
                remote: None,
            }),
        }
    }

    /// The connection index.
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// Its context, while it exists.
    pub(crate) fn context(&self) -> DocaResult<Arc<RdmaInner>> {
        self.ctx.upgrade().ok_or(DocaError::BAD_STATE)
    }

    pub(crate) fn phase(&self) -> Phase {
        lock(&self.state).phase
    }

    pub(crate) fn set_phase(&self, p: Phase) {
        lock(&self.state).phase = p;
    }

    /// Moves from `from` to `to`; false (nothing changed) when not in `from`.
    pub(crate) fn transition(&self, from: Phase, to: Phase) -> bool {
        let mut s = lock(&self.state);
        if s.phase != from {
            return false;
        }
        s.phase = to;
        true
    }

    pub(crate) fn user_data(&self) -> DocaData {
        lock(&self.state).user_data
    }

    pub(crate) fn set_user_data(&self, d: DocaData) {
        lock(&self.state).user_data = d;
    }

    /// Our blob (stable for the connection's life).
    pub(crate) fn local_blob(&self) -> (*const u8, usize) {
        let s = lock(&self.state);
        (s.local.as_ptr(), s.local.len())
    }

    /// Our blob's bytes.
    pub(crate) fn local_info(&self) -> [u8; CONN_BLOB_LEN] {
        lock(&self.state).local
    }

    /// The peer, once known.
    pub(crate) fn remote(&self) -> Option<ConnInfo> {
        lock(&self.state).remote
    }

    pub(crate) fn set_remote(&self, r: ConnInfo) {
        lock(&self.state).remote = Some(r);
    }
}

/// Decodes a peer's blob; CONNECTION_ABORTED (logged) when it is not one.
pub(crate) fn decode_remote(bytes: &[u8]) -> DocaResult<ConnInfo> {
    ConnInfo::decode(bytes).ok_or_else(|| {
        sdk_err!(
            "rdma",
            "remote connection details ({} bytes) are not a doca_rdma export",
            bytes.len()
        );
        DocaError::CONNECTION_ABORTED
    })
}
