//! Figure 1: the device API ceiling. Rings live in GPU memory and a GPU-resident producer
//! (`bench_produce` in kernels/bench_rx.cu) plays the NIC: it writes whole frames and their
//! completions and publishes them; the receive kernel (`bench_rx`: device API receive, block
//! scope, every packet's headers parsed, a (sender, seq) bitmap for the loss check) consumes
//! them. No CPU is in the loop. 64 B and 1024 B packets, 1 to 16 queues (one producer block
//! and one receive block per queue), bursts of 2048 packets on blocks of 1024 threads (as a
//! GPUNetIO receive loop is usually sized); the earlier 256-packet / 256-thread shape runs as
//! a variant at the largest queue count, to show what the burst size buys (each receive call
//! and each publish costs a few system-scope fences and block barriers, whatever its size).
//!
//! Reported against the HBM bandwidth limit: device-to-device copy bandwidth is measured in
//! the same run, and each figure's notes give the HBM traffic it implies (frame + completion
//! written, headers + completion read) as a share of that bandwidth.

mod support;

use std::time::Instant;

use clap::Parser;
use cudarc::driver::{CudaContext, DevicePtr, LaunchConfig, PushKernelArg};
use doca_soft::testing::{RxqHandle, RING_VERSION};
use support::args::{self, Common};
use support::gpu_rx::GpuEnv;
use support::report::{Figure, Status};
use support::soft::slot_size;
use support::udp;

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "device_ceiling",
    about = "What one GPU sustains receiving without a NIC"
)]
struct Cli {
    /// Queue counts to measure
    #[arg(long, value_delimiter = ',')]
    queues: Option<Vec<usize>>,
    /// Frame sizes in bytes
    #[arg(long, value_delimiter = ',')]
    size: Option<Vec<usize>>,
    /// Frames per queue
    #[arg(long)]
    frames: Option<u64>,
    /// Packets per receive burst
    #[arg(long, default_value_t = BURST)]
    burst: u32,
    /// Threads per block
    #[arg(long, default_value_t = THREADS)]
    threads: u32,
    /// Skip the kernel variants
    #[arg(long = "no-variants")]
    no_variants: bool,
    /// MiB of GPU memory for the rings
    #[arg(long)]
    mib: Option<usize>,
    #[command(flatten)]
    common: Common,
}

/// Packet slots (and completions) per ring: at least this many, and 4 bursts.
const MIN_SLOTS: usize = 8192;
/// Packets per receive call (and per producer publish) of the main sweep.
const BURST: u32 = 2048;
/// Threads per block of both kernels in the main sweep.
const THREADS: u32 = 1024;
/// The earlier configuration, run as a variant at the largest queue count: what bursting
/// buys.
const SMALL_BURST: (u32, u32) = (256, 256);

/// How one ceiling run is shaped.
#[derive(Clone, Copy)]
struct Shape {
    queues: usize,
    size: usize,
    per_queue: u64,
    burst: u32,
    threads: u32,
}

/// `bench_rx`'s progress pointer: none (this bench reads no trace).
const NO_PROGRESS: u64 = 0;

/// Bytes read + written per second by device-to-device copies of `bytes`, `reps` times.
fn d2d_bandwidth(
    ctx: &std::sync::Arc<CudaContext>,
    bytes: usize,
    reps: usize,
) -> Result<f64, String> {
    let s = ctx.default_stream();
    let src = s
        .alloc_zeros::<u8>(bytes)
        .map_err(|e| format!("alloc: {e:?}"))?;
    let mut dst = s
        .alloc_zeros::<u8>(bytes)
        .map_err(|e| format!("alloc: {e:?}"))?;
    // Warm-up copy (first touch and clocks).
    s.memcpy_dtod(&src, &mut dst)
        .map_err(|e| format!("copy: {e:?}"))?;
    s.synchronize().map_err(|e| format!("sync: {e:?}"))?;
    let t = Instant::now();
    for _ in 0..reps {
        s.memcpy_dtod(&src, &mut dst)
            .map_err(|e| format!("copy: {e:?}"))?;
    }
    s.synchronize().map_err(|e| format!("sync: {e:?}"))?;
    Ok(2.0 * bytes as f64 * reps as f64 / t.elapsed().as_secs_f64())
}

/// What one ceiling run measured.
struct Ceiling {
    pps: f64,
    lost: u64,
    dup: u64,
    foreign: u64,
    timeouts: u64,
}

fn err<E: std::fmt::Debug>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what}: {e:?}")
}

/// Runs `queues` GPU-resident rings of `size`-byte frames, `per_queue` frames each.
fn ceiling(env: &GpuEnv, shape: Shape) -> Result<Ceiling, String> {
    let Shape {
        queues,
        size,
        per_queue,
        burst,
        threads,
    } = shape;
    let slots = MIN_SLOTS.max(4 * burst as usize);
    let ctx = env.ctx();
    let ps = ctx.new_stream().map_err(err("producer stream"))?;
    let cs = ctx.new_stream().map_err(err("consumer stream"))?;
    let slot = slot_size(size);
    let mut rings = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..queues {
        let pkts = ps
            .alloc_zeros::<u8>(slots * slot as usize)
            .map_err(err("packets"))?;
        let cqes = ps
            .alloc_zeros::<u8>(slots * 16)
            .map_err(err("completions"))?;
        let mut h = RxqHandle::default();
        h.pkt_addr = pkts.device_ptr(&ps).0;
        h.cqe_addr = cqes.device_ptr(&ps).0;
        h.pkt_num = slots as u32;
        h.max_pkt_sz = slot;
        h.cqe_num = slots as u32;
        h.version = RING_VERSION;
        // SAFETY: RxqHandle is repr(C) plain data; the slice covers exactly its bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (&h as *const RxqHandle).cast::<u8>(),
                std::mem::size_of::<RxqHandle>(),
            )
        };
        let handle = ps.clone_htod(bytes).map_err(err("handle"))?;
        handles.push(handle.device_ptr(&ps).0);
        rings.push((pkts, cqes, handle));
    }
    let mut frame = vec![0u8; size];
    udp::build_frame(&mut frame, 40000, udp::BASE_PORT, 0, 0);
    frame.resize(64, 0);
    let tmpl = ps.clone_htod(&frame).map_err(err("template"))?;
    let handles_p = ps.clone_htod(&handles).map_err(err("handles"))?;
    let handles_c = cs.clone_htod(&handles).map_err(err("handles"))?;
    ps.synchronize().map_err(err("setup"))?;
    let want = queues as u64 * per_queue;
    let mut bitmap = cs
        .alloc_zeros::<u32>(want.div_ceil(32) as usize)
        .map_err(err("bitmap"))?;
    let mut out = cs
        .clone_htod(&[0u64, u64::MAX, 0, 0, 0, 0, 0, 0])
        .map_err(err("out"))?;
    let mut timeouts = ps.alloc_zeros::<u64>(1).map_err(err("timeouts"))?;
    cs.synchronize().map_err(err("setup"))?;
    let cfg = LaunchConfig {
        grid_dim: (queues as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let (senders, idle_ns, max_ns) = (queues as u32, 500_000_000u64, 20_000_000_000u64);
    let rx = env
        .module()
        .load_function("bench_rx")
        .map_err(err("bench_rx"))?;
    let tx = env
        .module()
        .load_function("bench_produce")
        .map_err(err("bench_produce"))?;
    let mut b = cs.launch_builder(&rx);
    b.arg(&handles_c)
        .arg(&want)
        .arg(&senders)
        .arg(&per_queue)
        .arg(&mut bitmap)
        .arg(&mut out)
        .arg(&idle_ns)
        .arg(&max_ns)
        .arg(&burst)
        .arg(&NO_PROGRESS);
    // SAFETY: arguments match bench_rx; the rings outlive both kernels (synchronized below).
    unsafe { b.launch(cfg) }.map_err(err("launch bench_rx"))?;
    let size32 = size as u32;
    let mut b = ps.launch_builder(&tx);
    b.arg(&handles_p)
        .arg(&per_queue)
        .arg(&size32)
        .arg(&tmpl)
        .arg(&max_ns)
        .arg(&mut timeouts)
        .arg(&burst);
    // SAFETY: arguments match bench_produce; as above.
    unsafe { b.launch(cfg) }.map_err(err("launch bench_produce"))?;
    ps.synchronize().map_err(err("producer"))?;
    cs.synchronize().map_err(err("consumer"))?;
    let o = cs.clone_dtoh(&out).map_err(err("out"))?;
    let bm = cs.clone_dtoh(&bitmap).map_err(err("bitmap"))?;
    let t = ps.clone_dtoh(&timeouts).map_err(err("timeouts"))?;
    drop(rings);
    let received: u64 = bm.iter().map(|w| u64::from(w.count_ones())).sum();
    if o[5] != 0 {
        return Err(format!("receive kernel: {} recv errors", o[5]));
    }
    let secs = if o[2] > o[1] && o[1] != u64::MAX {
        (o[2] - o[1]) as f64 / 1e9
    } else {
        0.0
    };
    if o[0] == 0 {
        return Err(format!(
            "nothing received (producer timeouts {}): are the two kernels co-resident?",
            t[0]
        ));
    }
    Ok(Ceiling {
        pps: if secs > 0.0 { o[0] as f64 / secs } else { 0.0 },
        lost: want - received,
        dup: o[3],
        foreign: o[4],
        timeouts: t[0],
    })
}

/// Runs one point and emits its figure; returns (packets per second, zero loss).
fn run_point(
    env: &GpuEnv,
    name: &str,
    shape: Shape,
    hbm: Option<f64>,
    unit: &str,
    scale: f64,
) -> Result<(f64, bool), String> {
    let c = ceiling(env, shape)?;
    let size = shape.size;
    let zero = c.lost == 0 && c.dup == 0 && c.foreign == 0 && c.timeouts == 0;
    let moved = c.pps * (size as f64 + 96.0);
    let share = hbm.map_or(String::new(), |bw| {
        format!(
            "; HBM traffic {:.1} GB/s = {:.1}% of the measured bandwidth",
            moved / 1e9,
            100.0 * moved / bw
        )
    });
    Figure::info(
        name,
        c.pps * scale,
        unit,
        format!(
            "{:.1} Mpps = {:.1} Gbit/s; bursts of {} packets, {} threads per block; {} frames per queue; lost {}, duplicates {}, foreign {}, producer timeouts {}{share}",
            c.pps / 1e6,
            c.pps * size as f64 * 8.0 / 1e9,
            shape.burst,
            shape.threads,
            shape.per_queue,
            c.lost,
            c.dup,
            c.foreign,
            c.timeouts
        ),
    )
    .emit();
    Ok((c.pps, zero))
}

fn main() {
    let a: Cli = args::parse();
    let c = &a.common;
    let queues = a.queues.clone().unwrap_or_else(|| vec![1, 2, 4, 8, 16]);
    let sizes = a.size.clone().unwrap_or_else(|| vec![64, 1024]);
    let frames = a.frames.unwrap_or(c.pick(500_000, 4_000_000));
    let mib = a.mib.unwrap_or(c.pick(256, 1024));
    let (burst, threads) = (a.burst, a.threads);
    let variants = !a.no_variants;
    if threads == 0 || threads > 1024 || threads % 32 != 0 || burst == 0 {
        eprintln!("--threads must be a multiple of 32 up to 1024 and --burst at least 1");
        std::process::exit(2);
    }
    let env = GpuEnv::open();
    let hbm = match &env {
        Ok(env) => match d2d_bandwidth(env.ctx(), mib << 20, c.pick(10, 50)) {
            Ok(bw) => {
                Figure::info(
                    "device/hbm-d2d-copy-bandwidth",
                    bw / 1e9,
                    "GB/s",
                    format!("{}; read+write bytes of {mib} MiB device-to-device copies; the limit figure 1 is reported against", env.name),
                )
                .emit();
                Some(bw)
            }
            Err(e) => {
                Figure::skipped(
                    "device/hbm-d2d-copy-bandwidth",
                    None,
                    format!("failed: {e}"),
                )
                .emit();
                None
            }
        },
        Err(reason) => {
            Figure::skipped("device/hbm-d2d-copy-bandwidth", None, reason.clone()).emit();
            None
        }
    };
    for &size in &sizes {
        let (target, unit, scale) = if size == 64 {
            (">= 595 Mpps, zero loss", "Mpps", 1e-6)
        } else {
            (
                ">= 400 Gbit/s, zero loss",
                "Gbit/s",
                size as f64 * 8.0 / 1e9,
            )
        };
        let mut best: Option<(usize, f64, bool)> = None;
        for &q in &queues {
            let name = format!("device/ceiling/{size}B/{q}q");
            let env = match &env {
                Ok(e) => e,
                Err(reason) => {
                    Figure::skipped(&name, Some(target), reason.clone()).emit();
                    continue;
                }
            };
            let shape = Shape {
                queues: q,
                size,
                per_queue: frames,
                burst,
                threads,
            };
            match run_point(env, &name, shape, hbm, unit, scale) {
                Ok((pps, zero)) => {
                    if zero && best.is_none_or(|b| pps > b.1) {
                        best = Some((q, pps, zero));
                    }
                }
                Err(e) => {
                    Figure::skipped(&name, Some(target), format!("failed: {e}")).emit();
                    // A failing point (or kernels that time out) would fail the same way for
                    // more queues: stop this size.
                    break;
                }
            }
        }
        if let (true, Ok(env), Some(&q)) = (variants, &env, queues.iter().max()) {
            // What the burst size buys: the same point with the small-burst configuration.
            let (vb, vt) = SMALL_BURST;
            let name = format!("device/ceiling-variant/burst{vb}-threads{vt}/{size}B/{q}q");
            let shape = Shape {
                queues: q,
                size,
                per_queue: frames,
                burst: vb,
                threads: vt,
            };
            if let Err(e) = run_point(env, &name, shape, hbm, unit, scale) {
                Figure::skipped(&name, None, format!("failed: {e}")).emit();
            }
        }
        let name = format!("device/ceiling/{size}B/best");
        match best {
            Some((q, pps, _)) => {
                let ok = if size == 64 {
                    pps >= 595e6
                } else {
                    pps * size as f64 * 8.0 >= 400e9
                };
                Figure::info(
                    &name,
                    pps * scale,
                    unit,
                    format!("best zero-loss point: {q} queues"),
                )
                .with_target(target, Status::check(ok))
                .emit()
            }
            None => Figure::skipped(
                &name,
                Some(target),
                match &env {
                    Err(r) => r.clone(),
                    Ok(_) => "no zero-loss run".into(),
                },
            )
            .emit(),
        }
    }
}
