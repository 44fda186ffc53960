//! Receive lanes: a port's RX path runs on up to [`MAX_LANES`] dispatcher threads, each with
//! its own input (its own AF_PACKET socket in one fanout group, or its own [`FrameQueue`]
//! of an in-memory wire and of `Port::inject_rx`). Socket lanes share frames by the
//! kernel's flow hash (PACKET_FANOUT_HASH); queue lanes by sending thread: each thread
//! that sends on a wire (a TX proxy, a generator) feeds one lane, so what one thread sends
//! stays in order, and threads started together spread evenly over the lanes.
//!
//! How many lanes run: one per registered RX queue, at most [`lane_cap`] (the environment
//! variable `DOCA_SOFT_RX_LANES` when set, else the number of CPUs the process may use).
//! Lanes are added as queues are registered and all stop when the port's last user goes;
//! while the count grows, frames of one flow already queued on the old lane may be
//! overtaken by later ones on the new lane (set queues up before traffic to avoid it).
//! Input queues outlive their lanes, and a sending thread keeps its queue when lanes stop
//! and start again (the spread never shrinks): queue `j` whose lane is not running is
//! drained by lane `j % running` (see [`LaneQueues::strays`]), so nothing is stranded and
//! one thread's frames stay in order across a restart.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::frame_queue::FrameQueue;

/// Most lanes per port.
pub(crate) const MAX_LANES: usize = 64;

/// Frames and bytes of the input queue of each lane but the first: a quarter of lane 0's
/// (`INJECT_QUEUE_FRAMES` frames in 16 MiB), so a lane costs about 4.4 MiB of (lazily
/// mapped) storage; 16384 frames are still over a millisecond of backlog at 10 Mpps.
const EXTRA_LANE_FRAMES: usize = 16384;
const EXTRA_LANE_BYTES: usize = 4 << 20;

/// Environment variable capping the lanes of every port (1..=64).
pub const LANES_ENV: &str = "DOCA_SOFT_RX_LANES";

/// Most lanes a port runs: `DOCA_SOFT_RX_LANES` if set to 1..=64, else the CPUs available
/// to the process (at most `MAX_LANES`). Read once per process.
pub fn lane_cap() -> usize {
    static CAP: OnceLock<usize> = OnceLock::new();
    *CAP.get_or_init(|| {
        let env = std::env::var(LANES_ENV).ok();
        match env.as_deref().map(str::trim).map(str::parse::<usize>) {
            Some(Ok(n)) if (1..=MAX_LANES).contains(&n) => n,
            other => {
                if other.is_some() {
                    sdk_err!(
                        "port",
                        "{LANES_ENV} must be 1..={MAX_LANES}; using the CPU count"
                    );
                }
                std::thread::available_parallelism()
                    .map_or(1, |n| n.get())
                    .min(MAX_LANES)
            }
        }
    })
}

/// The input queues of a port's lanes, for frames that do not come from a socket (a wire's
/// receiving side, `Port::inject_rx`). Eager queues (wires, pcap): queue 0 always exists and
/// more are made as lanes start. Lazy queues (socket-backed ports, whose lanes read their
/// sockets and see queued frames only from `Port::inject_rx`): a queue is made by the first
/// frame pushed to it, so a lane costs no queue storage unless someone injects.
pub(crate) struct LaneQueues {
    queues: [OnceLock<FrameQueue>; MAX_LANES],
    lazy: bool,
    /// Queues frames are spread over (>= 1; never shrinks): queues `0..spread` exist.
    spread: AtomicUsize,
    /// Lanes running (>= 1 for the arithmetic; 1 while none runs).
    running: AtomicUsize,
    /// Queues made so far (`0..made` exist).
    made: AtomicUsize,
    capacity: usize,
}

impl LaneQueues {
    /// Lane 0's queue of `capacity` frames; queues of more lanes are smaller (at most
    /// [`EXTRA_LANE_FRAMES`] frames in [`EXTRA_LANE_BYTES`]).
    pub(crate) fn new(capacity: usize) -> LaneQueues {
        let q = LaneQueues::lazy(capacity);
        q.queue(0);
        LaneQueues { lazy: false, ..q }
    }

    /// Queues made only when a frame is pushed to them (socket-backed ports).
    pub(crate) fn lazy(capacity: usize) -> LaneQueues {
        LaneQueues {
            queues: std::array::from_fn(|_| OnceLock::new()),
            lazy: true,
            spread: AtomicUsize::new(1),
            running: AtomicUsize::new(1),
            made: AtomicUsize::new(0),
            capacity,
        }
    }

    /// Queue of lane `i` if it was made.
    pub(crate) fn get(&self, i: usize) -> Option<&FrameQueue> {
        self.queues[i].get()
    }

    /// Queue of lane `i` (< MAX_LANES), made on first use.
    pub(crate) fn queue(&self, i: usize) -> &FrameQueue {
        let q = self.queues[i].get_or_init(|| match i {
            0 => FrameQueue::new(self.capacity),
            _ => FrameQueue::with_bytes(self.capacity.min(EXTRA_LANE_FRAMES), EXTRA_LANE_BYTES),
        });
        self.made.fetch_max(i + 1, Ordering::Release);
        q
    }

    /// `n` lanes run from now on (0 when they all stopped): frames are spread over at least
    /// `n` queues.
    pub(crate) fn set_running(&self, n: usize) {
        let n = n.min(MAX_LANES);
        if !self.lazy {
            for i in 0..n {
                self.queue(i);
            }
        }
        // Release: a producer that sees the spread sees its queues made.
        self.spread.fetch_max(n.max(1), Ordering::Release);
        self.running.store(n.max(1), Ordering::Release);
    }

    /// Queues that lane `lane` drains besides its own: those without a running lane
    /// (`j >= running`, `j % running == lane`). Empty unless fewer lanes run than before.
    pub(crate) fn strays(&self, lane: usize) -> impl Iterator<Item = &FrameQueue> {
        let running = self.running.load(Ordering::Acquire);
        let made = self.made.load(Ordering::Acquire);
        (lane + running..made)
            .step_by(running)
            .filter_map(|j| self.queues[j].get())
    }

    /// Queues frames are spread over.
    pub(crate) fn spread(&self) -> usize {
        self.spread.load(Ordering::Acquire)
    }

    /// Queues `frame` on the calling thread's lane; `false` when that queue is full.
    pub(crate) fn push(&self, frame: &[u8]) -> bool {
        let n = self.spread();
        let lane = if n > 1 { sender_slot() % n } else { 0 };
        match self.queues[lane].get() {
            Some(q) => q.push(frame),
            // Lazy queues: the first frame makes it (eager ones exist for 0..spread).
            None => self.queue(lane).push(frame),
        }
    }

    /// Frames queued on every lane.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn len(&self) -> usize {
        self.queues
            .iter()
            .filter_map(OnceLock::get)
            .map(FrameQueue::len)
            .sum()
    }

    /// Wakes every lane waiting for frames.
    pub(crate) fn wake_all(&self) {
        for q in self.queues.iter().filter_map(OnceLock::get) {
            q.wake();
        }
    }
}

/// What one lane has done so far (written by the lane once per loop, read by anyone):
/// the trace of a stalled benchmark point shows which lane starved or stopped.
#[repr(align(128))]
#[derive(Default, Debug)]
pub(crate) struct LaneStat {
    frames: AtomicU64,
    batches: AtomicU64,
    loops: AtomicU64,
    last_frame_ns: AtomicU64,
    last_loop_ns: AtomicU64,
}

impl LaneStat {
    /// One loop of the lane that handled `n` frames, at `now_ns` (CLOCK_REALTIME).
    pub(crate) fn record(&self, n: usize, now_ns: u64) {
        self.loops.fetch_add(1, Ordering::Relaxed);
        self.last_loop_ns.store(now_ns, Ordering::Relaxed);
        if n > 0 {
            self.frames.fetch_add(n as u64, Ordering::Relaxed);
            self.batches.fetch_add(1, Ordering::Relaxed);
            self.last_frame_ns.store(now_ns, Ordering::Relaxed);
        }
    }

    pub(crate) fn snapshot(&self, lane: usize, queued: Option<usize>) -> LaneSnapshot {
        LaneSnapshot {
            lane,
            frames: self.frames.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            loops: self.loops.load(Ordering::Relaxed),
            last_frame_ns: self.last_frame_ns.load(Ordering::Relaxed),
            last_loop_ns: self.last_loop_ns.load(Ordering::Relaxed),
            queued,
        }
    }
}

/// A copy of one receive lane's progress counters (see `Port::lane_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneSnapshot {
    /// Lane number.
    pub lane: usize,
    /// Frames the lane handled (from its socket and its input queues), since the port opened.
    pub frames: u64,
    /// Loops that handled at least one frame.
    pub batches: u64,
    /// Loops in all (a lane that stops looping is stuck inside a poll, a lock or a sink).
    pub loops: u64,
    /// CLOCK_REALTIME (ns) of the last loop that handled frames (0: none yet).
    pub last_frame_ns: u64,
    /// CLOCK_REALTIME (ns) of the last loop.
    pub last_loop_ns: u64,
    /// Frames waiting on the lane's input queue (`None`: the lane has no queue).
    pub queued: Option<usize>,
}

/// This thread's sender number: given on a thread's first send, from a process-wide
/// counter (so threads started together take consecutive numbers and spread evenly).
pub(crate) fn sender_slot() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
    }
    SLOT.with(|s| {
        if s.get() == usize::MAX {
            s.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        s.get()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use doca_soft_packet::frames::udp4;

    #[test]
    fn lane_queues_grow_and_keep_a_flow_on_one_lane() {
        let q = LaneQueues::new(64);
        assert_eq!(q.spread(), 1);
        q.set_running(3);
        assert_eq!(q.spread(), 3);
        assert_eq!(q.strays(0).count(), 0, "every queue has its lane");
        let f = udp4([1, 1, 1, 1], [2, 2, 2, 2], 5, 6, b"");
        for _ in 0..5 {
            assert!(q.push(&f));
        }
        let lane = sender_slot() % 3;
        assert_eq!(q.queue(lane).len(), 5);
        assert_eq!(q.len(), 5);
        // All stopped, then one lane: frames keep their queue; lane 0 drains 1 and 2 too.
        q.set_running(0);
        q.set_running(1);
        assert_eq!(q.spread(), 3, "the spread never shrinks");
        assert_eq!(q.strays(0).count(), 2);
        q.set_running(2);
        assert_eq!(q.strays(0).count(), 1, "lane 0: queue 2");
        assert_eq!(q.strays(1).count(), 0);
    }

    #[test]
    fn lazy_queues_are_made_by_the_first_frame_pushed() {
        let q = LaneQueues::lazy(64);
        q.set_running(4);
        assert_eq!(q.spread(), 4);
        assert!(
            (0..4).all(|i| q.get(i).is_none()),
            "lanes of a socket port start without input queues"
        );
        let f = udp4([1, 1, 1, 1], [2, 2, 2, 2], 5, 6, b"");
        assert!(q.push(&f));
        let lane = sender_slot() % 4;
        assert_eq!(q.get(lane).map(FrameQueue::len), Some(1));
        let made = (0..4).filter(|&i| q.get(i).is_some()).count();
        assert_eq!(made, 1, "only the pushed-to lane's queue exists");
    }

    #[test]
    fn lane_stat_counts_frames_batches_and_loops() {
        let s = LaneStat::default();
        s.record(0, 10);
        s.record(5, 20);
        s.record(3, 30);
        s.record(0, 40);
        let snap = s.snapshot(2, Some(7));
        assert_eq!(
            snap,
            LaneSnapshot {
                lane: 2,
                frames: 8,
                batches: 2,
                loops: 4,
                last_frame_ns: 30,
                last_loop_ns: 40,
                queued: Some(7),
            }
        );
    }
}
