//! Synchronous copies between any two ranges a DOCA buffer may cover (host memory, pinned
//! device-mapped memory, CUDA device memory), for the CPU data path's memcpy tasks.
//! Device memory is recognised through the gpu module's allocation registry and copied
//! with the owning GPU's context (unified addressing).

use crate::error::{DocaError, DocaResult};
use crate::gpu::{cu, registry};
use doca_cuda_driver::cu;

/// Copies `len` bytes from `src` to `dst`.
pub(crate) fn copy(dst: u64, src: u64, len: usize) -> DocaResult<()> {
    if len == 0 {
        return Ok(());
    }
    let d = registry::lookup(dst, len);
    let s = registry::lookup(src, len);
    let device_only =
        |r: &Option<registry::GpuRange>| r.as_ref().is_some_and(|g| g.cpu_addr.is_none());
    if !device_only(&d) && !device_only(&s) {
        // Host memory (or the CPU mapping of pinned memory) on both sides.
        let to = d
            .as_ref()
            .and_then(|g| g.cpu_addr)
            .unwrap_or(dst as *mut u8);
        let from = s
            .as_ref()
            .and_then(|g| g.cpu_addr)
            .unwrap_or(src as *mut u8);
        // SAFETY: both ranges belong to buffers the program handed to the task (checked
        // against their buffers by the caller).
        unsafe { std::ptr::copy(from as *const u8, to, len) };
        return Ok(());
    }
    let gpu = d
        .as_ref()
        .filter(|g| g.cpu_addr.is_none())
        .or(s.as_ref())
        .map(|g| g.gpu.clone())
        .ok_or(DocaError::INVALID_VALUE)?;
    gpu.bind_thread()?;
    let dst = d.as_ref().map_or(dst, |g| g.gpu_addr);
    let src = s.as_ref().map_or(src, |g| g.gpu_addr);
    // SAFETY: unified addresses of the two buffers' ranges; the driver checks them.
    cu::call(unsafe { cu!(cuMemcpy(dst, src, len)) })
}
