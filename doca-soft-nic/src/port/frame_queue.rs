//! A bounded queue of frames with a condition variable: one receive lane's input on an
//! in-memory wire and for `Port::inject_rx`.
//!
//! All storage is allocated once, when the queue is made: a byte ring holding the frames
//! back to back (a frame never wraps: when it does not fit before the end it starts again at
//! offset 0) and a ring of descriptors. Pushing copies into the byte ring under the lock.
//! The consumer ([`FrameQueue::drain`]) takes the descriptors of a batch under the lock,
//! reads the frames in place without it (their bytes stay reserved until the batch is
//! released), then releases the batch: one lock round per batch, no copy on the way out,
//! and the producers are never held up by the consumer's work.
//!
//! A producer wakes the consumer only when it sleeps (a flag under the lock, cleared by the
//! first producer that wakes it), so a busy queue costs no system call per frame.

use std::cell::UnsafeCell;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Bytes of frame storage per queue. Zero-filled pages are mapped lazily by the OS, so an
/// idle queue costs address space, not memory.
const RING_BYTES: usize = 16 << 20;

/// Frames longer than this are queued without their bytes, only their length: the
/// dispatcher counts them as too big, as it would the whole frame.
const MAX_STORED_FRAME: usize = 64 << 10;

/// Where one queued frame lies in the byte ring.
#[derive(Clone, Copy, Default)]
pub(crate) struct Desc {
    start: usize,
    stored: usize,
    orig_len: usize,
}

/// Queue state, guarded by the queue's lock.
struct State {
    descs: Box<[Desc]>,
    /// Index in `descs` of the oldest frame (taken by a drain in progress or not).
    head: usize,
    /// Number of queued frames, those of a drain in progress included.
    len: usize,
    /// Byte offset where the next frame would go.
    write: usize,
    /// The consumer sleeps in [`FrameQueue::wait`]: a push must notify.
    waiting: bool,
}

impl State {
    /// Where a frame reserving `need` bytes goes, if it fits now.
    ///
    /// Each frame reserves at least one byte, so a non-empty ring never has `write == read`
    /// unless its bytes are all taken.
    fn place(&self, need: usize, cap: usize) -> Option<usize> {
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
}

/// Frames waiting for a receive lane, oldest first. Any number of producers; one consumer
/// at a time (drains are serialized by their own lock).
pub(crate) struct FrameQueue {
    state: Mutex<State>,
    ready: Condvar,
    /// Serializes drains (a lane owns its queue; tests may drain from another thread).
    drain: Mutex<()>,
    /// The byte ring. Written by producers under `state`'s lock, only in bytes that no
    /// queued frame reserves; read by the one drain in progress, only in bytes reserved by
    /// the frames it took, which no producer writes before the drain releases them.
    bytes: Box<[UnsafeCell<u8>]>,
}

// SAFETY: `bytes` is shared under the reservation protocol documented on the field (writes
// under the lock to unreserved bytes; reads by the single drain to bytes it holds reserved);
// everything else is behind a Mutex.
unsafe impl Sync for FrameQueue {}
// SAFETY: as above; the queue owns all its storage.
unsafe impl Send for FrameQueue {}

impl FrameQueue {
    /// An empty queue holding at most `capacity` frames (and at most [`RING_BYTES`] bytes
    /// of them).
    pub(crate) fn new(capacity: usize) -> FrameQueue {
        FrameQueue::with_bytes(capacity, RING_BYTES)
    }

    /// An empty queue of at most `capacity` frames in `bytes` bytes of storage.
    pub(crate) fn with_bytes(capacity: usize, bytes: usize) -> FrameQueue {
        // Zeroed allocation: the OS maps the pages on first use.
        let raw: Box<[u8]> = vec![0u8; bytes.max(1)].into_boxed_slice();
        let len = raw.len();
        let ptr = Box::into_raw(raw).cast::<UnsafeCell<u8>>();
        // SAFETY: UnsafeCell<u8> has the layout of u8; the pointer and length come from the
        // box just released, so this rebuilds the same allocation with the cell type.
        let bytes = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) };
        FrameQueue {
            state: Mutex::new(State {
                descs: vec![Desc::default(); capacity.max(1)].into_boxed_slice(),
                head: 0,
                len: 0,
                write: 0,
                waiting: false,
            }),
            ready: Condvar::new(),
            drain: Mutex::new(()),
            bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends a copy of `frame`; `false` (frame not queued) when the queue is full.
    pub(crate) fn push(&self, frame: &[u8]) -> bool {
        let mut st = self.lock();
        if st.len == st.descs.len() {
            return false;
        }
        let stored = if frame.len() > MAX_STORED_FRAME {
            0
        } else {
            frame.len()
        };
        let need = stored.max(1);
        let Some(start) = st.place(need, self.bytes.len()) else {
            return false;
        };
        let dst = self.bytes[start..start + stored].as_ptr();
        // SAFETY: [start, start+stored) is inside the ring and reserved by no queued frame
        // (place), so no drain reads it; producers are serialized by the lock we hold.
        unsafe { std::ptr::copy_nonoverlapping(frame.as_ptr(), UnsafeCell::raw_get(dst), stored) };
        let tail = (st.head + st.len) % st.descs.len();
        st.descs[tail] = Desc {
            start,
            stored,
            orig_len: frame.len(),
        };
        st.len += 1;
        st.write = start + need;
        // Wake the consumer once: later pushes before it runs need not (no syscall per
        // frame while it is being scheduled).
        let wake = std::mem::take(&mut st.waiting);
        drop(st);
        if wake {
            self.ready.notify_one();
        }
        true
    }

    /// Hands up to `max` of the oldest frames to `f(bytes, orig_len)` (an original length
    /// above `bytes.len()` means the frame was too big to store), then frees them.
    /// `scratch` holds the batch's descriptors (reused: no allocation once it has held the
    /// largest batch). Returns how many frames were handed over.
    pub(crate) fn drain(
        &self,
        max: usize,
        scratch: &mut Vec<Desc>,
        f: &mut dyn FnMut(&[u8], usize),
    ) -> usize {
        let _one = self.drain.lock().unwrap_or_else(|e| e.into_inner());
        scratch.clear();
        {
            let st = self.lock();
            let n = st.len.min(max);
            let cap = st.descs.len();
            let first = (st.head..cap).take(n);
            let wrapped = 0..n - first.len();
            scratch.extend(first.chain(wrapped).map(|i| st.descs[i]));
        }
        for d in scratch.iter() {
            let cells = &self.bytes[d.start..d.start + d.stored];
            // SAFETY: the frame's bytes stay reserved (and unwritten) until the release
            // below; we are the only drain (lock above); UnsafeCell<u8> has u8's layout.
            let frame = unsafe { std::slice::from_raw_parts(cells.as_ptr().cast(), d.stored) };
            f(frame, d.orig_len);
        }
        let n = scratch.len();
        if n > 0 {
            let mut st = self.lock();
            st.head = (st.head + n) % st.descs.len();
            st.len -= n;
            if st.len == 0 {
                // Start again at the front: fewer wraps, and hot pages stay hot.
                st.head = 0;
                st.write = 0;
            }
        }
        n
    }

    /// Waits until a frame is queued, `wake` is called, or `timeout` passes.
    pub(crate) fn wait(&self, timeout: Duration) {
        let mut st = self.lock();
        if st.len == 0 {
            st.waiting = true;
            let (mut st, _) = self
                .ready
                .wait_timeout(st, timeout)
                .unwrap_or_else(|e| e.into_inner());
            st.waiting = false;
        }
    }

    /// Wakes a waiter (used to stop a lane promptly).
    pub(crate) fn wake(&self) {
        self.ready.notify_all();
    }

    /// Number of queued frames (a drain in progress included).
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

    fn take(q: &FrameQueue, max: usize) -> Vec<(Vec<u8>, usize)> {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        q.drain(max, &mut scratch, &mut |f, w| out.push((f.to_vec(), w)));
        out
    }

    #[test]
    fn full_by_frame_count_then_frees_in_order() {
        let q = FrameQueue::with_bytes(4, 1024);
        for i in 0..4 {
            assert!(q.push(&frame(i, 10)));
        }
        assert!(!q.push(&frame(9, 10)), "fifth frame: full");
        assert_eq!(q.len(), 4);
        let got = take(&q, 2);
        assert_eq!(got, vec![(frame(0, 10), 10), (frame(1, 10), 10)]);
        assert!(q.push(&frame(4, 10)));
        let rest = take(&q, usize::MAX);
        let want: Vec<_> = [2, 3, 4].iter().map(|&i| (frame(i, 10), 10)).collect();
        assert_eq!(rest, want);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn full_by_bytes_and_wraps_without_splitting_frames() {
        let q = FrameQueue::with_bytes(100, 100);
        // 30 + 30 + 30 = 90 bytes; a fourth 30-byte frame does not fit.
        for i in 0..3 {
            assert!(q.push(&frame(i, 30)));
        }
        assert!(!q.push(&frame(3, 30)));
        // Free the first two (60 bytes at the front); the next frame wraps to offset 0.
        assert_eq!(take(&q, 2).len(), 2);
        assert!(q.push(&frame(3, 30)));
        assert!(q.push(&frame(4, 30)));
        // Bytes 60..90 are still held by frame 2: nothing else fits.
        assert!(!q.push(&frame(5, 1)));
        let want: Vec<_> = (2..5).map(|i| (frame(i, 30), 30)).collect();
        assert_eq!(take(&q, usize::MAX), want);
        // Empty again: the whole ring is usable.
        assert!(q.push(&frame(6, 100)));
        assert!(!q.push(&frame(7, 0)), "even an empty frame needs a byte");
        assert_eq!(take(&q, usize::MAX), vec![(frame(6, 100), 100)]);
    }

    #[test]
    fn frames_being_drained_stay_reserved() {
        let q = FrameQueue::with_bytes(8, 64);
        assert!(q.push(&frame(0, 32)));
        assert!(q.push(&frame(1, 32)));
        let mut scratch = Vec::new();
        let mut seen = Vec::new();
        q.drain(8, &mut scratch, &mut |f, _| {
            // While the batch is out, its bytes are not free: a push must not reuse them.
            assert!(!q.push(&frame(9, 32)), "ring bytes still held by the drain");
            seen.push(f.to_vec());
        });
        assert_eq!(seen, vec![frame(0, 32), frame(1, 32)]);
        assert!(q.push(&frame(2, 64)), "released: the whole ring is free");
    }

    #[test]
    fn many_rounds_keep_order_and_contents() {
        let q = FrameQueue::with_bytes(7, 333);
        let (mut next_in, mut next_out) = (0u32, 0u32);
        for round in 0..500u32 {
            // Push until full, with sizes 0..=60, then take a varying number.
            loop {
                let f = frame(next_in, (next_in as usize * 13) % 61);
                if !q.push(&f) {
                    break;
                }
                next_in += 1;
            }
            for (f, w) in take(&q, (round as usize % 5) + 1) {
                let want = frame(next_out, (next_out as usize * 13) % 61);
                assert_eq!((f, w), (want.clone(), want.len()));
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
        assert!(q.push(&big));
        let got = take(&q, 1);
        assert_eq!((got[0].0.len(), got[0].1), (0, MAX_STORED_FRAME + 1));
    }
}
