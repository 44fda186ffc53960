//! A bounded queue of frames with a condition variable: the RX path of in-memory wires and
//! of `Port::inject_rx`.
//!
//! All storage is allocated once, when the queue is made: a byte ring holding the frames
//! back to back (a frame never wraps: when it does not fit before the end it starts again at
//! offset 0) and a ring of descriptors. Pushing copies into the byte ring and taking copies
//! into a caller-owned [`FrameBatch`], so steady-state traffic allocates nothing.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Bytes of frame storage per queue. Zero-filled pages are mapped lazily by the OS, so an
/// idle queue costs address space, not memory.
const RING_BYTES: usize = 16 << 20;

/// Frames longer than this are queued without their bytes, only their length: the
/// dispatcher counts them as too big, as it would the whole frame.
const MAX_STORED_FRAME: usize = 64 << 10;

/// Where one queued frame lies in the byte ring.
#[derive(Clone, Copy, Default)]
struct Desc {
    start: usize,
    stored: usize,
    wire_len: usize,
    timestamp_ns: u64,
}

/// The storage, guarded by the queue's lock.
struct Ring {
    bytes: Box<[u8]>,
    descs: Box<[Desc]>,
    /// Index in `descs` of the oldest frame.
    head: usize,
    /// Number of queued frames.
    len: usize,
    /// Byte offset where the next frame would go.
    write: usize,
}

impl Ring {
    /// Where a frame reserving `need` bytes goes, if it fits now.
    ///
    /// Each frame reserves at least one byte, so a non-empty ring never has `write == read`
    /// unless its bytes are all taken.
    fn place(&self, need: usize) -> Option<usize> {
        let cap = self.bytes.len();
        if self.len == 0 {
            return (need <= cap).then_some(0);
        }
        let read = self.descs[self.head].start;
        if read < self.write {
            // Used bytes are [read, write): room after write, else at the start.
            if self.write + need <= cap {
                Some(self.write)
            } else {
                (need <= read).then_some(0)
            }
        } else {
            // Wrapped: used bytes are [read, end) and [0, write); room is [write, read).
            (self.write + need <= read).then_some(self.write)
        }
    }

    fn push(&mut self, frame: &[u8], timestamp_ns: u64) -> bool {
        if self.len == self.descs.len() {
            return false;
        }
        let stored = if frame.len() > MAX_STORED_FRAME {
            0
        } else {
            frame.len()
        };
        let need = stored.max(1);
        let Some(start) = self.place(need) else {
            return false;
        };
        self.bytes[start..start + stored].copy_from_slice(&frame[..stored]);
        let tail = (self.head + self.len) % self.descs.len();
        self.descs[tail] = Desc {
            start,
            stored,
            wire_len: frame.len(),
            timestamp_ns,
        };
        self.len += 1;
        self.write = start + need;
        true
    }

    fn pop_into(&mut self, out: &mut FrameBatch) -> bool {
        if self.len == 0 {
            return false;
        }
        let d = self.descs[self.head];
        let at = out.bytes.len();
        out.bytes
            .extend_from_slice(&self.bytes[d.start..d.start + d.stored]);
        out.frames.push(BatchFrame {
            at,
            stored: d.stored,
            wire_len: d.wire_len,
            timestamp_ns: d.timestamp_ns,
        });
        self.head = (self.head + 1) % self.descs.len();
        self.len -= 1;
        if self.len == 0 {
            // Start again at the front: fewer wraps, and hot pages stay hot.
            self.head = 0;
            self.write = 0;
        }
        true
    }
}

/// One frame of a [`FrameBatch`].
#[derive(Clone, Copy)]
struct BatchFrame {
    at: usize,
    stored: usize,
    wire_len: usize,
    timestamp_ns: u64,
}

/// Frames taken from a [`FrameQueue`], owned by the taker and reused from batch to batch
/// (clearing keeps its buffers, so a reused batch stops allocating once it has held its
/// largest batch).
pub(crate) struct FrameBatch {
    bytes: Vec<u8>,
    frames: Vec<BatchFrame>,
}

impl FrameBatch {
    /// An empty batch with room for `frames` frames of `bytes` bytes in all.
    pub(crate) fn with_capacity(frames: usize, bytes: usize) -> FrameBatch {
        FrameBatch {
            bytes: Vec::with_capacity(bytes),
            frames: Vec::with_capacity(frames),
        }
    }

    /// Number of frames in the batch.
    pub(crate) fn len(&self) -> usize {
        self.frames.len()
    }

    /// Frame `i`: its bytes, timestamp and length on the wire (above `bytes.len()` when the
    /// frame was too big to store).
    pub(crate) fn get(&self, i: usize) -> (&[u8], u64, usize) {
        let f = self.frames[i];
        (
            &self.bytes[f.at..f.at + f.stored],
            f.timestamp_ns,
            f.wire_len,
        )
    }

    /// Empties the batch, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.frames.clear();
    }
}

/// Frames waiting for the dispatcher, oldest first.
pub(crate) struct FrameQueue {
    ring: Mutex<Ring>,
    ready: Condvar,
}

impl FrameQueue {
    /// An empty queue holding at most `capacity` frames (and at most [`RING_BYTES`] bytes
    /// of them).
    pub(crate) fn new(capacity: usize) -> FrameQueue {
        FrameQueue::with_bytes(capacity, RING_BYTES)
    }

    /// An empty queue of at most `capacity` frames in `bytes` bytes of storage.
    fn with_bytes(capacity: usize, bytes: usize) -> FrameQueue {
        FrameQueue {
            ring: Mutex::new(Ring {
                bytes: vec![0u8; bytes.max(1)].into_boxed_slice(),
                descs: vec![Desc::default(); capacity.max(1)].into_boxed_slice(),
                head: 0,
                len: 0,
                write: 0,
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ring> {
        self.ring.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends a copy of `frame`; `false` (frame not queued) when the queue is full.
    pub(crate) fn push(&self, frame: &[u8], timestamp_ns: u64) -> bool {
        let pushed = self.lock().push(frame, timestamp_ns);
        if pushed {
            self.ready.notify_one();
        }
        pushed
    }

    /// Replaces the contents of `out` with up to `max` frames, oldest first.
    pub(crate) fn take(&self, max: usize, out: &mut FrameBatch) {
        out.clear();
        let mut ring = self.lock();
        while out.len() < max && ring.pop_into(out) {}
    }

    /// Waits until a frame is queued, `wake` is called, or `timeout` passes.
    pub(crate) fn wait(&self, timeout: Duration) {
        let ring = self.lock();
        if ring.len == 0 {
            let _ = self.ready.wait_timeout(ring, timeout);
        }
    }

    /// Wakes a waiter (used to stop the dispatcher promptly).
    pub(crate) fn wake(&self) {
        self.ready.notify_all();
    }

    /// Number of queued frames.
    pub(crate) fn len(&self) -> usize {
        self.lock().len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u32, len: usize) -> Vec<u8> {
        let mut f = vec![(seq % 251) as u8; len.max(4)];
        f[..4].copy_from_slice(&seq.to_be_bytes());
        f.truncate(len);
        f
    }

    fn take_all(q: &FrameQueue, b: &mut FrameBatch) -> Vec<(Vec<u8>, u64, usize)> {
        q.take(usize::MAX, b);
        (0..b.len())
            .map(|i| {
                let (f, ts, w) = b.get(i);
                (f.to_vec(), ts, w)
            })
            .collect()
    }

    #[test]
    fn full_by_frame_count_then_frees_in_order() {
        let q = FrameQueue::with_bytes(4, 1024);
        for i in 0..4 {
            assert!(q.push(&frame(i, 10), u64::from(i)));
        }
        assert!(!q.push(&frame(9, 10), 9), "fifth frame: full");
        assert_eq!(q.len(), 4);
        let mut b = FrameBatch::with_capacity(4, 64);
        q.take(2, &mut b);
        assert_eq!(b.len(), 2);
        assert_eq!(b.get(0), (&frame(0, 10)[..], 0, 10));
        assert_eq!(b.get(1), (&frame(1, 10)[..], 1, 10));
        assert!(q.push(&frame(4, 10), 4));
        let rest = take_all(&q, &mut b);
        let seqs: Vec<u64> = rest.iter().map(|r| r.1).collect();
        assert_eq!(seqs, vec![2, 3, 4]);
        assert_eq!(rest[2].0, frame(4, 10));
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn full_by_bytes_and_wraps_without_splitting_frames() {
        let q = FrameQueue::with_bytes(100, 100);
        let mut b = FrameBatch::with_capacity(8, 256);
        // 30 + 30 + 30 = 90 bytes; a fourth 30-byte frame does not fit.
        for i in 0..3 {
            assert!(q.push(&frame(i, 30), u64::from(i)));
        }
        assert!(!q.push(&frame(3, 30), 3));
        // Free the first two (60 bytes at the front); the next frame wraps to offset 0.
        q.take(2, &mut b);
        assert!(q.push(&frame(3, 30), 3));
        assert!(q.push(&frame(4, 30), 4));
        // Bytes 60..90 are still held by frame 2: nothing else fits.
        assert!(!q.push(&frame(5, 1), 5));
        let got = take_all(&q, &mut b);
        let want: Vec<(Vec<u8>, u64, usize)> =
            (2..5).map(|i| (frame(i, 30), u64::from(i), 30)).collect();
        assert_eq!(got, want);
        // Empty again: the whole ring is usable.
        assert!(q.push(&frame(6, 100), 6));
        assert!(!q.push(&frame(7, 0), 7), "even an empty frame needs a byte");
        assert_eq!(take_all(&q, &mut b), vec![(frame(6, 100), 6, 100)]);
    }

    #[test]
    fn many_rounds_keep_order_and_contents() {
        let q = FrameQueue::with_bytes(7, 333);
        let mut b = FrameBatch::with_capacity(8, 512);
        let (mut next_in, mut next_out) = (0u32, 0u32);
        for round in 0..500u32 {
            // Push until full, with sizes 0..=60, then take a varying number.
            loop {
                let f = frame(next_in, (next_in as usize * 13) % 61);
                if !q.push(&f, u64::from(next_in)) {
                    break;
                }
                next_in += 1;
            }
            q.take((round as usize % 5) + 1, &mut b);
            for i in 0..b.len() {
                let (f, ts, w) = b.get(i);
                let want = frame(next_out, (next_out as usize * 13) % 61);
                assert_eq!((f, ts, w), (&want[..], u64::from(next_out), want.len()));
                next_out += 1;
            }
        }
        assert!(next_out > 500, "frames moved: {next_out}");
        assert_eq!(q.len() as u32, next_in - next_out);
    }

    #[test]
    fn oversized_frame_keeps_its_length_not_its_bytes() {
        let q = FrameQueue::with_bytes(4, 1024);
        let big = vec![7u8; MAX_STORED_FRAME + 1];
        assert!(q.push(&big, 1));
        let mut b = FrameBatch::with_capacity(1, 16);
        q.take(1, &mut b);
        let (f, ts, w) = b.get(0);
        assert_eq!((f.len(), ts, w), (0, 1, MAX_STORED_FRAME + 1));
    }
}
