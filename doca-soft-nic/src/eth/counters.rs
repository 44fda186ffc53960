//! Per-queue counters beyond DOCA, exposed as `doca_soft_eth_rxq_get_counters` /
//! `doca_soft_eth_txq_get_counters` (`include/doca_soft_queue.h`).

use std::sync::atomic::{AtomicU64, Ordering};

/// RX queue counters.
#[derive(Debug, Default)]
pub struct RxqCounters {
    /// Frames the port handed to the queue.
    pub received: AtomicU64,
    /// Frames published to the completion ring.
    pub delivered: AtomicU64,
    /// Frames larger than the max packet size.
    pub dropped_too_big: AtomicU64,
    /// Frames dropped because the completion ring was full.
    pub dropped_ring_full: AtomicU64,
    /// Frames dropped because the queue was stopped.
    pub dropped_stopped: AtomicU64,
    /// Copies into the packet buffer that failed.
    pub errors: AtomicU64,
    /// Copies into device memory (one per contiguous run of slots).
    pub device_copies: AtomicU64,
}

/// TX queue counters.
#[derive(Debug, Default)]
pub struct TxqCounters {
    /// Frames sent on the port.
    pub sent: AtomicU64,
    /// Completions written (ring entries or PE events).
    pub completed: AtomicU64,
    /// Descriptors that failed (bad address, send error, malformed descriptor).
    pub errors: AtomicU64,
}

/// `struct doca_soft_rxq_counters`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RxqCountersSnapshot {
    /// Frames the port handed to the queue.
    pub received: u64,
    /// Frames published to the completion ring.
    pub delivered: u64,
    /// Frames larger than the max packet size.
    pub dropped_too_big: u64,
    /// Frames dropped because the completion ring was full.
    pub dropped_ring_full: u64,
}

/// `struct doca_soft_txq_counters`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TxqCountersSnapshot {
    /// Frames sent on the port.
    pub sent: u64,
    /// Completions written.
    pub completed: u64,
    /// Failed descriptors.
    pub errors: u64,
}

const _: () = assert!(std::mem::size_of::<RxqCountersSnapshot>() == 32);
const _: () = assert!(std::mem::size_of::<TxqCountersSnapshot>() == 24);

impl RxqCounters {
    /// Snapshot for the C API.
    pub fn snapshot(&self) -> RxqCountersSnapshot {
        RxqCountersSnapshot {
            received: self.received.load(Ordering::Relaxed),
            delivered: self.delivered.load(Ordering::Relaxed),
            dropped_too_big: self.dropped_too_big.load(Ordering::Relaxed),
            dropped_ring_full: self.dropped_ring_full.load(Ordering::Relaxed),
        }
    }
}

impl TxqCounters {
    /// Snapshot for the C API.
    pub fn snapshot(&self) -> TxqCountersSnapshot {
        TxqCountersSnapshot {
            sent: self.sent.load(Ordering::Relaxed),
            completed: self.completed.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
        }
    }
}
