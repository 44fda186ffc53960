//! Counters of the software port behind a device (`doca_soft_port_get_counters`, a
//! `doca-soft` extension): what the port did with each frame.

use doca_common::error::{check, Result};
use doca_common::Device;
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
    /// Frames only partly captured (a capture record cut by its snap length).
    pub dropped_truncated: u64,
}

/// Reads the C struct field by field. The destructuring names every field of the binding
/// (no `..`), so a counter added to `doca_soft_port.h` fails to compile here until this
/// type carries it too: the safe copy cannot silently fall behind the header.
impl From<sys::doca_soft_port_counters> for PortCounters {
    fn from(c: sys::doca_soft_port_counters) -> Self {
        let sys::doca_soft_port_counters {
            received,
            delivered,
            dropped_no_match,
            dropped_by_flow,
            dropped_no_queue,
            dropped_too_big,
            dropped_ring_full,
            dropped_stopped,
            dropped_malformed,
            sent,
            send_errors,
            dropped_truncated,
        } = c;
        PortCounters {
            received,
            delivered,
            dropped_no_match,
            dropped_by_flow,
            dropped_no_queue,
            dropped_too_big,
            dropped_ring_full,
            dropped_stopped,
            dropped_malformed,
            sent,
            send_errors,
            dropped_truncated,
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
            + self.dropped_truncated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_c_struct_keeps_every_counter_in_its_field() {
        let c = sys::doca_soft_port_counters {
            received: 1,
            delivered: 2,
            dropped_no_match: 3,
            dropped_by_flow: 4,
            dropped_no_queue: 5,
            dropped_too_big: 6,
            dropped_ring_full: 7,
            dropped_stopped: 8,
            dropped_malformed: 9,
            sent: 10,
            send_errors: 11,
            dropped_truncated: 12,
        };
        let p = PortCounters::from(c);
        assert_eq!(
            [p.received, p.delivered, p.sent, p.send_errors],
            [1, 2, 10, 11]
        );
        assert_eq!(
            [
                p.dropped_no_match,
                p.dropped_by_flow,
                p.dropped_no_queue,
                p.dropped_too_big,
                p.dropped_ring_full,
                p.dropped_stopped,
                p.dropped_malformed,
                p.dropped_truncated
            ],
            [3, 4, 5, 6, 7, 8, 9, 12]
        );
        assert_eq!(p.dropped(), 3 + 4 + 5 + 6 + 7 + 8 + 9 + 12);
    }
}
