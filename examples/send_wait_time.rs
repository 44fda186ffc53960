//! send_wait_time: the GPUNetIO wait-on-time sample. A CUDA block sends 8 bursts of 32
//! frames of 1024 bytes; the queue holds burst i until CLOCK_REALTIME reaches
//! start + 50 ms + i x `-t` nanoseconds (wait-on-time), so the bursts leave `-t` ns apart.
//! A receiver (`pktgen recv --expect-spacing-ns T`) measures the actual spacing.
//!
//! ```sh
//! pktgen recv -i lo --expect 256 --expect-spacing-ns 5000000 &
//! send_wait_time -g 0 -n lo -t 5000000
//! ```
//!
//! Extra flags: `-p/--proxy 1` (a busy-polling CPU proxy thread drives the queue),
//! `-b/--bursts` (default 8), `-P/--dst-port` (default 5000). The last line is a
//! `summary`.

#[path = "common/mod.rs"]
mod common;

use clap::Parser;
use common::cli::{self, fail, General};
use common::packet::{self, FrameSpec};
use common::{gpu, signal, txq};
use cuda_kernels::{ExitFlag, Kernels, TxCounters};
use doca::gpunetio::{Flow, FlowConfig, FlowPort, GpuBuffer, MemType};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const PROG: &str = "send_wait_time";

/// The command line: the original sample's flags, a few for scripts, DOCA's general flags.
#[derive(Parser, Debug)]
#[command(name = PROG, about = "GPU wait-on-time sample: bursts sent at given times")]
struct Args {
    /// GPU PCIe address (or ordinal)
    #[arg(short = 'g', long)]
    gpu: String,
    /// NIC PCIe address or interface name
    #[arg(short = 'n', long)]
    nic: String,
    /// Nanoseconds between bursts (1000..=10000000000)
    #[arg(short = 't', long, value_parser = clap::value_parser!(u64).range(1000..=10_000_000_000))]
    time: u64,
    /// 1: a busy-polling CPU proxy thread drives the queue
    #[arg(short = 'p', long, default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=1))]
    proxy: u32,
    /// Number of bursts of 32 frames (1..=64)
    #[arg(short = 'b', long, default_value_t = 8,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    bursts: u64,
    /// UDP destination port
    #[arg(short = 'P', long = "dst-port", default_value_t = 5000)]
    dst_port: u16,
    #[command(flatten)]
    general: General,
}

const BURST: usize = 32;
const FRAME: usize = 1024;
/// Delay before the first burst, so the kernel is running when it is due.
const LEAD_NS: u64 = 50_000_000;

fn main() {
    // First: a Ctrl-C during setup must still lead to an orderly teardown.
    signal::install();
    let args: Args = cli::parse(|a: &Args| &a.general);
    let (interval, bursts, dst_port) = (args.time, args.bursts as usize, args.dst_port);
    let proxy = args.proxy == 1;
    let (gpu_sel, nic_sel) = (args.gpu, args.nic);
    txq::precise_timers();
    if let Err(e) = run(&gpu_sel, &nic_sel, interval, bursts, dst_port, proxy) {
        fail(PROG, e);
    }
}

fn realtime_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn run(
    gpu_sel: &str,
    nic_sel: &str,
    interval: u64,
    bursts: usize,
    dst_port: u16,
    proxy: bool,
) -> Result<(), String> {
    let nic = gpu::open_nic(nic_sel)?;
    let gpu = gpu::open_gpu(gpu_sel)?;
    let flow = Flow::init(FlowConfig::default()).map_err(|e| format!("DOCA Flow init: {e}"))?;
    let port = FlowPort::start(&flow, &nic, 0).map_err(|e| format!("Flow port start: {e}"))?;
    let txq = txq::start_txq(&nic, &gpu, proxy, true)?;
    let spec = FrameSpec {
        dst_port,
        ..FrameSpec::default()
    };
    let mut frames = vec![0u8; FRAME * BURST * bursts];
    for (i, f) in frames.chunks_exact_mut(FRAME).enumerate() {
        packet::build_frame(f, &spec, i as u64, (i / BURST) as u32, true);
    }
    let (buf, mmap, mkey_be) = txq::frame_buffer(&gpu, &nic, &frames)?;
    let mut times = GpuBuffer::<u64>::new(&gpu, bursts, MemType::CpuGpu)
        .map_err(|e| format!("timestamp buffer: {e}"))?;
    let kernels = Kernels::load(&gpu).map_err(|e| e.to_string())?;
    let exit = ExitFlag::new(&gpu).map_err(|e| e.to_string())?;
    let counters = TxCounters::new(&gpu).map_err(|e| e.to_string())?;
    let t0 = realtime_ns() + LEAD_NS;
    let mut values = Vec::with_capacity(bursts);
    for i in 0..bursts {
        let at = t0 + i as u64 * interval;
        values.push(
            txq.calculate_timestamp(at)
                .map_err(|e| format!("wait-on-time value: {e}"))?,
        );
        println!("burst {i}: {BURST} frames at {at} ns (CLOCK_REALTIME)");
    }
    times
        .copy_from_host(&values)
        .map_err(|e| format!("timestamps to the GPU: {e}"))?;
    let handle = txq
        .gpu_handle()
        .map_err(|e| format!("queue GPU handle: {e}"))?;
    let total = (bursts * BURST) as u64;
    let deadline = Instant::now()
        + Duration::from_nanos(LEAD_NS + bursts as u64 * interval)
        + Duration::from_secs(10);
    let proxy_stop = AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        let proxy_thread = proxy.then(|| s.spawn(|| txq::proxy_loop(&txq, &proxy_stop)));
        // The kernel runs in a scope that joins it before the queue and buffers can go.
        let r = kernels.scope(|ks| {
            ks.launch_send_wait_time(
                handle,
                &buf,
                mkey_be,
                FRAME as u32,
                &times,
                &exit,
                &counters,
            )
            .map_err(|e| e.to_string())
            .and_then(|running| {
                let mut late = false;
                while counters.read().packets < total
                    && !signal::stop_requested()
                    && !running.is_finished()
                {
                    if Instant::now() > deadline {
                        late = true;
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                gpu::kernel_stopped(PROG, running.stop())?;
                if late {
                    return Err(format!(
                        "only {} of {total} frames completed 10 s after the last burst was due",
                        counters.read().packets
                    ));
                }
                Ok(())
            })
        });
        proxy_stop.store(true, Ordering::Relaxed);
        let p = proxy_thread.map_or(Ok(()), |t| {
            t.join()
                .unwrap_or_else(|_| Err("CPU proxy thread panicked".into()))
        });
        r.and(p)
    });
    let c = counters.read();
    let q = common::queue_stats::txq(&txq);
    let stop = txq.stop().map_err(|e| format!("stopping the queue: {e}"));
    drop((times, mmap, buf));
    drop(port);
    drop(flow);
    result?;
    stop?;
    println!("Total packets sent: {}", c.packets);
    println!(
        "summary packets={} bursts={bursts} interval_ns={interval} errors={} queue_sent={} queue_errors={}",
        c.packets,
        c.errors,
        q.map_or(0, |q| q.sent),
        q.map_or(0, |q| q.errors),
    );
    Ok(())
}
