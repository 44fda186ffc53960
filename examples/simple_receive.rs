//! simple_receive: the GPUNetIO receive sample. DOCA Flow sends every IPv4/UDP frame
//! arriving on the NIC to GPU receive queue 0; a CUDA kernel receives with thread, warp or
//! block scope and counts packets until Ctrl-C, `--duration` or `--count`; the total is
//! printed at the end.
//!
//! ```sh
//! simple_receive -g 0000:17:00.0 -n lo -e 2          # Ctrl-C to stop
//! simple_receive -g 0 -n lo -e 1 --count 1000 --duration 30
//! ```
//!
//! Besides the original flags (`-g/--gpu`, `-n/--nic`, `-e/--exec-scope`) it takes
//! `-d/--duration` seconds, `-c/--count` packets, `-m/--max-pkt-size` and `-R/--ready-file`
//! (created once the queue receives, for scripts). The last line printed is a `summary`
//! of `key=value` pairs (packets, bytes, pktgen frames and their sequence sum, drops).

#[path = "common/mod.rs"]
mod common;

use clap::Parser;
use common::cli::{self, fail, General};
use common::{gpu, signal};
use cuda_kernels::{ExecScope, ExitFlag, Kernels, RxCounters};
use doca::gpunetio::{EthRxq, Flow, FlowConfig, FlowPort, Pipe, RssFlags, RxqType};
use std::time::{Duration, Instant};

const PROG: &str = "simple_receive";

/// The command line: the original sample's flags, a few for scripts, DOCA's general flags.
#[derive(Parser, Debug)]
#[command(name = PROG, about = "GPU receive sample: UDP frames to a CUDA kernel")]
struct Args {
    /// GPU PCIe address (or ordinal)
    #[arg(short = 'g', long)]
    gpu: String,
    /// NIC PCIe address or interface name
    #[arg(short = 'n', long)]
    nic: String,
    /// Receive scope: 0 thread, 1 warp, 2 block
    #[arg(short = 'e', long = "exec-scope", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(0..=2))]
    exec_scope: u32,
    /// Stop after this many seconds
    #[arg(short = 'd', long, value_parser = cli::positive_seconds)]
    duration: Option<f64>,
    /// Stop after this many packets
    #[arg(short = 'c', long)]
    count: Option<u64>,
    /// Largest frame the queue takes (larger ones are dropped)
    #[arg(short = 'm', long = "max-pkt-size", default_value_t = 2048,
          value_parser = clap::value_parser!(u32).range(64..=9216))]
    max_pkt_size: u32,
    /// Create this file once receiving
    #[arg(short = 'R', long = "ready-file")]
    ready_file: Option<String>,
    #[command(flatten)]
    general: General,
}

/// Ring slots of the receive queue (as the original sample).
const RX_PACKETS: u32 = 16384;

fn main() {
    // First: a Ctrl-C during setup must still lead to an orderly teardown.
    signal::install();
    let args: Args = cli::parse(|a: &Args| &a.general);
    let scope = ExecScope::from_index(args.exec_scope).expect("0..=2, checked by the parser");
    if let Err(e) = run(&args, scope) {
        fail(PROG, e);
    }
}

fn run(args: &Args, scope: ExecScope) -> Result<(), String> {
    let (duration, count, max_pkt) = (args.duration, args.count, args.max_pkt_size);
    let nic = gpu::open_nic(&args.nic)?;
    let gpu = gpu::open_gpu(&args.gpu)?;
    let flow = Flow::init(FlowConfig {
        pipe_queues: 1,
        mode_args: "vnf".into(),
        nr_counters: 4096,
    })
    .map_err(|e| format!("DOCA Flow init: {e}"))?;
    let port = FlowPort::start(&flow, &nic, 0).map_err(|e| format!("Flow port start: {e}"))?;
    let rxq = EthRxq::builder(&nic)
        .max_burst_size(RX_PACKETS)
        .max_packet_size(max_pkt)
        .kind(RxqType::Cyclic)
        .gpu_packet_buffer(&gpu)
        .start()
        .map_err(|e| format!("GPU receive queue: {e}"))?;
    rxq.apply_queue_id(0)
        .map_err(|e| format!("receive queue id: {e}"))?;
    let udp = Pipe::basic(&port, "GPU_RXQ_UDP_PIPE")
        .match_udp_ipv4()
        .rss_to(&[0], RssFlags::IPV4 | RssFlags::UDP)
        .miss_drop()
        .counter()
        .build()
        .map_err(|e| format!("UDP pipe: {e}"))?;
    let udp_entry = udp
        .add_entry()
        .map_err(|e| format!("UDP pipe entry: {e}"))?;
    let root = Pipe::control_root(&port).map_err(|e| format!("root pipe: {e}"))?;
    let root_entry = root
        .forward_ipv4_udp_to(&udp, 0)
        .map_err(|e| format!("root pipe entry: {e}"))?;
    port.entries_process()
        .map_err(|e| format!("Flow entries: {e}"))?;

    let kernels = Kernels::load(&gpu).map_err(|e| e.to_string())?;
    let exit = ExitFlag::new(&gpu).map_err(|e| e.to_string())?;
    let counters = RxCounters::new(&gpu).map_err(|e| e.to_string())?;
    let handle = rxq
        .gpu_handle()
        .map_err(|e| format!("queue GPU handle: {e}"))?;
    // Teardown in order: kernel (the scope joins it before the queue can go), Flow entries
    // and pipes, port, queue, Flow library.
    let (kernel_result, start, why, first_seen, last_seen) = kernels.scope(|ks| {
        let running = ks
            .launch_simple_receive(handle, scope, &exit, &counters)
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        println!(
            "Receiving UDP on {} with GPU {} ({scope:?} scope); Ctrl-C to stop",
            nic.info().iface_name(),
            gpu.pci_bus_id()
        );
        if let Some(f) = &args.ready_file {
            std::fs::write(f, b"ready\n").map_err(|e| format!("{f}: {e}"))?;
        }
        let mut last_print = Instant::now();
        let mut why = "signal";
        // The window in which packets arrived, for the rates (the sample may idle before and
        // after the traffic).
        let (mut first_seen, mut last_seen, mut last_count) = (None::<Instant>, start, 0u64);
        loop {
            if signal::stop_requested() {
                break;
            }
            if running.is_finished() {
                // Only an error ends this kernel early; stop() below reports it.
                why = "kernel-ended";
                break;
            }
            if duration.is_some_and(|d| start.elapsed().as_secs_f64() >= d) {
                why = "duration";
                break;
            }
            let c = counters.read();
            if c.packets != last_count {
                first_seen.get_or_insert_with(Instant::now);
                last_seen = Instant::now();
                last_count = c.packets;
            }
            if count.is_some_and(|n| c.packets >= n) {
                why = "count";
                break;
            }
            if last_print.elapsed() >= Duration::from_secs(1) {
                println!("... {} packets", c.packets);
                last_print = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let kernel_result = gpu::kernel_stopped(PROG, running.stop());
        Ok::<_, String>((kernel_result, start, why, first_seen, last_seen))
    })?;
    let secs = start.elapsed().as_secs_f64();
    let c = counters.read();
    let q = common::queue_stats::rxq(&rxq);
    drop((root_entry, udp_entry));
    drop((root, udp));
    drop(port);
    let stop_result = rxq.stop().map_err(|e| format!("stopping the queue: {e}"));
    drop(flow);
    kernel_result?;
    stop_result?;
    // The first poll that saw packets is up to one poll late: the window starts one
    // poll period earlier.
    let active = first_seen.map_or(secs, |f| {
        (last_seen - f).as_secs_f64() + Duration::from_millis(5).as_secs_f64()
    });
    let (mpps, gbps) = gpu::rates(c.packets, c.bytes, active);
    println!("Total packets received: {}", c.packets);
    println!(
        "summary packets={} bytes={} pktgen_frames={} seq_sum={} errors={} dropped_too_big={} dropped_ring_full={} stop={why} seconds={secs:.3} active_seconds={active:.4} mpps={mpps:.4} gbps={gbps:.4}",
        c.packets,
        c.bytes,
        c.pktgen_frames,
        c.seq_sum,
        c.errors,
        q.map_or(0, |q| q.dropped_too_big),
        q.map_or(0, |q| q.dropped_ring_full),
    );
    Ok(())
}
