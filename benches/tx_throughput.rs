//! Figure 3: end-to-end TX. Baseline: `sendmmsg` from the CPU, frames per second per sending
//! core, every frame verified by a `recvmmsg` receiver (sequence numbers per sender). The
//! GPU path (send kernel `kernels/bench_tx.cu` -> TX ring -> proxy -> `lo`) is measured the
//! same way where there is a GPU (skipped with the reason otherwise); the same path with a
//! CPU producer in place of the kernel (the device API's send algorithm
//! writing a host TX ring, the TX proxy thread sending on the `lo` port) is measured and
//! verified the same way, as the proxy's cost per core. Everything runs in a network
//! namespace of its own (see `support::netns`).

mod support;

use std::sync::Arc;

use clap::Parser;
use doca_soft::testing::Port;
use support::args::{self, Common};
use support::gpu_rx::GpuEnv;
use support::gpu_tx::run_gpu_tx;
use support::report::{Figure, Status};
use support::soft::{port_spec, Mode};
use support::tx::run_soft_tx;
use support::udp::{run_recvmmsg, zero_loss_search, UdpRun, MIN_SIZE};

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "tx_throughput",
    about = "Send throughput of the software runtime"
)]
struct Cli {
    /// Queue counts to measure
    #[arg(long, value_delimiter = ',')]
    queues: Option<Vec<usize>>,
    /// Frame sizes in bytes
    #[arg(long, value_delimiter = ',', default_value = "64,1024")]
    size: Vec<usize>,
    /// Frames per sender
    #[arg(long)]
    frames: Option<u64>,
    /// Tries per figure (the best counts)
    #[arg(long)]
    tries: Option<usize>,
    #[command(flatten)]
    common: Common,
}

fn verified(r: &UdpRun) -> String {
    if r.lost == 0 {
        format!("all {} frames verified by the receiver", r.sent)
    } else {
        format!("LOSS: {} of {} frames not verified", r.lost, r.sent)
    }
}

fn pace(paced: f64) -> String {
    if paced > 0.0 {
        format!("paced at {:.3} Mpps total", paced / 1e6)
    } else {
        "unpaced".into()
    }
}

fn main() {
    let a: Cli = args::parse();
    let isolated = support::netns::isolate_or_warn();
    let c = &a.common;
    let queues = a
        .queues
        .clone()
        .unwrap_or_else(|| c.pick(vec![1], vec![1, 2, 4]));
    let sizes = a.size.clone();
    let frames = a.frames.unwrap_or(c.pick(20_000, 100_000));
    let tries = a.tries.unwrap_or(c.pick(2, 3));
    let gpu = GpuEnv::open();
    let lo: Arc<Port> = Port::for_spec(&port_spec(Mode::Lo, "", 0)).expect("lo port");
    for &size in &sizes {
        assert!(size >= MIN_SIZE, "--size {size}: smallest is {MIN_SIZE}");
        for &q in &queues {
            let tag = format!("{size}B/{q}q");
            let base_name = format!("tx/sendmmsg-per-core/{tag}");
            let mut base = None;
            match zero_loss_search(
                tries,
                q as u64 * frames,
                |rate| run_recvmmsg(q, size, frames, rate),
                |r| r.lost,
                |r| r.rx_pps(),
            ) {
                Ok((r, paced)) => {
                    base = Some(r.tx_pps_per_core(q) / 1e6);
                    Figure::info(
                        &base_name,
                        r.tx_pps_per_core(q) / 1e6,
                        "Mpps",
                        format!(
                            "baseline; {q} sender thread(s); {}; {}",
                            verified(&r),
                            pace(paced)
                        ),
                    )
                    .emit()
                }
                Err(e) => Figure::skipped(&base_name, None, format!("failed: {e}")).emit(),
            }
            let name = format!("tx/soft-lo-cpu-producer-per-core/{tag}");
            if !isolated {
                Figure::skipped(&name, None, "needs a private network namespace (frames injected on lo are martian on the host): skipped").emit();
            } else {
                match zero_loss_search(
                    tries,
                    q as u64 * frames,
                    |rate| run_soft_tx(&lo, q, size, frames, rate),
                    |r| r.lost,
                    |r| r.tx_pps_per_core(q) * q as f64,
                ) {
                    Ok((r, paced)) => {
                        let mut f = Figure::info(
                        &name,
                        r.tx_pps_per_core(q) / 1e6,
                        "Mpps",
                        format!(
                            "CPU producer -> TX ring -> proxy thread -> lo (proxy cost, not the GPU path); {}; {}",
                            verified(&r),
                            pace(paced)
                        ),
                    );
                        if let Some(b) = base {
                            f = f.with_baseline(&base_name, b);
                        }
                        f.emit();
                    }
                    Err(e) => Figure::skipped(&name, None, format!("failed: {e}")).emit(),
                }
            }
            let name = format!("tx/soft-lo-gpu-per-core/{tag}");
            let target = "ratio >= 1.0 vs sendmmsg per core, all frames verified";
            let env = match (&gpu, isolated) {
                (Err(reason), _) => {
                    Figure::skipped(&name, Some(target), reason.clone()).emit();
                    continue;
                }
                (Ok(_), false) => {
                    Figure::skipped(&name, Some(target), "needs a private network namespace (frames injected on lo are martian on the host): skipped").emit();
                    continue;
                }
                (Ok(env), true) => env,
            };
            match zero_loss_search(
                tries,
                q as u64 * frames,
                |rate| run_gpu_tx(env, q, size, frames, rate),
                |r| r.lost,
                |r| r.tx_pps_per_core(q) * q as f64,
            ) {
                Ok((r, paced)) => {
                    let v = r.tx_pps_per_core(q) / 1e6;
                    let mut f = Figure::info(
                        &name,
                        v,
                        "Mpps",
                        format!(
                            "send kernel (device API, thread scope) on {} -> TX ring -> proxy thread -> lo; per proxy core; {}; {}",
                            env.name,
                            verified(&r),
                            pace(paced)
                        ),
                    );
                    match base {
                        Some(b) => {
                            f = f
                                .with_baseline(&base_name, b)
                                .with_target(target, Status::check(r.lost == 0 && v >= b));
                        }
                        None => f = f.with_target(target, Status::Info),
                    }
                    f.emit();
                }
                Err(e) => Figure::skipped(&name, Some(target), format!("failed: {e}")).emit(),
            }
        }
    }
}
