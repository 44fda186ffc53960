//! Memory registration with the soft NIC: host memory, pinned device-mapped memory and
//! CUDA device memory from `doca_gpu_mem_alloc`, told apart with the gpu module's
//! allocation registry. Device memory is registered as UCX CUDA memory; the few places the
//! proxy touches it itself (atomics, fetched values) go through the accessor installed here
//! ([`doca_soft_nic::rdma::keys::set_device_memory`]), which copies with the owning GPU's context.

use crate::error::{DocaError, DocaResult};
use crate::gpu::registry::{self, GpuRange};
use crate::gpu::PrimaryContext;
use doca_soft_nic::rdma::keys;
use doca_soft_nic::rdma::{Access, DeviceMemory, MemKind, Registration};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Once};

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

    fn bind_thread(&self) -> DocaResult<Box<dyn Send>> {
        let device = LATEST_CUDA_DEVICE.load(Ordering::Acquire);
        if device < 0 {
            sdk_err!("gpuqp", "no CUDA registration names a GPU");
            return Err(DocaError::NOT_FOUND);
        }
        Ok(Box::new(PrimaryContext::bind(device as i32)?))
    }
}

/// The CUDA device ordinal of the latest CUDA registration (-1: none): the NIC proxy
/// threads retain its primary context and make it current (UCX copies CUDA memory in the
/// calling thread's context). An ordinal, not the `doca_gpu` handle, so that the proxy's
/// hold does not depend on how long the handle lives.
static LATEST_CUDA_DEVICE: AtomicI64 = AtomicI64::new(-1);

/// Installs the device-memory accessor of the NIC (once per process).
pub(crate) fn install_device_memory() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| keys::set_device_memory(Some(Arc::new(RegistryAccess))));
}

/// Where `[addr, addr + len)` lives, as the NIC must treat it.
pub(crate) fn kind_of(addr: u64, len: u64) -> DocaResult<MemKind> {
    kind_in(addr, registry::lookup(addr, len as usize).as_ref())
}

/// The kind of memory at `addr`, given what the allocation registry said of it.
fn kind_in(addr: u64, range: Option<&GpuRange>) -> DocaResult<MemKind> {
    let Some(r) = range else {
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

/// The kind of `[addr, addr + len)` for a registration. For CUDA memory it also records
/// the GPU as the one the proxies bind (before the registration bumps the NIC's CUDA
/// epoch) and installs the device-memory accessor.
fn registration_kind(addr: u64, len: u64) -> DocaResult<MemKind> {
    let range = registry::lookup(addr, len as usize);
    let kind = kind_in(addr, range.as_ref())?;
    if let (MemKind::Cuda, Some(r)) = (kind, &range) {
        LATEST_CUDA_DEVICE.store(r.gpu.device_ordinal() as i64, Ordering::Release);
        install_device_memory();
    }
    Ok(kind)
}

/// Registers `[addr, addr + len)` with the NIC under a fresh key.
pub(crate) fn register(addr: u64, len: u64, access: Access) -> DocaResult<Registration> {
    let kind = registration_kind(addr, len)?;
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
    let kind = registration_kind(addr, len)?;
    keys::register_as(key, addr, len, access, kind)
}
