//! `doca_uar.h`: doorbell pages (engine: `verbs/uar.rs`).

use std::ffi::c_void;
use std::sync::Arc;

use super::toolkit::{call, handle, new_handle, non_null, take_handle, write_out};
use crate::dev::Dev;

pub use crate::verbs::Uar;

/// `doca_uar_create(dev, type, &uar)`: BLUEFLAME, NONCACHE or NONCACHE_DEDICATED.
#[no_mangle]
pub unsafe extern "C" fn doca_uar_create(
    dev: *const Dev,
    allocation_type: u32,
    uar: *mut *mut Uar,
) -> u32 {
    call("doca_uar_create", || {
        // SAFETY: C API contract (null or an open device).
        let d = unsafe { handle(dev) }?;
        non_null(uar)?;
        let u = Uar::new(Arc::clone(d.info()), allocation_type)?;
        // SAFETY: C API contract (checked non-null).
        unsafe { new_handle(uar, u) }
    })
}

/// `doca_uar_destroy(uar)`.
#[no_mangle]
pub unsafe extern "C" fn doca_uar_destroy(uar: *mut Uar) -> u32 {
    call("doca_uar_destroy", || {
        // SAFETY: C API contract (null or a live UAR, given up).
        drop(unsafe { take_handle(uar) }?);
        Ok(())
    })
}

/// `doca_uar_id_get(uar, &id)`.
#[no_mangle]
pub unsafe extern "C" fn doca_uar_id_get(uar: *const Uar, id: *mut u32) -> u32 {
    call("doca_uar_id_get", || {
        // SAFETY: C API contract.
        unsafe { write_out(id, handle(uar)?.id()) }
    })
}

/// `doca_uar_page_get(uar, &page)`.
#[no_mangle]
pub unsafe extern "C" fn doca_uar_page_get(uar: *const Uar, page: *mut *mut c_void) -> u32 {
    call("doca_uar_page_get", || {
        // SAFETY: C API contract.
        unsafe { write_out(page, handle(uar)?.page().cast()) }
    })
}

/// `doca_uar_reg_addr_get(uar, &reg)`.
#[no_mangle]
pub unsafe extern "C" fn doca_uar_reg_addr_get(uar: *const Uar, reg_addr: *mut *mut c_void) -> u32 {
    call("doca_uar_reg_addr_get", || {
        // SAFETY: C API contract.
        unsafe { write_out(reg_addr, handle(uar)?.reg_addr().cast()) }
    })
}
