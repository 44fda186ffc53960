//! A bounded queue of owned frames with a condition variable: the RX path of in-memory
//! wires and of `Port::inject_rx`.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Frames waiting for the dispatcher, oldest first.
pub(crate) struct FrameQueue {
    frames: Mutex<VecDeque<(Vec<u8>, u64)>>,
    ready: Condvar,
    capacity: usize,
}

impl FrameQueue {
    /// An empty queue holding at most `capacity` frames.
    pub(crate) fn new(capacity: usize) -> FrameQueue {
        FrameQueue {
            frames: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            capacity,
        }
    }

    /// Appends a copy of `frame`; `false` (frame not queued) when the queue is full.
    pub(crate) fn push(&self, frame: &[u8], timestamp_ns: u64) -> bool {
        let mut q = self.frames.lock().unwrap_or_else(|e| e.into_inner());
        if q.len() >= self.capacity {
            return false;
        }
        q.push_back((frame.to_vec(), timestamp_ns));
        drop(q);
        self.ready.notify_one();
        true
    }

    /// Takes up to `max` frames (oldest first) into `out`.
    pub(crate) fn take(&self, max: usize, out: &mut Vec<(Vec<u8>, u64)>) {
        let mut q = self.frames.lock().unwrap_or_else(|e| e.into_inner());
        let n = q.len().min(max);
        out.extend(q.drain(..n));
    }

    /// Waits until a frame is queued, `wake` is called, or `timeout` passes.
    pub(crate) fn wait(&self, timeout: Duration) {
        let q = self.frames.lock().unwrap_or_else(|e| e.into_inner());
        if q.is_empty() {
            let _ = self.ready.wait_timeout(q, timeout);
        }
    }

    /// Wakes a waiter (used to stop the dispatcher promptly).
    pub(crate) fn wake(&self) {
        self.ready.notify_all();
    }

    /// Number of queued frames.
    pub(crate) fn len(&self) -> usize {
        self.frames.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
