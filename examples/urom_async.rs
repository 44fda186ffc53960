//! UROM commands from async code, under tokio: a worker running the `worker_graph` plugin
//! echoes values through `Worker::command_future`, three commands at once with
//! `tokio::join!`, next to a tokio timer, on a single-threaded runtime. The futures sleep
//! between polls (woken by the progress engine's notification, or by a bounded backoff
//! where the runtime has none), so they share the thread with other tasks instead of
//! spinning on it.
//!
//! Flags: `-d/--device <name>` (PCI address, interface or ibdev name of the DPU-facing
//! device; default `lo` with the software runtime) and DOCA's general flags (`-l`,
//! `--sdk-log-level`, `-v`). Needs `DOCA_UROM_SERVICE_FILE` naming a running UROM daemon that
//! offers `worker_graph`. With the software runtime, start one on this machine:
//!
//! ```sh
//! cargo build -p doca-soft-urom --bins && cargo build -p worker_graph && cargo build --example devices
//! mkdir -p /tmp/urom-plugins
//! cp target/debug/libworker_graph.so /tmp/urom-plugins/worker_graph.so
//! UROM_PLUGIN_PATH=/tmp/urom-plugins target/debug/doca_urom_daemon > /tmp/urom-daemon.out &
//! # its first line: "doca_urom_daemon listening on IP:PORT"
//! addr=$(sed -n 's/^doca_urom_daemon listening on //p' /tmp/urom-daemon.out)
//! pci=$(target/debug/examples/devices | awk '$2 == "lo" { print $1 }')
//! echo "$(hostname) dpu $addr $pci lo" > /tmp/urom-services
//! DOCA_UROM_SERVICE_FILE=/tmp/urom-services cargo run --example urom_async
//! ```

#[path = "common/cli.rs"]
mod cli;

use doca_urom::graph::{loopback_cmd, parse_loopback, Graph};
use doca_urom::{Device, Service, Worker};
use std::time::{Duration, Instant};

const HOW_TO_START_A_DAEMON: &str = "\
start a UROM daemon with the worker_graph plugin and name it in DOCA_UROM_SERVICE_FILE:
  cargo build -p doca-soft-urom --bins && cargo build -p worker_graph && cargo build --example devices
  mkdir -p /tmp/urom-plugins && cp target/debug/libworker_graph.so /tmp/urom-plugins/worker_graph.so
  UROM_PLUGIN_PATH=/tmp/urom-plugins target/debug/doca_urom_daemon > /tmp/urom-daemon.out &
  addr=$(sed -n 's/^doca_urom_daemon listening on //p' /tmp/urom-daemon.out)
  pci=$(target/debug/examples/devices | awk '$2 == \"lo\" { print $1 }')
  echo \"$(hostname) dpu $addr $pci lo\" > /tmp/urom-services
  DOCA_UROM_SERVICE_FILE=/tmp/urom-services cargo run --example urom_async";

/// The command line: the device, and DOCA's general flags.
#[derive(clap::Parser, Debug)]
#[command(
    name = "urom_async",
    about = "UROM commands as futures under tokio (worker_graph's loopback)",
    after_help = HOW_TO_START_A_DAEMON
)]
struct Args {
    /// PCI address, interface or ibdev name of the DPU-facing device
    #[arg(short = 'd', long, default_value = cli::default_urom_device())]
    device: String,
    #[command(flatten)]
    general: cli::General,
}

/// Echoes `value` through the worker, awaiting the notification.
async fn echo(w: &Worker, graph: &Graph, value: u64) -> Result<u64, String> {
    let n = w
        .command_future(graph.plugin.id, &loopback_cmd(value))
        .await
        .map_err(|e| format!("loopback {value}: {e}"))?;
    parse_loopback(&n).map_err(|e| format!("loopback {value}: the plugin answered {e}"))
}

async fn run(device: &str) -> Result<(), String> {
    if std::env::var_os("DOCA_UROM_SERVICE_FILE").is_none() {
        return Err(format!(
            "DOCA_UROM_SERVICE_FILE is not set: no UROM daemon to talk to.\n{HOW_TO_START_A_DAEMON}"
        ));
    }
    let dev = Device::open(device).map_err(|e| format!("device {device}: {e}"))?;
    // Starting the service and the worker blocks briefly (connection set-up); the commands
    // after it are asynchronous.
    let svc = Service::builder(&dev).start().map_err(|e| {
        format!("UROM service (is the daemon running?): {e}\n{HOW_TO_START_A_DAEMON}")
    })?;
    let graph = Graph::find(&svc).map_err(|e| format!("worker_graph plugin: {e}"))?;
    let w = Worker::builder(&svc)
        .plugins(graph.plugin.id)
        .start()
        .map_err(|e| format!("worker: {e}"))?;

    let t0 = Instant::now();
    let (a, b, c, ()) = tokio::join!(
        echo(&w, &graph, 7),
        echo(&w, &graph, 42),
        echo(&w, &graph, 1 << 40),
        tokio::time::sleep(Duration::from_millis(10)),
    );
    for (want, got) in [(7, a), (42, b), (1 << 40, c)] {
        let got = got?;
        if got != want {
            return Err(format!("loopback {want} came back as {got}"));
        }
        println!("loopback {want} -> {got}");
    }
    println!(
        "three commands and a 10 ms timer on one thread in {:.1} ms",
        t0.elapsed().as_secs_f64() * 1e3
    );
    w.stop().map_err(|e| format!("worker stop: {e}"))?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Args = cli::parse(|a: &Args| &a.general);
    match run(&args.device).await {
        Ok(()) => println!("urom_async: success"),
        Err(e) => {
            eprintln!("urom_async: {e}");
            std::process::exit(1);
        }
    }
}
