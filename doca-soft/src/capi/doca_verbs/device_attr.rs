//! `doca_verbs.h`, device attributes: what the soft NIC reports it supports.

use crate::capi::toolkit::{call, call_value, handle, new_handle, take_handle};
use crate::verbs::{DeviceAttr, VerbsContext};

/// `doca_verbs_query_device(ctx, &attr)`; free with `doca_verbs_device_attr_free`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_query_device(
    verbs_ctx: *mut VerbsContext,
    verbs_device_attr: *mut *mut DeviceAttr,
) -> u32 {
    call("doca_verbs_query_device", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_device_attr, DeviceAttr::soft_nic()) }
    })
}

/// `doca_verbs_device_attr_free(attr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_free(verbs_device_attr: *mut DeviceAttr) -> u32 {
    call("doca_verbs_device_attr_free", || {
        // SAFETY: C API contract (null or from doca_verbs_query_device, given up).
        drop(unsafe { take_handle(verbs_device_attr) }?);
        Ok(())
    })
}

/// `doca_verbs_device_attr_get_max_qp_rd_atom(attr)`: 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_max_qp_rd_atom(
    verbs_device_attr: *const DeviceAttr,
) -> u8 {
    call_value("doca_verbs_device_attr_get_max_qp_rd_atom", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_device_attr) }.map_or(0, |a| a.max_qp_rd_atom)
    })
}

/// `doca_verbs_device_attr_get_max_qp_init_rd_atom(attr)`: 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_max_qp_init_rd_atom(
    verbs_device_attr: *const DeviceAttr,
) -> u8 {
    call_value("doca_verbs_device_attr_get_max_qp_init_rd_atom", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_device_attr) }.map_or(0, |a| a.max_qp_init_rd_atom)
    })
}

/// `doca_verbs_device_attr_get_is_cqe_inline_supported(attr)`: `DOCA_SUCCESS` (supported).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_is_cqe_inline_supported(
    verbs_device_attr: *const DeviceAttr,
) -> u32 {
    call("doca_verbs_device_attr_get_is_cqe_inline_supported", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_device_attr) }?.cqe_inline()
    })
}

/// `doca_verbs_device_attr_get_is_send_dbr_mode_supported(attr, mode)`: `DOCA_SUCCESS` for
/// DBR_VALID and NO_DBR_EXT, `NOT_SUPPORTED` for NO_DBR_INT.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_is_send_dbr_mode_supported(
    verbs_device_attr: *const DeviceAttr,
    send_dbr_mode: u32,
) -> u32 {
    call(
        "doca_verbs_device_attr_get_is_send_dbr_mode_supported",
        || {
            // SAFETY: C API contract.
            unsafe { handle(verbs_device_attr) }?.send_dbr_mode(send_dbr_mode)
        },
    )
}

/// `doca_verbs_device_attr_get_atomic_cap(attr)`: `DOCA_VERBS_ATOMIC_CAP_HCA` (NONE for
/// NULL).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_atomic_cap(
    verbs_device_attr: *const DeviceAttr,
) -> u32 {
    call_value("doca_verbs_device_attr_get_atomic_cap", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_device_attr) }.map_or(0, |a| a.atomic_cap())
    })
}
