//! Memory the queues use: device-mapped blocks for rings and handles, the packet buffer of
//! an RX queue, and reading TX frames. Device memory is reached through [`DeviceMem`]
//! (implemented over the GPU of `doca_ctx_set_datapath_on_gpu`); plain host memory works
//! without a GPU, which is how CI exercises the ring protocol.

use crate::error::{DocaError, DocaResult};
use std::alloc::Layout;
use std::sync::Arc;

/// A device the queues can allocate device-mapped memory on and copy to/from.
pub trait DeviceMem: Send + Sync {
    /// Pinned, device-mapped host memory (zeroed): (device address, CPU pointer).
    fn alloc_mapped(&self, size: usize) -> DocaResult<(u64, *mut u8)>;
    /// Frees a block from [`DeviceMem::alloc_mapped`].
    fn free_mapped(&self, dev_addr: u64);
    /// Synchronous copy host -> device.
    fn copy_to_device(&self, dst: u64, src: &[u8]) -> DocaResult<()>;
    /// Synchronous copy device -> host.
    #[cfg(any(test, feature = "testing"))]
    fn copy_from_device(&self, dst: &mut [u8], src: u64) -> DocaResult<()>;
    /// CPU pointer of a device address when the allocation has one.
    #[cfg(any(test, feature = "testing"))]
    fn cpu_ptr_of(&self, dev_addr: u64) -> Option<*mut u8>;
}

/// A zeroed block visible to both the CPU proxy and the consumer (the GPU, or a CPU
/// consumer in tests): device-mapped memory when a device is given, else host memory.
pub(crate) struct SharedBlock {
    cpu: *mut u8,
    dev: u64,
    len: usize,
    owner: Option<Arc<dyn DeviceMem>>,
}

// SAFETY: the block is plain memory owned by this value; concurrent access goes through
// atomics or the ring protocol.
unsafe impl Send for SharedBlock {}
// SAFETY: as above.
unsafe impl Sync for SharedBlock {}

const BLOCK_ALIGN: usize = 4096;

impl SharedBlock {
    /// Allocates `len` zeroed bytes (at least 1).
    pub(crate) fn new(len: usize, device: Option<&Arc<dyn DeviceMem>>) -> DocaResult<SharedBlock> {
        let len = len.max(1);
        match device {
            Some(d) => {
                let (dev, cpu) = d.alloc_mapped(len)?;
                // SAFETY: alloc_mapped returned `len` writable bytes at `cpu`.
                unsafe { std::ptr::write_bytes(cpu, 0, len) };
                Ok(SharedBlock {
                    cpu,
                    dev,
                    len,
                    owner: Some(d.clone()),
                })
            }
            None => {
                let layout =
                    Layout::from_size_align(len, BLOCK_ALIGN).map_err(|_| DocaError::NO_MEMORY)?;
                // SAFETY: layout has non-zero size.
                let cpu = unsafe { std::alloc::alloc_zeroed(layout) };
                if cpu.is_null() {
                    return Err(DocaError::NO_MEMORY);
                }
                Ok(SharedBlock {
                    cpu,
                    dev: cpu as u64,
                    len,
                    owner: None,
                })
            }
        }
    }

    /// CPU pointer.
    pub(crate) fn cpu(&self) -> *mut u8 {
        self.cpu
    }

    /// Address for the consumer (device address, or the CPU pointer for host blocks).
    pub(crate) fn dev(&self) -> u64 {
        self.dev
    }
}

impl Drop for SharedBlock {
    fn drop(&mut self) {
        match &self.owner {
            Some(d) => d.free_mapped(self.dev),
            None => {
                let layout = Layout::from_size_align(self.len, BLOCK_ALIGN)
                    .expect("layout was valid at allocation");
                // SAFETY: allocated in `new` with this layout.
                unsafe { std::alloc::dealloc(self.cpu, layout) };
            }
        }
    }
}

/// The packet buffer of an RX queue (a range of the application's mmap).
#[derive(Clone)]
pub struct PktBuf {
    /// Address of byte 0 as the consumer sees it (device address or host pointer).
    pub addr: u64,
    /// CPU pointer to byte 0 when the CPU can write the buffer directly.
    pub host: Option<*mut u8>,
    /// Length in bytes.
    pub len: usize,
    /// mkey of the mmap (host order).
    pub mkey: u32,
    /// The device, for copies into device memory (`host == None`).
    pub device: Option<Arc<dyn DeviceMem>>,
}

// SAFETY: the buffer is application memory registered through an mmap that outlives the
// queue; writes follow the ring protocol.
unsafe impl Send for PktBuf {}
// SAFETY: as above.
unsafe impl Sync for PktBuf {}

impl PktBuf {
    /// A buffer in host memory at `ptr`.
    pub fn host(ptr: *mut u8, len: usize, mkey: u32) -> PktBuf {
        PktBuf {
            addr: ptr as u64,
            host: Some(ptr),
            len,
            mkey,
            device: None,
        }
    }

    /// Writes `data` at `offset` (bounds-checked): directly for host memory, one device copy
    /// otherwise.
    pub fn write(&self, offset: usize, data: &[u8]) -> DocaResult<()> {
        let end = offset
            .checked_add(data.len())
            .ok_or(DocaError::INVALID_VALUE)?;
        if end > self.len {
            return Err(DocaError::INVALID_VALUE);
        }
        match (self.host, &self.device) {
            (Some(p), _) => {
                // SAFETY: [offset, end) is inside the buffer (checked above), which the
                // application registered as writable memory for this queue.
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.add(offset), data.len()) };
                Ok(())
            }
            (None, Some(d)) => d.copy_to_device(self.addr + offset as u64, data),
            (None, None) => Err(DocaError::BAD_STATE),
        }
    }
}

/// One piece of a frame as a TX descriptor names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSeg {
    /// Address (device or host, as the producer gave it).
    pub addr: u64,
    /// mkey, big-endian as in the descriptor.
    pub mkey_be: u32,
    /// Bytes.
    pub len: usize,
}

/// Where a TX proxy reads frame bytes from.
pub trait FrameSource: Send + Sync {
    /// Appends `len` bytes at `addr` (mkey big-endian, as in the descriptor) to `out`;
    /// INVALID_VALUE when the range is not registered memory.
    fn read(&self, addr: u64, mkey_be: u32, len: usize, out: &mut Vec<u8>) -> DocaResult<()>;

    /// Reads several segments: appends the bytes of each to `out` and pushes where they
    /// landed in `out` (or why the segment could not be read) to `got`, one entry per
    /// segment, in order. Sources over device memory batch the copies (one synchronisation
    /// for the lot instead of one per frame); this default reads them one by one.
    fn read_many(
        &self,
        segs: &[FrameSeg],
        out: &mut Vec<u8>,
        got: &mut Vec<DocaResult<std::ops::Range<usize>>>,
    ) {
        read_each(self, segs, out, got);
    }
}

/// [`FrameSource::read_many`] one segment at a time through [`FrameSource::read`] (the
/// default, and what sources without device memory do).
pub fn read_each<S: FrameSource + ?Sized>(
    src: &S,
    segs: &[FrameSeg],
    out: &mut Vec<u8>,
    got: &mut Vec<DocaResult<std::ops::Range<usize>>>,
) {
    for s in segs {
        let start = out.len();
        got.push(
            src.read(s.addr, s.mkey_be, s.len, out)
                .map(|()| start..out.len()),
        );
    }
}

/// Host memory ranges a TX proxy may read (registered mmaps over host memory), plus the
/// device for device addresses.
#[derive(Default, Clone)]
#[cfg(any(test, feature = "testing"))]
pub struct MemRanges {
    /// start -> length; looked up by the last start at or below an address, so a read costs
    /// O(log n) however many ranges are registered (a proxy reads a batch at a time).
    ranges: std::collections::BTreeMap<u64, usize>,
    device: Option<Arc<dyn DeviceMem>>,
}

#[cfg(any(test, feature = "testing"))]
impl MemRanges {
    /// Ranges that only the device can resolve (or none when `device` is None).
    pub fn new(device: Option<Arc<dyn DeviceMem>>) -> MemRanges {
        MemRanges {
            ranges: std::collections::BTreeMap::new(),
            device,
        }
    }

    /// Allows reads of host memory `[addr, addr+len)`.
    pub fn add_host(&mut self, addr: *const u8, len: usize) {
        let e = self.ranges.entry(addr as u64).or_insert(0);
        *e = (*e).max(len);
    }

    fn host_contains(&self, addr: u64, len: usize) -> bool {
        let Some(end) = addr.checked_add(len as u64) else {
            return false;
        };
        let inside = |(&a, &l): (&u64, &usize)| addr >= a && end <= a + l as u64;
        // The nearest range starting at or below `addr` holds it unless ranges overlap;
        // then look at the others (registration order does not matter).
        self.ranges.range(..=addr).next_back().is_some_and(inside)
            || self.ranges.range(..=addr).any(inside)
    }
}

#[cfg(any(test, feature = "testing"))]
impl FrameSource for MemRanges {
    fn read(&self, addr: u64, _mkey_be: u32, len: usize, out: &mut Vec<u8>) -> DocaResult<()> {
        let start = out.len();
        if self.host_contains(addr, len) {
            // SAFETY: the range lies inside registered host memory (checked above).
            let src = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
            out.extend_from_slice(src);
            return Ok(());
        }
        let d = self.device.as_ref().ok_or(DocaError::INVALID_VALUE)?;
        if let Some(p) = d.cpu_ptr_of(addr) {
            // SAFETY: the device reports a CPU mapping for this allocation.
            let src = unsafe { std::slice::from_raw_parts(p as *const u8, len) };
            out.extend_from_slice(src);
            return Ok(());
        }
        out.resize(start + len, 0);
        d.copy_from_device(&mut out[start..], addr)
            .inspect_err(|_| {
                out.truncate(start);
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_ranges_are_found_at_their_bounds_and_overlaps_still_resolve() {
        let buf = vec![7u8; 4096];
        let p = buf.as_ptr();
        let mut m = MemRanges::new(None);
        // SAFETY: offsets inside `buf`.
        let (a, b) = unsafe { (p.add(100), p.add(1000)) };
        m.add_host(a, 200); // [100, 300)
        m.add_host(b, 100); // [1000, 1100)
        m.add_host(p, 2048); // [0, 2048) overlaps both
        let mut out = Vec::new();
        for (off, len) in [(100, 200), (1000, 100), (0, 2048), (1500, 10), (2040, 8)] {
            out.clear();
            // SAFETY: inside `buf`.
            let addr = unsafe { p.add(off) } as u64;
            assert!(m.read(addr, 0, len, &mut out).is_ok(), "[{off}, +{len})");
            assert_eq!(out.len(), len);
        }
        // SAFETY: inside `buf` (the range extends past the registered 2048 bytes).
        let past = unsafe { p.add(2040) } as u64;
        assert!(
            m.read(past, 0, 16, &mut out).is_err(),
            "crosses the end of every range"
        );
        assert!(m.read(8, 0, 8, &mut out).is_err(), "not registered");
        assert!(m.read(u64::MAX - 2, 0, 8, &mut out).is_err(), "overflow");
    }
}
