//! The soft NIC's RX path from the CPU side, for the seams of figure 2: a port (AF_PACKET on
//! `lo`, or one side of an in-memory wire), its dispatcher with an RSS root pipe, RX rings in
//! host memory, and one CPU consumer per queue that runs the device API's receive algorithm
//! (`CpuRxq`). The GPU variants replace the consumers with a kernel once that lands.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use doca_soft::testing::{
    parse, rss, CpuRxq, Fwd, Pipe, PipeKind, PktBuf, Port, PortSpec, RxRing, RSS_IPV4, RSS_UDP,
};

use super::udp::{self, SeqTracker};

/// Where frames enter the soft NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// UDP senders -> kernel -> `lo` -> AF_PACKET port.
    Lo,
    /// Generator threads -> in-memory wire -> port.
    Wire,
}

impl Mode {
    /// Name used in figure names.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Lo => "lo",
            Mode::Wire => "wire",
        }
    }
}

/// An RX ring whose packet buffer is host memory owned here (the application's ring).
pub struct HostQueue {
    /// The ring (declared first: dropped before the buffer it points into).
    pub ring: Arc<RxRing>,
    /// The packet buffer.
    buf: Vec<u8>,
}

impl HostQueue {
    /// `slots` packet slots of `slot_size` bytes.
    pub fn new(slots: usize, slot_size: u32) -> HostQueue {
        let mut buf = vec![0u8; slots * slot_size as usize];
        let pkt = PktBuf::host(buf.as_mut_ptr(), buf.len(), 1);
        let ring = Arc::new(RxRing::new(pkt, slot_size, None).expect("host RX ring"));
        HostQueue { ring, buf }
    }

    /// Bytes of the application's packet buffer.
    pub fn app_bytes(&self) -> usize {
        self.buf.len()
    }

    /// A CPU consumer of this ring.
    pub fn consumer(&self) -> CpuRxq {
        // SAFETY: host ring: pkt_addr and cqe_addr are CPU pointers alive while the ring is;
        // the caller keeps one consumer per queue and drops it before the queue.
        unsafe { CpuRxq::new(self.ring.handle_cpu()) }
    }
}

/// Slot size for packets of `size` bytes (cache-line multiple).
pub fn slot_size(size: usize) -> u32 {
    size.max(64).next_multiple_of(64) as u32
}

/// The port of a mode.
pub fn port_spec(mode: Mode, wire_name: &str, side: u8) -> PortSpec {
    match mode {
        Mode::Lo => PortSpec::Linux {
            ifname: "lo".to_string(),
            // SAFETY: a NUL-terminated literal.
            ifindex: unsafe { libc::if_nametoindex(c"lo".as_ptr()) },
        },
        Mode::Wire => PortSpec::Wire {
            name: wire_name.to_string(),
            side,
        },
    }
}

/// The bench's root pipe: RSS (IPv4 + UDP 5-tuple) over queues `0..queues`.
pub fn rss_root(queues: usize) -> Arc<Pipe> {
    Arc::new(Pipe::new(
        "bench-rss",
        PipeKind::Basic,
        Fwd::None,
        Fwd::Rss {
            queues: (0..queues as u16).collect(),
            flags: RSS_IPV4 | RSS_UDP,
        },
        false,
    ))
}

/// A port with `queues` host RX rings behind an RSS root pipe (IPv4 + UDP 5-tuple).
pub struct SoftRx {
    /// The receiving port.
    pub port: Arc<Port>,
    /// The queues, by queue id.
    pub queues: Vec<HostQueue>,
    root: Arc<Pipe>,
}

impl SoftRx {
    /// Opens the port and registers the queues (starts its dispatcher).
    pub fn open(spec: &PortSpec, queues: usize, slots: usize, slot: u32) -> SoftRx {
        let port = Port::for_spec(spec).expect("open port");
        let root = rss_root(queues);
        port.set_flow_root(Some(root.clone()));
        let qs: Vec<HostQueue> = (0..queues).map(|_| HostQueue::new(slots, slot)).collect();
        for (i, q) in qs.iter().enumerate() {
            port.register_rx_queue(i as u16, q.ring.clone())
                .expect("register queue");
        }
        SoftRx {
            port,
            queues: qs,
            root,
        }
    }

    /// Frames the rings dropped because they were full.
    pub fn ring_full_drops(&self) -> u64 {
        self.queues
            .iter()
            .map(|q| q.ring.counters().dropped_ring_full.load(Ordering::Relaxed))
            .sum()
    }
}

impl Drop for SoftRx {
    fn drop(&mut self) {
        for i in 0..self.queues.len() {
            self.port.unregister_rx_queue(i as u16);
        }
        self.port.set_flow_root(None);
        let _ = &self.root;
    }
}

/// Result of one soft-NIC RX run.
#[derive(Debug, Default, Clone, Copy)]
pub struct SoftRun {
    /// Frames offered.
    pub sent: u64,
    /// Distinct frames the consumers received.
    pub received: u64,
    /// Frames lost (ring full, socket or port drops).
    pub lost: u64,
    /// Ring-full drops counted by the rings.
    pub ring_full: u64,
    /// Consumer span, first to last frame (seconds).
    pub secs: f64,
}

impl SoftRun {
    /// Received frames per second.
    pub fn pps(&self) -> f64 {
        super::udp::per_second(self.received as f64, self.secs)
    }
}

struct ConsumerOut {
    tracker: SeqTracker,
    first: Option<Instant>,
    last: Option<Instant>,
}

fn consume(
    q: CpuRxq,
    senders: usize,
    frames: u64,
    done: Arc<AtomicBool>,
    got: Arc<AtomicU64>,
) -> ConsumerOut {
    let mut out = ConsumerOut {
        tracker: SeqTracker::new(senders, frames),
        first: None,
        last: None,
    };
    let mut idle_since: Option<Instant> = None;
    let mut empty_polls = 0u32;
    loop {
        // A 1 ns limit: take what is there and return (no clock reads while spinning).
        let n = q.recv_with(64, 1, |_, _, f| {
            if let Some((s, seq)) = udp::parse_frame(f) {
                out.tracker.note(s, seq);
            }
        });
        if n > 0 {
            let now = Instant::now();
            out.first.get_or_insert(now);
            out.last = Some(now);
            got.fetch_add(u64::from(n), Ordering::Relaxed);
            idle_since = None;
            empty_polls = 0;
        } else {
            // Poll like a dedicated core would, but give the CPU away when nothing comes
            // for a while (machines with fewer cores than threads).
            empty_polls += 1;
            if empty_polls < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
            if done.load(Ordering::Acquire) {
                let t = *idle_since.get_or_insert_with(Instant::now);
                if t.elapsed() > Duration::from_millis(200) {
                    break;
                }
            }
        }
    }
    out
}

/// Sends `frames` frames of `size` bytes from generator `sender` over the wire port `peer`,
/// paced to `rate_pps` (0 = unpaced). A full wire is back-pressure: the frame is retried.
pub fn wire_generate(peer: &Port, sender: u16, size: usize, frames: u64, rate_pps: f64) -> f64 {
    let mut f = wire_frame(sender, size);
    wire_send(peer, &mut f, sender, frames, rate_pps)
}

/// Queues the RSS root pipe spreads flows over at most; generator flows are chosen for it.
const RSS_SPREAD: u64 = 8;

/// The frame generator `sender` sends (sequence number rewritten per frame). Its UDP
/// source port is chosen so that the bench's RSS pipe (IPv4 + UDP) puts it on queue
/// `sender % 8` of 8 (hence `sender % q` of q for q = 1, 2, 4, 8): one flow per queue, as
/// the recvmmsg baseline has one socket per queue, instead of the luck of q hashes.
pub fn wire_frame(sender: u16, size: usize) -> Vec<u8> {
    let mut f = vec![0u8; size];
    let dst = udp::BASE_PORT + sender;
    let base = 40000u16.wrapping_add(sender.wrapping_mul(64));
    let want = u64::from(sender) % RSS_SPREAD;
    for k in 0..4096u16 {
        udp::build_frame(&mut f, base.wrapping_add(k), dst, sender, 0);
        let q = parse(&f).map(|p| rss::hash(&p, RSS_IPV4 | RSS_UDP) % RSS_SPREAD);
        if q == Ok(want) {
            break;
        }
    }
    f
}

/// Longest a wire sender retries one frame on a full wire before it gives up (so a point
/// whose lanes stopped ends, with the frames not sent counted as lost).
const WIRE_STALL: Duration = Duration::from_secs(5);

/// Sends `f`, retrying while the wire is full, for at most [`WIRE_STALL`].
fn send_or_give_up(peer: &Port, f: &[u8]) -> bool {
    if peer.send(f).is_ok() {
        return true;
    }
    let since = Instant::now();
    while peer.send(f).is_err() {
        if since.elapsed() > WIRE_STALL {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// Sends `f` with sequence numbers 0..frames on `peer` (see [`wire_generate`]); allocates
/// nothing while frames flow (a message when it gives up). Returns the seconds it took.
pub fn wire_send(peer: &Port, f: &mut [u8], sender: u16, frames: u64, rate_pps: f64) -> f64 {
    let start = Instant::now();
    for seq in 0..frames {
        udp::write_payload(&mut f[udp::HEADERS..], sender, seq);
        if rate_pps > 0.0 && seq % 32 == 0 {
            let due = Duration::from_secs_f64(seq as f64 / rate_pps);
            while start.elapsed() < due {
                std::hint::spin_loop();
            }
        }
        if !send_or_give_up(peer, f) {
            crate::say!(
                "wire sender {sender}: frame {seq} not taken for {} s (no lane drains the wire): giving up, the rest count as lost",
                WIRE_STALL.as_secs()
            );
            break;
        }
    }
    start.elapsed().as_secs_f64()
}

/// Where the CPU went in a soft-NIC RX run, per frame received.
#[derive(Debug, Default, Clone, Copy)]
pub struct RxCost {
    /// Receive lanes (dispatcher threads) the port ran.
    pub lanes: usize,
    /// Lane CPU time per frame (ns): one lane's cost per frame it handles.
    pub lane_ns: f64,
    /// Sender CPU time per frame (ns); on `lo` it includes the kernel's delivery to the
    /// AF_PACKET sockets (done in the sending thread). `None` for paced runs (the pacing
    /// spin would count).
    pub sender_ns: Option<f64>,
}

/// Per-frame CPU cost of the two wire stages measured apart (ns), see [`wire_stage_costs`].
#[derive(Debug, Default, Clone, Copy)]
pub struct StageCosts {
    /// Frames measured.
    pub frames: usize,
    /// `Port::send` on a wire (uncontended: nobody drains the queue meanwhile).
    pub send_ns: f64,
    /// One lane: take from its queue, parse, RSS classify, push to a host ring, flush.
    pub lane_ns: f64,
    /// The bench's CPU consumer: receive from the ring (`CpuRxq`), check the sequence.
    pub consume_ns: f64,
}

/// Measures the wire's stages one at a time: one thread sends `frames` frames (at most what
/// a lane queue holds) into a wire whose receiving port has no lane running, then a queue is
/// registered and its one lane drains them all into a host ring that holds them all (no
/// consumer meanwhile), then the calling thread consumes them as the bench's consumers do. Two passes over the same queues and ring; the second is reported
/// (the first maps their pages). CPU times from the threads' clocks; no other thread of the
/// bench competes in either step.
pub fn wire_stage_costs(size: usize, frames: usize) -> StageCosts {
    static RUN: AtomicU64 = AtomicU64::new(0);
    let wire = format!(
        "stage{}x{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    );
    // At most what a lane queue holds, and 2 MiB of frames: a working set that stays in
    // cache, as a lane queue does in steady state (a long backlog would measure DRAM).
    let frames = frames
        .min(doca_soft::testing::INJECT_QUEUE_FRAMES)
        .min((2 << 20) / size.max(64));
    let port = Port::for_spec(&port_spec(Mode::Wire, &wire, 0)).expect("wire port");
    let peer = Port::for_spec(&port_spec(Mode::Wire, &wire, 1)).expect("wire peer");
    port.set_flow_root(Some(rss_root(1)));
    let q = HostQueue::new(frames, slot_size(size));
    let consumer = q.consumer();
    let mut f = wire_frame(0, size);
    let mut costs = StageCosts::default();
    for pass in 1..=2u64 {
        let cpu0 = thread_cpu_ns();
        for seq in 0..frames as u64 {
            udp::write_payload(&mut f[udp::HEADERS..], 0, seq);
            peer.send(&f).expect("the lane queue holds every frame");
        }
        let send = thread_cpu_ns() - cpu0;
        let lane0 = lane_cpu_ns();
        port.register_rx_queue(0, q.ring.clone())
            .expect("register queue");
        while port.counters().received < pass * frames as u64 {
            std::thread::sleep(Duration::from_micros(200));
        }
        let lane = lane_cpu_ns().saturating_sub(lane0);
        port.unregister_rx_queue(0);
        assert_eq!(
            port.counters().delivered,
            pass * frames as u64,
            "all delivered"
        );
        // The consumer's stage (as in `consume`), which also frees the ring.
        let mut tracker = SeqTracker::new(1, frames as u64);
        let cpu0 = thread_cpu_ns();
        let mut got = 0;
        while got < frames {
            got += consumer.recv_with(64, 1, |_, _, f| {
                if let Some((s, seq)) = udp::parse_frame(f) {
                    tracker.note(s, seq);
                }
            }) as usize;
        }
        let consume = thread_cpu_ns() - cpu0;
        assert_eq!(tracker.received(), frames as u64, "every frame once");
        costs = StageCosts {
            frames,
            send_ns: send as f64 / frames as f64,
            lane_ns: lane as f64 / frames as f64,
            consume_ns: consume as f64 / frames as f64,
        };
    }
    port.set_flow_root(None);
    costs
}

/// CPU time of the calling thread (ns).
pub fn thread_cpu_ns() -> u64 {
    // SAFETY: timespec is plain data; clock_gettime fills it.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// CPU time so far (ns) of this process's receive-lane threads (named `doca-rx*`), from
/// /proc/self/task/*/schedstat.
pub fn lane_cpu_ns() -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(Result::ok)
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("doca-rx"))
        })
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// One RX run through the soft NIC with CPU consumers: `queues` senders (UDP on `lo`, or
/// generators on a wire), `frames` each.
pub fn run_soft_rx(mode: Mode, queues: usize, size: usize, frames: u64, rate_pps: f64) -> SoftRun {
    run_soft_rx_costed(mode, queues, size, frames, rate_pps).0
}

/// [`run_soft_rx`], with where the CPU went.
pub fn run_soft_rx_costed(
    mode: Mode,
    queues: usize,
    size: usize,
    frames: u64,
    rate_pps: f64,
) -> (SoftRun, RxCost) {
    let wire = format!("bench{}", std::process::id());
    let rx = SoftRx::open(&port_spec(mode, &wire, 0), queues, 8192, slot_size(size));
    let lanes = rx.port.rx_lanes();
    let lane_cpu0 = lane_cpu_ns();
    let peer = (mode == Mode::Wire)
        .then(|| Port::for_spec(&port_spec(mode, &wire, 1)).expect("wire peer"));
    // lo: the destination ports end at sockets that drop in the kernel (see DropSinks).
    let _sinks = (mode == Mode::Lo).then(|| udp::DropSinks::bind(queues).expect("drop sockets"));
    let done = Arc::new(AtomicBool::new(false));
    let got = Arc::new(AtomicU64::new(0));
    let consumers: Vec<_> = rx
        .queues
        .iter()
        .map(|q| {
            let c = q.consumer();
            let (d, g) = (done.clone(), got.clone());
            // The consumer only touches the ring, which outlives the join below.
            let c = SendRxq(c);
            std::thread::spawn(move || {
                let c = c;
                consume(c.0, queues, frames, d, g)
            })
        })
        .collect();
    let per = if rate_pps > 0.0 {
        rate_pps / queues as f64
    } else {
        0.0
    };
    let senders: Vec<_> = (0..queues)
        .map(|i| {
            let peer = peer.clone();
            std::thread::spawn(move || {
                let cpu0 = thread_cpu_ns();
                let sent = match peer {
                    Some(p) => {
                        wire_generate(&p, i as u16, size, frames, per);
                        frames
                    }
                    None => {
                        udp::send_frames(i as u16, udp::BASE_PORT + i as u16, size, frames, per)
                            .map(|r| r.sent)
                            .unwrap_or(0)
                    }
                };
                (sent, thread_cpu_ns() - cpu0)
            })
        })
        .collect();
    let (mut sent, mut sender_cpu) = (0, 0);
    for s in senders {
        let (n, cpu) = s.join().expect("sender");
        sent += n;
        sender_cpu += cpu;
    }
    done.store(true, Ordering::Release);
    let mut all = SeqTracker::new(queues, frames);
    let (mut first, mut last): (Option<Instant>, Option<Instant>) = (None, None);
    for c in consumers {
        let o = c.join().expect("consumer");
        all.merge(&o.tracker);
        if let Some(f) = o.first {
            first = Some(first.map_or(f, |x| x.min(f)));
        }
        if let Some(l) = o.last {
            last = Some(last.map_or(l, |x| x.max(l)));
        }
    }
    let lane_cpu = lane_cpu_ns().saturating_sub(lane_cpu0);
    let per = |ns: u64| ns as f64 / all.received().max(1) as f64;
    let run = SoftRun {
        sent,
        received: all.received(),
        lost: all.lost(),
        ring_full: rx.ring_full_drops(),
        secs: match (first, last) {
            (Some(f), Some(l)) => (l - f).as_secs_f64(),
            _ => 0.0,
        },
    };
    let cost = RxCost {
        lanes,
        lane_ns: per(lane_cpu),
        sender_ns: (rate_pps <= 0.0).then(|| per(sender_cpu)),
    };
    (run, cost)
}

/// A consumer moved to its thread.
struct SendRxq(CpuRxq);
// SAFETY: the consumer reads a host ring that lives until after the thread is joined; one
// thread uses it.
unsafe impl Send for SendRxq {}
