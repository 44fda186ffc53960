//! Helpers shared by the port and flow integration tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use doca_soft::testing::{DropReason, RxSink};

/// Frames a sink took, and how many of them a flush has published.
#[derive(Default)]
struct Taken {
    frames: Vec<Vec<u8>>,
    published: usize,
}

/// An RX sink that records every frame it accepts. Like the runtime's own sinks, frames
/// become visible at the batch's flush (the port counts a batch before it flushes, so a
/// test that sees a frame also sees it counted), not when pushed.
pub struct RecordingSink {
    frames: Mutex<Taken>,
    arrived: Condvar,
    /// Frames longer than this are refused as TooBig.
    pub max_packet: usize,
    /// After this many frames the sink reports RingFull.
    pub capacity: usize,
    /// Number of flush calls.
    pub flushes: AtomicUsize,
}

impl RecordingSink {
    /// A sink taking frames up to `max_packet` bytes, at most `capacity` of them.
    pub fn new(max_packet: usize, capacity: usize) -> RecordingSink {
        RecordingSink {
            frames: Mutex::new(Taken::default()),
            arrived: Condvar::new(),
            max_packet,
            capacity,
            flushes: AtomicUsize::new(0),
        }
    }

    /// Waits until at least `n` frames arrived or `limit` passed; returns the frames.
    /// (The limit only bounds a failing test; results are asserted on counts.)
    pub fn wait_for(&self, n: usize, limit: Duration) -> Vec<Vec<u8>> {
        let end = Instant::now() + limit;
        let mut f = self.frames.lock().unwrap();
        while f.published < n {
            let now = Instant::now();
            if now >= end {
                break;
            }
            f = self.arrived.wait_timeout(f, end - now).unwrap().0;
        }
        f.frames[..f.published].to_vec()
    }

    /// Frames published so far.
    pub fn frames(&self) -> Vec<Vec<u8>> {
        let f = self.frames.lock().unwrap();
        f.frames[..f.published].to_vec()
    }
}

impl RxSink for RecordingSink {
    fn push(&self, frame: &[u8], _ts: u64) -> Result<(), DropReason> {
        if frame.len() > self.max_packet {
            return Err(DropReason::TooBig);
        }
        let mut f = self.frames.lock().unwrap();
        if f.frames.len() >= self.capacity {
            return Err(DropReason::RingFull);
        }
        f.frames.push(frame.to_vec());
        Ok(())
    }

    fn flush(&self) {
        self.flushes.fetch_add(1, Ordering::Relaxed);
        let mut f = self.frames.lock().unwrap();
        f.published = f.frames.len();
        self.arrived.notify_all();
    }
}

/// Waits until `cond` holds or `limit` passes; returns whether it holds.
pub fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Drops `pair` and asserts that within `limit` nothing of this process (a descriptor, a
/// socket, a thread) still holds either of its namespaces, so that they are gone.
pub fn drop_pair_and_check_namespaces_gone(
    pair: doca_test_support::netns::VethPair,
    limit: Duration,
) {
    use doca_test_support::netns::held_by_this_process;
    let ids = pair.ids().expect("namespace ids");
    drop(pair);
    assert!(
        eventually(limit, || ids
            .iter()
            .all(|&id| held_by_this_process(id).is_ok_and(|h| h.is_empty()))),
        "namespaces removed: still held by {:?}",
        ids.map(held_by_this_process)
    );
}

/// A name unique to this test run (process id and a counter).
pub fn unique(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}{}x{}",
        std::process::id() % 100_000,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether this process may open AF_PACKET sockets (root); prints the skip reason when not.
pub fn af_packet_allowed() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        doca_test_support::skip(doca_test_support::NO_RAW_SOCKETS);
    }
    root
}

/// The AF_PACKET port of `lo`.
pub fn lo_port() -> std::sync::Arc<doca_soft::testing::Port> {
    doca_soft::testing::Port::for_spec(&doca_soft::testing::PortSpec::Linux {
        ifname: "lo".into(),
        ifindex: 0,
    })
    .expect("the lo port")
}

/// A root pipe sending UDP to destination port `dport` to `queues` by RSS over `flags`
/// (anything else matches nothing).
pub fn udp_dst_to(
    dport: u16,
    queues: &[u16],
    flags: u32,
) -> std::sync::Arc<doca_soft::testing::Pipe> {
    use doca_soft::testing::{Entry, Field, FieldMatch, Fwd};
    let root = control_root();
    root.add(Entry {
        matches: vec![FieldMatch {
            field: Field::UdpDst,
            value: u64::from(dport),
            mask: 0xffff,
        }],
        priority: 0,
        fwd: Fwd::Rss {
            queues: queues.to_vec(),
            flags,
        },
        counter: None,
    });
    root
}

/// An empty control pipe named "root" (entries added by the test).
pub fn control_root() -> std::sync::Arc<doca_soft::testing::Pipe> {
    use doca_soft::testing::{Fwd, Pipe, PipeKind};
    std::sync::Arc::new(Pipe::new(
        "root",
        PipeKind::Control,
        Fwd::None,
        Fwd::None,
        false,
    ))
}
