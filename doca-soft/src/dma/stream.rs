//! A non-blocking CUDA stream of a proxy thread, with a fixed pool of events to learn, in
//! order, which of the copies issued on it have finished.
//!
//! Why a stream of its own: the legacy default stream waits for every kernel of the
//! application's blocking streams, so a proxy copying on it while a kernel waits for the
//! proxy would deadlock. (The Ethernet proxies' `eth::dma::DmaStream` makes its stream the
//! same way; the stream creation here could be shared with it.)
//!
//! Copies use unified addressing (`cuMemcpyAsync`): host memory (pinned or not), device
//! memory and device-mapped memory in any direction.

use crate::error::{DocaError, DocaResult};
use crate::gpu::{cu, GpuShared};
use doca_cuda_driver::{cu, sys};
use std::sync::Arc;

/// Events kept in flight at most (each marks the end of a batch of copies).
pub(crate) const EVENTS: usize = 64;

/// A stream and its events, used by one thread.
pub(crate) struct CopyStream {
    gpu: Arc<GpuShared>,
    stream: sys::CUstream,
    events: Vec<sys::CUevent>,
    /// Events recorded and not yet seen complete: (event slot, value it stands for).
    pending: std::collections::VecDeque<(usize, u64)>,
    next_event: usize,
}

// SAFETY: CUDA stream and event handles may be used from any thread of the context; the
// value is used by one thread at a time (the proxy that owns it).
unsafe impl Send for CopyStream {}

impl CopyStream {
    /// A non-blocking stream and `EVENTS` events (timing off) on `gpu`; the calling thread
    /// gets the GPU's context.
    pub(crate) fn new(gpu: Arc<GpuShared>) -> DocaResult<CopyStream> {
        gpu.bind_thread()?;
        let mut stream: sys::CUstream = std::ptr::null_mut();
        let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: `stream` is writable; the context is current on this thread.
        cu::call(unsafe { cu!(cuStreamCreate(&mut stream, flags)) })?;
        let mut s = CopyStream {
            gpu,
            stream,
            events: Vec::with_capacity(EVENTS),
            pending: std::collections::VecDeque::with_capacity(EVENTS),
            next_event: 0,
        };
        for _ in 0..EVENTS {
            let mut e: sys::CUevent = std::ptr::null_mut();
            let f = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
            // SAFETY: `e` is writable; the context is current.
            cu::call(unsafe { cu!(cuEventCreate(&mut e, f)) })?;
            s.events.push(e);
        }
        Ok(s)
    }

    /// Makes the GPU's context current on the calling thread.
    pub(crate) fn bind(&self) -> DocaResult<()> {
        self.gpu.bind_thread()
    }

    /// Queues a copy of `len` bytes (unified addresses).
    pub(crate) fn copy(&mut self, dst: u64, src: u64, len: usize) -> DocaResult<()> {
        let s = self.stream;
        // SAFETY: the addresses were checked against registered memory by the caller; the
        // driver checks them again and reports a bad one as an error.
        cu::call(unsafe { cu!(cuMemcpyAsync(dst, src, len, s)) })
    }

    /// Whether another batch can be marked now.
    pub(crate) fn can_mark(&self) -> bool {
        self.pending.len() < EVENTS
    }

    /// Marks the end of the copies queued so far; `value` comes back from [`Self::finished`]
    /// once they completed. AGAIN when every event is in flight.
    pub(crate) fn mark(&mut self, value: u64) -> DocaResult<()> {
        if !self.can_mark() {
            return Err(DocaError::AGAIN);
        }
        let slot = self.next_event;
        let (e, s) = (self.events[slot], self.stream);
        // SAFETY: a live event and stream of the current context.
        cu::call(unsafe { cu!(cuEventRecord(e, s)) })?;
        self.next_event = (slot + 1) % EVENTS;
        self.pending.push_back((slot, value));
        Ok(())
    }

    /// The value of the latest finished mark (in order), if any finished since last time;
    /// an error when a copy failed.
    pub(crate) fn finished(&mut self) -> DocaResult<Option<u64>> {
        let mut last = None;
        while let Some(&(slot, value)) = self.pending.front() {
            let e = self.events[slot];
            // SAFETY: a live event.
            match unsafe { cu!(cuEventQuery(e)) } {
                Ok(()) => {
                    self.pending.pop_front();
                    last = Some(value);
                }
                Err(e) if e.code() == sys::CUresult::CUDA_ERROR_NOT_READY => break,
                Err(e) => {
                    sdk_err!("dma", "a copy on the DMA stream failed: {e}");
                    self.pending.pop_front();
                    return Err(DocaError::DRIVER);
                }
            }
        }
        Ok(last)
    }

    /// Whether marks are still in flight.
    pub(crate) fn busy(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Waits for everything queued.
    pub(crate) fn synchronize(&self) -> DocaResult<()> {
        let s = self.stream;
        // SAFETY: a live stream.
        cu::call(unsafe { cu!(cuStreamSynchronize(s)) })
    }
}

impl Drop for CopyStream {
    fn drop(&mut self) {
        let _ = self.gpu.bind_thread();
        let _ = self.synchronize();
        for &e in &self.events {
            // SAFETY: created in `new`, destroyed once.
            let _ = cu::call(unsafe { cu!(cuEventDestroy_v2(e)) });
        }
        let s = self.stream;
        // SAFETY: created in `new`, destroyed once.
        let _ = cu::call(unsafe { cu!(cuStreamDestroy_v2(s)) });
    }
}
