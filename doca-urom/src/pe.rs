//! `ProgressEngine`: a `doca_pe` shared (Arc) by the contexts connected to it.

use crate::error::{check, Result};
use crate::ffi;
use std::sync::Arc;

/// A DOCA progress engine. `Send + Sync`: progressing the same engine from two threads
/// at once is serialised by the runtime.
pub struct ProgressEngine {
    raw: *mut ffi::doca_pe,
}

// SAFETY: doca-soft's PE is internally synchronised.
unsafe impl Send for ProgressEngine {}
// SAFETY: as above.
unsafe impl Sync for ProgressEngine {}

impl ProgressEngine {
    /// Creates one.
    pub fn new() -> Result<Arc<ProgressEngine>> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: out pointer.
        check("doca_pe_create", unsafe { ffi::doca_pe_create(&mut raw) })?;
        Ok(Arc::new(ProgressEngine { raw }))
    }

    /// One progress round; `true` if something completed.
    pub fn progress(&self) -> bool {
        // SAFETY: live PE.
        unsafe { ffi::doca_pe_progress(self.raw) != 0 }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> *mut ffi::doca_pe {
        self.raw
    }

    pub(crate) fn connect(&self, ctx: *mut ffi::doca_ctx) -> Result<()> {
        // SAFETY: live PE and context.
        check("doca_pe_connect_ctx", unsafe {
            ffi::doca_pe_connect_ctx(self.raw, ctx)
        })
    }
}

impl Drop for ProgressEngine {
    fn drop(&mut self) {
        // SAFETY: contexts holding an Arc to this engine are gone.
        unsafe { ffi::doca_pe_destroy(self.raw) };
    }
}

/// Reads a context's state.
pub(crate) fn ctx_state(ctx: *mut ffi::doca_ctx) -> u32 {
    let mut s = 0;
    // SAFETY: live context.
    unsafe { ffi::doca_ctx_get_state(ctx, &mut s) };
    s
}
