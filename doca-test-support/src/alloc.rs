//! A counting global allocator: counts allocations (and bytes) made by every thread while a
//! region is open ([`Region`], [`count`], [`count_all_threads`]), or by one thread while it
//! counts ([`count_this_thread`]), so a test or bench can show that a steady-state path
//! allocates nothing.
//!
//! A test or bench binary installs it with
//! `#[global_allocator] static ALLOC: CountingAlloc = CountingAlloc;`. Regions are
//! process-wide: tests that count all threads run one at a time.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

thread_local! {
    static THREAD_COUNTING: Cell<bool> = const { Cell::new(false) };
    static THREAD_ALLOCS: Cell<u64> = const { Cell::new(0) };
}

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting `alloc`/`realloc` calls while a [`Region`] is open (all
/// threads) or a thread counts its own ([`count_this_thread`]).
pub struct CountingAlloc;

// SAFETY: every call is forwarded unchanged to the system allocator; counting only touches
// atomics and never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded with the caller's layout (GlobalAlloc contract).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator (hence System) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: forwarded unchanged (GlobalAlloc contract).
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn note(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(size as u64, Ordering::Relaxed);
    }
    // Const-initialised thread locals: no allocation; try_with: nothing during teardown.
    let _ = THREAD_COUNTING.try_with(|c| {
        if c.get() {
            let _ = THREAD_ALLOCS.try_with(|a| a.set(a.get() + 1));
        }
    });
}

/// Allocations seen in a region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// alloc, alloc_zeroed and realloc calls.
    pub allocs: u64,
    /// Bytes requested by them.
    pub bytes: u64,
}

/// An open counting region (one at a time per process); [`Region::finish`] closes it.
pub struct Region {
    start: Counts,
}

impl Region {
    /// Starts counting (all threads).
    pub fn start() -> Region {
        let start = snapshot();
        COUNTING.store(true, Ordering::SeqCst);
        Region { start }
    }

    /// Counts since `start` without closing the region.
    pub fn so_far(&self) -> Counts {
        let now = snapshot();
        Counts {
            allocs: now.allocs - self.start.allocs,
            bytes: now.bytes - self.start.bytes,
        }
    }

    /// Stops counting and returns what the region saw.
    pub fn finish(self) -> Counts {
        COUNTING.store(false, Ordering::SeqCst);
        self.so_far()
    }
}

fn snapshot() -> Counts {
    Counts {
        allocs: ALLOCS.load(Ordering::SeqCst),
        bytes: BYTES.load(Ordering::SeqCst),
    }
}

/// Runs `f` inside a region and returns its result with the counts.
pub fn count<R>(f: impl FnOnce() -> R) -> (R, Counts) {
    let r = Region::start();
    let out = f();
    (out, r.finish())
}

/// Allocations made by every thread while `f` runs.
pub fn count_all_threads(f: impl FnOnce()) -> u64 {
    count(f).1.allocs
}

/// Allocations made by this thread while `f` runs (other threads' are not counted).
pub fn count_this_thread(f: impl FnOnce()) -> u64 {
    let before = THREAD_ALLOCS.with(Cell::get);
    THREAD_COUNTING.with(|c| c.set(true));
    f();
    THREAD_COUNTING.with(|c| c.set(false));
    THREAD_ALLOCS.with(Cell::get) - before
}
