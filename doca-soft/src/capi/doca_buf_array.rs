//! `doca_buf_array.h`: fixed-size elements of an mmap exported to a GPU for the device
//! API. Setters after start are BAD_STATE; the GPU handle needs a started array with a
//! target GPU.

use std::ffi::c_void;

use super::toolkit::{call, handle, new_handle, non_null, take_handle, write_out};
use crate::gpu::Gpu;
use crate::mmap::Mmap;

pub use crate::buf::array::BufArr;

/// `doca_buf_arr_create(num_elem, &buf_arr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_arr_create(num_elem: usize, buf_arr: *mut *mut BufArr) -> u32 {
    call("doca_buf_arr_create", || {
        non_null(buf_arr)?;
        let a = BufArr::new(num_elem)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(buf_arr, a) }
    })
}

/// `doca_buf_arr_destroy(buf_arr)`: stops a started array first.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_arr_destroy(buf_arr: *mut BufArr) -> u32 {
    call("doca_buf_arr_destroy", || {
        // SAFETY: C API contract (null or an array from create, not destroyed).
        unsafe { handle(buf_arr) }?.stop_if_started();
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(buf_arr) }?);
        Ok(())
    })
}

/// `doca_buf_arr_set_params(buf_arr, mmap, elem_size, start_offset)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_arr_set_params(
    buf_arr: *mut BufArr,
    mmap: *mut Mmap,
    elem_size: usize,
    start_offset: u64,
) -> u32 {
    call("doca_buf_arr_set_params", || {
        // SAFETY: C API contract (null or live, both).
        unsafe { handle(buf_arr)?.set_params(handle(mmap)?, elem_size, start_offset) }
    })
}

/// `doca_buf_arr_set_target_gpu(buf_arr, gpu)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_arr_set_target_gpu(
    buf_arr: *mut BufArr,
    gpu_handler: *mut Gpu,
) -> u32 {
    call("doca_buf_arr_set_target_gpu", || {
        // SAFETY: C API contract.
        unsafe { handle(buf_arr)?.set_target_gpu(handle(gpu_handler)?) }
    })
}

/// `doca_buf_arr_start(buf_arr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_arr_start(buf_arr: *mut BufArr) -> u32 {
    call("doca_buf_arr_start", || {
        // SAFETY: C API contract.
        unsafe { handle(buf_arr) }?.start()
    })
}

/// `doca_buf_arr_stop(buf_arr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_arr_stop(buf_arr: *mut BufArr) -> u32 {
    call("doca_buf_arr_stop", || {
        // SAFETY: C API contract.
        unsafe { handle(buf_arr) }?.stop()
    })
}

/// `doca_buf_arr_get_gpu_handle(buf_arr, &gpu_buf_arr)`: the device address of the
/// element array (`struct doca_gpu_buf_arr *`).
#[no_mangle]
pub unsafe extern "C" fn doca_buf_arr_get_gpu_handle(
    buf_arr: *const BufArr,
    gpu_buf_arr: *mut *mut c_void,
) -> u32 {
    call("doca_buf_arr_get_gpu_handle", || {
        // SAFETY: C API contract.
        let a = unsafe { handle(buf_arr) }?;
        non_null(gpu_buf_arr)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(gpu_buf_arr, a.gpu_handle()? as *mut c_void) }
    })
}
