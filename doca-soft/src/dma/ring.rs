//! The GPU data path of a `doca_dma`: the handle (`struct doca_gpu_dma`) and its request
//! ring in memory both the GPU and the proxy reach, and the proxy thread that runs the
//! requests in index order (protocol: `include/doca_soft_dev_dma_ring.h`).
//!
//! Each request is checked before it runs: both keys must name started local mmaps and
//! both ranges must lie inside them; a request that fails the check is skipped, counted and
//! logged (its `done` still advances, so the ring never stalls). With a GPU the copies run
//! on the proxy's own non-blocking CUDA stream and `done` moves when an event recorded
//! after them completes; without one (the testing hooks' host data path) the proxy copies
//! with the CPU.

use super::stream::CopyStream;
use crate::error::{DocaError, DocaResult};
use crate::gpu::GpuShared;
use crate::gpuqp::{Placement, SharedMem};
use crate::mmap::mmap_by_mkey;
use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// `DOCA_SOFT_DMA_RING_VERSION`.
pub(crate) const RING_VERSION: u32 = 1;
/// Descriptors per ring.
pub(crate) const DESC_NUM: u32 = 1024;

/// `struct doca_soft_dma_desc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DmaDesc {
    pub src: u64,
    pub dst: u64,
    pub len: u64,
    pub src_mkey: u32,
    pub dst_mkey: u32,
    pub seq: u64,
    pub rsvd: [u64; 3],
}

/// `struct doca_gpu_dma` (the three counters each alone in a 64-byte line).
#[repr(C)]
pub(crate) struct DmaHandle {
    pub version: u32,
    pub desc_num: u32,
    pub desc_mask: u32,
    pub rsvd0: u32,
    pub desc_addr: u64,
    pub rsvd1: [u64; 5],
    pub rsvd_idx: [u64; 8],
    pub pi: [u64; 8],
    pub done: [u64; 8],
}

const _: () = {
    assert!(size_of::<DmaDesc>() == 64);
    assert!(offset_of!(DmaDesc, len) == 16);
    assert!(offset_of!(DmaDesc, src_mkey) == 24);
    assert!(offset_of!(DmaDesc, dst_mkey) == 28);
    assert!(offset_of!(DmaDesc, seq) == 32);
    assert!(size_of::<DmaHandle>() == 256);
    assert!(offset_of!(DmaHandle, desc_num) == 4);
    assert!(offset_of!(DmaHandle, desc_mask) == 8);
    assert!(offset_of!(DmaHandle, desc_addr) == 16);
    assert!(offset_of!(DmaHandle, rsvd_idx) == 64);
    assert!(offset_of!(DmaHandle, pi) == 128);
    assert!(offset_of!(DmaHandle, done) == 192);
};

const HANDLE: usize = size_of::<DmaHandle>();

/// The handle and its descriptors, in one allocation.
pub(crate) struct DmaRing {
    mem: SharedMem,
    num: u32,
}

impl DmaRing {
    /// A ring of `num` descriptors (a power of two) on `place`, handle filled in.
    pub(crate) fn new(place: &Placement, num: u32) -> DocaResult<DmaRing> {
        if !num.is_power_of_two() {
            return Err(DocaError::INVALID_VALUE);
        }
        let mem = SharedMem::new(place, HANDLE + num as usize * 64, 64)?;
        mem.write(0, &RING_VERSION.to_ne_bytes());
        mem.write(offset_of!(DmaHandle, desc_num), &num.to_ne_bytes());
        mem.write(offset_of!(DmaHandle, desc_mask), &(num - 1).to_ne_bytes());
        mem.write(
            offset_of!(DmaHandle, desc_addr),
            &mem.dev_at(HANDLE).to_ne_bytes(),
        );
        Ok(DmaRing { mem, num })
    }

    /// The handle's device address (`struct doca_gpu_dma *`).
    pub(crate) fn handle(&self) -> u64 {
        self.mem.dev_at(0)
    }

    fn counter(&self, off: usize) -> &AtomicU64 {
        // SAFETY: an aligned u64 of the handle, host memory owned by `mem`.
        unsafe { &*(self.mem.cpu_at(off) as *const AtomicU64) }
    }

    /// Descriptors submitted (`pi`).
    pub(crate) fn submitted(&self) -> u64 {
        self.counter(offset_of!(DmaHandle, pi))
            .load(Ordering::Acquire)
    }

    /// Publishes `done`.
    pub(crate) fn set_done(&self, v: u64) {
        self.counter(offset_of!(DmaHandle, done))
            .store(v, Ordering::Release);
    }

    /// Descriptor `i`, once complete (its seq is `i + 1`).
    pub(crate) fn desc(&self, i: u64) -> Option<DmaDesc> {
        let off = HANDLE + (i & (self.num as u64 - 1)) as usize * 64;
        let seq = self.counter(off + offset_of!(DmaDesc, seq));
        if seq.load(Ordering::Acquire) != i + 1 {
            return None;
        }
        let mut d = DmaDesc::default();
        // SAFETY: the 64-byte descriptor slot; its fields were written before the release
        // store of seq (acquired above).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.mem.cpu_at(off),
                (&mut d as *mut DmaDesc).cast::<u8>(),
                64,
            )
        };
        Some(d)
    }
}

/// Whether `[addr, addr + len)` lies in the started local mmap of `mkey_be`.
fn inside(mkey_be: u32, addr: u64, len: u64) -> bool {
    let Some(m) = mmap_by_mkey(u32::from_be(mkey_be)) else {
        return false;
    };
    let Ok((base, mlen)) = m.range() else {
        return false;
    };
    let end = match addr.checked_add(len) {
        Some(e) => e,
        None => return false,
    };
    let within = |b: u64| addr >= b && end <= b + mlen as u64;
    within(base as u64) || m.gpu_range().is_some_and(|g| within(g.gpu_addr))
}

/// How the proxy copies.
enum Exec {
    Cuda(CopyStream),
    Host,
}

/// Counters of a proxy.
#[derive(Default)]
pub(crate) struct DmaStats {
    /// Requests run.
    pub copied: AtomicU64,
    /// Requests skipped (bad key or range, failed copy).
    pub skipped: AtomicU64,
}

/// The proxy thread of a started GPU-datapath context.
pub(crate) struct DmaProxy {
    ring: Arc<DmaRing>,
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    stats: Arc<DmaStats>,
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<()>>,
}

impl DmaProxy {
    /// Starts the proxy of `ring`; copies through `gpu` (None: CPU copies, host memory).
    pub(crate) fn start(ring: DmaRing, gpu: Option<Arc<GpuShared>>) -> DocaResult<DmaProxy> {
        let ring = Arc::new(ring);
        let exec = match gpu {
            Some(g) => Exec::Cuda(CopyStream::new(g)?),
            None => Exec::Host,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(DmaStats::default());
        let (r, s, st) = (ring.clone(), stop.clone(), stats.clone());
        let join = std::thread::Builder::new()
            .name("doca-dma-proxy".into())
            .spawn(move || run(&r, exec, &s, &st))
            .map_err(|_| DocaError::OPERATING_SYSTEM)?;
        Ok(DmaProxy {
            ring,
            stats,
            stop,
            join: Some(join),
        })
    }

    /// The handle's device address.
    pub(crate) fn handle(&self) -> u64 {
        self.ring.handle()
    }

    /// The counters.
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub(crate) fn stats(&self) -> &DmaStats {
        &self.stats
    }
}

impl Drop for DmaProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(j) = self.join.take() {
            if j.join().is_err() {
                sdk_err!("dma", "the DMA proxy thread panicked");
            }
        }
    }
}

fn run(ring: &DmaRing, mut exec: Exec, stop: &AtomicBool, stats: &DmaStats) {
    if let Exec::Cuda(s) = &exec {
        if let Err(e) = s.bind() {
            sdk_err!("dma", "the DMA proxy cannot bind the GPU context: {e:?}");
        }
    }
    let mut next = 0u64;
    let mut idle = 0u32;
    let mut warned = 0u32;
    loop {
        let mut busy = false;
        let pi = ring.submitted();
        let mut issued = false;
        while next < pi {
            if let Exec::Cuda(s) = &exec {
                if !s.can_mark() {
                    break;
                }
            }
            let Some(d) = ring.desc(next) else { break };
            let ok =
                d.len > 0 && inside(d.src_mkey, d.src, d.len) && inside(d.dst_mkey, d.dst, d.len);
            let ran = ok
                && match &mut exec {
                    Exec::Cuda(s) => s.copy(d.dst, d.src, d.len as usize).is_ok(),
                    Exec::Host => {
                        // SAFETY: both ranges lie inside started local mmaps of host
                        // memory (checked above), which the program gave for DMA.
                        unsafe {
                            std::ptr::copy(d.src as *const u8, d.dst as *mut u8, d.len as usize)
                        };
                        true
                    }
                };
            if ran {
                stats.copied.fetch_add(1, Ordering::Relaxed);
            } else {
                stats.skipped.fetch_add(1, Ordering::Relaxed);
                if warned < 16 {
                    warned += 1;
                    sdk_err!(
                        "dma",
                        "DMA request {next} skipped: {} bytes from {:#x} (key {:#x}) to {:#x} (key {:#x}) are not inside registered memory",
                        d.len,
                        d.src,
                        u32::from_be(d.src_mkey),
                        d.dst,
                        u32::from_be(d.dst_mkey)
                    );
                }
            }
            next += 1;
            issued = true;
            busy = true;
        }
        match &mut exec {
            Exec::Host => {
                if issued {
                    ring.set_done(next);
                }
            }
            Exec::Cuda(s) => {
                if issued && s.mark(next).is_err() {
                    // No event left or recording failed: wait for the stream instead.
                    let _ = s.synchronize();
                    ring.set_done(next);
                }
                match s.finished() {
                    Ok(Some(v)) => {
                        ring.set_done(v);
                        busy = true;
                    }
                    Ok(None) => {}
                    Err(_) => {
                        let _ = s.synchronize();
                        ring.set_done(next);
                    }
                }
                busy |= s.busy();
            }
        }
        if stop.load(Ordering::Acquire) && !busy {
            break;
        }
        if busy {
            idle = 0;
            continue;
        }
        idle = idle.saturating_add(1);
        if idle > 256 {
            std::thread::sleep(Duration::from_micros(20));
        } else {
            std::hint::spin_loop();
        }
    }
}
