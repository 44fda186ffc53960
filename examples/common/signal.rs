//! Ctrl-C / SIGTERM: a process-wide flag set by the signal handler; the samples copy it
//! into the GPU exit flag and tear down in order.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM (idempotent).
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only performs an atomic store, which is async-signal-safe.
        unsafe { libc::signal(sig, handler) };
    }
}

/// Whether SIGINT or SIGTERM arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Sets the stop flag from code (e.g. when --duration elapsed).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}
