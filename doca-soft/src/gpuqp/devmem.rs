//! Memory registration with the soft NIC: host memory, pinned device-mapped memory and
//! CUDA device memory from `doca_gpu_mem_alloc`, told apart with the gpu module's
//! allocation registry. Device memory is registered as UCX CUDA memory; the few places the
//! proxy touches it itself (atomics, fetched values) go through the accessor installed here
//! ([`crate::nic::keys::set_device_memory`]), which copies with the owning GPU's context.

use crate::error::{DocaError, DocaResult};
use crate::gpu::registry;
use crate::gpu::GpuShared;
use crate::nic::keys;
use crate::nic::{Access, DeviceMemory, MemKind, Registration};
use std::sync::{Arc, Mutex, Once, Weak};

/// Reads and writes device memory of any live GPU of the process through its context.
struct RegistryAccess;

impl DeviceMemory for RegistryAccess {
    fn read(&self, src: u64, out: &mut [u8]) -> DocaResult<()> {
        let r = registry::lookup(src, out.len()).ok_or(DocaError::INVALID_VALUE)?;
        match r.cpu_addr {
            Some(c) => {
                // SAFETY: `c` maps `out.len()` bytes of a live allocation (registry lookup).
                unsafe { std::ptr::copy_nonoverlapping(c, out.as_mut_ptr(), out.len()) };
                Ok(())
            }
            None => r.gpu.copy_from_device(out, r.gpu_addr),
        }
    }

    fn write(&self, dst: u64, bytes: &[u8]) -> DocaResult<()> {
        let r = registry::lookup(dst, bytes.len()).ok_or(DocaError::INVALID_VALUE)?;
        match r.cpu_addr {
            Some(c) => {
                // SAFETY: as in `read`.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), c, bytes.len()) };
                Ok(())
            }
            None => r.gpu.copy_to_device(r.gpu_addr, bytes),
        }
    }

    fn bind_thread(&self) -> DocaResult<()> {
        let gpu = LATEST_CUDA_GPU
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .upgrade();
        match gpu {
            Some(g) => g.bind_thread(),
            None => {
                sdk_err!("gpuqp", "the GPU of the latest CUDA registration is gone");
                Err(DocaError::NOT_FOUND)
            }
        }
    }
}

/// The GPU owning the latest CUDA registration: the NIC proxy threads make its context
/// current (UCX copies CUDA memory in the calling thread's context).
static LATEST_CUDA_GPU: Mutex<Weak<GpuShared>> = Mutex::new(Weak::new());

/// Records `addr`'s GPU as the one the proxies bind (before the registration bumps the
/// NIC's CUDA epoch).
fn note_cuda_gpu(addr: u64, len: u64) {
    if let Some(r) = registry::lookup(addr, len as usize) {
        *LATEST_CUDA_GPU.lock().unwrap_or_else(|p| p.into_inner()) = Arc::downgrade(&r.gpu);
    }
}

/// Installs the device-memory accessor of the NIC (once per process).
pub(crate) fn install_device_memory() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| keys::set_device_memory(Some(Arc::new(RegistryAccess))));
}

/// Where `[addr, addr + len)` lives, as the NIC must treat it.
pub(crate) fn kind_of(addr: u64, len: u64) -> DocaResult<MemKind> {
    let Some(r) = registry::lookup(addr, len as usize) else {
        return Ok(MemKind::Host);
    };
    match r.cpu_addr {
        None => Ok(MemKind::Cuda),
        // Pinned, device-mapped memory: host memory for UCX, if the address the device
        // uses is also the CPU's (unified addressing, every 64-bit CUDA platform).
        Some(c) if c as u64 == addr => Ok(MemKind::Host),
        Some(c) if r.gpu_addr == addr && c as u64 != addr => {
            sdk_err!(
                "gpuqp",
                "mapped memory at device address {addr:#x} has CPU address {:#x}: without unified addressing it cannot be registered",
                c as u64
            );
            Err(DocaError::NOT_SUPPORTED)
        }
        Some(_) => Ok(MemKind::Host),
    }
}

/// Registers `[addr, addr + len)` with the NIC under a fresh key.
pub(crate) fn register(addr: u64, len: u64, access: Access) -> DocaResult<Registration> {
    let kind = kind_of(addr, len)?;
    if kind == MemKind::Cuda {
        note_cuda_gpu(addr, len);
        install_device_memory();
    }
    keys::register(addr, len, access, kind)
}

/// Registers `[addr, addr + len)` with the NIC under `key` (an mmap's mkey, so that the
/// keys kernels take from `doca_buf_arr` handles name the registration).
pub(crate) fn register_as(
    key: u32,
    addr: u64,
    len: u64,
    access: Access,
) -> DocaResult<Registration> {
    let kind = kind_of(addr, len)?;
    if kind == MemKind::Cuda {
        note_cuda_gpu(addr, len);
        install_device_memory();
    }
    keys::register_as(key, addr, len, access, kind)
}
