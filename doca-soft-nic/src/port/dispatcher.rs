//! One receive lane's dispatcher thread: read a batch (from the lane's socket and its
//! input queue), parse, classify, push to the target queues' sinks, count, flush the sinks
//! that received frames. A port runs one of these per lane (see `lanes`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::counters::LaneTally;
use super::frame_queue::Desc;
use super::{now_ns, DropReason, Port, RxSink, RxSource, NO_QUEUE};
use doca_soft_packet::actions::Scratch;
use doca_soft_packet::classify::{classify, Pipe, Verdict};
use doca_soft_packet::parser::parse;

/// Most frames handled between two flushes.
const BATCH: usize = 256;
/// Longest wait for traffic before re-checking the stop flag.
const IDLE_WAIT: Duration = Duration::from_millis(1);
/// Empty polls (each followed by a yield) before a lane without a socket sleeps.
const IDLE_POLLS: u32 = 16;

/// The lane's cached view of the port's sinks and Flow root (refreshed when the port's
/// generation counters change, so the hot path takes no lock). Sinks are indexed by queue
/// id (a vector: no hashing per frame).
struct View {
    sinks: Vec<Option<Arc<dyn RxSink>>>,
    sinks_gen: u64,
    root: Option<Arc<Pipe>>,
    flow_gen: u64,
    max_frame: usize,
    touched: Vec<u16>,
    tally: LaneTally,
    /// Where Flow actions rewrite a frame (reused: no allocation per frame).
    scratch: Scratch,
}

impl View {
    fn refresh(&mut self, port: &Port) {
        let g = port.sinks_gen.load(Ordering::Acquire);
        if g != self.sinks_gen {
            let map = port.sinks.read().unwrap_or_else(|e| e.into_inner());
            let len = map.keys().max().map_or(0, |&k| usize::from(k) + 1);
            self.sinks.clear();
            self.sinks.resize(len, None);
            for (&q, s) in map.iter() {
                self.sinks[usize::from(q)] = Some(s.clone());
            }
            self.sinks_gen = g;
        }
        let g = port.flow_gen.load(Ordering::Acquire);
        if g != self.flow_gen {
            self.root = port.flow_root();
            self.flow_gen = g;
        }
    }

    /// Routes one frame and counts the outcome.
    fn handle(&mut self, port: &Port, frame: &[u8], ts: u64, orig_len: usize) {
        let c = &mut self.tally;
        c.received();
        if frame.len() > self.max_frame || orig_len > self.max_frame {
            return c.dropped(DropReason::TooBig);
        }
        if orig_len > frame.len() {
            // A frame that would fit but was only partly captured (snap length).
            return c.dropped(DropReason::Truncated);
        }
        let Ok(pkt) = parse(frame) else {
            return c.dropped(DropReason::Malformed);
        };
        self.scratch.reset();
        let queue = match &self.root {
            Some(root) => match classify(root, frame, &pkt, &mut self.scratch, ts) {
                Verdict::Queue(q) => q,
                Verdict::Drop => return c.dropped(DropReason::ByFlow),
                Verdict::NoMatch => return c.dropped(DropReason::NoMatch),
                // A port forward: sent out of that port, counted as delivered.
                Verdict::Port(out) => {
                    let f = if self.scratch.active {
                        &self.scratch.buf[..]
                    } else {
                        frame
                    };
                    return if out.send_frame(f) {
                        c.delivered()
                    } else {
                        c.dropped(DropReason::ByFlow)
                    };
                }
            },
            None => match port.default_queue.load(Ordering::Relaxed) {
                NO_QUEUE => return c.dropped(DropReason::NoMatch),
                q => q as u16,
            },
        };
        let Some(Some(sink)) = self.sinks.get(usize::from(queue)) else {
            return c.dropped(DropReason::NoQueue);
        };
        let frame = if self.scratch.active {
            &self.scratch.buf[..]
        } else {
            frame
        };
        match sink.push(frame, ts) {
            Ok(()) => c.delivered(),
            Err(why) => c.dropped(why),
        }
        if !self.touched.contains(&queue) {
            self.touched.push(queue);
        }
    }

    /// End of a batch: counters first (whoever sees a published frame sees it counted),
    /// then the sinks publish.
    fn flush(&mut self, port: &Port) {
        port.counters.add_tally(&mut self.tally);
        for q in self.touched.drain(..) {
            if let Some(Some(s)) = self.sinks.get(usize::from(q)) {
                s.flush();
            }
        }
    }
}

/// Body of lane `lane`'s thread; returns when `stop` is set.
pub(super) fn run(
    port: Arc<Port>,
    lane: usize,
    stop: Arc<AtomicBool>,
    mut source: Option<Box<dyn RxSource>>,
) {
    let mut view = View {
        sinks: Vec::new(),
        sinks_gen: u64::MAX,
        root: None,
        flow_gen: u64::MAX,
        max_frame: port.max_frame(),
        touched: Vec::new(),
        tally: LaneTally::default(),
        scratch: Scratch::default(),
    };
    let stat = &port.lane_stats[lane];
    // Reused for every batch: draining allocates nothing in steady state.
    let mut descs: Vec<Desc> = Vec::with_capacity(BATCH);
    let waits = source.as_ref().is_some_and(|s| s.waits());
    let mut idle = 0u32;
    while !stop.load(Ordering::Acquire) {
        let guard = port.batch_locks[lane]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        view.refresh(&port);
        let mut n = 0;
        // Made on first use on socket-backed ports (only `Port::inject_rx` feeds it there).
        let input = port.inject.get(lane);
        if let Some(src) = source.as_mut() {
            // Do not block in the backend while queued frames are waiting.
            let timeout = if input.is_some_and(|q| q.len() > 0) {
                Duration::ZERO
            } else {
                IDLE_WAIT
            };
            n += src.poll(BATCH, timeout, &mut |f, ts, len| {
                view.handle(&port, f, ts, len)
            });
        }
        // Queued frames arrive now (one clock read per batch, not per frame).
        let ts = now_ns();
        if let Some(input) = input {
            n += input.drain(BATCH, &mut descs, &mut |f, len| {
                view.handle(&port, f, ts, len)
            });
        }
        for q in port.inject.strays(lane) {
            n += q.drain(BATCH, &mut descs, &mut |f, len| {
                view.handle(&port, f, ts, len)
            });
        }
        view.flush(&port);
        drop(guard);
        stat.record(n, ts);
        if port.unregistering.load(Ordering::Acquire) != 0 {
            // Someone waits for this lane's lock (Port::unregister_rx_queue): let it in
            // before the next batch takes the lock again.
            std::thread::sleep(Duration::from_micros(200));
        }
        if n > 0 {
            idle = 0;
        } else if !waits {
            // Poll a little before sleeping: a sleeping lane costs the next sender a
            // wake-up system call and the frame a scheduling delay.
            idle += 1;
            if idle < IDLE_POLLS {
                std::thread::yield_now();
            } else if let Some(input) = input {
                input.wait(IDLE_WAIT);
            } else {
                std::thread::sleep(IDLE_WAIT);
            }
        }
    }
    // Release cached sinks and pipes before the port's last reference may go.
    drop(view);
}
