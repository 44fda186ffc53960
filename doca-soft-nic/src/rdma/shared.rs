//! What the handles (`api`) and the proxy thread (`engine`) share, below both: the commands
//! a handle sends, the state both sides touch (command list, wake-up descriptor, events,
//! counters), and what the proxy publishes about a QP. Keeping it here lets the handles
//! call into the engine while the engine never imports the handles.

use super::cq_ring::CqRing;
use super::gid::{Gid, MemExport};
use super::ring::{RqRing, SqRing};
use crate::error::DocaResult;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

/// A request from a handle to the proxy thread.
pub(crate) enum Cmd {
    CreateCq {
        ring: CqRing,
        reply: SyncSender<u32>,
    },
    DestroyCq {
        cqn: u32,
        reply: SyncSender<()>,
    },
    CreateRq {
        ring: RqRing,
        cqn: u32,
        cqe_inline: bool,
        reply: SyncSender<DocaResult<u32>>,
    },
    DestroyRq {
        id: u32,
        reply: SyncSender<()>,
    },
    CreateQp {
        sq: SqRing,
        cqn: u32,
        rq: Option<u32>,
        status: Arc<QpStatusCell>,
        reply: SyncSender<DocaResult<u32>>,
    },
    ConnectQp {
        qpn: u32,
        gid: [u8; 16],
        peer: Gid,
        remote_qpn: u32,
        reply: SyncSender<DocaResult<()>>,
    },
    DestroyQp {
        qpn: u32,
        reply: SyncSender<()>,
    },
    ErrorQp {
        qpn: u32,
        reply: SyncSender<DocaResult<()>>,
    },
    ImportKey {
        export: MemExport,
        reply: SyncSender<DocaResult<()>>,
    },
}

/// Something the C layer may report (`Nic::take_events`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NicEvent {
    /// A peer NIC went away (its process exited, or it became unreachable).
    PeerLost {
        /// Its GID.
        gid: [u8; 16],
    },
    /// A QP entered the error state.
    QpError {
        /// The QP.
        qpn: u32,
        /// The syndrome of its first error completion (see `cqe::syndrome`).
        syndrome: u8,
    },
}

/// Counters of one NIC instance.
#[derive(Default)]
pub struct Stats {
    /// Send WQEs taken from the rings.
    pub wqes: AtomicU64,
    /// CQEs written (send and receive).
    pub cqes: AtomicU64,
    /// Sends / writes with immediate delivered into posted receives.
    pub delivered: AtomicU64,
    /// Messages refused because the unexpected queue was full.
    pub rnr_drops: AtomicU64,
    /// Remote keys asked from peers.
    pub key_requests: AtomicU64,
    /// Revocation messages received from peers (each drops some of their cached keys).
    pub revocations: AtomicU64,
}

/// What the proxy thread and the handles share.
pub(crate) struct Shared {
    pub(crate) cmds: Mutex<Vec<Cmd>>,
    /// Set with every command, so the proxy loop locks `cmds` only when there are some.
    pub(crate) has_cmds: AtomicBool,
    pub(crate) wake_fd: i32,
    pub(crate) stop: AtomicBool,
    pub(crate) events: Mutex<Vec<NicEvent>>,
    pub(crate) stats: Stats,
}

impl Shared {
    pub(crate) fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: wake_fd is our eventfd (open for the life of Shared); 8 bytes written.
        unsafe { libc::write(self.wake_fd, &one as *const u64 as *const libc::c_void, 8) };
    }

    pub(crate) fn push_event(&self, e: NicEvent) {
        let mut ev = self.events.lock().unwrap_or_else(|p| p.into_inner());
        // Bounded: a program that never reads events does not grow memory forever.
        if ev.len() < 4096 {
            ev.push(e);
        }
    }
}

/// Every running proxy thread's shared state, to wake them all (weak: a NIC that stops
/// leaves the list by itself, pruned on the next start).
pub(crate) static ENGINES: Mutex<Vec<std::sync::Weak<Shared>>> = Mutex::new(Vec::new());

/// Wakes every proxy thread of the process: a deregistration must reach the peers of a NIC
/// that sleeps without a timeout (no QP), or their cached keys would stay usable.
pub(crate) fn wake_all() {
    let engines: Vec<Arc<Shared>> = ENGINES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter_map(std::sync::Weak::upgrade)
        .collect();
    for e in engines {
        e.wake();
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: our eventfd, closed once.
        unsafe { libc::close(self.wake_fd) };
    }
}

/// QP states (the verbs values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    /// Created, not connected.
    Reset,
    /// Connecting to the peer.
    Connecting,
    /// Ready to send.
    Ready,
    /// In error: every WQE completes with a flush error.
    Error,
}

/// What the proxy publishes about a QP.
#[derive(Default)]
pub(crate) struct QpStatusCell {
    pub(crate) state: AtomicU8,
    pub(crate) syndrome: AtomicU8,
}

impl QpStatusCell {
    pub(crate) fn set(&self, s: QpState) {
        let v = match s {
            QpState::Reset => 0,
            QpState::Connecting => 1,
            QpState::Ready => 2,
            QpState::Error => 3,
        };
        self.state.store(v, Ordering::Release);
    }

    pub(crate) fn set_error(&self, syndrome: u8) {
        let _ = self
            .syndrome
            .compare_exchange(0, syndrome, Ordering::AcqRel, Ordering::Acquire);
        self.set(QpState::Error);
    }
}
