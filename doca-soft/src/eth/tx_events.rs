//! Send events of a TX queue in CPU-completion mode (`doca_eth_txq_gpu_event_*`): the event
//! objects passed to the application's callbacks.

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
    pub(crate) fn new(position: u16, timestamp: u64, status: u32) -> TxGpuEvent {
        TxGpuEvent {
            position,
            timestamp,
            status,
        }
    }

    /// The descriptor position (low 16 bits of its index).
    pub(crate) fn position(&self) -> u16 {
        self.position
    }

    /// When the frame was sent (CLOCK_REALTIME, ns).
    pub(crate) fn timestamp(&self) -> u64 {
        self.timestamp
    }
}

/// Event callback: `void (*)(struct ev *, union doca_data user_data)`.
pub type TxEventCb = Option<unsafe extern "C" fn(event: *mut TxGpuEvent, user_data: DocaData)>;
