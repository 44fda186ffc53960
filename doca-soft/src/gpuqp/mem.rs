//! Memory that a kernel and the soft NIC's proxy thread both reach: rings, doorbells and
//! descriptors. With a GPU it is pinned host memory mapped into the device (CPU_GPU
//! memory of the gpu module: the device writes WQEs and doorbells across PCIe, the proxy
//! reads them in place); without one (CPU tests, the CPU playing the GPU) it is plain,
//! page-aligned host memory, and the "device address" is the CPU address.

use crate::error::{DocaError, DocaResult};
use crate::gpu::GpuShared;
use crate::types::{GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU};
use std::alloc::Layout;
use std::sync::Arc;

/// Where shared memory comes from: a GPU's device-mapped pinned memory, or host memory.
#[derive(Clone, Default)]
pub(crate) enum Placement {
    /// Plain host memory (no GPU: tests where a CPU thread plays the GPU).
    #[default]
    Host,
    /// Device-mapped pinned memory of this GPU (device addresses differ from CPU ones
    /// only where the driver says so).
    Gpu(Arc<GpuShared>),
}

impl Placement {
    /// The GPU, if any.
    pub(crate) fn gpu(&self) -> Option<&Arc<GpuShared>> {
        match self {
            Placement::Host => None,
            Placement::Gpu(g) => Some(g),
        }
    }
}

enum Owner {
    Host(Layout),
    Gpu(Arc<GpuShared>),
}

/// Zeroed memory both sides reach; freed on drop.
pub(crate) struct SharedMem {
    cpu: *mut u8,
    dev: u64,
    len: usize,
    owner: Owner,
}

// SAFETY: the memory belongs to this value; concurrent access by the device and the proxy
// goes through atomics and volatile accesses of the code that uses it.
unsafe impl Send for SharedMem {}
// SAFETY: as above.
unsafe impl Sync for SharedMem {}

impl SharedMem {
    /// `len` zeroed bytes aligned to `align` (a power of two, at most 4096) on `place`.
    pub(crate) fn new(place: &Placement, len: usize, align: usize) -> DocaResult<SharedMem> {
        if len == 0 || !align.is_power_of_two() || align > 4096 {
            return Err(DocaError::INVALID_VALUE);
        }
        match place {
            Placement::Host => {
                let layout = Layout::from_size_align(len, 4096.max(align))
                    .map_err(|_| DocaError::INVALID_VALUE)?;
                // SAFETY: non-zero size.
                let cpu = unsafe { std::alloc::alloc_zeroed(layout) };
                if cpu.is_null() {
                    return Err(DocaError::NO_MEMORY);
                }
                Ok(SharedMem {
                    cpu,
                    dev: cpu as u64,
                    len,
                    owner: Owner::Host(layout),
                })
            }
            Placement::Gpu(g) => {
                let (dev, cpu) = g.alloc(len, align, GPU_MEM_TYPE_CPU_GPU)?;
                Ok(SharedMem {
                    cpu,
                    dev,
                    len,
                    owner: Owner::Gpu(g.clone()),
                })
            }
        }
    }

    /// The CPU address of byte `off`.
    pub(crate) fn cpu_at(&self, off: usize) -> *mut u8 {
        assert!(off <= self.len, "offset {off} outside {} bytes", self.len);
        // SAFETY: inside the allocation (asserted).
        unsafe { self.cpu.add(off) }
    }

    /// The device address of byte `off` (what descriptors hold).
    pub(crate) fn dev_at(&self, off: usize) -> u64 {
        assert!(off <= self.len, "offset {off} outside {} bytes", self.len);
        self.dev + off as u64
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Copies `bytes` to offset `off` (CPU stores; the memory is host memory either way).
    pub(crate) fn write(&self, off: usize, bytes: &[u8]) {
        assert!(off + bytes.len() <= self.len, "write outside the memory");
        // SAFETY: in bounds (asserted); host memory owned by self.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.cpu.add(off), bytes.len()) };
    }

    /// Fills every byte with `v`.
    pub(crate) fn fill(&self, v: u8) {
        // SAFETY: the whole allocation, owned by self.
        unsafe { std::ptr::write_bytes(self.cpu, v, self.len) };
    }
}

impl Drop for SharedMem {
    fn drop(&mut self) {
        match &self.owner {
            // SAFETY: allocated with this layout in `new`, freed once.
            Owner::Host(layout) => unsafe { std::alloc::dealloc(self.cpu, *layout) },
            Owner::Gpu(g) => {
                if g.free(self.dev).is_err() {
                    sdk_err!("gpuqp", "could not free ring memory at {:#x}", self.dev);
                }
            }
        }
    }
}

/// A copy of plain bytes in device memory of a GPU (descriptors kernels only read or
/// update with device atomics), or in host memory without a GPU. Freed on drop.
pub(crate) enum DeviceCopy {
    /// No GPU: host memory (the CPU plays the device).
    Host(SharedMem),
    /// Device memory of `gpu` at `dev`.
    Gpu {
        /// The owner.
        gpu: Arc<GpuShared>,
        /// Device address.
        dev: u64,
    },
}

impl DeviceCopy {
    /// Places `bytes` (at least one) where kernels of `place` read them.
    pub(crate) fn new(place: &Placement, bytes: &[u8], align: usize) -> DocaResult<DeviceCopy> {
        match place {
            Placement::Host => {
                let m = SharedMem::new(place, bytes.len(), align)?;
                m.write(0, bytes);
                Ok(DeviceCopy::Host(m))
            }
            Placement::Gpu(g) => {
                let (dev, _) = g.alloc(bytes.len(), align, GPU_MEM_TYPE_GPU)?;
                if let Err(e) = g.copy_to_device(dev, bytes) {
                    let _ = g.free(dev);
                    return Err(e);
                }
                Ok(DeviceCopy::Gpu {
                    gpu: g.clone(),
                    dev,
                })
            }
        }
    }

    /// The device address.
    pub(crate) fn dev(&self) -> u64 {
        match self {
            DeviceCopy::Host(m) => m.dev_at(0),
            DeviceCopy::Gpu { dev, .. } => *dev,
        }
    }

    /// The CPU address when the copy lives in host memory (no GPU).
    pub(crate) fn host_ptr(&self) -> Option<*mut u8> {
        match self {
            DeviceCopy::Host(m) => Some(m.cpu_at(0)),
            DeviceCopy::Gpu { .. } => None,
        }
    }

    /// Reads `out.len()` bytes at offset `off` back.
    pub(crate) fn read(&self, off: usize, out: &mut [u8]) -> DocaResult<()> {
        match self {
            DeviceCopy::Host(m) => {
                if off + out.len() > m.len() {
                    return Err(DocaError::INVALID_VALUE);
                }
                // SAFETY: in bounds (checked), host memory owned by `m`.
                unsafe {
                    std::ptr::copy_nonoverlapping(m.cpu_at(off), out.as_mut_ptr(), out.len())
                };
                Ok(())
            }
            DeviceCopy::Gpu { gpu, dev } => gpu.copy_from_device(out, dev + off as u64),
        }
    }
}

impl Drop for DeviceCopy {
    fn drop(&mut self) {
        if let DeviceCopy::Gpu { gpu, dev } = self {
            if gpu.free(*dev).is_err() {
                sdk_err!("gpuqp", "could not free descriptor memory at {dev:#x}");
            }
        }
    }
}
