//! Receive lanes: a port with several RX queues runs several dispatcher threads. Frames of
//! several senders all arrive once and in order per flow, unregistering a queue while
//! traffic runs leaves no call into it in flight, stopping joins every lane, frames left on
//! a lane that stopped are not lost, one RX ring fed by several lanes stays consistent, and
//! AF_PACKET lanes share `lo` through a fanout group without duplicates.
//!
//! Every test here caps lanes at 4 with `DOCA_SOFT_RX_LANES` (read once per process), so
//! the tests use several lanes whatever the machine's CPU count.

mod support;

use std::collections::HashMap;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use doca_soft::testing::frames::udp4;
use doca_soft::testing::{
    lane_cap, CpuRxq, DropReason, Fwd, Pipe, PipeKind, PktBuf, Port, PortSpec, RxRing, RxSink,
    LANES_ENV, RSS_IPV4, RSS_UDP,
};
use support::{af_packet_allowed, eventually, lo_port, udp_dst_to, unique, RecordingSink};

const LIMIT: Duration = Duration::from_secs(20);

fn four_lanes() {
    static SET: Once = Once::new();
    // Before any port reads the cap; every test of this binary calls this first.
    SET.call_once(|| std::env::set_var(LANES_ENV, "4"));
    assert_eq!(lane_cap(), 4);
}

fn wire(name: &str, side: u8) -> Arc<Port> {
    Port::for_spec(&PortSpec::Wire {
        name: name.to_string(),
        side,
    })
    .unwrap()
}

fn rss_root(queues: &[u16]) -> Arc<Pipe> {
    Arc::new(Pipe::new(
        "rss",
        PipeKind::Basic,
        Fwd::None,
        Fwd::Rss {
            queues: queues.to_vec(),
            flags: RSS_IPV4 | RSS_UDP,
        },
        false,
    ))
}

/// A frame of flow `flow` of `sender` with sequence number `seq` in its payload.
fn tagged(sender: u8, flow: u8, seq: u32) -> Vec<u8> {
    let mut p = vec![sender, flow];
    p.extend_from_slice(&seq.to_be_bytes());
    udp4(
        [10, 0, 0, sender],
        [10, 0, 1, 1],
        1000 + u16::from(flow),
        2000,
        &p,
    )
}

/// (sender, flow, seq) of a `tagged` frame (42 header bytes, then the payload).
fn tag(f: &[u8]) -> (u8, u8, u32) {
    let p = &f[42..];
    (p[0], p[1], u32::from_be_bytes([p[2], p[3], p[4], p[5]]))
}

/// Checks that every (sender, flow) of `frames` comes in increasing sequence order;
/// returns how many frames each (sender, flow) had.
fn check_flow_order(frames: &[Vec<u8>]) -> HashMap<(u8, u8), u32> {
    let mut next: HashMap<(u8, u8), u32> = HashMap::new();
    for f in frames {
        let (s, fl, seq) = tag(f);
        let n = next.entry((s, fl)).or_insert(0);
        assert_eq!(seq, *n, "sender {s} flow {fl}: sequence {seq} out of order");
        *n += 1;
    }
    next
}

#[test]
fn frames_of_several_senders_all_arrive_in_flow_order_over_lanes() {
    four_lanes();
    let name = unique("ln");
    let (a, b) = (wire(&name, 0), wire(&name, 1));
    let ids = [0u16, 1, 2, 3];
    b.set_flow_root(Some(rss_root(&ids)));
    let sinks: Vec<Arc<RecordingSink>> = ids
        .iter()
        .map(|_| Arc::new(RecordingSink::new(2048, usize::MAX)))
        .collect();
    for (q, s) in ids.iter().zip(&sinks) {
        b.register_rx_queue(*q, s.clone()).unwrap();
    }
    assert_eq!(b.rx_lanes(), 4, "one lane per queue, up to the cap");
    let (senders, flows, per_flow) = (4u8, 3u8, 500u32);
    std::thread::scope(|sc| {
        for s in 0..senders {
            let a = &a;
            sc.spawn(move || {
                for seq in 0..per_flow {
                    for fl in 0..flows {
                        while a.send(&tagged(s, fl, seq)).is_err() {
                            std::thread::yield_now();
                        }
                    }
                }
            });
        }
    });
    let total = u64::from(senders) * u64::from(flows) * u64::from(per_flow);
    assert!(eventually(LIMIT, || b.counters().received == total));
    let mut all: HashMap<(u8, u8), u32> = HashMap::new();
    for s in &sinks {
        for (k, n) in check_flow_order(&s.frames()) {
            assert!(all.insert(k, n).is_none(), "flow {k:?} on two queues");
        }
    }
    assert_eq!(
        all.len(),
        usize::from(senders * flows),
        "every flow arrived"
    );
    assert!(all.values().all(|&n| n == per_flow), "every frame once");
    let c = b.counters();
    assert_eq!((c.received, c.delivered, c.dropped()), (total, total, 0));
    assert_eq!(a.counters().sent, total);
    for q in ids {
        b.unregister_rx_queue(q);
    }
    assert_eq!(b.rx_lanes(), 0);
}

/// A sink that notes any call made after it was marked gone.
struct WatchedSink {
    gone: AtomicBool,
    late_calls: AtomicU64,
    frames: AtomicU64,
}

impl WatchedSink {
    fn new() -> WatchedSink {
        WatchedSink {
            gone: AtomicBool::new(false),
            late_calls: AtomicU64::new(0),
            frames: AtomicU64::new(0),
        }
    }

    fn note(&self) {
        if self.gone.load(Ordering::SeqCst) {
            self.late_calls.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl RxSink for WatchedSink {
    fn push(&self, _frame: &[u8], _ts: u64) -> Result<(), DropReason> {
        self.note();
        self.frames.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn flush(&self) {
        self.note();
    }
}

#[test]
fn unregister_while_traffic_runs_leaves_no_call_in_flight() {
    four_lanes();
    let name = unique("lu");
    let (a, b) = (wire(&name, 0), wire(&name, 1));
    let ids = [0u16, 1, 2, 3];
    b.set_flow_root(Some(rss_root(&ids)));
    // Queue 0 stays; queues 1..3 come and go while four senders keep sending.
    let keep = Arc::new(WatchedSink::new());
    b.register_rx_queue(0, keep.clone()).unwrap();
    let stop = AtomicBool::new(false);
    let mut retired: Vec<Arc<WatchedSink>> = Vec::new();
    std::thread::scope(|sc| {
        for s in 0..4u8 {
            let (a, stop) = (&a, &stop);
            sc.spawn(move || {
                let mut seq = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let _ = a.send(&tagged(s, (seq % 16) as u8, seq));
                    seq += 1;
                }
            });
        }
        for round in 0..30 {
            let sinks: Vec<Arc<WatchedSink>> =
                (1..4).map(|_| Arc::new(WatchedSink::new())).collect();
            for (q, s) in (1u16..4).zip(&sinks) {
                b.register_rx_queue(q, s.clone()).unwrap();
            }
            if round == 0 {
                assert_eq!(b.rx_lanes(), 4);
            }
            let start: u64 = sinks.iter().map(|s| s.frames.load(Ordering::Relaxed)).sum();
            // Let traffic reach them before they go.
            eventually(LIMIT, || {
                sinks
                    .iter()
                    .map(|s| s.frames.load(Ordering::Relaxed))
                    .sum::<u64>()
                    > start + 50
            });
            for (q, s) in (1u16..4).zip(&sinks) {
                b.unregister_rx_queue(q);
                s.gone.store(true, Ordering::SeqCst);
            }
            retired.extend(sinks);
        }
        stop.store(true, Ordering::Relaxed);
    });
    let late: u64 = retired
        .iter()
        .map(|s| s.late_calls.load(Ordering::SeqCst))
        .sum();
    let got: u64 = retired
        .iter()
        .map(|s| s.frames.load(Ordering::SeqCst))
        .sum();
    assert_eq!(
        late, 0,
        "a lane called a sink after unregister_rx_queue returned"
    );
    assert!(got > 0, "the retired queues did receive traffic");
    assert!(keep.frames.load(Ordering::Relaxed) > 0);
    b.unregister_rx_queue(0);
    assert!(!b.dispatcher_running());
    let c = b.counters();
    assert_eq!(
        c.delivered + c.dropped(),
        c.received,
        "every frame counted once"
    );
}

#[test]
fn stop_joins_every_lane_and_frames_queued_meanwhile_arrive_in_order_after_restart() {
    four_lanes();
    let name = unique("ls");
    let (a, b) = (wire(&name, 0), wire(&name, 1));
    let ids = [0u16, 1, 2, 3];
    b.set_flow_root(Some(rss_root(&ids)));
    let s = Arc::new(RecordingSink::new(2048, usize::MAX));
    for q in ids {
        b.register_rx_queue(q, s.clone()).unwrap();
    }
    assert_eq!(b.rx_lanes(), 4);
    let (senders, per_phase) = (4u8, 2_000u32);
    let phase = std::sync::Barrier::new(usize::from(senders) + 1);
    std::thread::scope(|sc| {
        for sender in 0..senders {
            let (a, phase) = (&a, &phase);
            sc.spawn(move || {
                for seq in 0..2 * per_phase {
                    if seq == per_phase {
                        phase.wait(); // phase 1 sent
                        phase.wait(); // lanes stopped
                    }
                    while a.send(&tagged(sender, 0, seq)).is_err() {
                        std::thread::yield_now();
                    }
                }
            });
        }
        phase.wait();
        let first = u64::from(senders) * u64::from(per_phase);
        assert!(eventually(LIMIT, || b.counters().received == first));
        for q in ids {
            b.unregister_rx_queue(q);
        }
        assert_eq!(b.rx_lanes(), 0, "every lane joined");
        assert!(!b.dispatcher_running());
        phase.wait();
    });
    // Phase 2 waits on the senders' queues (up to four: the spread does not shrink).
    let second = usize::from(senders) * per_phase as usize;
    assert_eq!(b.pending_rx(), second);
    // One queue, one lane: it also drains the queues of the lanes that do not run.
    b.set_flow_root(None);
    b.set_default_queue(Some(0));
    b.register_rx_queue(0, s.clone()).unwrap();
    assert_eq!(b.rx_lanes(), 1);
    let got = s.wait_for(2 * second, LIMIT);
    assert_eq!(got.len(), 2 * second);
    let per = check_flow_order(&got);
    assert_eq!(per.len(), usize::from(senders));
    assert!(per.values().all(|&n| n == 2 * per_phase));
    // The sink records each frame as the lane hands it over; the lane releases the batch
    // from its input queue and counts it only after its last frame. So the last frames can
    // be in the sink while the queues still hold their batch and the counters lack it:
    // wait for the batch to end (reading both at once raced: pending 208 of a batch).
    let total = 2 * second as u64;
    assert!(
        eventually(LIMIT, || b.pending_rx() == 0
            && b.counters().received == total),
        "pending {}, {:?}",
        b.pending_rx(),
        b.counters()
    );
    let c = b.counters();
    assert_eq!((c.delivered, c.dropped()), (total, 0), "{c:?}");
    b.unregister_rx_queue(0);
}

/// Host memory of `slots` slots of `slot` bytes, and its ring.
struct HostRing {
    ring: Arc<RxRing>,
    _buf: Vec<u8>,
}

fn host_ring(slots: usize, slot: u32) -> HostRing {
    let mut buf = vec![0u8; slots * slot as usize];
    let pkt = PktBuf::host(buf.as_mut_ptr(), buf.len(), 1);
    HostRing {
        ring: Arc::new(RxRing::new(pkt, slot, None).unwrap()),
        _buf: buf,
    }
}

/// Consumes frames of `ring` until `total` were received (or, with `count_drops`, received
/// or dropped as ring-full); returns their bytes in ring order.
fn consume_all(ring: &RxRing, total: usize, count_drops: bool) -> Vec<Vec<u8>> {
    // SAFETY: host ring: its handle holds CPU pointers, alive while `ring` is; one consumer.
    let c = unsafe { CpuRxq::new(ring.handle_cpu()) };
    let mut got = Vec::with_capacity(total);
    let dropped = || {
        if count_drops {
            ring.counters().snapshot().dropped_ring_full as usize
        } else {
            0
        }
    };
    // A stall watchdog, not a deadline: the run may be slow on a loaded machine, but it gives
    // up only when nothing at all arrived for LIMIT.
    let mut last = (0, std::time::Instant::now());
    while got.len() + dropped() < total && last.1.elapsed() < LIMIT {
        c.recv_with(64, 1_000_000, |_, _, f| got.push(f.to_vec()));
        let seen = got.len() + dropped();
        if seen != last.0 {
            last = (seen, std::time::Instant::now());
        }
    }
    got
}

#[test]
fn two_producers_on_one_ring_keep_each_ones_order_and_every_frame() {
    // What two lanes do to one queue: push and flush from two threads at once, while a
    // consumer reads. The ring is small, so producers wrap it many times and see it full.
    let r = host_ring(64, 128);
    let per = 20_000u32;
    let pushed = Mutex::new([0u32; 2]);
    // Set when the consumer stops (all frames in, or its time limit): a producer facing a
    // full ring then gives up instead of spinning forever, so a slow run fails, not hangs.
    let consumer_done = AtomicBool::new(false);
    let got = std::thread::scope(|sc| {
        for t in 0..2u8 {
            let (ring, pushed, done) = (&r.ring, &pushed, &consumer_done);
            sc.spawn(move || {
                let mut seq = 0;
                while seq < per {
                    if ring.push(&tagged(t, 0, seq), u64::from(seq)).is_ok() {
                        seq += 1;
                    } else if done.load(Ordering::Acquire) {
                        break;
                    } else {
                        std::thread::yield_now();
                    }
                    if seq % 8 == 0 {
                        ring.flush();
                    }
                }
                ring.flush();
                pushed.lock().unwrap()[usize::from(t)] = seq;
            });
        }
        let got = consume_all(&r.ring, 2 * per as usize, false);
        consumer_done.store(true, Ordering::Release);
        got
    });
    assert_eq!(got.len(), 2 * per as usize, "every frame published");
    let counts = check_flow_order(&got);
    assert_eq!(counts.get(&(0, 0)), Some(&per));
    assert_eq!(counts.get(&(1, 0)), Some(&per));
    let s = r.ring.counters().snapshot();
    assert_eq!(s.delivered, 2 * u64::from(per));
    assert_eq!(s.received, s.delivered + s.dropped_ring_full);
}

#[test]
fn lanes_feeding_one_ring_through_a_port_deliver_every_frame_in_sender_order() {
    four_lanes();
    let name = unique("lr");
    let (a, b) = (wire(&name, 0), wire(&name, 1));
    // Four queues start four lanes; only queue 0 gets frames (a one-queue RSS root), so
    // every lane pushes into the same ring.
    b.set_flow_root(Some(rss_root(&[0])));
    let r = host_ring(1024, 128);
    b.register_rx_queue(0, r.ring.clone()).unwrap();
    let idle: Vec<Arc<RecordingSink>> = (1..4)
        .map(|_| Arc::new(RecordingSink::new(2048, usize::MAX)))
        .collect();
    for (q, s) in (1u16..4).zip(&idle) {
        b.register_rx_queue(q, s.clone()).unwrap();
    }
    assert_eq!(b.rx_lanes(), 4);
    let per = 5_000u32;
    let got = std::thread::scope(|sc| {
        for s in 0..4u8 {
            let a = &a;
            sc.spawn(move || {
                for seq in 0..per {
                    while a.send(&tagged(s, 0, seq)).is_err() {
                        std::thread::yield_now();
                    }
                }
            });
        }
        consume_all(&r.ring, 4 * per as usize, true)
    });
    // Frames the ring refused while the consumer lagged are dropped, not reordered.
    let dropped = r.ring.counters().snapshot().dropped_ring_full;
    assert_eq!(got.len() as u64 + dropped, 4 * u64::from(per));
    let mut next = [0u32; 4];
    for f in &got {
        let (s, _, seq) = tag(f);
        assert!(
            seq >= next[usize::from(s)],
            "sender {s}: {seq} after a later frame"
        );
        next[usize::from(s)] = seq + 1;
    }
    for q in 0..4 {
        b.unregister_rx_queue(q);
    }
    assert!(idle.iter().all(|s| s.frames().is_empty()));
}

#[test]
fn af_packet_lanes_share_lo_through_fanout_without_duplicates() {
    four_lanes();
    if !af_packet_allowed() {
        return;
    }
    let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
    let dport = receiver.local_addr().unwrap().port();
    let port = lo_port();
    // Frames to our receiver's port: RSS over queues 7 and 8; anything else on lo is no
    // match.
    port.set_flow_root(Some(udp_dst_to(dport, &[7, 8], RSS_IPV4 | RSS_UDP)));
    let sinks = [
        Arc::new(RecordingSink::new(65536 + 64, usize::MAX)),
        Arc::new(RecordingSink::new(65536 + 64, usize::MAX)),
    ];
    port.register_rx_queue(7, sinks[0].clone()).unwrap();
    port.register_rx_queue(8, sinks[1].clone()).unwrap();
    assert_eq!(
        port.rx_lanes(),
        2,
        "two queues: two lanes, two sockets in one group"
    );
    // Eight flows (eight source sockets), 100 datagrams each, payload (flow, seq).
    let (flows, per) = (8u8, 100u32);
    let socks: Vec<UdpSocket> = (0..flows)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    for seq in 0..per {
        for (fl, s) in socks.iter().enumerate() {
            let mut p = vec![0u8, fl as u8];
            p.extend_from_slice(&seq.to_be_bytes());
            s.send_to(&p, ("127.0.0.1", dport)).unwrap();
        }
    }
    let total = usize::from(flows) * per as usize;
    assert!(eventually(LIMIT, || {
        sinks.iter().map(|s| s.frames().len()).sum::<usize>() >= total
    }));
    // A late duplicate (an outgoing copy, or a copy from a socket joining the group) would
    // show up shortly after: give it the chance.
    std::thread::sleep(Duration::from_millis(50));
    let mut per_flow: HashMap<(u8, u8), u32> = HashMap::new();
    for s in &sinks {
        // lo frames carry a 14-byte zero Ethernet header: the same offsets as `tagged`.
        for (k, n) in check_flow_order(&s.frames()) {
            assert!(per_flow.insert(k, n).is_none(), "flow {k:?} on two queues");
        }
    }
    assert_eq!(per_flow.len(), usize::from(flows));
    assert!(
        per_flow.values().all(|&n| n == per),
        "each datagram exactly once"
    );
    port.unregister_rx_queue(7);
    port.unregister_rx_queue(8);
    assert!(!port.dispatcher_running());
}

/// Unregistering a queue of an idle socket port must not wait for long: the lanes poll
/// the socket and take their batch lock again at once, and a waiter used to starve behind
/// them (a GPU queue's stop then took 50 s or never ended). Liveness bound, not a timing.
#[test]
fn unregistering_on_an_idle_socket_port_is_not_starved_by_polling_lanes() {
    four_lanes();
    if !af_packet_allowed() {
        return;
    }
    let port = lo_port();
    // A queue that stays: the lanes keep running (and polling) through every unregister.
    let keeper = Arc::new(RecordingSink::new(65536 + 64, usize::MAX));
    port.register_rx_queue(40, keeper).unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let worker = {
        let (port, done) = (port.clone(), done.clone());
        std::thread::spawn(move || {
            for _ in 0..20 {
                let s = Arc::new(RecordingSink::new(65536 + 64, usize::MAX));
                port.register_rx_queue(41, s).unwrap();
                port.unregister_rx_queue(41);
                done.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    let finished = eventually(Duration::from_secs(60), || {
        done.load(Ordering::SeqCst) == 20
    });
    assert!(
        finished,
        "only {} of 20 unregisters returned within 60 s on an idle lo port",
        done.load(Ordering::SeqCst)
    );
    worker.join().unwrap();
    port.unregister_rx_queue(40);
}
