//! The per-port dispatcher thread: read a batch, parse, classify, push to the target
//! queues' sinks, flush the sinks that received frames.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::frame_queue::FrameBatch;
use super::{DropReason, Port, RxDrop, RxSink, RxSource, NO_QUEUE};
use crate::flow::classify::{classify, Verdict};
use crate::flow::parser::parse;

/// Most frames handled between two flushes.
const BATCH: usize = 256;
/// Bytes per frame reserved up front in the batch of injected frames (a standard MTU
/// frame; larger frames grow the batch once).
const BATCH_FRAME_BYTES: usize = 1536;
/// Longest wait for traffic before re-checking the stop flag.
const IDLE_WAIT: Duration = Duration::from_millis(1);

/// The dispatcher's cached view of the port's sinks and Flow root (refreshed when the
/// port's generation counters change, so the hot path takes no lock).
struct View {
    sinks: HashMap<u16, Arc<dyn RxSink>>,
    sinks_gen: u64,
    root: Option<Arc<crate::flow::classify::Pipe>>,
    flow_gen: u64,
    touched: Vec<u16>,
}

impl View {
    fn refresh(&mut self, port: &Port) {
        let g = port.sinks_gen.load(Ordering::Acquire);
        if g != self.sinks_gen {
            self.sinks = port.sinks.read().unwrap_or_else(|e| e.into_inner()).clone();
            self.sinks_gen = g;
        }
        let g = port.flow_gen.load(Ordering::Acquire);
        if g != self.flow_gen {
            self.root = port.flow_root();
            self.flow_gen = g;
        }
    }

    /// Routes one frame and counts the outcome.
    fn handle(&mut self, port: &Port, frame: &[u8], ts: u64, wire_len: usize) {
        let c = &port.counters;
        c.add_received();
        if frame.len() > port.max_frame() || wire_len > frame.len() {
            c.add_drop(DropReason::TooBig);
            return;
        }
        let Ok(pkt) = parse(frame) else {
            c.add_drop(DropReason::Malformed);
            return;
        };
        let queue = match &self.root {
            Some(root) => match classify(root, &pkt, frame.len()) {
                Verdict::Queue(q) => q,
                Verdict::Drop => return c.add_drop(DropReason::ByFlow),
                Verdict::NoMatch => return c.add_drop(DropReason::NoMatch),
            },
            None => match port.default_queue.load(Ordering::Acquire) {
                NO_QUEUE => return c.add_drop(DropReason::NoMatch),
                q => q as u16,
            },
        };
        let Some(sink) = self.sinks.get(&queue) else {
            return c.add_drop(DropReason::NoQueue);
        };
        match sink.push(frame, ts) {
            Ok(()) => c.add_delivered(),
            Err(RxDrop::TooBig) => c.add_drop(DropReason::TooBig),
            Err(RxDrop::RingFull) => c.add_drop(DropReason::RingFull),
            Err(RxDrop::Stopped) => c.add_drop(DropReason::Stopped),
        }
        if !self.touched.contains(&queue) {
            self.touched.push(queue);
        }
    }

    fn flush(&mut self) {
        for q in self.touched.drain(..) {
            if let Some(s) = self.sinks.get(&q) {
                s.flush();
            }
        }
    }
}

/// Body of the dispatcher thread; returns when `stop` is set.
pub(super) fn run(port: Arc<Port>, stop: Arc<AtomicBool>, mut source: Option<Box<dyn RxSource>>) {
    let mut view = View {
        sinks: HashMap::new(),
        sinks_gen: u64::MAX,
        root: None,
        flow_gen: u64::MAX,
        touched: Vec::new(),
    };
    // Reused for every batch: taking injected frames allocates nothing in steady state.
    let mut injected = FrameBatch::with_capacity(BATCH, BATCH * BATCH_FRAME_BYTES);
    while !stop.load(Ordering::Acquire) {
        let waits = source.as_ref().is_some_and(|s| s.waits());
        let guard = port.batch_lock.lock().unwrap_or_else(|e| e.into_inner());
        view.refresh(&port);
        let mut n = 0;
        if let Some(src) = source.as_mut() {
            // Do not block in the backend while injected frames are waiting.
            let timeout = if port.inject.len() > 0 {
                Duration::ZERO
            } else {
                IDLE_WAIT
            };
            n += src.poll(BATCH, timeout, &mut |f, ts, len| {
                view.handle(&port, f, ts, len)
            });
        }
        port.inject.take(BATCH, &mut injected);
        n += injected.len();
        for i in 0..injected.len() {
            let (f, ts, wire_len) = injected.get(i);
            view.handle(&port, f, ts, wire_len);
        }
        injected.clear();
        view.flush();
        drop(guard);
        if n == 0 && !waits {
            port.inject.wait(IDLE_WAIT);
        }
    }
    // Release cached sinks and pipes before the port's last reference may go.
    drop(view);
}
