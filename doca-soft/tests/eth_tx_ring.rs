//! The TX ring from the CPU: a CPU producer writes descriptors as the device API does; the
//! TX proxy sends them to a test port. Checks exact frames, checksum offload (verified with an
//! independent checksum), NOTIFY completions, errors, wait-on-time ordering.

use doca_soft::capi::doca_error::{DocaError, DocaResult};
use doca_soft::testing::{
    ns_to_wait_on_time, realtime_ns, CpuTxq, FrameOut, MemRanges, TxProxy, TxRing, TxRingCfg,
};
use std::sync::{Arc, Mutex};

/// A port that records each frame with the CLOCK_REALTIME time it was sent.
#[derive(Default)]
struct TestPort {
    sent: Mutex<Vec<(u64, Vec<u8>)>>,
}
impl FrameOut for TestPort {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        self.sent
            .lock()
            .unwrap()
            .push((realtime_ns(), frame.to_vec()));
        Ok(())
    }
}

/// Eth + IPv4 + UDP frame with zeroed checksums; `seq` goes into the payload.
fn udp_frame(seq: u32, payload_len: usize) -> Vec<u8> {
    let mut f = vec![0u8; 14 + 20 + 8 + payload_len];
    f[0..6].copy_from_slice(&[0x10, 0x11, 0x12, 0x13, 0x14, 0x15]);
    f[6..12].copy_from_slice(&[0x20, 0x21, 0x22, 0x23, 0x24, 0x25]);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((20 + 8 + payload_len) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&(seq as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[192, 168, 1, 1]);
    ip[16..20].copy_from_slice(&[192, 168, 1, 2 + (seq % 50) as u8]);
    let udp = &mut f[34..42];
    udp[0..2].copy_from_slice(&1234u16.to_be_bytes());
    udp[2..4].copy_from_slice(&53u16.to_be_bytes());
    udp[4..6].copy_from_slice(&((8 + payload_len) as u16).to_be_bytes());
    for (i, b) in f[42..].iter_mut().enumerate() {
        *b = (seq as usize + i) as u8;
    }
    f[42..46].copy_from_slice(&seq.to_be_bytes());
    f
}

/// Independent check: 32-bit accumulate of 16-bit words, fold, expect all ones.
fn sums_to_ffff(parts: &[&[u8]]) -> bool {
    let mut bytes = Vec::new();
    for p in parts {
        bytes.extend_from_slice(p);
    }
    if bytes.len() % 2 == 1 {
        bytes.push(0);
    }
    let mut s: u32 = bytes
        .chunks(2)
        .map(|c| (u32::from(c[0]) << 8) | u32::from(c[1]))
        .sum();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s == 0xffff
}

fn ipv4_ok(f: &[u8]) -> bool {
    sums_to_ffff(&[&f[14..34]])
}

fn udp_ok(f: &[u8]) -> bool {
    let udp = &f[34..];
    let len = (udp.len() as u16).to_be_bytes();
    let pseudo = [&f[26..34], &[0u8, 17], &len[..]].concat();
    udp[6..8] != [0, 0] && sums_to_ffff(&[&pseudo, udp])
}

struct Rig {
    frames: Vec<Vec<u8>>,
    port: Arc<TestPort>,
    proxy: TxProxy,
    q: CpuTxq,
}

fn rig(cfg: TxRingCfg, frames: Vec<Vec<u8>>) -> Rig {
    let ring = TxRing::new(cfg, None).unwrap();
    let mut mem = MemRanges::new(None);
    for f in &frames {
        mem.add_host(f.as_ptr(), f.len());
    }
    let port = Arc::new(TestPort::default());
    // SAFETY: host-memory ring: its addresses are CPU pointers. The ring moves into the
    // proxy (its heap blocks do not move) and lives in the same Rig as `q`, which has no
    // Drop and is never used after the Rig goes away.
    let q = unsafe { CpuTxq::new(ring.handle_cpu()) };
    let proxy = TxProxy::new(ring, Arc::new(mem), port.clone());
    Rig {
        frames,
        port,
        proxy,
        q,
    }
}

/// A ring of `max_burst` descriptors, everything else default.
fn burst(max_burst: u32) -> TxRingCfg {
    TxRingCfg {
        max_burst,
        ..Default::default()
    }
}

/// [`burst`] with the completion queue in GPU memory (mlx5 CQEs the test reads).
fn gpu_cq(max_burst: u32) -> TxRingCfg {
    TxRingCfg {
        completion_on_gpu: true,
        ..burst(max_burst)
    }
}

fn drain(r: &Rig) {
    while r.proxy.progress() > 0 {}
}

#[test]
fn frames_are_sent_exactly_with_checksums_and_notify_completions() {
    let frames: Vec<Vec<u8>> = (0..100).map(|i| udp_frame(i, 20 + i as usize)).collect();
    let cfg = TxRingCfg {
        max_burst: 128,
        l3_csum: true,
        l4_csum: true,
        completion_on_gpu: true,
        wait_on_time: false,
    };
    let r = rig(cfg, frames);
    let mut notify = 0;
    for (i, f) in r.frames.iter().enumerate() {
        let n = i % 4 == 3;
        notify += u32::from(n);
        let t = r.q.send(f.as_ptr() as u64, 0x0100_0000, f.len() as u32, n);
        assert_eq!(t, i as u64, "tickets are consecutive descriptor indices");
    }
    drain(&r);
    let sent = r.port.sent.lock().unwrap();
    assert_eq!(sent.len(), 100);
    for (i, (_, s)) in sent.iter().enumerate() {
        let want = &r.frames[i];
        assert_eq!(s.len(), want.len());
        assert!(ipv4_ok(s), "frame {i}: IPv4 header checksum");
        assert!(udp_ok(s), "frame {i}: UDP checksum");
        // Everything but the two checksum fields is the application's bytes.
        let mut masked = s.clone();
        masked[24..26].fill(0);
        masked[40..42].fill(0);
        assert_eq!(&masked, want, "frame {i} content");
    }
    assert_eq!(r.q.poll_completion(notify, true), Ok(notify));
    let c = r.proxy.counters().snapshot();
    assert_eq!((c.sent, c.completed, c.errors), (100, u64::from(notify), 0));
    assert_eq!(
        r.q.poll_completion(1, false),
        Ok(0),
        "nothing more completed"
    );
}

#[test]
fn checksums_untouched_when_offload_is_off() {
    let frames = vec![udp_frame(1, 30)];
    let r = rig(burst(8), frames);
    let f = &r.frames[0];
    r.q.send(f.as_ptr() as u64, 0, f.len() as u32, false);
    drain(&r);
    assert_eq!(r.port.sent.lock().unwrap()[0].1, *f);
}

#[test]
fn cpu_completion_mode_raises_events_with_positions() {
    let frames: Vec<Vec<u8>> = (0..10).map(|i| udp_frame(i, 10)).collect();
    let r = rig(burst(16), frames);
    for (i, f) in r.frames.iter().enumerate() {
        r.q.send(f.as_ptr() as u64, 0, f.len() as u32, i == 4 || i == 9);
    }
    // An address outside registered memory fails and is reported as an error event.
    r.q.send(0x1000, 0, 64, false);
    drain(&r);
    let ev = r.proxy.take_events();
    let got: Vec<(u64, u32)> = ev.iter().map(|e| (e.wqe_index, e.status)).collect();
    assert_eq!(got, vec![(4, 0), (9, 0), (10, DocaError::INVALID_VALUE.0)]);
    let c = r.proxy.counters().snapshot();
    assert_eq!((c.sent, c.completed, c.errors), (10, 3, 1));
}

#[test]
fn error_completion_on_gpu_makes_poll_unexpected() {
    let frames = vec![udp_frame(0, 10)];
    let r = rig(gpu_cq(16), frames);
    r.q.send(0xdead_0000, 0, 64, true);
    drain(&r);
    assert_eq!(r.q.poll_completion(1, true), Err(DocaError::UNEXPECTED));
    assert!(r.port.sent.lock().unwrap().is_empty());
}

#[test]
fn full_completion_ring_stalls_until_polled() {
    let frames: Vec<Vec<u8>> = (0..100).map(|i| udp_frame(i, 10)).collect();
    let r = rig(gpu_cq(64), frames);
    assert_eq!(r.proxy.ring().desc_num(), 64);
    for f in r.frames.iter().take(64) {
        r.q.send(f.as_ptr() as u64, 0, f.len() as u32, true);
    }
    drain(&r);
    assert_eq!(r.port.sent.lock().unwrap().len(), 64);
    // The CQ holds 64 unpolled completions: the next NOTIFY send must wait.
    let f = &r.frames[64];
    r.q.send(f.as_ptr() as u64, 0, f.len() as u32, true);
    drain(&r);
    assert_eq!(r.port.sent.lock().unwrap().len(), 64, "stalled on full CQ");
    assert_eq!(r.q.poll_completion(64, true), Ok(64));
    drain(&r);
    assert_eq!(r.port.sent.lock().unwrap().len(), 65);
    assert_eq!(r.q.poll_completion(1, true), Ok(1));
}

#[test]
fn wait_on_time_holds_later_sends_until_the_requested_time() {
    let frames: Vec<Vec<u8>> = (0..3).map(|i| udp_frame(i, 10)).collect();
    let r = rig(
        TxRingCfg {
            max_burst: 16,
            wait_on_time: true,
            ..Default::default()
        },
        frames,
    );
    let at = realtime_ns() + 30_000_000;
    let f = &r.frames;
    r.q.send(f[0].as_ptr() as u64, 0, f[0].len() as u32, false);
    r.q.wait_send(
        ns_to_wait_on_time(at),
        f[1].as_ptr() as u64,
        0,
        f[1].len() as u32,
        true,
    );
    r.q.send(f[2].as_ptr() as u64, 0, f[2].len() as u32, false);
    let t0 = std::time::Instant::now();
    while r.port.sent.lock().unwrap().len() < 3 {
        watchdog(t0, "the timed sends");
        r.proxy.progress();
        std::thread::yield_now();
    }
    let sent = r.port.sent.lock().unwrap();
    let order: Vec<u32> = sent
        .iter()
        .map(|(_, s)| u32::from_be_bytes(s[42..46].try_into().unwrap()))
        .collect();
    assert_eq!(order, vec![0, 1, 2]);
    assert!(sent[1].0 >= at, "timed send went out before its time");
    assert!(sent[2].0 >= at, "a later send overtook the timed one");
    assert_eq!(r.proxy.take_events().len(), 1, "one NOTIFY event");
}

#[test]
fn concurrent_producers_and_proxy_thread_send_everything_once() {
    let frames: Vec<Vec<u8>> = (0..400).map(|i| udp_frame(i, 8)).collect();
    let r = Arc::new(rig(burst(64), frames));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let proxy = {
        let (r, stop) = (r.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                r.proxy.progress();
            }
            drain(&r);
        })
    };
    let producers: Vec<_> = (0..4)
        .map(|t| {
            let r = r.clone();
            std::thread::spawn(move || {
                for i in (t..400).step_by(4) {
                    let f = &r.frames[i];
                    r.q.send(f.as_ptr() as u64, 0, f.len() as u32, false);
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Release);
    proxy.join().unwrap();
    let sent = r.port.sent.lock().unwrap();
    let mut seqs: Vec<u32> = sent
        .iter()
        .map(|(_, s)| u32::from_be_bytes(s[42..46].try_into().unwrap()))
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (0..400).collect::<Vec<u32>>());
}

use doca_test_support::wait::watchdog;

/// A frame source over host ranges that records each `read_many` batch (addresses read).
struct RecordingSource {
    inner: MemRanges,
    batches: Mutex<Vec<Vec<u64>>>,
}
impl doca_soft::testing::FrameSource for RecordingSource {
    fn read(&self, addr: u64, mkey_be: u32, len: usize, out: &mut Vec<u8>) -> DocaResult<()> {
        self.inner.read(addr, mkey_be, len, out)
    }
    fn read_many(
        &self,
        segs: &[doca_soft::testing::FrameSeg],
        out: &mut Vec<u8>,
        got: &mut Vec<DocaResult<std::ops::Range<usize>>>,
    ) {
        self.batches
            .lock()
            .unwrap()
            .push(segs.iter().map(|s| s.addr).collect());
        self.inner.read_many(segs, out, got);
    }
}

fn recording_rig(
    cfg: TxRingCfg,
    frames: &[Vec<u8>],
) -> (TxProxy, CpuTxq, Arc<TestPort>, Arc<RecordingSource>) {
    let ring = TxRing::new(cfg, None).unwrap();
    let mut mem = MemRanges::new(None);
    for f in frames {
        mem.add_host(f.as_ptr(), f.len());
    }
    let src = Arc::new(RecordingSource {
        inner: mem,
        batches: Mutex::new(Vec::new()),
    });
    let port = Arc::new(TestPort::default());
    // SAFETY: host-memory ring (addresses are CPU pointers); the proxy owns the ring and is
    // returned with the producer, which the tests drop before or with it.
    let q = unsafe { CpuTxq::new(ring.handle_cpu()) };
    let proxy = TxProxy::new(ring, src.clone(), port.clone());
    (proxy, q, port, src)
}

#[test]
fn frames_are_read_in_batches_and_sent_in_order() {
    let frames: Vec<Vec<u8>> = (0..300).map(|i| udp_frame(i, 16)).collect();
    let (proxy, q, port, src) = recording_rig(
        TxRingCfg {
            max_burst: 512,
            ..Default::default()
        },
        &frames,
    );
    for f in &frames {
        q.send(f.as_ptr() as u64, 0, f.len() as u32, false);
    }
    assert_eq!(proxy.progress(), 300);
    let sent = port.sent.lock().unwrap();
    assert_eq!(sent.len(), 300);
    for (i, (_, s)) in sent.iter().enumerate() {
        assert_eq!(s, &frames[i], "frame {i} differs");
    }
    let batches = src.batches.lock().unwrap();
    let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
    assert_eq!(
        sizes.iter().sum::<usize>(),
        300,
        "every frame read once: {sizes:?}"
    );
    assert!(
        sizes.iter().all(|&n| n <= 256),
        "batches of at most 256: {sizes:?}"
    );
    assert_eq!(
        sizes[0], 256,
        "the first pass reads a full batch: {sizes:?}"
    );
}

#[test]
fn frames_behind_a_pending_wait_are_read_once_ahead_and_sent_on_time() {
    let frames: Vec<Vec<u8>> = (0..4).map(|i| udp_frame(i, 10)).collect();
    let (proxy, q, port, src) = recording_rig(
        TxRingCfg {
            max_burst: 16,
            wait_on_time: true,
            ..Default::default()
        },
        &frames,
    );
    let at = realtime_ns() + 40_000_000;
    let a = |i: usize| frames[i].as_ptr() as u64;
    q.send(a(0), 0, frames[0].len() as u32, false);
    q.wait_send(
        ns_to_wait_on_time(at),
        a(1),
        0,
        frames[1].len() as u32,
        false,
    );
    q.send(a(2), 0, frames[2].len() as u32, false);
    q.send(a(3), 0, frames[3].len() as u32, false);
    // Many passes while the WAIT is pending: the frames were read once, on the first.
    for _ in 0..20 {
        proxy.progress();
    }
    if realtime_ns() < at {
        assert_eq!(
            src.batches.lock().unwrap().len(),
            1,
            "one read for all passes"
        );
        assert_eq!(
            port.sent.lock().unwrap().len(),
            1,
            "only the frame before the WAIT"
        );
    }
    let t0 = std::time::Instant::now();
    while port.sent.lock().unwrap().len() < 4 {
        watchdog(t0, "the frames behind the WAIT");
        proxy.progress();
        std::thread::yield_now();
    }
    let read: Vec<u64> = src.batches.lock().unwrap().concat();
    assert_eq!(
        read,
        vec![a(0), a(1), a(2), a(3)],
        "each frame read exactly once"
    );
    let sent = port.sent.lock().unwrap();
    assert!(
        sent[1..].iter().all(|(t, _)| *t >= at),
        "nothing behind the WAIT left early"
    );
    for (i, (_, f)) in sent.iter().enumerate() {
        assert_eq!(f, &frames[i], "frame {i}");
    }
}

#[test]
fn completions_are_mlx5_cqes_naming_their_wqe() {
    use doca_soft::testing::mlx5::{cqe_opcode, syndrome};
    let frames: Vec<Vec<u8>> = (0..3).map(|i| udp_frame(i, 10 + i as usize)).collect();
    let r = rig(gpu_cq(16), frames);
    let before = realtime_ns();
    for (i, f) in r.frames.iter().enumerate() {
        r.q.send(f.as_ptr() as u64, 0, f.len() as u32, i >= 1);
    }
    r.q.send(0xdead_0000, 0, 64, false); // not registered: an error completion
    drain(&r);
    let c0 = r.q.completion(0);
    assert_eq!(c0.opcode, cqe_opcode::REQ);
    assert_eq!(
        (c0.wqe_counter, c0.owner),
        (1, 0),
        "first CQE: WQE 1, pass 0"
    );
    assert_eq!(c0.byte_cnt as usize, r.frames[1].len());
    let ts = doca_soft::testing::mlx5::sec_ns_to_time(c0.timestamp);
    assert!(
        ts >= before && ts <= realtime_ns(),
        "timestamp {ts} is CLOCK_REALTIME"
    );
    assert_eq!(r.q.completion(1).wqe_counter, 2);
    let e = r.q.completion(2);
    assert_eq!(e.opcode, cqe_opcode::REQ_ERR);
    assert_eq!(e.syndrome, syndrome::LOCAL_PROT_ERR);
    assert_eq!(e.wqe_counter, 3);
    assert_eq!(r.q.poll_completion(3, true), Err(DocaError::UNEXPECTED));
}

#[test]
fn multi_packet_wqe_wrapping_the_ring_sends_each_segment_as_a_frame() {
    let frames: Vec<Vec<u8>> = (0..70).map(|i| udp_frame(i, 16 + i as usize)).collect();
    let r = rig(gpu_cq(64), frames);
    // 62 single sends put the next WQE two slots before the end of the 64-slot ring.
    for f in &r.frames[..62] {
        r.q.send(f.as_ptr() as u64, 0, f.len() as u32, false);
    }
    drain(&r);
    let pkts: Vec<(u64, u32, u32)> = r.frames[62..69]
        .iter()
        .map(|f| (f.as_ptr() as u64, 0, f.len() as u32))
        .collect();
    let t = r.q.send_multi(&pkts, true);
    assert_eq!(t, 62);
    let f = &r.frames[69];
    assert_eq!(
        r.q.send(f.as_ptr() as u64, 0, f.len() as u32, true),
        65,
        "DS 9 took three slots (62, 63 and 0 of the ring)"
    );
    drain(&r);
    let sent: Vec<Vec<u8>> = r
        .port
        .sent
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.1.clone())
        .collect();
    assert_eq!(sent, r.frames, "every frame once, in order");
    assert_eq!(
        r.q.completion(0).wqe_counter,
        62,
        "one CQE for the whole WQE"
    );
    assert_eq!(r.q.completion(1).wqe_counter, 65);
    assert_eq!(r.q.poll_completion(2, true), Ok(2));
}

#[test]
fn unsupported_and_malformed_wqes_complete_with_errors_and_the_queue_goes_on() {
    use doca_soft::testing::mlx5::{self, cqe_opcode, syndrome, wqe};
    let frames = vec![udp_frame(7, 40)];
    let r = rig(gpu_cq(16), frames);
    let f = &r.frames[0];
    // An RDMA write (this NIC sends Ethernet only), and a SEND without data (DS 2).
    let mut rdma = [0u8; 64];
    rdma[..16].copy_from_slice(
        &wqe::Ctrl {
            opcode: 0x08,
            ds: 3,
            ..wqe::Ctrl::default()
        }
        .encode(),
    );
    let mut empty = [0u8; 64];
    empty[..16].copy_from_slice(
        &wqe::Ctrl {
            opcode: mlx5::opcode::SEND,
            ds: 2,
            ..wqe::Ctrl::default()
        }
        .encode(),
    );
    // A SEND whose Ethernet header travels inline (14 bytes: 2 in the Ethernet segment,
    // 12 in the next segment), the rest from memory.
    let mut inline = [0u8; 64];
    inline[..16].copy_from_slice(
        &wqe::Ctrl {
            opcode: mlx5::opcode::SEND,
            ds: 4,
            fm_ce_se: mlx5::CTRL_CQ_UPDATE,
            ..wqe::Ctrl::default()
        }
        .encode(),
    );
    let eth = wqe::EthSeg {
        inline_hdr_sz: 14,
        inline_hdr_start: [f[0], f[1]],
        ..wqe::EthSeg::default()
    };
    inline[16..32].copy_from_slice(&eth.encode());
    inline[32..44].copy_from_slice(&f[2..14]);
    let rest = wqe::DataSeg {
        byte_count: (f.len() - 14) as u32,
        lkey_raw: 0,
        addr: f.as_ptr() as u64 + 14,
    };
    inline[48..64].copy_from_slice(&rest.encode());
    assert_eq!(r.q.post_raw(&rdma), 0);
    assert_eq!(r.q.post_raw(&empty), 1);
    assert_eq!(r.q.post_raw(&inline), 2);
    drain(&r);
    for (k, idx) in [(0, 0), (1, 1)] {
        let c = r.q.completion(k);
        assert_eq!(
            (c.opcode, c.syndrome, c.wqe_counter),
            (cqe_opcode::REQ_ERR, syndrome::LOCAL_QP_OP_ERR, idx)
        );
    }
    let ok = r.q.completion(2);
    assert_eq!((ok.opcode, ok.wqe_counter), (cqe_opcode::REQ, 2));
    assert_eq!(
        r.port.sent.lock().unwrap()[0].1,
        *f,
        "inline header + data = the frame"
    );
    assert_eq!(r.proxy.counters().snapshot().errors, 2);
}

/// A port that takes frames in batches (as an AF_PACKET port does with `sendmmsg`): records
/// each call's frames and the CLOCK_REALTIME time of the call; refuses frames whose sequence
/// number is in `refuse`.
#[derive(Default)]
struct BatchPort {
    calls: Mutex<Vec<(u64, Vec<u32>)>>,
    refuse: Vec<u32>,
}
impl BatchPort {
    fn seq(f: &[u8]) -> u32 {
        u32::from_be_bytes(f[42..46].try_into().unwrap())
    }
    /// Sequence numbers in the order they left, and the time each left.
    fn sent(&self) -> Vec<(u64, u32)> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .flat_map(|(t, s)| s.iter().map(move |&q| (*t, q)))
            .collect()
    }
}
impl FrameOut for BatchPort {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        match self.send_batch(&[frame]) {
            (1, _) => Ok(()),
            (_, r) => r,
        }
    }
    fn send_batch(&self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        let n = frames
            .iter()
            .position(|f| self.refuse.contains(&Self::seq(f)))
            .unwrap_or(frames.len());
        let seqs = frames[..n].iter().map(|f| Self::seq(f)).collect();
        self.calls.lock().unwrap().push((realtime_ns(), seqs));
        if n < frames.len() {
            (n, Err(DocaError::IO_FAILED))
        } else {
            (n, Ok(()))
        }
    }
}

fn batch_rig(
    cfg: TxRingCfg,
    frames: &[Vec<u8>],
    refuse: Vec<u32>,
) -> (TxProxy, CpuTxq, Arc<BatchPort>) {
    let ring = TxRing::new(cfg, None).unwrap();
    let mut mem = MemRanges::new(None);
    for f in frames {
        mem.add_host(f.as_ptr(), f.len());
    }
    let port = Arc::new(BatchPort {
        refuse,
        ..Default::default()
    });
    // SAFETY: host-memory ring (addresses are CPU pointers); the proxy owns the ring and is
    // returned with the producer, which the tests drop before or with it.
    let q = unsafe { CpuTxq::new(ring.handle_cpu()) };
    let proxy = TxProxy::new(ring, Arc::new(mem), port.clone());
    (proxy, q, port)
}

#[test]
fn a_burst_leaves_in_batches_in_order_each_frame_counted_once() {
    const N: u32 = 300;
    let frames: Vec<Vec<u8>> = (0..N).map(|i| udp_frame(i, 18)).collect();
    // Frame 100 is refused by the port: its WQE completes with an error, the rest still go.
    let (proxy, q, port) = batch_rig(
        TxRingCfg {
            max_burst: 512,
            ..Default::default()
        },
        &frames,
        vec![100],
    );
    for (i, f) in frames.iter().enumerate() {
        q.send(f.as_ptr() as u64, 0, f.len() as u32, i % 50 == 49);
    }
    assert_eq!(proxy.progress(), N, "every slot consumed in one pass");
    let sent: Vec<u32> = port.sent().iter().map(|s| s.1).collect();
    let want: Vec<u32> = (0..N).filter(|&i| i != 100).collect();
    assert_eq!(
        sent, want,
        "in ring order, once each, the refused one left out"
    );
    let calls = port.calls.lock().unwrap();
    assert!(
        calls.iter().all(|c| c.1.len() <= 64),
        "at most 64 frames per call"
    );
    assert!(
        calls.len() <= 10,
        "batched, not one call per frame: {} calls",
        calls.len()
    );
    let c = proxy.counters().snapshot();
    assert_eq!((c.sent, c.errors), (u64::from(N) - 1, 1));
    let ev = proxy.take_events();
    let notified: Vec<u64> = ev
        .iter()
        .filter(|e| e.status == 0)
        .map(|e| e.wqe_index)
        .collect();
    assert_eq!(notified, vec![49, 99, 149, 199, 249, 299]);
    let failed: Vec<u64> = ev
        .iter()
        .filter(|e| e.status != 0)
        .map(|e| e.wqe_index)
        .collect();
    assert_eq!(failed, vec![100], "one error event, for the refused frame");
    assert_eq!(c.completed, 7);
}

#[test]
fn a_timed_send_in_the_middle_of_a_burst_ends_the_batch_and_leaves_on_time() {
    let frames: Vec<Vec<u8>> = (0..40).map(|i| udp_frame(i, 10)).collect();
    let (proxy, q, port) = batch_rig(
        TxRingCfg {
            max_burst: 64,
            wait_on_time: true,
            ..Default::default()
        },
        &frames,
        Vec::new(),
    );
    // Far enough ahead that the first pass surely runs before it.
    let at = realtime_ns() + 300_000_000;
    for (i, f) in frames.iter().enumerate() {
        if i == 20 {
            q.wait_send(
                ns_to_wait_on_time(at),
                f.as_ptr() as u64,
                0,
                f.len() as u32,
                false,
            );
        } else {
            q.send(f.as_ptr() as u64, 0, f.len() as u32, false);
        }
    }
    proxy.progress();
    let first = port.sent();
    if realtime_ns() < at {
        assert_eq!(
            first.iter().map(|s| s.1).collect::<Vec<_>>(),
            (0..20).collect::<Vec<u32>>(),
            "what is before the timed send leaves at once, nothing behind it"
        );
        assert!(proxy.waiting_until().is_some());
    }
    let t0 = std::time::Instant::now();
    while port.sent().len() < 40 {
        watchdog(t0, "the timed burst");
        proxy.progress();
        std::thread::yield_now();
    }
    let sent = port.sent();
    assert_eq!(
        sent.iter().map(|s| s.1).collect::<Vec<_>>(),
        (0..40).collect::<Vec<u32>>()
    );
    for (t, seq) in &sent[20..] {
        assert!(*t >= at, "frame {seq} left before its time");
    }
    assert_eq!(proxy.counters().snapshot().sent, 40);
}
