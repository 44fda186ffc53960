//! Copies between host memory and GPU memory for the proxies, on a non-blocking CUDA stream
//! of their own. The plain synchronous copies run on the legacy default stream, which waits
//! for every kernel of the application's blocking streams: a kernel that waits for the
//! proxy (receive, send completion) would then wait for a copy that waits for the kernel.

use crate::error::DocaResult;
use crate::gpu::{cu, GpuShared};
use doca_cuda_driver::{cu, sys};
use std::sync::{Arc, Mutex};

/// A non-blocking stream on one GPU, created on first use.
pub(crate) struct DmaStream {
    gpu: Arc<GpuShared>,
    /// `CUstream` as an address; 0 until created.
    stream: Mutex<usize>,
    /// Pinned host memory gathers copy into (device -> pinned copies are real DMA; into
    /// pageable memory the driver bounces every copy through a buffer of its own).
    staging: Mutex<Pinned>,
}

/// Pinned host memory from `cuMemAllocHost` (empty until first needed).
struct Pinned {
    ptr: usize,
    len: usize,
}

/// Most bytes staged before a gather synchronises and hands them out (a gather larger than
/// this runs in several rounds; one span larger than this gets a buffer of its size).
const STAGING_BYTES: usize = 1 << 20;

/// One device range of a gather ([`DmaStream::gather`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// Device address.
    pub src: u64,
    /// Bytes.
    pub len: usize,
}

impl DmaStream {
    /// Copies through `gpu`'s primary context.
    ///
    /// The stream is created here, at queue set-up, not on the first frame: creating it costs
    /// hundreds of microseconds, which would make the first (possibly time-scheduled) send
    /// late. If creation fails now it is retried on first use, where the error is reported.
    pub(crate) fn new(gpu: Arc<GpuShared>) -> DmaStream {
        let s = DmaStream {
            gpu,
            stream: Mutex::new(0),
            staging: Mutex::new(Pinned { ptr: 0, len: 0 }),
        };
        let _ = s.with(|_| Ok(()));
        s
    }

    /// Prepares for gathers (TX proxies): allocates the pinned staging and runs one small
    /// device -> host copy, so the first frame a queue sends (possibly a time-scheduled one)
    /// does not pay for the allocation or the stream's first copy. Errors are left for the
    /// first real gather to report.
    pub(crate) fn for_gathers(self) -> DmaStream {
        let _ = self.with(|_| self.ensure_staging(&mut self.lock_staging(), STAGING_BYTES));
        let mut probe: sys::CUdeviceptr = 0;
        // SAFETY: `probe` is writable; `with` makes the context current.
        let alloc = self.with(|_| cu::call(unsafe { cu!(cuMemAlloc_v2(&mut probe, 64)) }));
        if alloc.is_ok() {
            let _ = self.gather(
                &[Span {
                    src: probe,
                    len: 64,
                }],
                |_, _| {},
            );
            let _ = self.with(|_| {
                // SAFETY: allocated above; the gather synchronised its copy.
                cu::call(unsafe { cu!(cuMemFree_v2(probe)) })
            });
        }
        self
    }

    /// The GPU.
    pub(crate) fn gpu(&self) -> &Arc<GpuShared> {
        &self.gpu
    }

    /// Runs `f` with the stream (the context current on this thread, the stream locked).
    fn with<R>(&self, f: impl FnOnce(sys::CUstream) -> DocaResult<R>) -> DocaResult<R> {
        self.gpu.bind_thread()?;
        let mut s = self.stream.lock().unwrap_or_else(|p| p.into_inner());
        if *s == 0 {
            let mut created: sys::CUstream = std::ptr::null_mut();
            let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
            // SAFETY: `created` is writable; the context is current on this thread.
            cu::call(unsafe { cu!(cuStreamCreate(&mut created, flags)) })?;
            *s = created as usize;
        }
        f(*s as sys::CUstream)
    }

    /// Host -> device, complete when this returns.
    pub(crate) fn copy_to_device(&self, dst: u64, src: &[u8]) -> DocaResult<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.with(|s| {
            // SAFETY: `src` is readable for its length until the stream is synchronised
            // below; the driver checks the device range.
            cu::call(unsafe { cu!(cuMemcpyHtoDAsync_v2(dst, src.as_ptr().cast(), src.len(), s)) })?;
            // SAFETY: `s` is a live stream of the current context.
            cu::call(unsafe { cu!(cuStreamSynchronize(s)) })
        })
    }

    fn lock_staging(&self) -> std::sync::MutexGuard<'_, Pinned> {
        self.staging.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes `p` at least `len` bytes (the context must be current).
    fn ensure_staging(&self, p: &mut Pinned, len: usize) -> DocaResult<()> {
        if p.len >= len {
            return Ok(());
        }
        free_pinned(p);
        let mut h: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: `h` is writable; the context is current on this thread.
        cu::call(unsafe { cu!(cuMemAllocHost_v2(&mut h, len)) })?;
        *p = Pinned {
            ptr: h as usize,
            len,
        };
        Ok(())
    }

    /// Reads every span of device memory: issues the copies into pinned staging on the
    /// stream, synchronises once per round of up to `STAGING_BYTES` (1 MiB), then calls
    /// `deliver(i, bytes)` for span `i`, in order. An error stops the gather (spans already
    /// delivered stay delivered).
    pub(crate) fn gather(
        &self,
        spans: &[Span],
        mut deliver: impl FnMut(usize, &[u8]),
    ) -> DocaResult<()> {
        let mut first = 0;
        while first < spans.len() {
            // A round: spans that fit the staging buffer together (at least one).
            let mut end = first;
            let mut bytes = 0usize;
            while end < spans.len() && (end == first || bytes + spans[end].len <= STAGING_BYTES) {
                bytes += spans[end].len;
                end += 1;
            }
            let round = &spans[first..end];
            self.with(|s| {
                let mut p = self.lock_staging();
                self.ensure_staging(&mut p, bytes.max(STAGING_BYTES))?;
                let mut off = 0;
                for sp in round {
                    // SAFETY: [off, off+len) lies inside the pinned buffer (sized above),
                    // which stays allocated and untouched until the synchronise below.
                    cu::call(unsafe {
                        cu!(cuMemcpyDtoHAsync_v2(
                            (p.ptr + off) as *mut _,
                            sp.src,
                            sp.len,
                            s
                        ))
                    })?;
                    off += sp.len;
                }
                // SAFETY: `s` is a live stream of the current context.
                cu::call(unsafe { cu!(cuStreamSynchronize(s)) })?;
                let mut off = 0;
                for (i, sp) in round.iter().enumerate() {
                    // SAFETY: the copy into [off, off+len) completed (synchronised above).
                    let b =
                        unsafe { std::slice::from_raw_parts((p.ptr + off) as *const u8, sp.len) };
                    deliver(first + i, b);
                    off += sp.len;
                }
                Ok(())
            })?;
            first = end;
        }
        Ok(())
    }

    /// Device -> host, complete when this returns.
    pub(crate) fn copy_from_device(&self, dst: &mut [u8], src: u64) -> DocaResult<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.with(|s| {
            // SAFETY: `dst` is writable for its length until the stream is synchronised
            // below; the driver checks the device range.
            cu::call(unsafe {
                cu!(cuMemcpyDtoHAsync_v2(
                    dst.as_mut_ptr().cast(),
                    src,
                    dst.len(),
                    s
                ))
            })?;
            // SAFETY: `s` is a live stream of the current context.
            cu::call(unsafe { cu!(cuStreamSynchronize(s)) })
        })
    }
}

/// Frees pinned staging (the context must be current); leaves `p` empty.
fn free_pinned(p: &mut Pinned) {
    if p.ptr != 0 {
        // SAFETY: allocated by cuMemAllocHost in `ensure_staging` and no copy is pending
        // (every gather synchronises before it returns).
        let _ = cu::call(unsafe { cu!(cuMemFreeHost(p.ptr as *mut std::ffi::c_void)) });
    }
    *p = Pinned { ptr: 0, len: 0 };
}

impl Drop for DmaStream {
    fn drop(&mut self) {
        let s = *self.stream.get_mut().unwrap_or_else(|p| p.into_inner());
        let staging = self.staging.get_mut().unwrap_or_else(|p| p.into_inner());
        if (s == 0 && staging.ptr == 0) || self.gpu.bind_thread().is_err() {
            return;
        }
        free_pinned(staging);
        if s != 0 {
            // SAFETY: created by cuStreamCreate in `with` and not used after this.
            let _ = cu::call(unsafe { cu!(cuStreamDestroy_v2(s as sys::CUstream)) });
        }
    }
}
