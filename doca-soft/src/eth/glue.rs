//! How the queues reach the runtime's other objects: the GPU of
//! `doca_ctx_set_datapath_on_gpu` as a [`DeviceMem`], packet buffers from mmaps, and where a
//! TX proxy may read frame bytes (GPU allocations through the allocation registry, host
//! memory through registered ranges).

use super::dma::DmaStream;
use super::mem::{DeviceMem, FrameSource, PktBuf};
use crate::error::{DocaError, DocaResult};
use crate::gpu::{gpu_ref, registry, Gpu, GpuShared};
use crate::mmap::{mmap_by_mkey, MmapShared};
use crate::types::GPU_MEM_TYPE_CPU_GPU;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// A GPU as the queues use it; copies go through the queue's own non-blocking stream.
struct GpuDevice(DmaStream);

impl GpuDevice {
    fn new(gpu: Arc<GpuShared>) -> GpuDevice {
        GpuDevice(DmaStream::new(gpu))
    }

    fn gpu(&self) -> &Arc<GpuShared> {
        self.0.gpu()
    }
}

impl DeviceMem for GpuDevice {
    fn alloc_mapped(&self, size: usize) -> DocaResult<(u64, *mut u8)> {
        let (gpu, cpu) = self.gpu().alloc(size, 4096, GPU_MEM_TYPE_CPU_GPU)?;
        if cpu.is_null() {
            let _ = self.gpu().free(gpu);
            return Err(DocaError::DRIVER);
        }
        Ok((gpu, cpu))
    }
    fn free_mapped(&self, dev_addr: u64) {
        if let Err(e) = self.gpu().free(dev_addr) {
            sdk_warn!("eth", "freeing a queue ring failed: {e}");
        }
    }
    fn copy_to_device(&self, dst: u64, src: &[u8]) -> DocaResult<()> {
        self.0.to_device(dst, src)
    }
    fn copy_from_device(&self, dst: &mut [u8], src: u64) -> DocaResult<()> {
        self.0.from_device(dst, src)
    }
    fn cpu_ptr_of(&self, dev_addr: u64) -> Option<*mut u8> {
        self.gpu().cpu_ptr_of(dev_addr)
    }
}

/// The data path a queue was given: a GPU (`doca_ctx_set_datapath_on_gpu`), or host memory
/// consumed on the CPU (Rust API only: tests and CPU consumers of the ring protocol).
#[derive(Clone)]
pub enum GpuLink {
    /// Rings in device-mapped memory of this GPU.
    Gpu(Arc<GpuShared>),
    /// Rings in host memory.
    Host,
}

impl GpuLink {
    /// From the `struct doca_gpu *` of `doca_ctx_set_datapath_on_gpu`.
    pub fn new(gpu: *mut c_void) -> DocaResult<GpuLink> {
        // SAFETY: the application passes a live doca_gpu (null is rejected by gpu_ref).
        let g = unsafe { gpu_ref(gpu as *const Gpu) }?;
        Ok(GpuLink::Gpu(g.shared().clone()))
    }

    /// The device rings are allocated on (None: host memory).
    pub fn device(&self) -> DocaResult<Option<Arc<dyn DeviceMem>>> {
        Ok(match self {
            GpuLink::Gpu(g) => Some(Arc::new(GpuDevice::new(g.clone())) as Arc<dyn DeviceMem>),
            GpuLink::Host => None,
        })
    }
}

/// The packet buffer given to an RX queue.
#[derive(Clone)]
pub enum PktBufSpec {
    /// `doca_eth_rxq_set_pkt_buf(mmap, offset, len)`.
    Mmap {
        /// The mmap (the queue is one of its users while it holds it).
        mmap: Arc<MmapShared>,
        /// Offset of the buffer in the mmap.
        offset: u32,
        /// Length of the buffer.
        len: u32,
    },
    /// Host memory `[ptr, ptr+len)` (Rust API; mkey host order).
    Host {
        /// Start.
        ptr: usize,
        /// Length.
        len: usize,
        /// mkey reported to the device API.
        mkey: u32,
    },
}

/// Resolves a packet buffer spec at start: device memory is written through the GPU (or its
/// CPU mapping); host memory directly.
pub fn resolve_pkt_buf(
    spec: &PktBufSpec,
    device: Option<&Arc<dyn DeviceMem>>,
) -> DocaResult<PktBuf> {
    match *spec {
        PktBufSpec::Mmap {
            ref mmap,
            offset,
            len,
        } => {
            // BAD_STATE when the mmap is not started.
            let (_, mlen) = mmap.range()?;
            let (off, len) = (offset as usize, len as usize);
            if off.checked_add(len).map_or(true, |end| end > mlen) {
                return Err(DocaError::INVALID_VALUE);
            }
            let mkey = mmap.mkey();
            match mmap.gpu_range() {
                Some(g) => {
                    let dev: Arc<dyn DeviceMem> = match device {
                        Some(d) => d.clone(),
                        None => Arc::new(GpuDevice::new(g.gpu.clone())),
                    };
                    Ok(PktBuf {
                        addr: g.gpu_addr + off as u64,
                        // SAFETY: the CPU mapping covers the mmap's range (checked span).
                        host: g.cpu_addr.map(|c| unsafe { c.add(off) }),
                        len,
                        mkey,
                        device: Some(dev),
                    })
                }
                None => {
                    let base = mmap.cpu_ptr().ok_or(DocaError::BAD_STATE)?;
                    // SAFETY: [off, off+len) lies inside the mmap's host range (checked).
                    Ok(PktBuf::host(unsafe { base.add(off) }, len, mkey))
                }
            }
        }
        PktBufSpec::Host { ptr, len, mkey } => {
            if let Some(r) = registry::lookup(ptr as u64, len) {
                // Device memory given by its device address.
                let dev: Arc<dyn DeviceMem> = match device {
                    Some(d) => d.clone(),
                    None => Arc::new(GpuDevice::new(r.gpu.clone())),
                };
                return Ok(PktBuf {
                    addr: r.gpu_addr,
                    host: r.cpu_addr,
                    len,
                    mkey,
                    device: Some(dev),
                });
            }
            Ok(PktBuf::host(ptr as *mut u8, len, mkey))
        }
    }
}

/// Host ranges TX proxies may read (registered packet memory over plain host memory).
static HOST_RANGES: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());

/// Allows TX proxies to read host memory `[addr, addr+len)`.
pub fn register_host_range(addr: *const u8, len: usize) {
    let mut r = HOST_RANGES.lock().unwrap_or_else(|p| p.into_inner());
    r.push((addr as u64, len));
}

/// Withdraws a range from [`register_host_range`].
pub fn unregister_host_range(addr: *const u8, len: usize) {
    let mut r = HOST_RANGES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = r.iter().position(|&e| e == (addr as u64, len)) {
        r.swap_remove(i);
    }
}

/// Where TX proxies read frames: the started mmap the descriptor's mkey names (bounds
/// checked against it), else GPU allocations (registry), then registered host ranges.
/// Device memory of the queue's GPU is read through the queue's own stream.
pub struct RuntimeFrames {
    dma: Option<DmaStream>,
}

impl RuntimeFrames {
    /// Frames for a queue on `link`.
    pub fn new(link: &GpuLink) -> RuntimeFrames {
        RuntimeFrames {
            dma: match link {
                GpuLink::Gpu(g) => Some(DmaStream::new(g.clone())),
                GpuLink::Host => None,
            },
        }
    }

    /// Device -> host through the queue's stream when `gpu` is the queue's GPU.
    fn device_read(&self, gpu: &Arc<GpuShared>, src: u64, dst: &mut [u8]) -> DocaResult<()> {
        match &self.dma {
            Some(d) if Arc::ptr_eq(d.gpu(), gpu) => d.from_device(dst, src),
            // Another GPU's memory: its synchronous copy (it serves no kernel of ours).
            _ => gpu.copy_from_device(dst, src),
        }
    }
}

impl FrameSource for RuntimeFrames {
    fn read(&self, addr: u64, mkey_be: u32, len: usize, out: &mut Vec<u8>) -> DocaResult<()> {
        if let Some(m) = mmap_by_mkey(u32::from_be(mkey_be)) {
            // The mkey names a registered range: the frame must lie inside it, as a NIC
            // checks a memory key.
            let (base, mlen) = m.range()?;
            let base = base as u64;
            let end = addr
                .checked_add(len as u64)
                .ok_or(DocaError::INVALID_VALUE)?;
            if addr < base || end > base + mlen as u64 {
                return Err(DocaError::INVALID_VALUE);
            }
            let start = out.len();
            out.resize(start + len, 0);
            let r = match m.gpu_range() {
                Some(g) if g.cpu_addr.is_none() => {
                    self.device_read(&g.gpu, g.gpu_addr + (addr - base), &mut out[start..])
                }
                _ => m.read_at((addr - base) as usize, &mut out[start..]),
            };
            return r.inspect_err(|_| out.truncate(start));
        }
        if let Some(r) = registry::lookup(addr, len) {
            if let Some(p) = r.cpu_addr {
                // SAFETY: the registry maps [addr, addr+len) inside a live CPU-mapped
                // allocation.
                out.extend_from_slice(unsafe { std::slice::from_raw_parts(p, len) });
                return Ok(());
            }
            let start = out.len();
            out.resize(start + len, 0);
            return self
                .device_read(&r.gpu, addr, &mut out[start..])
                .inspect_err(|_| out.truncate(start));
        }
        let ranges = HOST_RANGES.lock().unwrap_or_else(|p| p.into_inner());
        let end = addr
            .checked_add(len as u64)
            .ok_or(DocaError::INVALID_VALUE)?;
        if !ranges
            .iter()
            .any(|&(a, l)| addr >= a && end <= a + l as u64)
        {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: inside a registered host range (checked above, lock held), which its owner
        // keeps alive while registered.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(addr as *const u8, len) });
        Ok(())
    }
}
