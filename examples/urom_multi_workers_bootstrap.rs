//! UROM multi-workers bootstrap (port of the DOCA sample): four worker threads, each with
//! its own PE and worker (id = thread index, gid = index % 2, env `UCX_LOG_LEVEL=debug`,
//! the `worker_graph` plugin), a loopback check per worker, then get-workers-by-gid for the
//! odd (gid 1) and even (gid 0) workers from the main thread, which progresses the service
//! PE. Runs until SIGINT/SIGTERM, or for `--duration SECS`.
//!
//! Flags: `-d/--device <name>` (PCI address, interface or ibdev name; default `lo` with the
//! software runtime, `mlx5_0` with the SDK), `--duration <secs>`, and DOCA's general flags.
//! Needs `DOCA_UROM_SERVICE_FILE` and a running `doca_urom_daemon`.
//! Deviation: the sample silently skips when the service CPU set lacks CPUs 0-7; this port
//! warns and runs anyway (CI machines have fewer CPUs).

#[path = "common/cli.rs"]
mod cli;

use clap::Parser;
use doca_urom::graph::Graph;
use doca_urom::{Device, Service, Worker};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NB_WORKERS: u64 = 4;
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// The command line: the original sample's flag, `--duration`, DOCA's general flags.
#[derive(Parser, Debug)]
#[command(
    name = "urom_multi_workers_bootstrap",
    about = "UROM sample: four worker threads, gids, loopback commands, workers by gid"
)]
struct Args {
    /// The DPU-facing device: PCI address, interface or IB device name
    #[arg(short = 'd', long, default_value = cli::default_urom_device())]
    device: String,
    /// Stop after this many seconds (default: at Ctrl-C)
    #[arg(long, value_parser = cli::positive_seconds)]
    duration: Option<f64>,
    #[command(flatten)]
    general: cli::General,
}

fn worker_thread(
    svc: Arc<Service>,
    graph: Graph,
    idx: u64,
    running: Arc<AtomicUsize>,
) -> Result<(), String> {
    let w = Worker::builder(&svc)
        .id(idx)
        .gid((idx % 2) as u32)
        .max_inflight_tasks(2)
        .env(["UCX_LOG_LEVEL=debug"])
        .plugins(graph.plugin.id)
        .start()
        .map_err(|e| format!("worker {idx}: {e}"))?;
    let id = w.id().map_err(|e| e.to_string())?;
    let echoed = graph
        .loopback(&w, id)
        .map_err(|e| format!("worker {idx} loopback: {e}"))?;
    if echoed != id {
        return Err(format!(
            "worker {idx}: loopback returned {echoed}, expected {id}"
        ));
    }
    println!(
        "worker {idx}: id {id}, gid {}, loopback ok",
        w.gid().unwrap_or(0)
    );
    running.fetch_add(1, Ordering::SeqCst);
    while !STOP.load(Ordering::SeqCst) {
        w.progress();
        std::thread::sleep(Duration::from_millis(1));
    }
    w.stop().map_err(|e| format!("worker {idx} stop: {e}"))?;
    Ok(())
}

fn run(args: Args) -> Result<(), String> {
    let dev = Device::open(&args.device).map_err(|e| format!("device {}: {e}", args.device))?;
    let svc = Service::builder(&dev)
        .max_workers(NB_WORKERS as u32)
        .start()
        .map_err(|e| e.to_string())?;
    let graph = Graph::find(&svc).map_err(|e| e.to_string())?;
    let cpus = svc.cpuset().map_err(|e| e.to_string())?;
    if !(0..8).all(|c| cpus.contains(c)) {
        eprintln!("warning: the service CPU set lacks some of CPUs 0-7; running anyway");
    }
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let running = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..NB_WORKERS)
        .map(|i| {
            let (svc, graph, running) = (svc.clone(), graph.clone(), running.clone());
            std::thread::spawn(move || worker_thread(svc, graph, i, running))
        })
        .collect();
    // The main thread serves the workers' spawn requests by progressing the service PE.
    let deadline = Instant::now() + Duration::from_secs(60);
    while running.load(Ordering::SeqCst) < NB_WORKERS as usize {
        if threads.iter().any(|t| t.is_finished()) || Instant::now() > deadline {
            STOP.store(true, Ordering::SeqCst);
            break;
        }
        if !svc.progress() {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let mut result = Ok(());
    if running.load(Ordering::SeqCst) == NB_WORKERS as usize {
        for (gid, want) in [(1u32, [1u64, 3]), (0, [0, 2])] {
            let mut ids = svc.workers_by_gid(gid).map_err(|e| e.to_string())?;
            ids.sort_unstable();
            println!("gid {gid}: workers {ids:?}");
            if ids != want {
                result = Err(format!("gid {gid}: expected {want:?}, got {ids:?}"));
            }
        }
        println!(
            "all {NB_WORKERS} workers running; waiting for Ctrl-C{}",
            if args.duration.is_some() {
                " or --duration"
            } else {
                ""
            }
        );
        let start = Instant::now();
        let duration = args.duration.map(Duration::from_secs_f64);
        while !STOP.load(Ordering::SeqCst) && duration.is_none_or(|d| start.elapsed() < d) {
            if !svc.progress() {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        STOP.store(true, Ordering::SeqCst);
    }
    // Keep serving teardown requests until every worker thread is done.
    while threads.iter().any(|t| !t.is_finished()) {
        if !svc.progress() {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    for t in threads {
        match t.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => result = Err(e),
            Err(_) => result = Err("a worker thread panicked".into()),
        }
    }
    result
}

fn main() {
    let args: Args = cli::parse(|a: &Args| &a.general);
    match run(args) {
        Ok(()) => println!("urom_multi_workers_bootstrap: success"),
        Err(e) => {
            eprintln!("urom_multi_workers_bootstrap: {e}");
            std::process::exit(1);
        }
    }
}
