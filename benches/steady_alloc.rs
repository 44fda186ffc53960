//! Figure 6: memory. (a) Heap allocations per packet in steady state on the soft NIC's RX
//! paths (in-memory wire, and `lo` through AF_PACKET, -> dispatcher -> RSS -> host RX ring
//! -> CPU consumer), counted by a counting global allocator over every thread while a fixed
//! number of frames flows after a warm-up (senders allocate everything up front). (b) Host memory per RX queue besides the application's packet ring: what creating
//! and registering one queue allocates.
//!
//! (c) Heap allocations per UROM command on the host side (this process: the daemon and
//! the worker are other processes): graph loopback commands in callback form, after a
//! warm-up, with a completion closure that allocates nothing itself.
//!
//! The GPU variants (device-mapped rings, pinned memory) print as skipped until they land.

mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use doca_soft::testing::Port;
use doca_test_support::alloc::{CountingAlloc, Counts, Region};
use support::args::{self, Common};
use support::gpu_rx::{run_gpu_rx_counted, BenchDev, CountWindow, GpuEnv, GpuQueue};
use support::report::{Figure, Status};
use support::soft::{port_spec, slot_size, HostQueue, Mode, SoftRx};
use support::udp;
use support::urom::{Urom, UromBins};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "steady_alloc",
    about = "Heap allocations per packet in steady state"
)]
struct Cli {
    /// Frames per run
    #[arg(long)]
    frames: Option<u64>,
    /// Frame size in bytes
    #[arg(long, default_value_t = 64)]
    size: usize,
    #[command(flatten)]
    common: Common,
}

/// Most frames in flight (sent, not consumed): below the ring's size, so none is dropped.
const IN_FLIGHT: u64 = 4096;

/// Waits (bounded) until fewer than [`IN_FLIGHT`] frames before `seq` are unconsumed.
fn gate(got: &AtomicU64, seq: u64) {
    let t = Instant::now();
    while seq.saturating_sub(got.load(Ordering::Acquire)) >= IN_FLIGHT {
        if t.elapsed() > Duration::from_secs(5) {
            return; // frames were lost; wait_for reports it
        }
        std::hint::spin_loop();
    }
}

/// Where the bench frames come from, with everything allocated up front.
enum Source {
    Wire(Arc<Port>, Vec<u8>),
    Lo(udp::UdpSender),
}

impl Source {
    /// Sends sequence numbers `from..to` without allocating.
    fn send(&mut self, got: &AtomicU64, from: u64, to: u64) -> Result<(), String> {
        match self {
            Source::Wire(peer, frame) => {
                for seq in from..to {
                    gate(got, seq);
                    udp::write_payload(&mut frame[udp::HEADERS..], 0, seq);
                    while peer.send(frame).is_err() {
                        std::hint::spin_loop();
                    }
                }
                Ok(())
            }
            Source::Lo(s) => s
                .send_range(from, to, |seq| gate(got, seq))
                .map(|_| ())
                .map_err(|e| e.to_string()),
        }
    }
}

fn wait_for(got: &AtomicU64, n: u64) -> bool {
    let t = Instant::now();
    while got.load(Ordering::Acquire) < n {
        if t.elapsed() > Duration::from_secs(20) {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// Allocations (and bytes) per packet over `frames` frames after a warm-up, all threads.
fn per_packet(mode: Mode, frames: u64, size: usize) -> Result<(f64, f64), String> {
    let wire = format!("alloc{}", std::process::id());
    let rx = SoftRx::open(&port_spec(mode, &wire, 0), 1, 8192, slot_size(size));
    // On lo, a bound (never read) socket keeps the kernel from answering with ICMP.
    let _sink = match mode {
        Mode::Lo => Some(
            udp::udp_socket(Some(udp::BASE_PORT), 0, Duration::from_millis(1))
                .map_err(|e| e.to_string())?,
        ),
        Mode::Wire => None,
    };
    let mut src = match mode {
        Mode::Wire => {
            let peer = Port::for_spec(&port_spec(mode, &wire, 1)).map_err(|e| format!("{e:?}"))?;
            let mut frame = vec![0u8; size];
            udp::build_frame(&mut frame, 40000, udp::BASE_PORT, 0, 0);
            Source::Wire(peer, frame)
        }
        Mode::Lo => {
            Source::Lo(udp::UdpSender::new(0, udp::BASE_PORT, size).map_err(|e| e.to_string())?)
        }
    };
    let got = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let consumer = {
        let c = SendRxq(rx.queues[0].consumer());
        let (got, stop) = (got.clone(), stop.clone());
        std::thread::spawn(move || {
            let c = c;
            while !stop.load(Ordering::Acquire) {
                let mut ours = 0u64;
                c.0.recv_with(64, 1_000_000, |_, _, f| {
                    ours += u64::from(udp::parse_frame(f).is_some());
                });
                got.fetch_add(ours, Ordering::Release);
            }
        })
    };
    let warm = frames / 4;
    let sent = src.send(&got, 0, warm);
    let ok = sent.is_ok() && wait_for(&got, warm);
    let region = Region::start();
    let sent = sent.and(src.send(&got, warm, warm + frames));
    let ok = ok && sent.is_ok() && wait_for(&got, warm + frames);
    let c = region.finish();
    stop.store(true, Ordering::Release);
    consumer.join().map_err(|_| "consumer panicked")?;
    sent?;
    if !ok {
        return Err(format!(
            "frames did not arrive: {} of {} (ring-full drops {})",
            got.load(Ordering::Relaxed),
            warm + frames,
            rx.ring_full_drops()
        ));
    }
    Ok((
        c.allocs as f64 / frames as f64,
        c.bytes as f64 / frames as f64,
    ))
}

/// Host bytes allocated by creating and registering one RX queue (a second one: the first
/// started the port), besides its packet ring: (heap bytes, packet ring bytes, resident-set
/// growth, which includes the new lane's mapped AF_PACKET ring on `lo`).
fn per_queue(mode: Mode, slots: usize, size: usize) -> (u64, usize, u64) {
    let wire = format!("qmem{}", std::process::id());
    let port = Port::for_spec(&port_spec(mode, &wire, 0)).expect("port");
    // A first queue starts the dispatcher (per port, not per queue).
    let first = HostQueue::new(64, 64);
    port.register_rx_queue(0, first.ring.clone())
        .expect("register");
    let rss0 = rss_bytes();
    let region = Region::start();
    let q = HostQueue::new(slots, slot_size(size));
    port.register_rx_queue(1, q.ring.clone()).expect("register");
    let c = region.finish();
    let rss1 = rss_bytes();
    let app = q.app_bytes();
    port.unregister_rx_queue(1);
    port.unregister_rx_queue(0);
    (
        c.bytes - app as u64,
        app,
        rss1.saturating_sub(rss0).saturating_sub(app as u64),
    )
}

/// Resident set size of this process in bytes.
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Host memory of one started GPU RX queue, after a first one started the port, its
/// dispatcher and CUDA: (resident-set growth, heap bytes counted).
fn gpu_queue_bytes(env: &GpuEnv, size: usize) -> Result<(u64, u64), String> {
    let wire = format!("gqmem{}", std::process::id());
    let dev = BenchDev::new(Mode::Wire, &wire);
    let first = GpuQueue::new(env, dev.0, 0, slot_size(size))?;
    let rss0 = rss_bytes();
    let region = Region::start();
    let second = GpuQueue::new(env, dev.0, 1, slot_size(size));
    let heap = region.finish().bytes;
    let rss1 = rss_bytes();
    drop(second?);
    drop(first);
    drop(dev);
    Ok((rss1.saturating_sub(rss0), heap))
}

struct SendRxq(doca_soft::testing::CpuRxq);
// SAFETY: the consumer reads a host ring that lives until after the thread is joined; one
// thread uses it.
unsafe impl Send for SendRxq {}

fn main() {
    let a: Cli = args::parse();
    let isolated = support::netns::isolate_or_warn();
    let frames = a.frames.unwrap_or(a.common.pick(50_000, 1_000_000));
    let size = a.size;
    for (mode, what) in [
        (Mode::Wire, "wire, dispatcher, host ring, CPU consumer"),
        (
            Mode::Lo,
            "sendmmsg sender, lo, AF_PACKET dispatcher, host ring, CPU consumer",
        ),
    ] {
        let name = format!("mem/allocs-per-packet/soft-{}-cpu/{size}B", mode.name());
        if mode == Mode::Lo && !isolated {
            Figure::skipped(
                &name,
                Some("0 allocations per packet"),
                "needs a private network namespace: skipped",
            )
            .emit();
            continue;
        }
        match per_packet(mode, frames, size) {
            Ok((allocs, bytes)) => Figure::info(
                &name,
                allocs,
                "allocs/pkt",
                format!("{bytes:.1} B/pkt; all threads, {frames} frames after warm-up; {what}"),
            )
            .with_target("0 allocations per packet", Status::check(allocs == 0.0))
            .emit(),
            Err(e) => Figure::skipped(
                &name,
                Some("0 allocations per packet"),
                format!("failed: {e}"),
            )
            .emit(),
        }
    }
    let slots = support::gpu_rx::SLOTS;
    let (extra, app, _) = per_queue(Mode::Wire, slots, size);
    Figure::info(
        format!("mem/host-bytes-per-rx-queue/{slots}x{size}B"),
        extra as f64 / (1 << 20) as f64,
        "MiB",
        format!("in-memory wire port: heap bytes of one host RX queue (handle, completion ring, sink, the new lane's input queue) besides the app's {app} B packet ring"),
    )
    .with_target("<= 8 MiB", Status::check(extra <= 8 << 20))
    .emit();
    let name = format!("mem/host-bytes-per-rx-queue/lo/{slots}x{size}B");
    let target = "<= 1 MiB (socket-backed port)";
    if isolated {
        let (extra, app, rss) = per_queue(Mode::Lo, slots, size);
        Figure::info(
            &name,
            extra as f64 / (1 << 20) as f64,
            "MiB",
            format!("AF_PACKET port on lo: heap bytes of one host RX queue and its lane (no input queue: made only when frames are injected) besides the app's {app} B packet ring; resident-set growth besides the packet ring {rss} B (the new lane's TPACKET ring, mapped from the kernel, counts there)"),
        )
        .with_target(target, Status::check(extra <= 1 << 20))
        .emit();
    } else {
        Figure::skipped(
            &name,
            Some(target),
            "needs a private network namespace: skipped",
        )
        .emit();
    }
    let gpu = GpuEnv::open();
    let name = format!("mem/allocs-per-packet/soft-lo-gpu/{size}B");
    let target = "0 allocations per packet";
    match &gpu {
        Err(reason) => Figure::skipped(&name, Some(target), reason.clone()).emit(),
        Ok(_) if !isolated => Figure::skipped(
            &name,
            Some(target),
            "needs a private network namespace: skipped",
        )
        .emit(),
        Ok(env) => {
            let mut w = CountWindow::default();
            match run_gpu_rx_counted(env, Mode::Lo, 1, size, frames, 0.0, Some(&mut w)) {
                Ok(r) if r.received > 0 && w.frames > 0 => {
                    let c = w.counts;
                    let allocs = c.allocs as f64 / w.frames as f64;
                    Figure::info(
                        &name,
                        allocs,
                        "allocs/pkt",
                        format!(
                            "{:.1} B/pkt; all threads, over the last {} frames sent (after the first fifth, the warm-up); {} of {} frames received; sendmmsg sender, lo, AF_PACKET dispatcher, proxy copies into GPU memory, receive kernel on {}",
                            c.bytes as f64 / w.frames as f64,
                            w.frames,
                            r.received,
                            r.sent,
                            env.name
                        ),
                    )
                    .with_target(target, Status::check(c.allocs == 0))
                    .emit()
                }
                Ok(_) => Figure::skipped(&name, Some(target), "failed: nothing received").emit(),
                Err(e) => Figure::skipped(&name, Some(target), format!("failed: {e}")).emit(),
            }
        }
    }
    urom_allocs_per_command(a.common.pick(2_000, 20_000));
    let name = format!("mem/host-bytes-per-rx-queue/gpu/{slots}x{size}B");
    match gpu.and_then(|env| gpu_queue_bytes(&env, size)) {
        Ok((rss, heap)) => {
            let host = rss.max(heap);
            Figure::info(
                &name,
                host as f64 / (1 << 20) as f64,
                "MiB",
                format!("host memory of one started GPU RX queue (packet ring in GPU memory): resident-set growth {rss} B (pinned rings included), heap {heap} B"),
            )
            .with_target("<= 8 MiB", Status::check(host <= 8 << 20))
            .emit()
        }
        Err(e) => Figure::skipped(&name, Some("<= 8 MiB"), e).emit(),
    }
}

/// Figure 6 (c): host allocations per graph loopback command in steady state.
fn urom_allocs_per_command(commands: u64) {
    let name = "mem/allocs-per-command/urom";
    let target = "0 allocations per command";
    // (all counts, allocations inside submit calls, progress calls)
    let run = || -> Result<(Counts, u64, u64, u64), String> {
        // Kept alive while workers start: dropping it removes the scratch plugin directory.
        let bins = UromBins::find()?;
        let u = Urom::start(&bins, "tcp,sm", 2)?;
        let w = u.worker(20, u.graph.plugin.id)?;
        let done = Arc::new(AtomicU64::new(0));
        let (submit_allocs, polls) = (AtomicU64::new(0), AtomicU64::new(0));
        let region: std::cell::Cell<Option<&Region>> = std::cell::Cell::new(None);
        let one = |i: u64| -> Result<(), String> {
            let d = done.clone();
            let before = region.get().map(|r| r.so_far().allocs);
            u.graph
                .loopback_with(&w, i, move |r| {
                    if r == Ok(i) {
                        d.fetch_add(1, Ordering::Release);
                    }
                })
                .map_err(|e| e.to_string())?;
            if let (Some(r), Some(b)) = (region.get(), before) {
                submit_allocs.fetch_add(r.so_far().allocs - b, Ordering::Relaxed);
            }
            let t = Instant::now();
            while done.load(Ordering::Acquire) <= i {
                w.progress();
                polls.fetch_add(1, Ordering::Relaxed);
                if t.elapsed() > Duration::from_secs(10) {
                    return Err(format!("command {i}: no (correct) answer"));
                }
            }
            Ok(())
        };
        let warmup = commands / 10 + 100;
        for i in 0..warmup {
            one(i)?;
        }
        let counting = Region::start();
        region.set(Some(&counting));
        polls.store(0, Ordering::Relaxed);
        let r = (warmup..warmup + commands).try_for_each(one);
        region.set(None);
        let c = counting.finish();
        r.map(|_| {
            (
                c,
                commands,
                submit_allocs.load(Ordering::Relaxed),
                polls.load(Ordering::Relaxed),
            )
        })
    };
    match run() {
        Ok((c, n, submit, polls)) => {
            let per = c.allocs as f64 / n as f64;
            Figure::info(
                name,
                per,
                "allocs/cmd",
                format!(
                    "{:.1} B/cmd; host process, all threads, {n} graph loopback commands after a warm-up (callback form; the completion closure allocates nothing itself); UCX_TLS=tcp,sm; {:.1} allocs/cmd inside submit, {:.1} inside the {:.1} progress calls/cmd the host spins through ({:.2} per progress call); steady path: released command tasks are reused, frames are built and read in place (reused send buffers, borrowed receive buffers), the completion closure is kept in the task's user area and sees the notification body in place",
                    c.bytes as f64 / n as f64,
                    submit as f64 / n as f64,
                    (c.allocs - submit) as f64 / n as f64,
                    polls as f64 / n as f64,
                    (c.allocs - submit) as f64 / polls.max(1) as f64
                ),
            )
            .with_target(target, Status::check(c.allocs == 0))
            .emit()
        }
        Err(e) => Figure::skipped(name, Some(target), format!("failed: {e}")).emit(),
    }
}
