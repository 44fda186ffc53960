//! GPU handle and GPU memory (`doca_gpunetio.h`: doca_gpu_create/destroy, mem_alloc/free,
//! dmabuf_fd), through the CUDA driver API loaded at run time.
//!
//! A [`Gpu`] retains the device's primary context (the one the CUDA runtime and cudarc
//! use), so memory allocated here is valid in the application's kernels.
//! Memory types:
//! * GPU: device memory (`cuMemAlloc`), no CPU pointer;
//! * CPU_GPU: pinned host memory mapped into the device (`cuMemHostAlloc` with DEVICEMAP
//!   and PORTABLE), CPU and device pointers;
//! * GPU_CPU: device memory with a CPU mapping needs GDRCopy, which doca-soft does not
//!   use; like DOCA without GDRCopy it falls back to CPU_GPU with a logged warning.
//!
//! Allocations are over-allocated by the alignment and zero-filled; they are recorded in a
//! process-wide [`registry`] so `doca_gpu_mem_free` rejects foreign pointers and mmaps can
//! tell GPU memory apart.

pub(crate) mod cu;
pub(crate) mod registry;

use crate::error::{DocaError, DocaResult};
use crate::types::{GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU, GPU_MEM_TYPE_GPU_CPU};
pub use cu::cuda_available;
use doca_cuda_driver::{cu, sys};
use std::collections::HashMap;
use std::ffi::{c_int, c_void, CString};
use std::sync::{Arc, Mutex};

/// An allocation owned by a GPU.
struct Alloc {
    /// What to free: device pointer (GPU) or host pointer (CPU_GPU).
    raw: u64,
    /// Host memory (freed with cuMemFreeHost) or device memory (cuMemFree).
    host: bool,
    /// Usable length.
    len: usize,
    /// CPU address of the aligned start, 0 if none (looked up by the testing hooks).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    cpu: usize,
}

/// The shared state of a GPU handle; queues and mmaps keep an `Arc` of it.
pub struct GpuShared {
    pci: String,
    primary: PrimaryContext,
    allocs: Mutex<HashMap<u64, Alloc>>,
    /// The GPU_CPU fallback warning is printed once per GPU.
    warned_gpu_cpu: std::sync::atomic::AtomicBool,
}

// SAFETY: a CUDA context handle may be used from any thread (made current per call);
// the allocation table is behind a mutex.
unsafe impl Send for GpuShared {}
// SAFETY: as above.
unsafe impl Sync for GpuShared {}

/// The C `struct doca_gpu`.
pub struct Gpu {
    shared: Arc<GpuShared>,
}

impl std::ops::Deref for Gpu {
    type Target = GpuShared;
    fn deref(&self) -> &GpuShared {
        &self.shared
    }
}

fn round_up(v: u64, align: u64) -> u64 {
    v.div_ceil(align) * align
}

impl Gpu {
    /// Opens the GPU at a PCI bus id (`BB:DD.F` or `DDDD:BB:DD.F`); NOT_FOUND when no GPU
    /// has that address, DRIVER without a usable CUDA driver.
    pub(crate) fn open(pci_bus_id: &str) -> DocaResult<Gpu> {
        if !cuda_available() {
            sdk_err!("gpu", "no CUDA driver: cannot open GPU {pci_bus_id}");
            return Err(DocaError::DRIVER);
        }
        cu::init()?;
        let id = CString::new(pci_bus_id.trim()).map_err(|_| DocaError::INVALID_VALUE)?;
        let mut device: sys::CUdevice = 0;
        // SAFETY: `device` is writable and `id` a NUL-terminated string.
        let r = unsafe { cu!(cuDeviceGetByPCIBusId(&mut device, id.as_ptr())) };
        if let Err(e) = r {
            sdk_err!("gpu", "no GPU at PCI address {pci_bus_id} ({e})");
            return Err(DocaError::NOT_FOUND);
        }
        let shared = Arc::new(GpuShared {
            pci: pci_bus_id.trim().to_owned(),
            primary: PrimaryContext::retain(device)?,
            allocs: Mutex::new(HashMap::new()),
            warned_gpu_cpu: std::sync::atomic::AtomicBool::new(false),
        });
        shared.bind_thread()?;
        Ok(Gpu { shared })
    }

    /// The shared state (what long-lived users keep).
    pub(crate) fn shared(&self) -> &Arc<GpuShared> {
        &self.shared
    }

    /// Allocates GPU memory; see [`GpuShared::alloc`].
    pub(crate) fn alloc(
        &self,
        size: usize,
        align: usize,
        mem_type: u32,
    ) -> DocaResult<(u64, *mut u8)> {
        self.shared.alloc(size, align, mem_type)
    }
}

/// A hold on a device's primary context: retained on creation, released on drop. Each
/// `doca_gpu` keeps one, and so do the NIC proxy threads (theirs made current on their own
/// thread), so their UCX CUDA copies have a context however long the handle that allocated
/// the memory lives.
pub(crate) struct PrimaryContext {
    device: sys::CUdevice,
    ctx: sys::CUcontext,
}

impl PrimaryContext {
    /// Retains `device`'s primary context.
    fn retain(device: sys::CUdevice) -> DocaResult<PrimaryContext> {
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: `ctx` is writable; `device` is an ordinal the driver handed out.
        cu::call(unsafe { cu!(cuDevicePrimaryCtxRetain(&mut ctx, device)) })?;
        Ok(PrimaryContext { device, ctx })
    }

    /// Retains `device`'s primary context and makes it current on the calling thread.
    pub(crate) fn bind(device: sys::CUdevice) -> DocaResult<PrimaryContext> {
        cu::init()?;
        let held = PrimaryContext::retain(device)?;
        held.make_current()?;
        Ok(held)
    }

    /// Makes the context current on the calling thread.
    fn make_current(&self) -> DocaResult<()> {
        let ctx = self.ctx;
        // SAFETY: `ctx` is retained, alive while self is.
        cu::call(unsafe { cu!(cuCtxSetCurrent(ctx)) })
    }
}

// SAFETY: a context handle may be made current on any thread; the hold is released once.
unsafe impl Send for PrimaryContext {}
// SAFETY: as above (`make_current` only reads the handle).
unsafe impl Sync for PrimaryContext {}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        let dev = self.device;
        // SAFETY: retained once in `retain`.
        let _ = cu::call(unsafe { cu!(cuDevicePrimaryCtxRelease_v2(dev)) });
    }
}

impl GpuShared {
    /// The CUDA device ordinal.
    pub(crate) fn device_ordinal(&self) -> sys::CUdevice {
        self.primary.device
    }

    /// Makes the primary context current on the calling thread.
    pub(crate) fn bind_thread(&self) -> DocaResult<()> {
        self.primary.make_current()
    }

    fn attribute(&self, attr: sys::CUdevice_attribute) -> DocaResult<i32> {
        let mut v: c_int = 0;
        let dev = self.primary.device;
        // SAFETY: `v` is writable.
        cu::call(unsafe { cu!(cuDeviceGetAttribute(&mut v, attr, dev)) })?;
        Ok(v)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Alloc>> {
        self.allocs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Allocates `size` bytes aligned to `align` (0 = no particular alignment, else a
    /// power of two) of `mem_type`; returns (device address, CPU address or null).
    pub(crate) fn alloc(
        self: &Arc<Self>,
        size: usize,
        align: usize,
        mem_type: u32,
    ) -> DocaResult<(u64, *mut u8)> {
        check_alloc_args(size, align, mem_type)?;
        self.bind_thread()?;
        let align = align.max(1) as u64;
        let total = size
            .checked_add(align as usize - 1)
            .ok_or(DocaError::INVALID_VALUE)?;
        let mem_type = if mem_type == GPU_MEM_TYPE_GPU_CPU {
            if !self
                .warned_gpu_cpu
                .swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                sdk_warn!(
                    "gpu",
                    "GPU_CPU memory needs GDRCopy, not available: using CPU_GPU memory instead"
                );
            }
            GPU_MEM_TYPE_CPU_GPU
        } else {
            mem_type
        };
        let (gpu, cpu, alloc) = if mem_type == GPU_MEM_TYPE_GPU {
            let mut d: sys::CUdeviceptr = 0;
            // SAFETY: `d` is writable.
            cu::call(unsafe { cu!(cuMemAlloc_v2(&mut d, total)) })
                .map_err(|_| DocaError::NO_MEMORY)?;
            let gpu = round_up(d, align);
            // SAFETY: [d, d + total) is the allocation just made.
            let z = cu::call(unsafe { cu!(cuMemsetD8_v2(d, 0, total)) });
            let a = Alloc {
                raw: d,
                host: false,
                len: size,
                cpu: 0,
            };
            if let Err(e) = z {
                self.release(&a);
                return Err(e);
            }
            (gpu, 0usize, a)
        } else {
            let mut h: *mut c_void = std::ptr::null_mut();
            let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
            // SAFETY: `h` is writable.
            cu::call(unsafe { cu!(cuMemHostAlloc(&mut h, total, flags)) })
                .map_err(|_| DocaError::NO_MEMORY)?;
            let a = Alloc {
                raw: h as u64,
                host: true,
                len: size,
                cpu: 0,
            };
            // SAFETY: [h, h + total) is the allocation just made.
            unsafe { std::ptr::write_bytes(h.cast::<u8>(), 0, total) };
            let mut d: sys::CUdeviceptr = 0;
            // SAFETY: `d` is writable and `h` is mapped pinned memory.
            let r = cu::call(unsafe { cu!(cuMemHostGetDevicePointer_v2(&mut d, h, 0)) });
            if let Err(e) = r {
                self.release(&a);
                return Err(e);
            }
            let cpu = round_up(h as u64, align);
            let gpu = d + (cpu - h as u64);
            (
                gpu,
                cpu as usize,
                Alloc {
                    cpu: cpu as usize,
                    ..a
                },
            )
        };
        self.lock().insert(gpu, alloc);
        registry::insert(registry::Region {
            gpu,
            cpu,
            len: size,
            owner: Arc::downgrade(self),
        });
        Ok((gpu, cpu as *mut u8))
    }

    fn release(&self, a: &Alloc) {
        let raw = a.raw;
        let r = if a.host {
            // SAFETY: `raw` came from cuMemHostAlloc and is freed once.
            cu::call(unsafe { cu!(cuMemFreeHost(raw as *mut c_void)) })
        } else {
            // SAFETY: `raw` came from cuMemAlloc and is freed once.
            cu::call(unsafe { cu!(cuMemFree_v2(raw)) })
        };
        if r.is_err() {
            sdk_err!("gpu", "could not free GPU memory at {raw:#x}");
        }
    }

    /// Frees memory from [`GpuShared::alloc`]; INVALID_VALUE for any other pointer
    /// (including a second free).
    pub(crate) fn free(&self, gpu_ptr: u64) -> DocaResult<()> {
        let a = self
            .lock()
            .remove(&gpu_ptr)
            .ok_or(DocaError::INVALID_VALUE)?;
        registry::remove(gpu_ptr);
        self.bind_thread()?;
        self.release(&a);
        Ok(())
    }

    /// Copies host bytes to device memory (synchronous).
    pub(crate) fn copy_to_device(&self, dst_gpu: u64, src: &[u8]) -> DocaResult<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.bind_thread()?;
        // SAFETY: `src` is readable for its length; the driver checks the device range.
        cu::call(unsafe { cu!(cuMemcpyHtoD_v2(dst_gpu, src.as_ptr().cast(), src.len())) })
    }

    /// Copies device memory to host bytes (synchronous).
    pub(crate) fn copy_from_device(&self, dst: &mut [u8], src_gpu: u64) -> DocaResult<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.bind_thread()?;
        let len = dst.len();
        // SAFETY: `dst` is writable for its length; the driver checks the device range.
        cu::call(unsafe { cu!(cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), src_gpu, len)) })
    }

    /// The CPU address of a device address inside a CPU-mapped allocation of this GPU.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn cpu_ptr_of(&self, gpu_ptr: u64) -> Option<*mut u8> {
        let g = self.lock();
        g.iter().find_map(|(start, a)| {
            let inside = gpu_ptr >= *start && gpu_ptr < start + a.len as u64;
            (inside && a.cpu != 0).then(|| (a.cpu + (gpu_ptr - start) as usize) as *mut u8)
        })
    }

    /// Whether `[gpu_ptr, gpu_ptr + len)` lies in one allocation of this GPU.
    pub(crate) fn owns(&self, gpu_ptr: u64, len: usize) -> bool {
        let g = self.lock();
        g.iter().any(|(start, a)| {
            gpu_ptr >= *start
                && (gpu_ptr - start)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= a.len as u64)
        })
    }

    /// A dmabuf fd for `[gpu_ptr, gpu_ptr + size)` of device memory of this GPU;
    /// INVALID_VALUE for memory that is not ours, NOT_SUPPORTED when the driver or the
    /// memory type does not allow it.
    pub(crate) fn dmabuf_fd(&self, gpu_ptr: u64, size: usize) -> DocaResult<c_int> {
        if size == 0 || !self.owns(gpu_ptr, size) {
            return Err(DocaError::INVALID_VALUE);
        }
        let host = {
            let g = self.lock();
            g.iter()
                .find(|(s, a)| gpu_ptr >= **s && gpu_ptr < **s + a.len as u64)
                .is_some_and(|(_, a)| a.host)
        };
        if host {
            return Err(DocaError::NOT_SUPPORTED);
        }
        let supported = self
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)
            .unwrap_or(0);
        if supported == 0 {
            return Err(DocaError::NOT_SUPPORTED);
        }
        self.bind_thread()?;
        let mut fd: c_int = -1;
        // SAFETY: `fd` is a writable int, the handle type for DMA_BUF_FD.
        let r = unsafe {
            cu!(cuMemGetHandleForAddressRange(
                (&mut fd as *mut c_int).cast(),
                gpu_ptr,
                size,
                sys::CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                0,
            ))
        };
        if r.is_err() || fd < 0 {
            sdk_dbg!("gpu", "no dmabuf for {gpu_ptr:#x}+{size}: {r:?}");
            return Err(DocaError::NOT_SUPPORTED);
        }
        Ok(fd)
    }

    /// Frees every allocation still held (with a warning for each).
    fn free_leftovers(&self) {
        let left: Vec<(u64, Alloc)> = self.lock().drain().collect();
        if left.is_empty() {
            return;
        }
        let _ = self.bind_thread();
        for (gpu, a) in left {
            sdk_warn!(
                "gpu",
                "GPU {} destroyed with {} bytes still allocated at {gpu:#x}: freeing (leak in the program)",
                self.pci,
                a.len
            );
            registry::remove(gpu);
            self.release(&a);
        }
    }
}

impl Drop for GpuShared {
    // The primary context is released after this, when `primary` drops.
    fn drop(&mut self) {
        self.free_leftovers();
    }
}

/// Validates `doca_gpu_mem_alloc` arguments (no driver needed).
pub(crate) fn check_alloc_args(size: usize, align: usize, mem_type: u32) -> DocaResult<()> {
    if size == 0 || (align != 0 && !align.is_power_of_two()) {
        return Err(DocaError::INVALID_VALUE);
    }
    match mem_type {
        GPU_MEM_TYPE_GPU | GPU_MEM_TYPE_GPU_CPU | GPU_MEM_TYPE_CPU_GPU => Ok(()),
        _ => Err(DocaError::INVALID_VALUE),
    }
}

impl Gpu {
    /// Before the handle goes away (`doca_gpu_destroy`): when queues, mmaps or other
    /// objects still use the GPU, the context and its memory stay until the last of them
    /// is destroyed; this says so (a warning).
    pub(crate) fn warn_if_still_used(&self) {
        let others = Arc::strong_count(&self.shared) - 1;
        if others > 0 {
            sdk_warn!(
                "gpu",
                "GPU {} destroyed while {others} objects still use it: its memory is released with them",
                self.pci
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::doca_gpunetio::*;

    #[test]
    fn alloc_arguments_are_validated_without_a_driver() {
        assert_eq!(check_alloc_args(0, 0, 0), Err(DocaError::INVALID_VALUE));
        assert_eq!(check_alloc_args(64, 3, 0), Err(DocaError::INVALID_VALUE));
        assert_eq!(check_alloc_args(64, 4096, 7), Err(DocaError::INVALID_VALUE));
        assert_eq!(check_alloc_args(64, 0, GPU_MEM_TYPE_CPU_GPU), Ok(()));
        assert_eq!(check_alloc_args(64, 65536, GPU_MEM_TYPE_GPU_CPU), Ok(()));
    }

    #[test]
    fn c_api_rejects_null_arguments() {
        let mut g: *mut Gpu = std::ptr::null_mut();
        let mut p: *mut c_void = std::ptr::null_mut();
        let mut fd: c_int = -1;
        // SAFETY: null arguments are rejected before use.
        unsafe {
            assert_eq!(
                doca_gpu_create(std::ptr::null(), &mut g),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_gpu_create(c"00:00.0".as_ptr(), std::ptr::null_mut()),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_gpu_destroy(std::ptr::null_mut()),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_gpu_mem_alloc(std::ptr::null_mut(), 64, 0, 0, &mut p, &mut p),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_gpu_mem_free(std::ptr::null_mut(), p),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_gpu_dmabuf_fd(std::ptr::null_mut(), p, 64, &mut fd),
                DocaError::INVALID_VALUE.0
            );
        }
    }

    #[test]
    fn create_without_a_driver_is_a_driver_error() {
        if cuda_available() {
            {
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped: a CUDA driver is present (see tests/gpu_mem.rs)"
                );
            };
            return;
        }
        let mut g: *mut Gpu = std::ptr::null_mut();
        // SAFETY: valid string and out-pointer.
        let r = unsafe { doca_gpu_create(c"81:00.0".as_ptr(), &mut g) };
        assert_eq!(r, DocaError::DRIVER.0);
        assert!(g.is_null());
    }
}
