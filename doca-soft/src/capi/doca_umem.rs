//! `doca_umem.h`: user memory registrations (engine: `verbs/umem.rs`). In doca-soft a umem
//! is checked and recorded; queue rings live in runtime memory (see `verbs/`).

use std::ffi::c_void;
use std::sync::Arc;

use super::toolkit::{call, handle, new_handle, non_null, take_handle, write_out};
use crate::dev::Dev;
use crate::gpu::Gpu;

pub use crate::verbs::Umem;

/// `doca_umem_create(dev, address, size, access, &umem)`: host memory.
#[no_mangle]
pub unsafe extern "C" fn doca_umem_create(
    dev: *const Dev,
    address: *mut c_void,
    size: usize,
    access_flags: u32,
    umem: *mut *mut Umem,
) -> u32 {
    call("doca_umem_create", || {
        // SAFETY: C API contract (null or an open device).
        let d = unsafe { handle(dev) }?;
        non_null(umem)?;
        let u = Umem::new(
            Arc::clone(d.info()),
            address as u64,
            size,
            access_flags,
            false,
        )?;
        // SAFETY: C API contract (checked non-null).
        unsafe { new_handle(umem, u) }
    })
}

/// `doca_umem_gpu_create(gpu, dev, address, size, access, &umem)`: memory from
/// `doca_gpu_mem_alloc` of that GPU (INVALID_VALUE otherwise).
#[no_mangle]
pub unsafe extern "C" fn doca_umem_gpu_create(
    gpu: *mut Gpu,
    dev: *mut Dev,
    address: *mut c_void,
    size: usize,
    access_flags: u32,
    umem: *mut *mut Umem,
) -> u32 {
    call("doca_umem_gpu_create", || {
        // SAFETY: C API contract (null or live).
        let g = unsafe { handle(gpu) }?;
        // SAFETY: as above.
        let d = unsafe { handle(dev) }?;
        non_null(umem)?;
        if !g.owns(address as u64, size) {
            sdk_err!("umem", "{address:p}+{size} is not memory of this GPU");
            return Err(crate::error::DocaError::INVALID_VALUE);
        }
        let u = Umem::new(
            Arc::clone(d.info()),
            address as u64,
            size,
            access_flags,
            true,
        )?;
        // SAFETY: C API contract (checked non-null).
        unsafe { new_handle(umem, u) }
    })
}

/// `doca_umem_destroy(umem)`.
#[no_mangle]
pub unsafe extern "C" fn doca_umem_destroy(umem: *mut Umem) -> u32 {
    call("doca_umem_destroy", || {
        // SAFETY: C API contract (null or a live umem, given up).
        drop(unsafe { take_handle(umem) }?);
        Ok(())
    })
}

/// `doca_umem_get_id(umem, &id)`.
#[no_mangle]
pub unsafe extern "C" fn doca_umem_get_id(umem: *const Umem, umem_id: *mut u32) -> u32 {
    call("doca_umem_get_id", || {
        // SAFETY: C API contract.
        unsafe { write_out(umem_id, handle(umem)?.id()) }
    })
}

/// `doca_umem_get_size(umem, &size)`.
#[no_mangle]
pub unsafe extern "C" fn doca_umem_get_size(umem: *const Umem, umem_size: *mut u32) -> u32 {
    call("doca_umem_get_size", || {
        // SAFETY: C API contract.
        unsafe { write_out(umem_size, handle(umem)?.size()) }
    })
}

/// `doca_umem_get_address(umem, &addr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_umem_get_address(
    umem: *const Umem,
    umem_addr: *mut *mut c_void,
) -> u32 {
    call("doca_umem_get_address", || {
        // SAFETY: C API contract.
        unsafe { write_out(umem_addr, handle(umem)?.addr() as *mut c_void) }
    })
}
