//! Queue counters for the samples' summary lines. The software runtime counts what each
//! queue did (a doca-soft extension, `doca::gpunetio::soft`); an installed SDK has no such
//! calls, so with it these are `None` and the summaries print zeros.

use doca::gpunetio::{EthRxq, EthTxq};

/// What an RX queue dropped.
#[derive(Debug, Clone, Copy, Default)]
pub struct RxqStats {
    /// Frames larger than the queue's max packet size.
    pub dropped_too_big: u64,
    /// Frames dropped because the completion ring was full.
    pub dropped_ring_full: u64,
}

/// What a TX queue sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct TxqStats {
    /// Frames sent on the port.
    pub sent: u64,
    /// Completions written.
    pub completed: u64,
    /// Descriptors that failed.
    pub errors: u64,
}

/// The RX queue's counters, when the backend keeps them.
#[cfg(doca_backend = "soft")]
pub fn rxq(q: &EthRxq) -> Option<RxqStats> {
    use doca::gpunetio::soft::SoftCountersExt;
    let c = q.counters().ok()?;
    Some(RxqStats {
        dropped_too_big: c.dropped_too_big,
        dropped_ring_full: c.dropped_ring_full,
    })
}

/// The RX queue's counters, when the backend keeps them (the SDK does not).
#[cfg(not(doca_backend = "soft"))]
pub fn rxq(_q: &EthRxq) -> Option<RxqStats> {
    None
}

/// The TX queue's counters, when the backend keeps them.
#[cfg(doca_backend = "soft")]
pub fn txq(q: &EthTxq) -> Option<TxqStats> {
    use doca::gpunetio::soft::SoftCountersExt;
    let c = q.counters().ok()?;
    Some(TxqStats {
        sent: c.sent,
        completed: c.completed,
        errors: c.errors,
    })
}

/// The TX queue's counters, when the backend keeps them (the SDK does not).
#[cfg(not(doca_backend = "soft"))]
pub fn txq(_q: &EthTxq) -> Option<TxqStats> {
    None
}
