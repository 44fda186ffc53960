//! `doca_soft_port.h` (doca-soft extension): per-port frame counters, drops split by
//! reason.

use super::toolkit::{call, handle, non_null, write_out};
use crate::dev::Dev;
use crate::port::Port;

pub use crate::port::PortCountersSnapshot;

/// `doca_soft_port_get_counters(dev, &counters)`: the counters of the device's port (all
/// zero when the port was never opened).
#[no_mangle]
pub unsafe extern "C" fn doca_soft_port_get_counters(
    dev: *const Dev,
    counters: *mut PortCountersSnapshot,
) -> u32 {
    call("doca_soft_port_get_counters", || {
        // SAFETY: C API contract (null or a device from doca_dev_open).
        let d = unsafe { handle(dev) }?;
        non_null(counters)?;
        // SAFETY: C API contract (checked non-null, storage of the C layout).
        unsafe {
            write_out(
                counters,
                Port::existing(&d.info().spec)
                    .map(|p| p.counters())
                    .unwrap_or_default(),
            )
        }
    })
}
