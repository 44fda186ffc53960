//! `doca_soft_queue.h` (doca-soft extension): per-queue counters.

use super::toolkit::{call, handle, write_out};

pub use crate::eth::counters::{RxqCountersSnapshot, TxqCountersSnapshot};
pub use crate::eth::rxq::EthRxq;
pub use crate::eth::txq::EthTxq;

/// `doca_soft_eth_rxq_get_counters(eth_rxq, &counters)` (any state: zeros before the first
/// start, the last run's counters after a stop).
#[no_mangle]
pub unsafe extern "C" fn doca_soft_eth_rxq_get_counters(
    rxq: *const EthRxq,
    out: *mut RxqCountersSnapshot,
) -> u32 {
    call("doca_soft_eth_rxq_get_counters", || {
        // SAFETY: C API contract (null or a live queue; null or writable).
        unsafe { write_out(out, handle(rxq)?.counters()) }
    })
}

/// `doca_soft_eth_txq_get_counters(eth_txq, &counters)` (any state, as for RX queues).
#[no_mangle]
pub unsafe extern "C" fn doca_soft_eth_txq_get_counters(
    txq: *const EthTxq,
    out: *mut TxqCountersSnapshot,
) -> u32 {
    call("doca_soft_eth_txq_get_counters", || {
        // SAFETY: C API contract.
        unsafe { write_out(out, handle(txq)?.counters()) }
    })
}
