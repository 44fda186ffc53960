//! Figure 3: end-to-end TX. Baseline: `sendmmsg` from the CPU, frames per second per sending
//! core, every frame verified by a `recvmmsg` receiver (sequence numbers per sender). The
//! GPU path (kernel -> TX ring -> proxy -> `lo`) prints as skipped until it lands.

mod support;

use support::args::Args;
use support::report::{gpu_skip_reason, Figure};
use support::udp::{run_recvmmsg, zero_loss_search, MIN_SIZE};

const USAGE: &str = "tx_throughput [--queues 1,2,4] [--size 64,1024] [--frames N per sender]
  [--tries N] [--quick]";

fn main() {
    let a = Args::parse(USAGE);
    let quick = a.quick();
    let queues: Vec<usize> = a.list("queues", if quick { &[1] } else { &[1, 2, 4] });
    let sizes: Vec<usize> = a.list("size", &[64, 1024]);
    let frames: u64 = a.num("frames", if quick { 20_000 } else { 200_000 });
    let tries: usize = a.num("tries", if quick { 2 } else { 4 });
    let reason = gpu_skip_reason("GPU TX kernel and txq glue");
    for &size in &sizes {
        assert!(size >= MIN_SIZE, "--size {size}: smallest is {MIN_SIZE}");
        for &q in &queues {
            let tag = format!("{size}B/{q}q");
            match zero_loss_search(
                tries,
                |rate| run_recvmmsg(q, size, frames, rate),
                |r| r.lost,
                |r| r.rx_pps(),
            ) {
                Ok((r, paced)) => {
                    let verified = if r.lost == 0 {
                        format!("all {} frames verified by the receiver", r.sent)
                    } else {
                        format!("LOSS: {} of {} frames not verified", r.lost, r.sent)
                    };
                    let pace = if paced > 0.0 {
                        format!("paced at {:.3} Mpps total", paced / 1e6)
                    } else {
                        "unpaced".into()
                    };
                    Figure::info(
                        format!("tx/sendmmsg-per-core/{tag}"),
                        r.tx_pps_per_core(q) / 1e6,
                        "Mpps",
                        format!("baseline; {q} sender thread(s); {verified}; {pace}"),
                    )
                    .emit();
                }
                Err(e) => Figure::skipped(
                    format!("tx/sendmmsg-per-core/{tag}"),
                    None,
                    format!("failed: {e}"),
                )
                .emit(),
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
