//! Figure 3: end-to-end TX. Baseline: `sendmmsg` from the CPU, frames per second per sending
//! core, every frame verified by a `recvmmsg` receiver (sequence numbers per sender). The
//! GPU path (kernel -> TX ring -> proxy -> `lo`) prints as skipped until it lands; meanwhile
//! the same path with a CPU producer in place of the kernel (the device API's send algorithm
//! writing a host TX ring, the TX proxy thread sending on the `lo` port) is measured and
//! verified the same way, as the proxy's cost per core. Everything runs in a network
//! namespace of its own (see `support::netns`).

mod support;

use std::sync::Arc;

use doca_soft::port::Port;
use support::args::Args;
use support::report::{gpu_skip_reason, Figure};
use support::soft::{port_spec, Mode};
use support::tx::run_soft_tx;
use support::udp::{run_recvmmsg, zero_loss_search, UdpRun, MIN_SIZE};

const USAGE: &str = "tx_throughput [--queues 1,2,4] [--size 64,1024] [--frames N per sender]
  [--tries N] [--quick]";

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
    let a = Args::parse(USAGE);
    let isolated = support::netns::isolate_or_warn();
    let quick = a.quick();
    let queues: Vec<usize> = a.list("queues", if quick { &[1] } else { &[1, 2, 4] });
    let sizes: Vec<usize> = a.list("size", &[64, 1024]);
    let frames: u64 = a.num("frames", if quick { 20_000 } else { 100_000 });
    let tries: usize = a.num("tries", if quick { 2 } else { 3 });
    let reason = gpu_skip_reason("GPU TX kernel and txq glue");
    let lo: Arc<Port> = Port::for_spec(&port_spec(Mode::Lo, "", 0)).expect("lo port");
    for &size in &sizes {
        assert!(size >= MIN_SIZE, "--size {size}: smallest is {MIN_SIZE}");
        for &q in &queues {
            let tag = format!("{size}B/{q}q");
            let base_name = format!("tx/sendmmsg-per-core/{tag}");
            let mut base = None;
            match zero_loss_search(
                tries,
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
            Figure::skipped(
                format!("tx/soft-lo-gpu-per-core/{tag}"),
                Some("ratio >= 1.0 vs sendmmsg per core"),
                reason.clone(),
            )
            .emit();
        }
    }
}
