//! In-memory wire (`wire:NAME`): two ports NAME0 and NAME1 of one process; a frame sent on
//! one side is queued for the other side's receive lanes (on the sending thread's lane,
//! see `lanes`). No kernel networking.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use once_cell::sync::Lazy;

use super::lanes::LaneQueues;
use super::{Backend, RxSource, INJECT_QUEUE_FRAMES};
use crate::error::{DocaError, DocaResult};

/// Largest frame on a wire (jumbo Ethernet plus two VLAN tags).
pub(super) const WIRE_MAX_FRAME: usize = 9000 + 14 + 8;

/// Both directions of one wire: `rx[s]` holds the frames side `s` receives.
struct WireLink {
    rx: [Arc<LaneQueues>; 2],
}

static WIRES: Lazy<Mutex<HashMap<String, Weak<WireLink>>>> =
    Lazy::new(|| Mutex::new(HashMap::new()));

/// One side of a wire (the backend of port NAME0 or NAME1).
pub(crate) struct WireEnd {
    link: Arc<WireLink>,
    side: usize,
}

impl WireEnd {
    /// Attaches to side `side` (0 or 1) of wire `name`, creating the wire on first use.
    pub(crate) fn attach(name: &str, side: u8) -> DocaResult<WireEnd> {
        if side > 1 || name.is_empty() {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut wires = WIRES.lock().unwrap_or_else(|e| e.into_inner());
        let link = match wires.get(name).and_then(Weak::upgrade) {
            Some(l) => l,
            None => {
                let l = Arc::new(WireLink {
                    rx: [
                        Arc::new(LaneQueues::new(INJECT_QUEUE_FRAMES)),
                        Arc::new(LaneQueues::new(INJECT_QUEUE_FRAMES)),
                    ],
                });
                wires.retain(|_, w| w.strong_count() > 0);
                wires.insert(name.to_string(), Arc::downgrade(&l));
                l
            }
        };
        Ok(WireEnd {
            link,
            side: usize::from(side),
        })
    }

    /// The queues this side receives from (also the port's inject queues).
    pub(crate) fn rx_queue(&self) -> Arc<LaneQueues> {
        self.link.rx[self.side].clone()
    }
}

impl Backend for WireEnd {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        // A full peer queue is a wire that cannot take more: report FULL to the sender.
        if self.link.rx[1 - self.side].push(frame) {
            Ok(())
        } else {
            Err(DocaError::FULL)
        }
    }

    fn max_frame(&self) -> usize {
        WIRE_MAX_FRAME
    }

    fn open_rx(&self, _lane: usize) -> DocaResult<Option<Box<dyn RxSource>>> {
        Ok(None)
    }
}
