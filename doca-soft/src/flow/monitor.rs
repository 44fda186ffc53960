//! `struct doca_flow_monitor`: counters (an entry's own, or a shared one by id) and aging.
//! Meters are NOT_SUPPORTED.

use super::sys;
use crate::error::{DocaError, DocaResult};

/// Which counter an entry counts into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum CounterKind {
    /// None.
    #[default]
    None,
    /// Its own.
    Own,
    /// A shared counter, by id.
    Shared(u32),
}

/// What a monitor asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Monitor {
    /// The counter.
    pub counter: CounterKind,
    /// Aging period in seconds (0: none).
    pub aging_sec: u32,
}

impl Monitor {
    /// Reads a C monitor: INVALID_VALUE for enums out of range, NOT_SUPPORTED (logged)
    /// for meters.
    pub(crate) fn of(m: &sys::doca_flow_monitor_v1) -> DocaResult<Monitor> {
        let kind = |t: u32, what: &str| -> DocaResult<u32> {
            if t > sys::DOCA_FLOW_RESOURCE_TYPE_NON_SHARED {
                sdk_err!("flow", "monitor {what}_type {t} is out of range (0..=2)");
                return Err(DocaError::INVALID_VALUE);
            }
            Ok(t)
        };
        if kind(m.meter_type, "meter")? != sys::DOCA_FLOW_RESOURCE_TYPE_NONE {
            sdk_err!("flow", "meters are not supported");
            return Err(DocaError::NOT_SUPPORTED);
        }
        let counter = match kind(m.counter_type, "counter")? {
            sys::DOCA_FLOW_RESOURCE_TYPE_NON_SHARED => CounterKind::Own,
            sys::DOCA_FLOW_RESOURCE_TYPE_SHARED => {
                // SAFETY: the union holds plain integers; SHARED selects shared_counter.
                CounterKind::Shared(unsafe { m.__bindgen_anon_2.shared_counter.shared_counter_id })
            }
            _ => CounterKind::None,
        };
        Ok(Monitor {
            counter,
            aging_sec: m.aging_sec,
        })
    }

    /// An entry's monitor over its pipe's: what the entry sets wins.
    pub(crate) fn over(self, pipe: Monitor) -> Monitor {
        Monitor {
            counter: if self.counter == CounterKind::None {
                pipe.counter
            } else {
                self.counter
            },
            aging_sec: if self.aging_sec == 0 {
                pipe.aging_sec
            } else {
                self.aging_sec
            },
        }
    }
}
