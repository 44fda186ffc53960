//! Queue counters of the software runtime (`doca_soft_*` extensions): what each queue did
//! with the frames it saw. The NVIDIA SDK has no such calls. (Port counters:
//! [`PortCounters`](super::PortCounters).)

use doca_common::error::{check, Result};
use doca_sys as sys;

/// Counters of one RX queue (`struct doca_soft_rxq_counters`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxqCounters {
    /// Frames the port handed to the queue.
    pub received: u64,
    /// Frames published to the completion ring (visible to the consumer).
    pub delivered: u64,
    /// Frames dropped because they were larger than the queue's max packet size.
    pub dropped_too_big: u64,
    /// Frames dropped because the completion ring was full.
    pub dropped_ring_full: u64,
}

/// Counters of one TX queue (`struct doca_soft_txq_counters`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxqCounters {
    /// Frames sent on the port.
    pub sent: u64,
    /// Completions written (CQ entries or PE events).
    pub completed: u64,
    /// Descriptors that failed.
    pub errors: u64,
}

impl From<sys::doca_soft_rxq_counters> for RxqCounters {
    fn from(c: sys::doca_soft_rxq_counters) -> Self {
        RxqCounters {
            received: c.received,
            delivered: c.delivered,
            dropped_too_big: c.dropped_too_big,
            dropped_ring_full: c.dropped_ring_full,
        }
    }
}

impl From<sys::doca_soft_txq_counters> for TxqCounters {
    fn from(c: sys::doca_soft_txq_counters) -> Self {
        TxqCounters {
            sent: c.sent,
            completed: c.completed,
            errors: c.errors,
        }
    }
}

/// Reads an RX queue's counters. `rxq` is a live `doca_eth_rxq`.
pub(crate) fn rxq_counters(rxq: *const sys::doca_eth_rxq) -> Result<RxqCounters> {
    let mut c = sys::doca_soft_rxq_counters::default();
    // SAFETY: the caller passes a live queue; `c` is a valid out-pointer.
    check("doca_soft_eth_rxq_get_counters", unsafe {
        sys::doca_soft_eth_rxq_get_counters(rxq, &mut c)
    })?;
    Ok(c.into())
}

/// Reads a TX queue's counters. `txq` is a live `doca_eth_txq`.
pub(crate) fn txq_counters(txq: *const sys::doca_eth_txq) -> Result<TxqCounters> {
    let mut c = sys::doca_soft_txq_counters::default();
    // SAFETY: the caller passes a live queue; `c` is a valid out-pointer.
    check("doca_soft_eth_txq_get_counters", unsafe {
        sys::doca_soft_eth_txq_get_counters(txq, &mut c)
    })?;
    Ok(c.into())
}
