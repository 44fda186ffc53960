//! `doca_dma.h`: memory copies from the CPU (memcpy tasks through a PE) or from GPU kernels
//! (the GPU data path; see the engine's `dma` module).

use std::ffi::c_void;

use super::toolkit::{
    call, call_ptr, call_value, call_void, handle, handle_mut, new_handle, non_null, take_handle,
    write_out,
};
use crate::buf::Buf;
use crate::ctx::task::Task;
use crate::ctx::Ctx;
use crate::dev::{Dev, DevInfo};
use crate::dma::{MAX_BUF_SIZE, MAX_TASKS};
use crate::types::DocaData;

pub use crate::dma::task::{MemcpyCb, MemcpyTask};
pub use crate::dma::Dma;

/// `doca_dma_cap_task_memcpy_is_supported(devinfo)`: every device.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_cap_task_memcpy_is_supported(devinfo: *const DevInfo) -> u32 {
    call("doca_dma_cap_task_memcpy_is_supported", || {
        // SAFETY: C API contract (null or a live list entry).
        unsafe { handle(devinfo) }.map(|_| ())
    })
}

/// `doca_dma_cap_get_max_num_tasks(dma, &n)`.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_cap_get_max_num_tasks(
    dma: *mut Dma,
    max_num_tasks: *mut u32,
) -> u32 {
    call("doca_dma_cap_get_max_num_tasks", || {
        // SAFETY: C API contract (null or live; null or writable).
        unsafe {
            handle(dma)?;
            write_out(max_num_tasks, MAX_TASKS)
        }
    })
}

/// `doca_dma_cap_task_memcpy_get_max_buf_list_len(devinfo, &n)`: one buffer.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_cap_task_memcpy_get_max_buf_list_len(
    devinfo: *const DevInfo,
    max_buf_list_len: *mut u32,
) -> u32 {
    call("doca_dma_cap_task_memcpy_get_max_buf_list_len", || {
        // SAFETY: C API contract.
        unsafe {
            handle(devinfo)?;
            write_out(max_buf_list_len, 1)
        }
    })
}

/// `doca_dma_cap_task_memcpy_get_max_buf_size(devinfo, &size)`.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_cap_task_memcpy_get_max_buf_size(
    devinfo: *const DevInfo,
    buf_size: *mut u64,
) -> u32 {
    call("doca_dma_cap_task_memcpy_get_max_buf_size", || {
        // SAFETY: C API contract.
        unsafe {
            handle(devinfo)?;
            write_out(buf_size, MAX_BUF_SIZE)
        }
    })
}

/// `doca_dma_create(dev, &dma)`.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_create(dev: *mut Dev, dma: *mut *mut Dma) -> u32 {
    call("doca_dma_create", || {
        // SAFETY: C API contract.
        let d = unsafe { handle(dev) }?;
        non_null(dma)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(dma, Dma::new(d)) }
    })
}

/// `doca_dma_destroy(dma)`: BAD_STATE unless stopped, IN_USE while tasks are allocated.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_destroy(dma: *mut Dma) -> u32 {
    call("doca_dma_destroy", || {
        // SAFETY: C API contract (null or live, not used afterwards).
        unsafe { handle(dma) }?.close()?;
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(dma) }?);
        Ok(())
    })
}

/// `doca_dma_as_ctx(dma)`: NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_as_ctx(dma: *mut Dma) -> *mut Ctx {
    call_ptr("doca_dma_as_ctx", || {
        // SAFETY: C API contract.
        Ok(unsafe { handle(dma) }?.ctx_ptr())
    })
}

/// `doca_dma_set_ordered_completions(dma, on)` (IDLE only; completions are in order
/// either way).
#[no_mangle]
pub unsafe extern "C" fn doca_dma_set_ordered_completions(
    dma: *mut Dma,
    ordered_completions: u8,
) -> u32 {
    call("doca_dma_set_ordered_completions", || {
        // SAFETY: C API contract.
        unsafe { handle(dma) }?.set_ordered(ordered_completions != 0)
    })
}

/// `doca_dma_get_ordered_completions(dma, &on)`.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_get_ordered_completions(
    dma: *mut Dma,
    ordered_completions: *mut u8,
) -> u32 {
    call("doca_dma_get_ordered_completions", || {
        // SAFETY: C API contract.
        unsafe { write_out(ordered_completions, handle(dma)?.ordered() as u8) }
    })
}

/// `doca_dma_task_memcpy_set_conf(dma, ok_cb, err_cb, num_tasks)` (IDLE only).
#[no_mangle]
pub unsafe extern "C" fn doca_dma_task_memcpy_set_conf(
    dma: *mut Dma,
    task_completion_cb: MemcpyCb,
    task_error_cb: MemcpyCb,
    num_memcpy_tasks: u32,
) -> u32 {
    call("doca_dma_task_memcpy_set_conf", || {
        // SAFETY: C API contract.
        unsafe { handle(dma) }?.set_conf(task_completion_cb, task_error_cb, num_memcpy_tasks)
    })
}

/// `doca_dma_task_memcpy_alloc_init(dma, src, dst, user_data, &task)` (RUNNING, CPU data
/// path): NO_MEMORY beyond the configured number of tasks.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_task_memcpy_alloc_init(
    dma: *mut Dma,
    src: *const Buf,
    dst: *mut Buf,
    user_data: DocaData,
    task: *mut *mut MemcpyTask,
) -> u32 {
    call("doca_dma_task_memcpy_alloc_init", || {
        // SAFETY: C API contract.
        let d = unsafe { handle(dma) }?;
        non_null(src)?;
        non_null(dst)?;
        non_null(task)?;
        let mut t = d.alloc_task()?;
        t.init(src, dst, user_data);
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(task, t) }
    })
}

/// `doca_dma_task_memcpy_as_task(task)`: NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_task_memcpy_as_task(task: *mut MemcpyTask) -> *mut Task {
    call_ptr("doca_dma_task_memcpy_as_task", || {
        // SAFETY: C API contract (null or a live task).
        Ok(unsafe { handle_mut(task) }?.as_task())
    })
}

/// `doca_dma_task_memcpy_set_src(task, src)`.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_task_memcpy_set_src(task: *mut MemcpyTask, src: *const Buf) {
    call_void("doca_dma_task_memcpy_set_src", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(task) }?.set_src(src);
        Ok(())
    })
}

/// `doca_dma_task_memcpy_get_src(task)`: NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_task_memcpy_get_src(task: *const MemcpyTask) -> *const Buf {
    call_value("doca_dma_task_memcpy_get_src", std::ptr::null(), || {
        // SAFETY: C API contract.
        unsafe { handle(task) }.map_or(std::ptr::null(), |t| t.src())
    })
}

/// `doca_dma_task_memcpy_set_dst(task, dst)`.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_task_memcpy_set_dst(task: *mut MemcpyTask, dst: *mut Buf) {
    call_void("doca_dma_task_memcpy_set_dst", || {
        // SAFETY: C API contract.
        unsafe { handle_mut(task) }?.set_dst(dst);
        Ok(())
    })
}

/// `doca_dma_task_memcpy_get_dst(task)`: NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_task_memcpy_get_dst(task: *const MemcpyTask) -> *mut Buf {
    call_value("doca_dma_task_memcpy_get_dst", std::ptr::null_mut(), || {
        // SAFETY: C API contract.
        unsafe { handle(task) }.map_or(std::ptr::null_mut(), |t| t.dst())
    })
}

/// `doca_dma_get_gpu_handle(dma, &gpu_dma)`: BAD_STATE before start or on the CPU data
/// path.
#[no_mangle]
pub unsafe extern "C" fn doca_dma_get_gpu_handle(dma: *mut Dma, gpu_dma: *mut *mut c_void) -> u32 {
    call("doca_dma_get_gpu_handle", || {
        // SAFETY: C API contract.
        let d = unsafe { handle(dma) }?;
        non_null(gpu_dma)?;
        let h = d.gpu_handle()?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(gpu_dma, h as *mut c_void) }
    })
}
