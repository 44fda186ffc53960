//! simple_send: the GPUNetIO send sample. Each CUDA thread owns one UDP frame (pktgen
//! format, checksums left to the queue's offload) in GPU memory and sends it again and
//! again with a new sequence number, polling completions on the GPU; with a shared queue
//! (`-q 1`) 2 blocks send through `txq_send` with thread, warp or block scope (`-e`),
//! otherwise one block writes send-ring entries itself. `-p 1` drives the queue from a CPU
//! proxy thread.
//!
//! ```sh
//! simple_send -g 0 -n lo -s 1024 -t 256 -q 1 -e 1 --count 100000
//! pktgen recv -i lo --require-csum                      # in another shell
//! ```
//!
//! Extra flags: `-d/--duration` seconds, `-c/--count` packets (rounded up to whole rounds
//! of `-t`), `-P/--dst-port` (default 5000). The last line is a `summary`.

#[path = "common/mod.rs"]
mod common;

use clap::Parser;
use common::cli::{self, fail, usage_error, General};
use common::packet::{self, FrameSpec};
use common::{gpu, signal, txq};
use cuda_kernels::{ExecScope, ExitFlag, Kernels, TxCounters, MAX_THREADS_PER_BLOCK};
use doca::gpunetio::{Flow, FlowConfig, FlowPort};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const PROG: &str = "simple_send";

/// The command line: the original sample's flags, a few for scripts, DOCA's general flags.
#[derive(Parser, Debug)]
#[command(name = PROG, about = "GPU send sample: CUDA threads send UDP frames")]
struct Cli {
    /// GPU PCIe address (or ordinal)
    #[arg(short = 'g', long)]
    gpu: String,
    /// NIC PCIe address or interface name
    #[arg(short = 'n', long)]
    nic: String,
    /// Frame size in bytes incl. headers (58..=1514)
    #[arg(short = 's', long)]
    size: u32,
    /// CUDA threads (multiple of 32; of 64 and >= 64 with -q 1)
    #[arg(short = 't', long)]
    threads: u32,
    /// 1: shared queue through txq_send, 0: exclusive
    #[arg(short = 'q', long = "shared-qp", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=1))]
    shared_qp: u32,
    /// 1: a CPU proxy thread drives the queue
    #[arg(short = 'p', long, default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=1))]
    proxy: u32,
    /// Send scope with -q 1: 0 thread, 1 warp, 2 block [default: 2]
    #[arg(short = 'e', long = "exec-scope", value_parser = clap::value_parser!(u32).range(0..=2))]
    exec_scope: Option<u32>,
    /// Stop after this many seconds
    #[arg(short = 'd', long, value_parser = cli::positive_seconds)]
    duration: Option<f64>,
    /// Stop after this many packets (whole rounds of -t)
    #[arg(short = 'c', long, value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// UDP destination port
    #[arg(short = 'P', long = "dst-port", default_value_t = 5000)]
    dst_port: u16,
    #[command(flatten)]
    general: General,
}

/// The validated command line.
struct Args {
    gpu: String,
    nic: String,
    size: u32,
    threads: u32,
    shared: bool,
    proxy: bool,
    scope: ExecScope,
    duration: Option<f64>,
    rounds: u64,
    dst_port: u16,
}

fn parse() -> Args {
    // First: a Ctrl-C during setup must still lead to an orderly teardown.
    signal::install();
    let c: Cli = cli::parse(|c: &Cli| &c.general);
    let (size, threads, shared) = (c.size, c.threads, c.shared_qp == 1);
    if !(packet::MIN_FRAME as u32..=packet::MAX_FRAME as u32).contains(&size) {
        usage_error::<Cli>(format!(
            "--size {size}: frames must be {}..={} bytes (the port's maximum frame)",
            packet::MIN_FRAME,
            packet::MAX_FRAME
        ));
    }
    if threads == 0 || threads % 32 != 0 {
        usage_error::<Cli>(format!(
            "--threads {threads}: must be a non-zero multiple of 32"
        ));
    }
    if shared && (threads < 64 || threads % 64 != 0) {
        usage_error::<Cli>(format!("--threads {threads}: with a shared queue it must be a multiple of 64 (2 blocks of whole warps)"));
    }
    let per_block = if shared { threads / 2 } else { threads };
    if per_block > MAX_THREADS_PER_BLOCK {
        usage_error::<Cli>(format!(
            "--threads {threads}: at most {MAX_THREADS_PER_BLOCK} per block"
        ));
    }
    if threads > txq::TX_DESCRIPTORS / 2 {
        usage_error::<Cli>(format!(
            "--threads {threads}: a round must fit half the send ring ({} entries)",
            txq::TX_DESCRIPTORS
        ));
    }
    if c.exec_scope.is_some() && !shared {
        eprintln!("{PROG}: note: --exec-scope only applies with --shared-qp 1");
    }
    let scope =
        ExecScope::from_index(c.exec_scope.unwrap_or(2)).expect("0..=2, checked by the parser");
    Args {
        gpu: c.gpu,
        nic: c.nic,
        size,
        threads,
        shared,
        proxy: c.proxy == 1,
        scope,
        duration: c.duration,
        rounds: c.count.map_or(0, |n| n.div_ceil(u64::from(threads))),
        dst_port: c.dst_port,
    }
}

fn main() {
    let args = parse();
    if let Err(e) = run(&args) {
        fail(PROG, e);
    }
}

fn run(a: &Args) -> Result<(), String> {
    let nic = gpu::open_nic(&a.nic)?;
    let gpu = gpu::open_gpu(&a.gpu)?;
    let flow = Flow::init(FlowConfig::default()).map_err(|e| format!("DOCA Flow init: {e}"))?;
    let port = FlowPort::start(&flow, &nic, 0).map_err(|e| format!("Flow port start: {e}"))?;
    let txq = txq::start_txq(&nic, &gpu, a.proxy, false)?;
    let spec = FrameSpec {
        dst_port: a.dst_port,
        ..FrameSpec::default()
    };
    let size = a.size as usize;
    let mut frames = vec![0u8; size * a.threads as usize];
    for (i, f) in frames.chunks_exact_mut(size).enumerate() {
        packet::build_frame(f, &spec, i as u64, 0, false);
    }
    let (buf, mmap, mkey_be) = txq::frame_buffer(&gpu, &nic, &frames)?;
    let kernels = Kernels::load(&gpu).map_err(|e| e.to_string())?;
    let exit = ExitFlag::new(&gpu).map_err(|e| e.to_string())?;
    let counters = TxCounters::new(&gpu).map_err(|e| e.to_string())?;
    let proxy_stop = AtomicBool::new(false);
    let start = Instant::now();
    let mut why = "signal";
    let result = std::thread::scope(|s| -> Result<(), String> {
        let proxy = a
            .proxy
            .then(|| s.spawn(|| txq::proxy_loop(&txq, &proxy_stop)));
        let handle = txq
            .gpu_handle()
            .map_err(|e| format!("queue GPU handle: {e}"))?;
        // The kernel runs in a scope that joins it before the queue and buffers can go.
        let outcome = kernels.scope(|ks| {
            let running = ks
                .launch_simple_send(
                    handle, a.shared, a.scope, a.threads, &buf, mkey_be, a.size, a.rounds, &exit,
                    &counters,
                )
                .map_err(|e| e.to_string());
            running.and_then(|running| {
                println!(
                    "Sending {}-byte frames from {} threads ({} queue{}) on {}; Ctrl-C to stop",
                    a.size,
                    a.threads,
                    if a.shared { "shared" } else { "exclusive" },
                    if a.shared {
                        format!(", {:?} scope", a.scope)
                    } else {
                        String::new()
                    },
                    nic.info().iface_name()
                );
                loop {
                    if signal::stop_requested() {
                        break;
                    }
                    if a.duration
                        .is_some_and(|d| start.elapsed().as_secs_f64() >= d)
                    {
                        why = "duration";
                        break;
                    }
                    let c = counters.read();
                    if a.rounds != 0 && c.packets >= a.rounds * u64::from(a.threads) {
                        why = "count";
                        break;
                    }
                    if running.is_finished() {
                        // Before its rounds are done only an error ends it; stop() reports.
                        why = "kernel-ended";
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                gpu::kernel_stopped(PROG, running.stop())
            })
        });
        proxy_stop.store(true, Ordering::Relaxed);
        if let Some(p) = proxy {
            p.join()
                .map_err(|_| "CPU proxy thread panicked".to_string())??;
        }
        outcome
    });
    let secs = start.elapsed().as_secs_f64();
    let c = counters.read();
    let q = common::queue_stats::txq(&txq);
    // Teardown in order: queue, memory, Flow port, Flow library.
    let stop = txq.stop().map_err(|e| format!("stopping the queue: {e}"));
    drop((mmap, buf));
    drop(port);
    drop(flow);
    result?;
    stop?;
    let (mpps, gbps) = gpu::rates(c.packets, c.packets * u64::from(a.size), secs);
    println!("Total packets sent: {}", c.packets);
    println!(
        "summary packets={} rounds={} errors={} queue_sent={} queue_completed={} queue_errors={} stop={why} seconds={secs:.3} mpps={mpps:.4} gbps={gbps:.4}",
        c.packets,
        c.rounds,
        c.errors,
        q.map_or(0, |q| q.sent),
        q.map_or(0, |q| q.completed),
        q.map_or(0, |q| q.errors),
    );
    Ok(())
}
