//! How the queues reach the runtime's other objects: the GPU of
//! `doca_ctx_set_datapath_on_gpu` as a [`DeviceMem`], packet buffers from mmaps, and where a
//! TX proxy may read frame bytes (GPU allocations through the allocation registry, host
//! memory through registered ranges).

use super::dma::{DmaStream, Span};
use super::mem::{read_each, DeviceMem, FrameSeg, FrameSource, PktBuf};
use crate::error::{DocaError, DocaResult};
use crate::gpu::{registry, GpuShared};
use crate::mmap::{mmap_by_mkey, MmapShared};
use crate::types::GPU_MEM_TYPE_CPU_GPU;
use std::ops::Range;
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
        self.0.copy_to_device(dst, src)
    }
    #[cfg(any(test, feature = "testing"))]
    fn copy_from_device(&self, dst: &mut [u8], src: u64) -> DocaResult<()> {
        self.0.copy_from_device(dst, src)
    }
    #[cfg(any(test, feature = "testing"))]
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
    /// Rings in host memory (set only by the testing hooks).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    Host,
}

impl GpuLink {
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
pub(crate) enum PktBufSpec {
    /// `doca_eth_rxq_set_pkt_buf(mmap, offset, len)`.
    Mmap {
        /// The mmap (the queue is one of its users while it holds it).
        mmap: Arc<MmapShared>,
        /// Offset of the buffer in the mmap.
        offset: u32,
        /// Length of the buffer.
        len: u32,
    },
    /// Host memory `[ptr, ptr+len)` (mkey host order; set only by the testing hooks).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
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
pub(crate) fn resolve_pkt_buf(
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
            if off.checked_add(len).is_none_or(|end| end > mlen) {
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
#[cfg(any(test, feature = "testing"))]
pub fn register_host_range(addr: *const u8, len: usize) {
    let mut r = HOST_RANGES.lock().unwrap_or_else(|p| p.into_inner());
    r.push((addr as u64, len));
}

/// Withdraws a range from [`register_host_range`].
#[cfg(any(test, feature = "testing"))]
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
    /// Reused between gathers, so steady-state sending allocates nothing.
    scratch: Mutex<GatherScratch>,
}

/// Working lists of one gather.
#[derive(Default)]
struct GatherScratch {
    /// Device segments of the queue's GPU: (index in `got`, span index, device address).
    pending: Vec<(usize, usize, u64)>,
    spans: Vec<Span>,
    /// The allocation each span lies in.
    bounds: Vec<(u64, u64)>,
}

impl RuntimeFrames {
    /// Frames for a queue on `link`.
    pub fn new(link: &GpuLink) -> RuntimeFrames {
        RuntimeFrames {
            dma: match link {
                GpuLink::Gpu(g) => Some(DmaStream::new(g.clone()).for_gathers()),
                GpuLink::Host => None,
            },
            scratch: Mutex::new(GatherScratch::default()),
        }
    }

    /// Device -> host through the queue's stream when `gpu` is the queue's GPU.
    fn device_read(&self, gpu: &Arc<GpuShared>, src: u64, dst: &mut [u8]) -> DocaResult<()> {
        match &self.dma {
            Some(d) if Arc::ptr_eq(d.gpu(), gpu) => d.copy_from_device(dst, src),
            // Another GPU's memory: its synchronous copy (it serves no kernel of ours).
            _ => gpu.copy_from_device(dst, src),
        }
    }
}

/// Device-only memory a frame segment lies in (see [`RuntimeFrames::read_or_locate`]).
struct DeviceSeg {
    gpu: Arc<GpuShared>,
    /// Device address of the segment.
    src: u64,
    /// The allocation (or registered range) holding it: `[lo, hi)` in device addresses.
    lo: u64,
    hi: u64,
}

/// Largest device span one gather copy covers (frames of one buffer close together are
/// copied in one piece, gaps included, up to this size).
const MAX_SPAN: u64 = 256 * 1024;

impl RuntimeFrames {
    /// Appends the segment's bytes to `out` when the CPU can read them (host memory,
    /// CPU-mapped GPU memory), else says where the device-only bytes are. INVALID_VALUE when
    /// the range is not registered memory (or outside the mmap its mkey names).
    fn read_or_locate(
        &self,
        addr: u64,
        mkey_be: u32,
        len: usize,
        out: &mut Vec<u8>,
    ) -> DocaResult<Option<DeviceSeg>> {
        let end = addr
            .checked_add(len as u64)
            .ok_or(DocaError::INVALID_VALUE)?;
        if let Some(m) = mmap_by_mkey(u32::from_be(mkey_be)) {
            // The mkey names a registered range: the frame must lie inside it, as a NIC
            // checks a memory key.
            let (base, mlen) = m.range()?;
            let base = base as u64;
            if addr < base || end > base + mlen as u64 {
                return Err(DocaError::INVALID_VALUE);
            }
            if let Some(g) = m.gpu_range().filter(|g| g.cpu_addr.is_none()) {
                return Ok(Some(DeviceSeg {
                    gpu: g.gpu,
                    src: g.gpu_addr + (addr - base),
                    lo: g.gpu_addr,
                    hi: g.gpu_addr + mlen as u64,
                }));
            }
            let start = out.len();
            out.resize(start + len, 0);
            return m
                .read_at((addr - base) as usize, &mut out[start..])
                .map(|()| None)
                .inspect_err(|_| out.truncate(start));
        }
        if let Some(r) = registry::lookup(addr, len) {
            if let Some(p) = r.cpu_addr {
                // SAFETY: the registry maps [addr, addr+len) inside a live CPU-mapped
                // allocation.
                out.extend_from_slice(unsafe { std::slice::from_raw_parts(p, len) });
                return Ok(None);
            }
            let (lo, hi) = registry::allocation_of(r.gpu_addr)
                .map_or((r.gpu_addr, r.gpu_addr + len as u64), |(a, l)| {
                    (a, a + l as u64)
                });
            return Ok(Some(DeviceSeg {
                gpu: r.gpu,
                src: r.gpu_addr,
                lo,
                hi,
            }));
        }
        let ranges = HOST_RANGES.lock().unwrap_or_else(|p| p.into_inner());
        if !ranges
            .iter()
            .any(|&(a, l)| addr >= a && end <= a + l as u64)
        {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: inside a registered host range (checked above, lock held), which its owner
        // keeps alive while registered.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(addr as *const u8, len) });
        Ok(None)
    }
}

impl FrameSource for RuntimeFrames {
    fn read(&self, addr: u64, mkey_be: u32, len: usize, out: &mut Vec<u8>) -> DocaResult<()> {
        let Some(d) = self.read_or_locate(addr, mkey_be, len, out)? else {
            return Ok(());
        };
        let start = out.len();
        out.resize(start + len, 0);
        self.device_read(&d.gpu, d.src, &mut out[start..])
            .inspect_err(|_| out.truncate(start))
    }

    fn read_many(
        &self,
        segs: &[FrameSeg],
        out: &mut Vec<u8>,
        got: &mut Vec<DocaResult<Range<usize>>>,
    ) {
        let Some(dma) = &self.dma else {
            // Host rings: nothing to batch.
            return read_each(self, segs, out, got);
        };
        let first = got.len();
        let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let GatherScratch {
            pending,
            spans,
            bounds: span_bounds,
        } = &mut *scratch;
        pending.clear();
        spans.clear();
        span_bounds.clear();
        for (i, s) in segs.iter().enumerate() {
            let start = out.len();
            let located = self.read_or_locate(s.addr, s.mkey_be, s.len, out);
            let d = match located {
                Ok(None) => {
                    got.push(Ok(start..out.len()));
                    continue;
                }
                Err(e) => {
                    got.push(Err(e));
                    continue;
                }
                Ok(Some(d)) => d,
            };
            out.resize(start + s.len, 0);
            if !Arc::ptr_eq(dma.gpu(), &d.gpu) {
                // Another GPU's memory: its own synchronous copy, now.
                got.push(
                    self.device_read(&d.gpu, d.src, &mut out[start..])
                        .map(|()| start..out.len())
                        .inspect_err(|_| out.truncate(start)),
                );
                continue;
            }
            got.push(Ok(start..out.len()));
            let end = d.src + s.len as u64;
            // Grow the last span over this segment when it stays inside one allocation and
            // within MAX_SPAN; else start a new span.
            let merged = match (spans.last_mut(), span_bounds.last()) {
                (Some(sp), Some(&(lo, hi))) if (lo, hi) == (d.lo, d.hi) => {
                    let a = sp.src.min(d.src);
                    let b = (sp.src + sp.len as u64).max(end);
                    if b - a <= MAX_SPAN {
                        sp.src = a;
                        sp.len = (b - a) as usize;
                        true
                    } else {
                        false
                    }
                }
                _ => false,
            };
            if !merged {
                spans.push(Span {
                    src: d.src,
                    len: s.len,
                });
                span_bounds.push((d.lo, d.hi));
            }
            pending.push((first + i, spans.len() - 1, d.src));
        }
        if spans.is_empty() {
            return;
        }
        // Entries of one span are consecutive in `pending` (only the last span grows).
        let mut cursor = 0;
        let r = dma.gather(spans, |si, bytes| {
            while let Some(&(gi, span, src)) = pending.get(cursor) {
                if span != si {
                    break;
                }
                if let Ok(range) = &got[gi] {
                    let off = (src - spans[si].src) as usize;
                    out[range.clone()].copy_from_slice(&bytes[off..off + range.len()]);
                }
                cursor += 1;
            }
        });
        if let Err(e) = r {
            // Segments whose span was not delivered carry the error.
            for &(gi, _, _) in &pending[cursor..] {
                got[gi] = Err(e);
            }
        }
    }
}
