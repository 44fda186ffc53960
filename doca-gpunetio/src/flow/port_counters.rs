//! Counters of the software port behind a device (`doca_soft_port_get_counters`, a
//! `doca-soft` extension; feature `soft` only): what the port did with each frame.

use crate::device::Device;
use crate::error::{check, Result};
use doca_sys as sys;

/// Counters of the software port behind a device (`struct doca_soft_port_counters`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames read from the port.
    pub received: u64,
    /// Frames accepted by an RX queue.
    pub delivered: u64,
    /// Frames no Flow pipe entry took.
    pub dropped_no_match: u64,
    /// Frames a Flow DROP forward (or a miss DROP) discarded.
    pub dropped_by_flow: u64,
    /// Frames classified to a queue id that has no RX queue.
    pub dropped_no_queue: u64,
    /// Frames larger than the port's max frame or the queue's packet size.
    pub dropped_too_big: u64,
    /// Frames dropped because the target queue's completion ring was full.
    pub dropped_ring_full: u64,
    /// Frames dropped because the target queue was stopped.
    pub dropped_stopped: u64,
    /// Frames with truncated or inconsistent headers.
    pub dropped_malformed: u64,
    /// Frames sent.
    pub sent: u64,
    /// Frames that failed to send.
    pub send_errors: u64,
}

impl From<sys::doca_soft_port_counters> for PortCounters {
    fn from(c: sys::doca_soft_port_counters) -> Self {
        PortCounters {
            received: c.received,
            delivered: c.delivered,
            dropped_no_match: c.dropped_no_match,
            dropped_by_flow: c.dropped_by_flow,
            dropped_no_queue: c.dropped_no_queue,
            dropped_too_big: c.dropped_too_big,
            dropped_ring_full: c.dropped_ring_full,
            dropped_stopped: c.dropped_stopped,
            dropped_malformed: c.dropped_malformed,
            sent: c.sent,
            send_errors: c.send_errors,
        }
    }
}

impl PortCounters {
    /// The counters of the software port of `device` (all zero before the port was opened
    /// by a queue or a Flow port).
    pub fn of(device: &Device) -> Result<PortCounters> {
        let mut c = sys::doca_soft_port_counters::default();
        // SAFETY: the device is open; `c` is a valid out-pointer.
        check("doca_soft_port_get_counters", unsafe {
            sys::doca_soft_port_get_counters(device.as_raw(), &mut c)
        })?;
        Ok(c.into())
    }

    /// All drops, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.dropped_no_match
            + self.dropped_by_flow
            + self.dropped_no_queue
            + self.dropped_too_big
            + self.dropped_ring_full
            + self.dropped_stopped
            + self.dropped_malformed
    }
}
