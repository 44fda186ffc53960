//! `doca_gpunetio.h`: the GPU handle, GPU memory and GPU semaphores.
//!
//! `doca_gpu_destroy` with memory the program did not free frees it with a warning (a leak
//! in the program); when queues, mmaps or other objects still use the GPU, the handle goes
//! away but the context and that memory stay until the last of them is destroyed.

use std::ffi::{c_char, c_int, c_void};

use super::toolkit::{call, handle, new_handle, non_null, str_arg, take_handle, write_out};
use crate::error::DocaError;
use crate::types::GPU_MEM_TYPE_GPU;

pub use crate::gpu::Gpu;
pub use crate::semaphore::{Semaphore, STATUS_MAX};

/// `doca_gpu_create(gpu_bus_id, &gpu)`: NOT_FOUND when no GPU has that PCI address, DRIVER
/// without a usable CUDA driver.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_create(gpu_bus_id: *const c_char, gpu_dev: *mut *mut Gpu) -> u32 {
    call("doca_gpu_create", || {
        // SAFETY: C API contract (null or NUL-terminated).
        let id = unsafe { str_arg(gpu_bus_id) }?;
        non_null(gpu_dev)?;
        if id.trim().is_empty() {
            return Err(DocaError::INVALID_VALUE);
        }
        let g = Gpu::open(id)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(gpu_dev, g) }
    })
}

/// `doca_gpu_destroy(gpu)`: see the module documentation for memory still allocated.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_destroy(gpu_dev: *mut Gpu) -> u32 {
    call("doca_gpu_destroy", || {
        // SAFETY: C API contract (null or a GPU from doca_gpu_create, not destroyed).
        unsafe { handle(gpu_dev) }?.warn_if_still_used();
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(gpu_dev) }?);
        Ok(())
    })
}

/// `doca_gpu_mem_alloc(gpu, size, alignment, mtype, &gpu_ptr, &cpu_ptr)`: `memptr_cpu`
/// may be NULL only for GPU memory.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_mem_alloc(
    gpu: *mut Gpu,
    size: usize,
    alignment: usize,
    mtype: u32,
    memptr_gpu: *mut *mut c_void,
    memptr_cpu: *mut *mut c_void,
) -> u32 {
    call("doca_gpu_mem_alloc", || {
        // SAFETY: C API contract (null or live).
        let g = unsafe { handle(gpu) }?;
        if memptr_gpu.is_null() || (memptr_cpu.is_null() && mtype != GPU_MEM_TYPE_GPU) {
            return Err(DocaError::INVALID_VALUE);
        }
        let (d, c) = g.alloc(size, alignment, mtype)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(memptr_gpu, d as *mut c_void)?;
            if !memptr_cpu.is_null() {
                write_out(memptr_cpu, c.cast())?;
            }
        }
        Ok(())
    })
}

/// `doca_gpu_mem_free(gpu, gpu_ptr)`: INVALID_VALUE for pointers not from
/// `doca_gpu_mem_alloc` of this GPU (a second free included).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_mem_free(gpu: *mut Gpu, memptr_gpu: *mut c_void) -> u32 {
    call("doca_gpu_mem_free", || {
        // SAFETY: C API contract.
        let g = unsafe { handle(gpu) }?;
        non_null(memptr_gpu)?;
        g.free(memptr_gpu as u64)
    })
}

/// `doca_gpu_dmabuf_fd(gpu, gpu_ptr, size, &fd)`: NOT_SUPPORTED where the driver or the
/// memory type has no dmabuf export (programs then use `doca_mmap_set_memrange`).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_dmabuf_fd(
    gpu_dev: *mut Gpu,
    memptr_gpu: *mut c_void,
    size: usize,
    dmabuf_fd: *mut c_int,
) -> u32 {
    call("doca_gpu_dmabuf_fd", || {
        // SAFETY: C API contract.
        let g = unsafe { handle(gpu_dev) }?;
        non_null(memptr_gpu)?;
        non_null(dmabuf_fd)?;
        let fd = g.dmabuf_fd(memptr_gpu as u64, size)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(dmabuf_fd, fd) }
    })
}

/// `doca_gpu_semaphore_create(gpu, &semaphore)`.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_create(gpu: *mut Gpu, out: *mut *mut Semaphore) -> u32 {
    call("doca_gpu_semaphore_create", || {
        // SAFETY: C API contract (null or live; null or writable).
        unsafe { new_handle(out, Semaphore::on_gpu(handle(gpu)?)) }
    })
}

/// `doca_gpu_semaphore_destroy(semaphore)`: frees its memory if still started.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_destroy(sem: *mut Semaphore) -> u32 {
    call("doca_gpu_semaphore_destroy", || {
        // SAFETY: C API contract (null or a semaphore from create, given up).
        drop(unsafe { take_handle(sem) }?);
        Ok(())
    })
}

/// `doca_gpu_semaphore_start(semaphore)`: allocates the items, all FREE.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_start(sem: *mut Semaphore) -> u32 {
    call("doca_gpu_semaphore_start", || {
        // SAFETY: C API contract (null or live).
        unsafe { handle(sem) }?.start()
    })
}

/// `doca_gpu_semaphore_stop(semaphore)`: frees the items (BAD_STATE when not started).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_stop(sem: *mut Semaphore) -> u32 {
    call("doca_gpu_semaphore_stop", || {
        // SAFETY: C API contract.
        unsafe { handle(sem) }?.stop()
    })
}

/// `doca_gpu_semaphore_set_memory_type(semaphore, type)` (before start).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_set_memory_type(sem: *mut Semaphore, t: u32) -> u32 {
    call("doca_gpu_semaphore_set_memory_type", || {
        // SAFETY: C API contract.
        unsafe { handle(sem) }?.set_memory_type(t)
    })
}

/// `doca_gpu_semaphore_set_items_num(semaphore, n)` (before start).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_set_items_num(sem: *mut Semaphore, n: u32) -> u32 {
    call("doca_gpu_semaphore_set_items_num", || {
        // SAFETY: C API contract.
        unsafe { handle(sem) }?.set_items_num(n)
    })
}

/// `doca_gpu_semaphore_set_custom_info(semaphore, nbytes, type)` (before start).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_set_custom_info(
    sem: *mut Semaphore,
    nbytes: u32,
    t: u32,
) -> u32 {
    call("doca_gpu_semaphore_set_custom_info", || {
        // SAFETY: C API contract.
        unsafe { handle(sem) }?.set_custom_info(nbytes, t)
    })
}

/// `doca_gpu_semaphore_set_status(semaphore, idx, status)` (started, CPU-visible memory).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_set_status(
    sem: *mut Semaphore,
    idx: u32,
    status: u32,
) -> u32 {
    call("doca_gpu_semaphore_set_status", || {
        // SAFETY: C API contract.
        unsafe { handle(sem) }?.set_status(idx, status)
    })
}

/// `doca_gpu_semaphore_get_status(semaphore, idx, &status)` (started, CPU-visible memory).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_get_status(
    sem: *mut Semaphore,
    idx: u32,
    out: *mut u32,
) -> u32 {
    call("doca_gpu_semaphore_get_status", || {
        // SAFETY: C API contract.
        let s = unsafe { handle(sem) }?;
        non_null(out)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, s.get_status(idx)?) }
    })
}

/// `doca_gpu_semaphore_get_custom_info_addr(semaphore, idx, &addr)` (started, CPU-visible
/// custom memory).
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_get_custom_info_addr(
    sem: *mut Semaphore,
    idx: u32,
    out: *mut *mut c_void,
) -> u32 {
    call("doca_gpu_semaphore_get_custom_info_addr", || {
        // SAFETY: C API contract.
        let s = unsafe { handle(sem) }?;
        non_null(out)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, s.custom_info_addr(idx)?.cast()) }
    })
}

/// `doca_gpu_semaphore_get_gpu_handle(semaphore, &handle)` (started): the device address of
/// the handle kernels take.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_semaphore_get_gpu_handle(
    sem: *mut Semaphore,
    out: *mut *mut c_void,
) -> u32 {
    call("doca_gpu_semaphore_get_gpu_handle", || {
        // SAFETY: C API contract.
        let s = unsafe { handle(sem) }?;
        non_null(out)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, s.gpu_handle()? as *mut c_void) }
    })
}

// ---- GPU verbs: exporting DOCA Verbs QPs (engine: verbs/export.rs) ------------------------

use crate::verbs::export::ExportTo;
pub use crate::verbs::GpuVerbsQp;
use crate::verbs::{VerbsCq, VerbsQp};

/// `doca_gpu_verbs_export_qp(gpu, dev, qp, nic_handler, umem_dev_ptr, cq_sq, cq_rq, &out)`:
/// the GPU descriptor of a QP created with the external data path and GPU-memory umems;
/// `cq_rq` may be NULL for a QP without a receive queue. See `verbs/export.rs` for the NIC
/// handlers (AUTO: GPU_SM_DB; BlueFlame: NOT_SUPPORTED).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_gpu_verbs_export_qp(
    gpu_dev: *mut Gpu,
    dev: *mut crate::dev::Dev,
    qp: *mut VerbsQp,
    nic_handler: u32,
    gpu_qp_umem_dev_ptr: *mut c_void,
    cq_sq: *mut VerbsCq,
    cq_rq: *mut VerbsCq,
    qp_out: *mut *mut GpuVerbsQp,
) -> u32 {
    call("doca_gpu_verbs_export_qp", || {
        // SAFETY: C API contract (null or live handles).
        let (g, d, q, s) = unsafe { (handle(gpu_dev)?, handle(dev)?, handle(qp)?, handle(cq_sq)?) };
        // SAFETY: as above (NULL allowed: no receive queue).
        let r = unsafe { cq_rq.as_ref() };
        non_null(qp_out)?;
        let (a, b) = (d.info(), q.pd().ctx().info());
        if a.pci != b.pci || a.iface != b.iface {
            sdk_err!(
                "verbs",
                "export: the doca_dev is not the device of the QP's context"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        let e = GpuVerbsQp::new(
            ExportTo::Gpu(g.shared().clone()),
            q,
            nic_handler,
            gpu_qp_umem_dev_ptr as u64,
            s,
            r,
        )?;
        // SAFETY: checked non-null.
        unsafe { new_handle(qp_out, e) }
    })
}

/// `doca_gpu_verbs_get_qp_dev(qp, &qp_gpu)`: the device address of the descriptor.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_verbs_get_qp_dev(
    qp: *mut GpuVerbsQp,
    qp_gpu: *mut *mut c_void,
) -> u32 {
    call("doca_gpu_verbs_get_qp_dev", || {
        // SAFETY: C API contract.
        let e = unsafe { handle(qp) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { write_out(qp_gpu, e.dev_ptr() as *mut c_void) }
    })
}

/// `doca_gpu_verbs_unexport_qp(gpu, qp)`: frees the descriptor (kernels must be done with
/// it); the QP may then be destroyed.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_verbs_unexport_qp(gpu_dev: *mut Gpu, qp: *mut GpuVerbsQp) -> u32 {
    call("doca_gpu_verbs_unexport_qp", || {
        // SAFETY: C API contract.
        unsafe { handle(gpu_dev) }?;
        // SAFETY: C API contract (null or a live export, given up).
        drop(unsafe { take_handle(qp) }?);
        Ok(())
    })
}

/// `doca_gpu_verbs_bridge_export_qp(...)`: `NOT_SUPPORTED` (raw rings made outside DOCA
/// Verbs have no soft NIC queue behind them).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_gpu_verbs_bridge_export_qp(
    _gpu_dev: *mut Gpu,
    _sq_qpn: u32,
    _sq_wqe_addr: *mut c_void,
    _sq_wqe_num: u16,
    _sq_dbrec: *mut u32,
    _sq_db: *mut u64,
    _uar_size: usize,
    _sq_cqn: u32,
    _sq_cqe_addr: *mut c_void,
    _sq_cqe_num: u32,
    _sq_cq_dbrec: *mut u32,
    _rq_qpn: u32,
    _rq_wqe_addr: *mut c_void,
    _rq_wqe_num: u16,
    _rq_dbrec: *mut u32,
    _rcv_wqe_size: u32,
    _rq_cqn: u32,
    _rq_cqe_addr: *mut c_void,
    _rq_cqe_num: u32,
    _rq_cq_dbrec: *mut u32,
    _nic_handler: u32,
    _send_dbr_mode_ext: u8,
    _qp_out: *mut *mut GpuVerbsQp,
) -> u32 {
    call("doca_gpu_verbs_bridge_export_qp", || {
        sdk_err!(
            "verbs",
            "doca_gpu_verbs_bridge_export_qp is not supported by doca-soft: only QPs of doca_verbs_qp_create have a soft NIC behind their rings"
        );
        Err(DocaError::NOT_SUPPORTED)
    })
}

/// `doca_gpu_verbs_cpu_proxy_enabled(qp, &enabled)`: 1 for QPs exported with
/// NIC_HANDLER_CPU_PROXY.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_verbs_cpu_proxy_enabled(
    qp_cpu: *mut GpuVerbsQp,
    enabled: *mut u8,
) -> u32 {
    call("doca_gpu_verbs_cpu_proxy_enabled", || {
        // SAFETY: C API contract.
        let e = unsafe { handle(qp_cpu) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { write_out(enabled, u8::from(e.cpu_proxy())) }
    })
}

/// `doca_gpu_verbs_cpu_proxy_progress(qp)`: one CPU-proxy step (forwards the producer index
/// the device published); NOT_SUPPORTED (logged once) for GPU-rung doorbells. Cheap enough
/// for a tight loop.
#[no_mangle]
pub unsafe extern "C" fn doca_gpu_verbs_cpu_proxy_progress(qp_cpu: *mut GpuVerbsQp) -> u32 {
    call("doca_gpu_verbs_cpu_proxy_progress", || {
        // SAFETY: C API contract.
        unsafe { handle(qp_cpu) }?.progress()
    })
}
