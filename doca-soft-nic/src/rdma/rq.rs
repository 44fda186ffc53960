//! The receive side: incoming sends and writes with immediate land in the posted receives
//! of the target QP's receive queue, first come first served, and produce receive CQEs in
//! receive order.
//!
//! A message that finds no posted receive (after re-reading the doorbell record) waits in
//! the RQ's unexpected queue, its payload still held by UCX, and is delivered as soon as a
//! receive is posted; its ACK (and so the sender's CQE) waits until then, as RC with
//! unlimited RNR retries would. The queue is bounded: at most [`MAX_UNEXPECTED`] messages
//! per RQ and [`MAX_UNEXPECTED_BYTES`] of payload per NIC. A message past either bound is
//! refused: the sender's WQE completes with `RNR_RETRY_EXC_ERR` and its QP enters the error
//! state (what a NIC reports once its RNR retries run out); nothing grows without bound.
//!
//! Placement: `ucp_am_recv_data_nbx` into the receive buffer (UCX copies into host or
//! registered device memory; rendezvous data is fetched straight there). With CQE inline
//! enabled, a message of at most 32 bytes goes into the CQE and the buffer stays untouched.
//! Errors: a message longer than the receive, or a buffer its key does not cover, completes
//! the receive with a `RESP_ERR` CQE (`LOCAL_LENGTH_ERR` / `LOCAL_PROT_ERR`), refuses the
//! message, and puts the receiving QP in error; a receive queue whose only QP is in error
//! completes its posted receives with flush errors.

use super::mkey::Region;
use super::ring::RqRing;
use super::ucp_am::AmMsg;
use super::wire::Msg;
use doca_soft_packet::mlx5::cqe::Image;
use std::collections::VecDeque;
use std::sync::Arc;

/// Most messages one RQ holds without a posted receive.
pub const MAX_UNEXPECTED: usize = 4096;
/// Most payload bytes a NIC holds for messages without a posted receive.
pub const MAX_UNEXPECTED_BYTES: u64 = 64 << 20;

/// A message waiting for a receive.
pub(super) struct Incoming {
    pub(crate) peer: u32,
    pub(crate) msg: Msg,
    pub(crate) am: AmMsg,
}

/// A consumed receive whose CQE is not written yet.
pub(crate) struct Pending {
    pub(crate) index: u64,
    pub(crate) img: Image,
    pub(crate) done: bool,
    /// (peer, sender QPN, sender WQE, syndrome) of the ACK to send at completion.
    pub(crate) ack: Option<(u32, u32, u32, u8)>,
    pub(crate) _region: Option<Arc<Region>>,
    pub(crate) bounce: Option<Box<[u8; 32]>>,
    pub(crate) inline_len: usize,
}

/// A receive queue as the proxy runs it.
pub(super) struct RqState {
    pub(crate) ring: RqRing,
    pub cqn: u32,
    pub(crate) cqe_inline: bool,
    pub(crate) pi: u64,
    pub(crate) ci: u64,
    /// QPs receiving through it.
    pub users: Vec<u32>,
    pub(crate) unexpected: VecDeque<Incoming>,
    pub(crate) pending: VecDeque<Pending>,
}

impl RqState {
    /// A receive queue over `ring`, CQEs to `cqn`.
    pub(super) fn new(ring: RqRing, cqn: u32, cqe_inline: bool) -> RqState {
        RqState {
            ring,
            cqn,
            cqe_inline,
            pi: 0,
            ci: 0,
            users: Vec::new(),
            unexpected: VecDeque::new(),
            pending: VecDeque::new(),
        }
    }

    pub(crate) fn refresh(&mut self) {
        match self.ring.producer(self.ci) {
            Ok(pi) => self.pi = self.pi.max(pi),
            Err(b) => sdk_warn!(
                "nic",
                "receive doorbell announces WQE {} past the ring",
                b.value
            ),
        }
    }

    /// Whether UCX still writes into memory this RQ owns (bounce buffers).
    pub(super) fn ucx_busy(&self) -> bool {
        self.pending.iter().any(|p| !p.done)
    }
}
