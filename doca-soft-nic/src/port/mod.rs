//! Soft NIC ports: one [`Port`] per opened device, shared by its RX/TX queues and its DOCA
//! Flow port.
//!
//! A port has a backend that moves frames (AF_PACKET on a Linux interface, AF_XDP on one
//! named `xdp:IFACE`, a pcap file pair, or one side of an in-memory wire) and, while it has users, receive lanes: dispatcher
//! threads that read frames, parse and classify them with the port's Flow pipes and hand
//! each one to the [`RxSink`] of its target queue id. One lane per registered RX queue, at
//! most [`lane_cap`] (`DOCA_SOFT_RX_LANES`); see `lanes`. Every frame is counted: delivered,
//! or dropped with a reason ([`DropReason`]).

mod af_packet;
mod capture;
mod counters;
mod dispatcher;
mod frame_queue;
mod lanes;
mod pcap;
mod spec;
mod wire;
mod xdp;
mod xdp_bpf;
mod xdp_ring;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use once_cell::sync::Lazy;

pub(crate) use counters::PortCounters;
pub use counters::{DropReason, PortCountersSnapshot};
#[cfg(any(test, feature = "testing"))]
pub use lanes::LANES_ENV;
pub(crate) use lanes::MAX_LANES;
pub use lanes::{lane_cap, LaneSnapshot};

use crate::error::{DocaError, DocaResult};
use doca_soft_packet::classify::Pipe;
use lanes::{LaneQueues, LaneStat};
pub use spec::PortSpec;

/// An RX queue as the port's dispatcher sees it. Called on the receive lanes' threads:
/// several lanes may call `push` and `flush` of one sink at the same time.
pub trait RxSink: Send + Sync {
    /// One frame classified to this queue. Returns `Err(reason)` when the queue drops it
    /// (`TooBig`, `RingFull` or `Stopped`); the port counts the drop.
    fn push(&self, frame: &[u8], timestamp_ns: u64) -> Result<(), DropReason>;
    /// End of a lane's batch: publish the frames staged so far (by any lane).
    fn flush(&self);
}

/// Sends `frames` one at a time with `send`, in order: how many went out (a prefix of
/// `frames`) and the error that stopped the rest, if any (the frame at that position
/// failed; the ones after it were not tried). The default `send_batch` of ports and TX
/// queue outputs.
pub(crate) fn send_each(
    frames: &[&[u8]],
    send: impl Fn(&[u8]) -> DocaResult<()>,
) -> (usize, DocaResult<()>) {
    for (i, f) in frames.iter().enumerate() {
        if let Err(e) = send(f) {
            return (i, Err(e));
        }
    }
    (frames.len(), Ok(()))
}

/// Where a port's frames come from and go to.
pub(crate) trait Backend: Send + Sync {
    /// Sends one frame out of the port.
    fn send(&self, frame: &[u8]) -> DocaResult<()>;
    /// Sends several frames; returns how many went out (in order) and the error
    /// that stopped the rest, if any.
    fn send_batch(&self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        send_each(frames, |f| self.send(f))
    }
    /// Largest frame (L2 header included) the port carries.
    fn max_frame(&self) -> usize;
    /// Opens the receive side of lane `lane`; called when the lane starts (lane 0 first,
    /// then in order). `None`: that lane's frames arrive only through its input queue.
    fn open_rx(&self, lane: usize) -> DocaResult<Option<Box<dyn RxSource>>>;
    /// The port is ready for traffic (a replaying backend starts then).
    fn arm(&self) {}
    /// Frames the kernel dropped before any lane saw them, where the backend can tell.
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    fn kernel_drops(&self) -> Option<u64> {
        None
    }
}

/// The receive side of a backend for one lane, owned by that lane's thread.
pub(crate) trait RxSource: Send {
    /// Reads about `max` frames, waiting at most `timeout` for the first one if
    /// [`RxSource::waits`]; calls `f(frame, timestamp_ns, orig_len)` for each (an original
    /// length above `frame.len()` means the frame was truncated on capture). Returns how
    /// many were read.
    fn poll(
        &mut self,
        max: usize,
        timeout: Duration,
        f: &mut dyn FnMut(&[u8], u64, usize),
    ) -> usize;
    /// Whether `poll` blocks waiting for frames (else the dispatcher sleeps on its inject
    /// queue between polls).
    fn waits(&self) -> bool;
}

/// Capacity (frames) of a port's inject queue and of each direction of a wire.
pub const INJECT_QUEUE_FRAMES: usize = 65536;

/// Queue id value meaning "no default queue".
const NO_QUEUE: u32 = u32::MAX;

struct Users {
    count: usize,
    stop: Arc<AtomicBool>,
    /// One per running lane, lane i at index i.
    lanes: Vec<JoinHandle<()>>,
}

/// One per opened device (shared by every queue and the DOCA Flow port on it).
pub struct Port {
    name: String,
    /// What carries the frames (`Port::backend_kind`).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    kind: String,
    backend: Box<dyn Backend>,
    max_frame: usize,
    /// The lanes' input queues (a wire's receiving side is this port's inject queues).
    inject: Arc<LaneQueues>,
    sinks: RwLock<HashMap<u16, Arc<dyn RxSink>>>,
    sinks_gen: AtomicU64,
    /// Lock `i` is held by lane `i` while it processes a batch: `unregister_rx_queue` takes
    /// them all so that no call into a removed sink is in flight when it returns.
    batch_locks: [Mutex<()>; MAX_LANES],
    /// Threads waiting in [`Port::unregister_rx_queue`] for the batch locks. A lane that
    /// polls a socket takes its lock again right after releasing it, and std's mutex is
    /// not fair: without this, a waiter could starve for as long as the port is idle (seen
    /// as a queue stop taking 50 s or never ending). Lanes step aside while it is non-zero.
    unregistering: AtomicUsize,
    /// Progress of each lane (lane i at index i), for traces of stalls.
    lane_stats: [LaneStat; MAX_LANES],
    flow_root: RwLock<Option<Arc<Pipe>>>,
    flow_gen: AtomicU64,
    default_queue: AtomicU32,
    counters: PortCounters,
    users: Mutex<Users>,
    me: Weak<Port>,
}

/// Where a port is open: (network namespace of [`netns_of`], [`port_key`]).
type PortKey = (u64, String);

/// Open ports.
static PORTS: Lazy<Mutex<HashMap<PortKey, Weak<Port>>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// The network namespace a Linux interface name is looked up in: the calling thread's,
/// where the port's sockets are made. One process may hold ports of the same interface
/// name in two namespaces (a test's two ends, or a tool that enters a namespace per
/// thread); they are different ports. 0 for backends that are not Linux interfaces, and
/// where `/proc` is unreadable (then all threads share one namespace as far as we know).
fn netns_of(spec: &PortSpec) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    match spec {
        PortSpec::Linux { .. } | PortSpec::Xdp { .. } => {
            std::fs::metadata("/proc/thread-self/ns/net").map_or(0, |m| m.ino())
        }
        PortSpec::Pcap { .. } | PortSpec::Wire { .. } => 0,
    }
}

fn port_key(spec: &PortSpec) -> String {
    match spec {
        PortSpec::Linux { ifname, .. } => format!("linux:{ifname}"),
        PortSpec::Pcap { input, output } => {
            format!("pcap:{},{}", input.display(), output.display())
        }
        PortSpec::Wire { name, side } => format!("wire:{name}{side}"),
        PortSpec::Xdp {
            ifname,
            native,
            zerocopy,
        } => {
            let opt = match (native, zerocopy) {
                (_, true) => ",zerocopy",
                (true, false) => ",native",
                _ => "",
            };
            format!("xdp:{ifname}{opt}")
        }
    }
}

impl Port {
    /// The port of a backend description (a device's `spec`), opened on first use; one
    /// per backend while any user holds it.
    pub fn for_spec(spec: &PortSpec) -> DocaResult<Arc<Port>> {
        let key = (netns_of(spec), port_key(spec));
        let mut ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = ports.get(&key).and_then(Weak::upgrade) {
            return Ok(p);
        }
        let mut kind = "af_packet".to_string();
        let (backend, inject): (Box<dyn Backend>, Arc<LaneQueues>) = match spec {
            PortSpec::Linux { ifname, ifindex } => (
                Box::new(af_packet::AfPacket::open(ifname, *ifindex)?),
                // Lanes read their sockets: input queues only when a frame is injected.
                Arc::new(LaneQueues::lazy(INJECT_QUEUE_FRAMES)),
            ),
            PortSpec::Xdp {
                ifname,
                native,
                zerocopy,
            } => {
                let (b, k) = open_xdp(ifname, *native, *zerocopy)?;
                kind = k;
                (b, Arc::new(LaneQueues::lazy(INJECT_QUEUE_FRAMES)))
            }
            PortSpec::Pcap { input, output } => (
                {
                    kind = "pcap".into();
                    Box::new(pcap::PcapPort::open(input, output)?)
                },
                Arc::new(LaneQueues::new(INJECT_QUEUE_FRAMES)),
            ),
            PortSpec::Wire { name, side } => {
                kind = "wire".into();
                let end = wire::WireEnd::attach(name, *side)?;
                let rx = end.rx_queue();
                (Box::new(end), rx)
            }
        };
        let port = Arc::new_cyclic(|me| Port {
            name: key.1.clone(),
            kind,
            max_frame: backend.max_frame(),
            backend,
            inject,
            sinks: RwLock::new(HashMap::new()),
            sinks_gen: AtomicU64::new(0),
            batch_locks: std::array::from_fn(|_| Mutex::new(())),
            unregistering: AtomicUsize::new(0),
            lane_stats: std::array::from_fn(|_| LaneStat::default()),
            flow_root: RwLock::new(None),
            flow_gen: AtomicU64::new(0),
            default_queue: AtomicU32::new(NO_QUEUE),
            counters: PortCounters::default(),
            users: Mutex::new(Users {
                count: 0,
                stop: Arc::new(AtomicBool::new(false)),
                lanes: Vec::new(),
            }),
            me: me.clone(),
        });
        ports.retain(|_, w| w.strong_count() > 0);
        ports.insert(key, Arc::downgrade(&port));
        Ok(port)
    }

    /// The port of a device if it is open now (never opens one).
    pub fn existing(spec: &PortSpec) -> Option<Arc<Port>> {
        let ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
        ports
            .get(&(netns_of(spec), port_key(spec)))
            .and_then(Weak::upgrade)
    }

    /// Name of the port (backend kind and address).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What carries the port's frames: `af_packet`, `pcap`, `wire`, or for an AF_XDP port
    /// its mode (`af_xdp copy generic mode, 1 queue`). An `xdp:` port that fell back to
    /// AF_PACKET says `af_packet`.
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub fn backend_kind(&self) -> &str {
        &self.kind
    }

    /// Registers the sink of RX queue `queue_id`; IN_USE if the id is taken. Starts the
    /// first receive lane if this is the port's first user, and one more lane per queue up
    /// to [`lane_cap`].
    pub fn register_rx_queue(&self, queue_id: u16, sink: Arc<dyn RxSink>) -> DocaResult<()> {
        {
            let mut sinks = self.sinks.write().unwrap_or_else(|e| e.into_inner());
            if sinks.contains_key(&queue_id) {
                return Err(DocaError::IN_USE);
            }
            sinks.insert(queue_id, sink);
            self.sinks_gen.fetch_add(1, Ordering::Release);
        }
        if let Err(e) = self.acquire() {
            self.remove_sink(queue_id);
            return Err(e);
        }
        self.grow_lanes();
        Ok(())
    }

    /// Removes the sink of `queue_id` (no-op if none). When this returns, no lane makes a
    /// call into that sink. Must not be called from inside `RxSink::push`/`flush`.
    pub fn unregister_rx_queue(&self, queue_id: u16) {
        if self.remove_sink(queue_id) {
            // Wait for the batches in flight (they may hold the old sink); lanes step aside
            // between batches while we wait, so the wait ends after at most one batch.
            self.unregistering.fetch_add(1, Ordering::SeqCst);
            for l in &self.batch_locks {
                drop(l.lock().unwrap_or_else(|e| e.into_inner()));
            }
            self.unregistering.fetch_sub(1, Ordering::SeqCst);
            self.release();
        }
    }

    fn remove_sink(&self, queue_id: u16) -> bool {
        let mut sinks = self.sinks.write().unwrap_or_else(|e| e.into_inner());
        let removed = sinks.remove(&queue_id).is_some();
        self.sinks_gen.fetch_add(1, Ordering::Release);
        removed
    }

    /// TX: one frame out of the port.
    pub fn send(&self, frame: &[u8]) -> DocaResult<()> {
        if frame.len() > self.max_frame {
            self.counters.add_sent(false);
            return Err(DocaError::TOO_BIG);
        }
        let r = self.backend.send(frame);
        self.counters.add_sent(r.is_ok());
        r
    }

    /// TX of several frames, in order: one `sendmmsg` per 64 frames on AF_PACKET ports
    /// (a TX proxy with several frames due calls this instead of [`Port::send`] per frame).
    /// Returns how many were sent, in order, and the error that stopped the rest (`AGAIN`:
    /// the socket is full, retry from the first unsent frame; `TOO_BIG`: that frame is over
    /// [`Port::max_frame`]); every frame is counted as sent or as a send error. Allocates
    /// nothing.
    pub fn send_batch(&self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        let max = self.max_frame();
        let fit = frames
            .iter()
            .position(|f| f.len() > max)
            .unwrap_or(frames.len());
        let (n, mut r) = self.backend.send_batch(&frames[..fit]);
        if r.is_ok() && fit < frames.len() {
            r = Err(DocaError::TOO_BIG);
        }
        self.counters.add_sent_n(n as u64);
        if r.is_err() {
            self.counters.add_sent(false);
        }
        (n, r)
    }

    /// Largest frame the port carries (L2 header included).
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Feeds `frame` into the port's RX path as if the port had received it (tests, bench
    /// generators), on the calling thread's lane. FULL when that lane's queue is full.
    #[cfg(any(test, feature = "testing"))]
    pub fn inject_rx(&self, frame: &[u8]) -> DocaResult<()> {
        if self.inject.push(frame) {
            Ok(())
        } else {
            Err(DocaError::FULL)
        }
    }

    /// Frames injected or arrived on a wire that no lane has handled yet.
    #[cfg(any(test, feature = "testing"))]
    pub fn pending_rx(&self) -> usize {
        self.inject.len()
    }

    /// Sets the queue that gets frames while the port has no Flow root pipe (`None`: such
    /// frames are dropped as no-match, like a NIC without steering rules). Arms the port.
    #[cfg(any(test, feature = "testing"))]
    pub fn set_default_queue(&self, queue_id: Option<u16>) {
        let v = queue_id.map_or(NO_QUEUE, u32::from);
        self.default_queue.store(v, Ordering::Release);
        self.arm();
    }

    /// Tells the backend the port is ready for traffic: a pcap port starts its replay now.
    /// `doca_flow_entries_process` and `Port::set_default_queue` call it.
    pub fn arm(&self) {
        self.backend.arm();
    }

    /// Installs (or clears) the Flow pipe where classification starts.
    pub fn set_flow_root(&self, root: Option<Arc<Pipe>>) {
        *self.flow_root.write().unwrap_or_else(|e| e.into_inner()) = root;
        self.flow_gen.fetch_add(1, Ordering::Release);
    }

    /// The current Flow root pipe.
    pub fn flow_root(&self) -> Option<Arc<Pipe>> {
        self.flow_root
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Frames the kernel dropped on their way to the port's lanes (an AF_XDP port's RX and
    /// fill rings ran full or empty), when the backend can tell; `None` otherwise.
    #[cfg(any(test, feature = "testing"))]
    pub fn kernel_drops(&self) -> Option<u64> {
        self.backend.kernel_drops()
    }

    /// A copy of the port's counters.
    pub fn counters(&self) -> PortCountersSnapshot {
        self.counters.snapshot()
    }

    /// Whether the receive lanes are running.
    #[cfg(any(test, feature = "testing"))]
    pub fn dispatcher_running(&self) -> bool {
        self.rx_lanes() > 0
    }

    /// Progress of each lane started since the port opened (frames, loops, last activity,
    /// input-queue depth), lane 0 first: what a benchmark prints when a point stalls.
    // Used by the testing hooks and benches.
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub fn lane_stats(&self) -> Vec<LaneSnapshot> {
        let started = self
            .users
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lanes
            .len()
            .max(self.inject.spread());
        (0..started.min(MAX_LANES))
            .map(|i| self.lane_stats[i].snapshot(i, self.inject.get(i).map(|q| q.len())))
            .collect()
    }

    /// Threads waiting in [`Port::unregister_rx_queue`] for the lanes' batch locks now.
    // Used by the testing hooks and benches.
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub fn unregistering(&self) -> usize {
        self.unregistering.load(Ordering::Acquire)
    }

    /// Number of receive lanes running now.
    #[cfg(any(test, feature = "testing"))]
    pub fn rx_lanes(&self) -> usize {
        self.users
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lanes
            .len()
    }

    /// Adds a user (queue or Flow port); the first one starts lane 0.
    pub fn acquire(&self) -> DocaResult<()> {
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        if users.count == 0 {
            users.stop = Arc::new(AtomicBool::new(false));
            self.start_lane(&mut users)?;
        }
        users.count += 1;
        Ok(())
    }

    /// Starts lanes up to one per registered queue, at most `lane_cap()`, while the port
    /// has users. A lane that fails to start is reported; the running ones carry on.
    fn grow_lanes(&self) {
        let queues = self.sinks.read().unwrap_or_else(|e| e.into_inner()).len();
        let want = queues.clamp(1, lane_cap());
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        while users.count > 0 && users.lanes.len() < want {
            if let Err(e) = self.start_lane(&mut users) {
                sdk_err!(
                    "port",
                    "{}: lane {} not started: {e:?}",
                    self.name,
                    users.lanes.len()
                );
                break;
            }
        }
    }

    /// Starts the next lane (`users.lanes.len()`), with its source and input queue.
    fn start_lane(&self, users: &mut Users) -> DocaResult<()> {
        let lane = users.lanes.len();
        let me = self.me.upgrade().ok_or(DocaError::BAD_STATE)?;
        let source = self.backend.open_rx(lane)?;
        let stop = users.stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("doca-rx{lane}-{}", short(&self.name)))
            .spawn(move || dispatcher::run(me, lane, stop, source))
            .map_err(|_| DocaError::OPERATING_SYSTEM)?;
        users.lanes.push(thread);
        // Senders spread over the new lane only once it runs.
        self.inject.set_running(users.lanes.len());
        Ok(())
    }

    /// Drops a user; the last one stops and joins every lane.
    pub fn release(&self) {
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        if users.count == 0 {
            return;
        }
        users.count -= 1;
        if users.count == 0 {
            users.stop.store(true, Ordering::Release);
            self.inject.wake_all();
            for (i, t) in users.lanes.drain(..).enumerate() {
                if t.join().is_err() {
                    sdk_err!("port", "lane {i} of {} panicked", self.name);
                }
            }
            // Frames sent while stopped wait on their queues for the next lanes.
            self.inject.set_running(0);
        }
    }
}

/// The backend of an `xdp:` port and its description: AF_XDP, or AF_PACKET with one log
/// line naming the reason when AF_XDP cannot be used here (old kernel, no CAP_NET_ADMIN /
/// CAP_BPF, an interface or driver that refuses it). An interface that does not exist is
/// NOT_FOUND either way.
fn open_xdp(ifname: &str, native: bool, zerocopy: bool) -> DocaResult<(Box<dyn Backend>, String)> {
    let ifindex = af_packet::ifindex_of(ifname).inspect_err(|e| {
        if *e == DocaError::NOT_FOUND {
            sdk_err!("port", "xdp:{ifname}: no such interface");
        }
    })?;
    match xdp::XdpPort::open(ifname, ifindex, xdp::XdpMode { native, zerocopy }) {
        Ok(p) => {
            let k = p.describe().to_string();
            Ok((Box::new(p), k))
        }
        Err((_, why)) => {
            sdk_warn!(
                "port",
                "xdp:{ifname}: AF_XDP unavailable ({why}); using AF_PACKET"
            );
            Ok((
                Box::new(af_packet::AfPacket::open(ifname, ifindex)?),
                "af_packet".into(),
            ))
        }
    }
}

/// Thread names are limited to 15 bytes on Linux ("doca-rxNN-" takes 10).
fn short(name: &str) -> String {
    name.rsplit(['/', ':', ','])
        .next()
        .unwrap_or(name)
        .chars()
        .take(5)
        .collect()
}

/// CLOCK_REALTIME in nanoseconds.
pub(crate) fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use doca_soft_packet::frames::udp4;

    struct Count(AtomicU64);

    impl RxSink for Count {
        fn push(&self, _frame: &[u8], _ts: u64) -> Result<(), DropReason> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        fn flush(&self) {}
    }

    #[test]
    fn lane_stats_count_every_frame_a_lane_handles() {
        let spec = PortSpec::Wire {
            name: format!("lanestats{}", std::process::id()),
            side: 0,
        };
        let port = Port::for_spec(&spec).expect("wire port");
        let sink = Arc::new(Count(AtomicU64::new(0)));
        port.register_rx_queue(0, sink.clone()).expect("register");
        port.set_default_queue(Some(0));
        let f = udp4([1, 1, 1, 1], [2, 2, 2, 2], 5, 6, b"x");
        for _ in 0..10 {
            port.inject_rx(&f).expect("inject");
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while sink.0.load(Ordering::Relaxed) < 10 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let stats = port.lane_stats();
        port.unregister_rx_queue(0);
        assert_eq!(sink.0.load(Ordering::Relaxed), 10, "frames delivered");
        assert!(!stats.is_empty(), "lane 0 reported");
        assert_eq!(stats.iter().map(|l| l.frames).sum::<u64>(), 10);
        assert!(stats.iter().all(|l| l.loops >= 1), "{stats:?}");
        assert_eq!(port.unregistering(), 0);
    }
}
