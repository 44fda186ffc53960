//! The in-memory wire and `Port::inject_rx` carry frames to an RX sink without a heap
//! allocation per frame once traffic is flowing: a counting global allocator (every thread
//! of this test binary, the dispatcher included) sees none while thousands of frames move.
//!
//! One test only in this binary, so no other test allocates while the region is open.

mod support;

use doca_test_support::alloc::{count_all_threads as allocations_during, CountingAlloc};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use doca_soft::testing::frames::udp4;
use doca_soft::testing::{DropReason, Port, PortSpec, RxSink};
use support::unique;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Distinct frames the senders cycle through (built before counting starts).
const PATTERNS: u32 = 1024;

/// A sink that checks each frame is the next one in sequence, without allocating.
struct SequenceSink {
    frames: Vec<Vec<u8>>,
    next: AtomicU64,
    out_of_order: AtomicU64,
}

impl RxSink for SequenceSink {
    fn push(&self, frame: &[u8], _ts: u64) -> Result<(), DropReason> {
        let n = self.next.fetch_add(1, Ordering::AcqRel);
        if frame != &self.frames[(n % u64::from(PATTERNS)) as usize][..] {
            self.out_of_order.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn flush(&self) {}
}

/// Sends frames `from..to` with `send`, never more than 1024 ahead of the sink (retrying a
/// full queue), then waits until the sink has them all.
fn run(sink: &SequenceSink, from: u64, to: u64, send: &dyn Fn(&[u8]) -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(30);
    for seq in from..to {
        let f = &sink.frames[(seq % u64::from(PATTERNS)) as usize];
        while seq.saturating_sub(sink.next.load(Ordering::Acquire)) >= 1024 || !send(f) {
            if Instant::now() > end {
                return false;
            }
            std::thread::yield_now();
        }
    }
    while sink.next.load(Ordering::Acquire) < to {
        if Instant::now() > end {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

#[test]
fn wire_and_inject_rx_do_not_allocate_per_frame() {
    let name = unique("alloc");
    let spec = |side| PortSpec::Wire {
        name: name.clone(),
        side,
    };
    let (tx, rx) = (
        Port::for_spec(&spec(0)).unwrap(),
        Port::for_spec(&spec(1)).unwrap(),
    );
    let sink = Arc::new(SequenceSink {
        frames: (0..PATTERNS)
            .map(|i| udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000, 2000, &i.to_be_bytes()))
            .collect(),
        next: AtomicU64::new(0),
        out_of_order: AtomicU64::new(0),
    });
    rx.register_rx_queue(0, sink.clone()).unwrap();
    rx.set_default_queue(Some(0));
    let over_wire = |f: &[u8]| tx.send(f).is_ok();
    let injected = |f: &[u8]| rx.inject_rx(f).is_ok();

    // Warm-up: the dispatcher's reused buffers reach their working size.
    assert!(run(&sink, 0, 4096, &over_wire), "warm-up frames arrived");
    const FRAMES: u64 = 20_000;
    let mut arrived = (false, false);
    let allocs = allocations_during(|| {
        arrived.0 = run(&sink, 4096, 4096 + FRAMES, &over_wire);
        arrived.1 = run(&sink, 4096 + FRAMES, 4096 + 2 * FRAMES, &injected);
    });
    assert_eq!(arrived, (true, true), "every frame arrived");
    assert_eq!(
        sink.out_of_order.load(Ordering::Relaxed),
        0,
        "frames in order"
    );
    assert_eq!(
        allocs,
        0,
        "heap allocations while {} frames moved",
        2 * FRAMES
    );
    let c = rx.counters();
    assert_eq!(c.delivered, 4096 + 2 * FRAMES);
    assert_eq!(c.dropped(), 0);
    rx.unregister_rx_queue(0);
}
