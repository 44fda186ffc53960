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

use std::sync::atomic::{AtomicUsize, Ordering};
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
/// to the process (at most [`MAX_LANES`]). Read once per process.
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
/// receiving side, `Port::inject_rx`). Queue 0 always exists; more are made as lanes start.
pub(crate) struct LaneQueues {
    queues: [OnceLock<FrameQueue>; MAX_LANES],
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
        let q = LaneQueues {
            queues: std::array::from_fn(|_| OnceLock::new()),
            spread: AtomicUsize::new(1),
            running: AtomicUsize::new(1),
            made: AtomicUsize::new(0),
            capacity,
        };
        q.queue(0);
        q
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
        for i in 0..n {
            self.queue(i);
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
            None => false, // unreachable: queues 0..spread exist (set_running)
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
    use crate::testing::frames::udp4;

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
}
