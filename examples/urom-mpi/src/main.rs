//! urom_ping_pong: the UROM ping-pong sample, under any MPI. Each rank starts a worker
//! (id = rank) with the `worker_sandbox` plugin and joins a domain whose out-of-band
//! all-gather is MPI's ([`urom_mpi::MpiOob`]); the ranks then exchange a message through
//! their workers with UCX tag send/receive: rank != 0 posts a PONG receive and sends PING
//! to rank + 1; rank 0 waits for PING and answers PONG.
//!
//! ```sh
//! mpirun -np 2 urom_ping_pong -d lo -m "hello world"
//! ```
//!
//! Flags: `-d/--device` (default `lo` with the software runtime, `mlx5_0` with the SDK),
//! `-m/--message` (default "hello world", at most 99 characters), and DOCA's general flags.
//! Needs `DOCA_UROM_SERVICE_FILE` and a running daemon. With Open MPI, keep MPI off UCX so
//! that this process has one UCX: `--mca pml ob1 --mca btl self,vader,tcp`.

#[path = "../../common/cli.rs"]
mod cli;

use clap::Parser;
use doca::common::DocaError;
use doca::urom::domain::Oob;
use doca::urom::{Device, Domain, Service, Worker};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;
use mpi::Threading;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use urom_mpi::MpiOob;
use worker_sandbox::host::{Received, Sandbox};

const PROG: &str = "urom_ping_pong";
const PING_TAG: u64 = 0x1234;
const PONG_TAG: u64 = 0x5678;
const TAG_MASK: u64 = 0xffff;
const MAX_MSG: usize = 100;

/// The command line: the original sample's flags and DOCA's general flags.
#[derive(Parser, Debug)]
#[command(
    name = PROG,
    about = "UROM ping-pong: two MPI ranks exchange a message through sandbox workers"
)]
struct Args {
    /// The DPU-facing device: PCI address, interface or IB device name
    #[arg(short = 'd', long, default_value = cli::default_urom_device())]
    device: String,
    /// The message (at most 99 characters)
    #[arg(short = 'm', long, default_value = "hello world")]
    message: String,
    #[command(flatten)]
    general: cli::General,
}

type RecvSlot = Arc<Mutex<Option<Result<Received, DocaError>>>>;

fn wait_recv(w: &Worker, slot: &RecvSlot) -> Result<Received, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(r) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return r.map_err(|e| format!("receive failed: {e}"));
        }
        if Instant::now() > deadline {
            return Err("receive timed out".into());
        }
        if !w.progress() {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

fn ping_pong(world: &SimpleCommunicator, oob: Arc<dyn Oob>, args: &Args) -> Result<(), String> {
    let (rank, size) = (world.rank() as u64, world.size() as u64);
    let dev = Device::open(&args.device).map_err(|e| format!("device {}: {e}", args.device))?;
    let svc = Service::builder(&dev)
        .max_workers(32)
        .start()
        .map_err(|e| e.to_string())?;
    let sandbox = Sandbox::find(&svc).map_err(|e| e.to_string())?;
    let cpus = svc.cpuset().map_err(|e| e.to_string())?;
    if !(0..8).all(|c| cpus.contains(c)) && rank == 0 {
        eprintln!("warning: the service CPU set lacks some of CPUs 0-7; running anyway");
    }
    let worker = Worker::builder(&svc)
        .id(rank)
        .max_inflight_tasks(16)
        .plugins(sandbox.plugin.id)
        .start()
        .map_err(|e| e.to_string())?;
    let pe = worker.pe().clone();
    let domain = Domain::start(&pe, &[(rank, worker.clone())], oob, Vec::new())
        .map_err(|e| e.to_string())?;
    let dest = (rank + 1) % size;
    let msg = args.message.as_bytes();
    let slot: RecvSlot = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    let deliver = move |r| *s2.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
    if rank != 0 {
        sandbox
            .tag_recv_with(&worker, 0xbeef, MAX_MSG as u64, PONG_TAG, TAG_MASK, deliver)
            .map_err(|e| e.to_string())?;
        let sent = sandbox
            .tag_send(&worker, 0, dest, msg, PING_TAG)
            .map_err(|e| e.to_string())?;
        if sent.ucs_status != 0 {
            return Err(format!("PING send status {}", sent.ucs_status));
        }
        let r = wait_recv(&worker, &slot)?;
        if r.context != 0xbeef || r.sender_tag != PONG_TAG || r.ucs_status != 0 || r.data != msg {
            return Err(format!("bad PONG: {r:?}"));
        }
        println!(
            "rank {rank}: received PONG \"{}\"",
            String::from_utf8_lossy(&r.data)
        );
    } else {
        sandbox
            .tag_recv_with(&worker, 0xdead, MAX_MSG as u64, PING_TAG, TAG_MASK, deliver)
            .map_err(|e| e.to_string())?;
        let r = wait_recv(&worker, &slot)?;
        if r.context != 0xdead || r.sender_tag != PING_TAG || r.ucs_status != 0 || r.data != msg {
            return Err(format!("bad PING: {r:?}"));
        }
        println!(
            "rank {rank}: received PING \"{}\"",
            String::from_utf8_lossy(&r.data)
        );
        let sent = sandbox
            .tag_send(&worker, 0, dest, &r.data, PONG_TAG)
            .map_err(|e| e.to_string())?;
        if sent.ucs_status != 0 {
            return Err(format!("PONG send status {}", sent.ucs_status));
        }
    }
    // Both sides finished before workers go away (a worker's UCX may still flush).
    world.barrier();
    drop(domain);
    worker.stop().map_err(|e| e.to_string())?;
    Ok(())
}

fn main() {
    // The command line first: --help and --version need no MPI.
    let args: Args = cli::parse(|a: &Args| &a.general);
    if args.message.len() >= MAX_MSG {
        cli::usage_error::<Args>(format!(
            "--message is {} bytes long; at most {} are sent",
            args.message.len(),
            MAX_MSG - 1
        ));
    }
    let Some((universe, threading)) = mpi::initialize_with_threading(Threading::Single) else {
        cli::fail(PROG, "MPI was initialised already");
    };
    let world = universe.world();
    if world.size() < 2 {
        eprintln!("{PROG} needs at least 2 ranks (mpirun -np 2 ...)");
        world.abort(1);
    }
    let oob: Arc<dyn Oob> = Arc::new(MpiOob::new(universe.world(), threading));
    if let Err(e) = ping_pong(&world, oob, &args) {
        eprintln!("rank {}: ping-pong failed: {e}", world.rank());
        world.abort(1);
    }
    world.barrier();
    println!("rank {}: ping-pong done", world.rank());
    // MPI_Finalize when `universe` drops.
}
