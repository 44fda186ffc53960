//! `doca_verbs.h`, contexts and protection domains.

use std::sync::Arc;

use crate::capi::toolkit::{call, handle, new_handle, non_null, take_handle, write_out};
use crate::dev::{Dev, DevInfo};
use crate::verbs::{VerbsContext, VerbsPd};

/// `doca_verbs_context_create(devinfo, flags, &ctx)`: opens the device's soft NIC.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_context_create(
    net_dev: *mut DevInfo,
    flags: u32,
    verbs_ctx: *mut *mut VerbsContext,
) -> u32 {
    call("doca_verbs_context_create", || {
        non_null(net_dev)?;
        non_null(verbs_ctx)?;
        // SAFETY: every devinfo handed to C is an Arc pointer (doca_dev.rs); a new strong
        // reference keeps it alive for the context.
        let info = unsafe {
            Arc::increment_strong_count(net_dev as *const DevInfo);
            Arc::from_raw(net_dev as *const DevInfo)
        };
        let ctx = VerbsContext::open(info, flags)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(verbs_ctx, ctx) }
    })
}

/// `doca_verbs_context_destroy(ctx)`: `IN_USE` while PDs, CQs, QPs or AH attributes of it
/// exist.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_context_destroy(verbs_ctx: *mut VerbsContext) -> u32 {
    call("doca_verbs_context_destroy", || {
        // SAFETY: C API contract (null or a live context, given up on success).
        unsafe { handle(verbs_ctx) }?.ensure_unused()?;
        // SAFETY: as above.
        drop(unsafe { take_handle(verbs_ctx) }?);
        Ok(())
    })
}

/// `doca_verbs_pd_create(ctx, &pd)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_pd_create(
    verbs_ctx: *mut VerbsContext,
    verbs_pd: *mut *mut VerbsPd,
) -> u32 {
    call("doca_verbs_pd_create", || {
        // SAFETY: C API contract.
        let c = unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_pd, VerbsPd::new(c)) }
    })
}

/// `doca_verbs_pd_destroy(pd)`: `IN_USE` while QPs on it (or users of its doca_dev) exist.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_pd_destroy(verbs_pd: *mut VerbsPd) -> u32 {
    call("doca_verbs_pd_destroy", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_pd) }?.ensure_unused()?;
        // SAFETY: as above.
        drop(unsafe { take_handle(verbs_pd) }?);
        Ok(())
    })
}

/// `doca_verbs_pd_as_doca_dev(pd, &dev)`: a doca_dev sharing the PD, owned by the PD (do
/// not close it; it goes with the PD).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_pd_as_doca_dev(
    verbs_pd: *mut VerbsPd,
    dev: *mut *mut Dev,
) -> u32 {
    call("doca_verbs_pd_as_doca_dev", || {
        // SAFETY: C API contract.
        let pd = unsafe { handle(verbs_pd) }?;
        non_null(dev)?;
        // SAFETY: C API contract (checked non-null).
        unsafe { write_out(dev, pd.as_doca_dev()) }
    })
}
