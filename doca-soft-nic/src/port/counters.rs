//! Per-port packet counters (lock-free; read as a snapshot).
//!
//! Receive lanes count into a [`LaneTally`] of their own and add it to the port's counters
//! once per batch, before the batch's frames are published; senders count into one of
//! [`SENT_SHARDS`] cache lines picked by thread. So no counter line is written by several
//! threads per frame.

use std::sync::atomic::{AtomicU64, Ordering};

use super::lanes::sender_slot;

/// Cache lines the sent counter is spread over.
pub(super) const SENT_SHARDS: usize = 16;

/// A counter alone in its cache lines (two: adjacent-line prefetch pairs them).
#[repr(align(128))]
#[derive(Default, Debug)]
struct Padded(AtomicU64);

/// Why the port dropped a received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// No Flow pipe (or no default queue) matched the frame.
    NoMatch,
    /// A Flow entry or miss action forwarded the frame to DROP.
    ByFlow,
    /// The target queue id has no registered queue.
    NoQueue,
    /// Larger than the port's max frame or the queue's max packet size.
    TooBig,
    /// The queue's completion ring was full.
    RingFull,
    /// The queue was stopped.
    Stopped,
    /// The parser rejected the frame (truncated or malformed headers).
    Malformed,
    /// Only part of the frame was captured (a capture record cut by its snap length):
    /// the frame cannot be delivered whole.
    Truncated,
}

/// Live counters of one port.
#[derive(Default, Debug)]
pub(crate) struct PortCounters {
    received: AtomicU64,
    delivered: AtomicU64,
    no_match: AtomicU64,
    by_flow: AtomicU64,
    no_queue: AtomicU64,
    too_big: AtomicU64,
    ring_full: AtomicU64,
    stopped: AtomicU64,
    malformed: AtomicU64,
    truncated: AtomicU64,
    sent: [Padded; SENT_SHARDS],
    send_errors: AtomicU64,
}

/// What one lane counted during a batch (plain integers: only that lane writes them).
#[derive(Default, Debug)]
pub(crate) struct LaneTally {
    received: u64,
    delivered: u64,
    drops: [u64; DROP_REASONS],
}

const DROP_REASONS: usize = 8;

impl DropReason {
    fn index(self) -> usize {
        match self {
            DropReason::NoMatch => 0,
            DropReason::ByFlow => 1,
            DropReason::NoQueue => 2,
            DropReason::TooBig => 3,
            DropReason::RingFull => 4,
            DropReason::Stopped => 5,
            DropReason::Malformed => 6,
            DropReason::Truncated => 7,
        }
    }
}

impl LaneTally {
    /// One frame read.
    pub(crate) fn received(&mut self) {
        self.received += 1;
    }
    /// One frame delivered.
    pub(crate) fn delivered(&mut self) {
        self.delivered += 1;
    }
    /// One frame dropped.
    pub(crate) fn dropped(&mut self, why: DropReason) {
        self.drops[why.index()] += 1;
    }
}

/// A copy of a port's counters; also the layout of `struct doca_soft_port_counters`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCountersSnapshot {
    /// Frames read from the port (outgoing copies excluded).
    pub received: u64,
    /// Frames handed to a queue that accepted them.
    pub delivered: u64,
    /// Dropped: nothing matched.
    pub dropped_no_match: u64,
    /// Dropped: a Flow DROP forward.
    pub dropped_by_flow: u64,
    /// Dropped: target queue id not registered.
    pub dropped_no_queue: u64,
    /// Dropped: too big for the port or the queue.
    pub dropped_too_big: u64,
    /// Dropped: the queue's ring was full.
    pub dropped_ring_full: u64,
    /// Dropped: the queue was stopped.
    pub dropped_stopped: u64,
    /// Dropped: malformed headers.
    pub dropped_malformed: u64,
    /// Frames sent.
    pub sent: u64,
    /// Frames that failed to send.
    pub send_errors: u64,
    /// Dropped: only part of the frame was captured (after `send_errors`: fields are only
    /// ever added at the end of this struct).
    pub dropped_truncated: u64,
}

impl PortCountersSnapshot {
    /// Sum of every drop reason.
    pub fn dropped(&self) -> u64 {
        self.dropped_no_match
            + self.dropped_by_flow
            + self.dropped_no_queue
            + self.dropped_too_big
            + self.dropped_ring_full
            + self.dropped_stopped
            + self.dropped_malformed
            + self.dropped_truncated
    }
}

impl PortCounters {
    /// Counts one sent frame (or a failed send).
    pub(crate) fn add_sent(&self, ok: bool) {
        if ok {
            self.add_sent_n(1);
        } else {
            self.send_errors.fetch_add(1, Ordering::Relaxed);
        }
    }
    /// Counts `n` sent frames (on the calling thread's shard).
    pub(crate) fn add_sent_n(&self, n: u64) {
        if n > 0 {
            self.sent[sender_slot() % SENT_SHARDS]
                .0
                .fetch_add(n, Ordering::Relaxed);
        }
    }
    /// Adds a lane's tally and zeroes it.
    pub(crate) fn add_tally(&self, t: &mut LaneTally) {
        let add = |c: &AtomicU64, v: u64| {
            if v > 0 {
                c.fetch_add(v, Ordering::Relaxed);
            }
        };
        add(&self.delivered, t.delivered);
        for why in [
            DropReason::NoMatch,
            DropReason::ByFlow,
            DropReason::NoQueue,
            DropReason::TooBig,
            DropReason::RingFull,
            DropReason::Stopped,
            DropReason::Malformed,
            DropReason::Truncated,
        ] {
            add(self.drop_counter(why), t.drops[why.index()]);
        }
        // Last, with release: a snapshot that sees these frames received (acquire) sees
        // their outcomes too.
        if t.received > 0 {
            self.received.fetch_add(t.received, Ordering::Release);
        }
        *t = LaneTally::default();
    }
    fn drop_counter(&self, why: DropReason) -> &AtomicU64 {
        match why {
            DropReason::NoMatch => &self.no_match,
            DropReason::ByFlow => &self.by_flow,
            DropReason::NoQueue => &self.no_queue,
            DropReason::TooBig => &self.too_big,
            DropReason::RingFull => &self.ring_full,
            DropReason::Stopped => &self.stopped,
            DropReason::Malformed => &self.malformed,
            DropReason::Truncated => &self.truncated,
        }
    }
    /// Reads every counter.
    pub(crate) fn snapshot(&self) -> PortCountersSnapshot {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        PortCountersSnapshot {
            received: self.received.load(Ordering::Acquire),
            delivered: r(&self.delivered),
            dropped_no_match: r(&self.no_match),
            dropped_by_flow: r(&self.by_flow),
            dropped_no_queue: r(&self.no_queue),
            dropped_too_big: r(&self.too_big),
            dropped_ring_full: r(&self.ring_full),
            dropped_stopped: r(&self.stopped),
            dropped_malformed: r(&self.malformed),
            sent: self.sent.iter().map(|p| r(&p.0)).sum(),
            send_errors: r(&self.send_errors),
            dropped_truncated: r(&self.truncated),
        }
    }
}
