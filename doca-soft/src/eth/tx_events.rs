//! Send events of a TX queue in CPU-completion mode (`doca_eth_txq_gpu_event_*`): the event
//! objects passed to the application's callbacks, registration and the event getters.

use super::txq::{txq_ref, EthTxq};
use crate::capi::toolkit::write_out;
use crate::error::{to_c, DocaError};
use crate::types::DocaData;

/// The C `struct doca_eth_txq_gpu_event_error_send_packet` and
/// `struct doca_eth_txq_gpu_event_notify_send_packet` (same layout, opaque to C).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TxGpuEvent {
    position: u16,
    timestamp: u64,
    status: u32,
}

impl TxGpuEvent {
    /// An event for descriptor position `position` (low 16 bits of its index).
    pub fn new(position: u16, timestamp: u64, status: u32) -> TxGpuEvent {
        TxGpuEvent {
            position,
            timestamp,
            status,
        }
    }
}

/// Event callback: `void (*)(struct ev *, union doca_data user_data)`.
pub type TxEventCb = Option<unsafe extern "C" fn(event: *mut TxGpuEvent, user_data: DocaData)>;

macro_rules! event_register {
    ($name:ident, $error:expr) => {
        #[doc = concat!("`", stringify!($name), "(txq, cb, user_data)` (IDLE only).")]
        ///
        /// # Safety
        /// `txq` is null or a live queue; `cb` has the event callback signature.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            txq: *mut EthTxq,
            cb: TxEventCb,
            user_data: DocaData,
        ) -> u32 {
            // SAFETY: caller contract.
            let r = unsafe { txq_ref(txq) }.and_then(|q| q.set_event_cb($error, cb, user_data));
            to_c(r)
        }
    };
}

event_register!(doca_eth_txq_gpu_event_error_send_packet_register, true);
event_register!(doca_eth_txq_gpu_event_notify_send_packet_register, false);

/// # Safety
/// `ev` is null or an event passed to a callback; `out` is null or writable.
unsafe fn event_field<T>(ev: *const TxGpuEvent, out: *mut T, f: fn(&TxGpuEvent) -> T) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { ev.as_ref() }
        .ok_or(DocaError::INVALID_VALUE)
        // SAFETY: caller contract.
        .and_then(|e| unsafe { write_out(out, f(e)) });
    to_c(r)
}

/// `doca_eth_txq_gpu_event_error_send_packet_get_position`.
///
/// # Safety
/// `ev` is null or a live event; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_event_error_send_packet_get_position(
    ev: *const TxGpuEvent,
    out: *mut u16,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { event_field(ev, out, |e| e.position) }
}

/// `doca_eth_txq_gpu_event_notify_send_packet_get_position`.
///
/// # Safety
/// `ev` is null or a live event; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_event_notify_send_packet_get_position(
    ev: *const TxGpuEvent,
    out: *mut u16,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { event_field(ev, out, |e| e.position) }
}

/// `doca_eth_txq_gpu_event_notify_send_packet_get_timestamp`.
///
/// # Safety
/// `ev` is null or a live event; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_event_notify_send_packet_get_timestamp(
    ev: *const TxGpuEvent,
    out: *mut u64,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { event_field(ev, out, |e| e.timestamp) }
}
