//! `doca_rdma_bridge.h`: a device on a program's protection domain, the PD of a device, and
//! the memory keys of buffers and mmaps. doca-soft's PDs are those of its DOCA Verbs layer
//! (see the engine's `rdma::bridge`); keys are the mmaps' mkeys (the soft NIC's keys).

use std::ffi::c_void;

use super::toolkit::{call, handle, non_null, write_out};
use crate::buf::Buf;
use crate::dev::Dev;
use crate::error::DocaError;
use crate::mmap::Mmap;
use crate::rdma::bridge;

/// `doca_rdma_bridge_open_dev_from_pd(pd, &dev)`: NOT_SUPPORTED for a PD that is not one
/// of DOCA Verbs'.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_open_dev_from_pd(
    pd: *mut c_void,
    dev: *mut *mut Dev,
) -> u32 {
    call("doca_rdma_bridge_open_dev_from_pd", || {
        non_null(pd)?;
        non_null(dev)?;
        let d = bridge::open_dev_from_pd(pd as usize)?;
        // The device stays where the bridge recorded it: the box becomes the handle
        // (closed by doca_dev_close like any other).
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(dev, Box::into_raw(d)) }
    })
}

/// `doca_rdma_bridge_get_dev_pd(dev, &pd)`: the PD of a device opened from one;
/// NOT_SUPPORTED for other devices.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_get_dev_pd(dev: *const Dev, pd: *mut *mut c_void) -> u32 {
    call("doca_rdma_bridge_get_dev_pd", || {
        // SAFETY: C API contract.
        let d = unsafe { handle(dev) }?;
        non_null(pd)?;
        let p = bridge::dev_pd(d)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(pd, p as *mut c_void) }
    })
}

/// `doca_rdma_bridge_get_buf_mkey(buf, dev, &mkey)`: the key of the buffer's mmap (host
/// order); BAD_STATE for a stopped mmap, NOT_FOUND when `dev` was not added to it.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_get_buf_mkey(
    buf: *const Buf,
    dev: *mut Dev,
    mkey: *mut u32,
) -> u32 {
    call("doca_rdma_bridge_get_buf_mkey", || {
        // SAFETY: C API contract (null or live, both).
        let (b, d) = unsafe { (handle(buf)?, handle(dev)?) };
        non_null(mkey)?;
        let m = b.mmap().ok_or(DocaError::BAD_STATE)?;
        if !m.is_started() {
            return Err(DocaError::BAD_STATE);
        }
        if !m.has_dev(d) {
            return Err(DocaError::NOT_FOUND);
        }
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(mkey, m.mkey()) }
    })
}

/// `doca_rdma_bridge_get_mmap_mkey_from_pd(mmap, pd, &mkey)`: the mmap's key (host order)
/// for a PD of DOCA Verbs; BAD_STATE before start.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_get_mmap_mkey_from_pd(
    mmap: *const Mmap,
    pd: *mut c_void,
    mkey: *mut u32,
) -> u32 {
    call("doca_rdma_bridge_get_mmap_mkey_from_pd", || {
        // SAFETY: C API contract.
        let m = unsafe { handle(mmap) }?;
        non_null(pd)?;
        non_null(mkey)?;
        if !bridge::is_known(pd as usize) {
            sdk_err!(
                "rdma",
                "doca_rdma_bridge_get_mmap_mkey_from_pd: unknown ibv_pd {:#x}",
                pd as usize
            );
            return Err(DocaError::NOT_SUPPORTED);
        }
        if !m.is_started() {
            return Err(DocaError::BAD_STATE);
        }
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(mkey, m.mkey()) }
    })
}
