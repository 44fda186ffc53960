//! Copies between host memory and GPU memory for the proxies, on a non-blocking CUDA stream
//! of their own. The plain synchronous copies run on the legacy default stream, which waits
//! for every kernel of the application's blocking streams: a kernel that waits for the
//! proxy (receive, send completion) would then wait for a copy that waits for the kernel.

use crate::error::DocaResult;
use crate::gpu::{cu, GpuShared};
use cudarc::driver::sys;
use std::sync::{Arc, Mutex};

/// A non-blocking stream on one GPU, created on first use.
pub struct DmaStream {
    gpu: Arc<GpuShared>,
    /// `CUstream` as an address; 0 until created.
    stream: Mutex<usize>,
}

impl DmaStream {
    /// Copies through `gpu`'s primary context.
    ///
    /// The stream is created here, at queue set-up, not on the first frame: creating it costs
    /// hundreds of microseconds, which would make the first (possibly time-scheduled) send
    /// late. If creation fails now it is retried on first use, where the error is reported.
    pub fn new(gpu: Arc<GpuShared>) -> DmaStream {
        let s = DmaStream {
            gpu,
            stream: Mutex::new(0),
        };
        let _ = s.with(|_| Ok(()));
        s
    }

    /// The GPU.
    pub fn gpu(&self) -> &Arc<GpuShared> {
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
            cu::call("cuStreamCreate", || unsafe {
                sys::cuStreamCreate(&mut created, flags)
            })?;
            *s = created as usize;
        }
        f(*s as sys::CUstream)
    }

    /// Host -> device, complete when this returns.
    pub fn to_device(&self, dst: u64, src: &[u8]) -> DocaResult<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.with(|s| {
            // SAFETY: `src` is readable for its length until the stream is synchronised
            // below; the driver checks the device range.
            cu::call("cuMemcpyHtoDAsync", || unsafe {
                sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr().cast(), src.len(), s)
            })?;
            // SAFETY: `s` is a live stream of the current context.
            cu::call("cuStreamSynchronize", || unsafe {
                sys::cuStreamSynchronize(s)
            })
        })
    }

    /// Device -> host, complete when this returns.
    pub fn from_device(&self, dst: &mut [u8], src: u64) -> DocaResult<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.with(|s| {
            // SAFETY: `dst` is writable for its length until the stream is synchronised
            // below; the driver checks the device range.
            cu::call("cuMemcpyDtoHAsync", || unsafe {
                sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), src, dst.len(), s)
            })?;
            // SAFETY: `s` is a live stream of the current context.
            cu::call("cuStreamSynchronize", || unsafe {
                sys::cuStreamSynchronize(s)
            })
        })
    }
}

impl Drop for DmaStream {
    fn drop(&mut self) {
        let s = *self.stream.get_mut().unwrap_or_else(|p| p.into_inner());
        if s == 0 || self.gpu.bind_thread().is_err() {
            return;
        }
        // SAFETY: created by cuStreamCreate in `with` and not used after this.
        let _ = cu::call("cuStreamDestroy", || unsafe {
            sys::cuStreamDestroy_v2(s as sys::CUstream)
        });
    }
}
