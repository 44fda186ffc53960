//! The soft NIC's TX path with a CPU producer in place of the GPU kernel: a host-memory TX
//! ring written with the device API's send algorithm (`CpuTxq`), drained by the TX proxy on
//! its own thread, sending to a [`FrameOut`] (the `lo` port, or a recorder).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use doca_soft::testing::capi::doca_error::DocaResult;
use doca_soft::testing::{CpuTxq, FrameOut, MemRanges, Port, TxProxy, TxRing, TxRingCfg};

/// A port as a TX proxy's output.
pub struct PortOut(pub Arc<Port>);

impl FrameOut for PortOut {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        self.0.send(frame)
    }
    fn send_batch(&self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        self.0.send_batch(frames)
    }
}

/// A TX ring over host frames, its proxy thread, and the producer.
pub struct SoftTx {
    /// The proxy (shared with its thread).
    pub proxy: Arc<TxProxy>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The producer (device API send algorithm on the CPU).
    pub txq: CpuTxq,
    /// The frames the descriptors point at (read by the proxy).
    pub frames: Vec<Vec<u8>>,
}

impl SoftTx {
    /// A ring of `max_burst` descriptors over `frames`, sending to `out`.
    pub fn new(frames: Vec<Vec<u8>>, cfg: TxRingCfg, out: Arc<dyn FrameOut>) -> SoftTx {
        let mut mem = MemRanges::new(None);
        for f in &frames {
            mem.add_host(f.as_ptr(), f.len());
        }
        let ring = TxRing::new(cfg, None).expect("host TX ring");
        let proxy = Arc::new(TxProxy::new(ring, Arc::new(mem), out));
        // SAFETY: host ring: desc_addr and cq_addr are CPU pointers alive as long as the
        // proxy, which this value owns and outlives the producer's use.
        let txq = unsafe { CpuTxq::new(proxy.ring().handle_cpu()) };
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (p, s) = (proxy.clone(), stop.clone());
            std::thread::spawn(move || {
                while !s.load(Ordering::Acquire) {
                    if p.progress() == 0 {
                        std::hint::spin_loop();
                    }
                }
                while p.progress() > 0 {}
            })
        };
        SoftTx {
            proxy,
            stop,
            thread: Some(thread),
            txq,
            frames,
        }
    }

    /// Address of frame `i` for a descriptor.
    pub fn addr(&self, i: usize) -> u64 {
        self.frames[i].as_ptr() as u64
    }

    /// Frames the proxy sent so far.
    pub fn sent(&self) -> u64 {
        self.proxy.counters().sent.load(Ordering::Relaxed)
    }

    /// Stops the proxy thread after it drained the ring.
    pub fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.sent()
    }
}

impl Drop for SoftTx {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl SoftTx {
    /// Rewrites the sequence payload of frame `i` in place.
    ///
    /// The caller guarantees that no published, unconsumed descriptor points at frame `i`
    /// (the proxy reads frames only for descriptors between `sq_done` and `sq_ready`).
    pub fn write_seq(&self, i: usize, sender: u16, seq: u64) {
        let f = &self.frames[i];
        let p = f.as_ptr() as *mut u8;
        // SAFETY: `p` is the start of a live frame of f.len() >= MIN_SIZE bytes owned by
        // this value; per the contract above the proxy does not read it meanwhile.
        let payload =
            unsafe { std::slice::from_raw_parts_mut(p.add(udp::HEADERS), f.len() - udp::HEADERS) };
        udp::write_payload(payload, sender, seq);
    }
}

use super::udp::{self, SeqTracker, UdpRun};
use std::time::{Duration, Instant};

/// Descriptors of each TX ring in the throughput run.
const TX_BURST: u32 = 256;

/// `queues` CPU producers -> TX rings -> proxy threads -> `lo` port, `frames` each, received
/// by `recvmmsg` sockets (sender i -> port BASE_PORT + i) that verify every sequence number.
/// `rate_pps` paces the producers in total (0 = unpaced). `send_secs` is the mean time from
/// the first descriptor to the proxy having sent the last frame.
pub fn run_soft_tx(
    lo: &Arc<Port>,
    queues: usize,
    size: usize,
    frames: u64,
    rate_pps: f64,
) -> std::io::Result<UdpRun> {
    let done = Arc::new(AtomicBool::new(false));
    let receivers = udp::spawn_receivers(queues, size, frames, &done)?;
    let per = if rate_pps > 0.0 {
        rate_pps / queues as f64
    } else {
        0.0
    };
    let producers: Vec<_> = (0..queues)
        .map(|q| {
            let lo = lo.clone();
            std::thread::spawn(move || produce(lo, q as u16, size, frames, per))
        })
        .collect();
    let mut run = UdpRun::default();
    for p in producers {
        let (sent, secs) = p.join().expect("producer");
        run.sent += sent;
        run.send_secs += secs / queues as f64;
    }
    done.store(true, Ordering::Release);
    let mut all = SeqTracker::new(queues, frames);
    for r in receivers {
        all.merge(&r.join().expect("receiver").tracker);
    }
    run.received = all.received();
    run.lost = all.lost();
    run.duplicates = all.duplicates();
    Ok(run)
}

/// One producer: returns (frames the proxy sent, seconds until it had sent them all).
fn produce(lo: Arc<Port>, q: u16, size: usize, frames: u64, rate_pps: f64) -> (u64, f64) {
    // Two frames per descriptor slot: a frame is rewritten only after the descriptor that
    // used it one ring earlier was consumed (the producer's reserve waits for that).
    let pool = 2 * TX_BURST as usize;
    let bufs: Vec<Vec<u8>> = (0..pool)
        .map(|_| {
            let mut f = vec![0u8; size];
            udp::build_frame(&mut f, 40000 + q, udp::BASE_PORT + q, q, 0);
            f
        })
        .collect();
    let cfg = TxRingCfg {
        max_burst: TX_BURST,
        ..Default::default()
    };
    let tx = SoftTx::new(bufs, cfg, Arc::new(PortOut(lo)));
    let start = Instant::now();
    for seq in 0..frames {
        if rate_pps > 0.0 && seq % 32 == 0 {
            let due = Duration::from_secs_f64(seq as f64 / rate_pps);
            while start.elapsed() < due {
                std::hint::spin_loop();
            }
        }
        let i = (seq % pool as u64) as usize;
        tx.write_seq(i, q, seq);
        tx.txq.send(tx.addr(i), 1u32.to_be(), size as u32, false);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while tx.sent() + tx.proxy.counters().errors.load(Ordering::Relaxed) < frames
        && Instant::now() < deadline
    {
        std::hint::spin_loop();
    }
    let secs = start.elapsed().as_secs_f64();
    (tx.finish(), secs)
}

/// The TX proxy's own cost per frame, one thread, nothing else running: `frames` frames of
/// `size` bytes in rounds of [`TX_BURST`] descriptors written ahead by a CPU producer (not
/// timed), each round drained by `TxProxy::progress` calls on this thread into the `lo`
/// port (timed). Nanoseconds per frame, best of 3. The frames end at a kernel-dropping
/// socket bound by the caller.
pub fn proxy_drain_ns(lo: &Arc<Port>, size: usize, frames: u64) -> f64 {
    let bufs: Vec<Vec<u8>> = (0..TX_BURST as usize)
        .map(|i| {
            let mut f = vec![0u8; size];
            udp::build_frame(&mut f, 40000, udp::BASE_PORT, 0, i as u64);
            f
        })
        .collect();
    let mut mem = MemRanges::new(None);
    for f in &bufs {
        mem.add_host(f.as_ptr(), f.len());
    }
    let cfg = TxRingCfg {
        max_burst: TX_BURST,
        ..Default::default()
    };
    let ring = TxRing::new(cfg, None).expect("host TX ring");
    let proxy = TxProxy::new(ring, Arc::new(mem), Arc::new(PortOut(lo.clone())));
    // SAFETY: host ring: its addresses are CPU pointers alive as long as `proxy`, which
    // outlives every use of `txq` below.
    let txq = unsafe { CpuTxq::new(proxy.ring().handle_cpu()) };
    let mut best = f64::MAX;
    for _ in 0..3 {
        let (mut done, mut ns) = (0u64, 0u128);
        while done < frames {
            for f in &bufs {
                txq.send(f.as_ptr() as u64, 1u32.to_be(), size as u32, false);
            }
            let t = Instant::now();
            let mut left = TX_BURST;
            while left > 0 {
                left = left.saturating_sub(proxy.progress());
            }
            ns += t.elapsed().as_nanos();
            done += u64::from(TX_BURST);
        }
        best = best.min(ns as f64 / done as f64);
    }
    best
}
