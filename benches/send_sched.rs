//! Figure 4: send scheduling accuracy, the p50/p99 error of wait-on-time sends against the
//! requested time. The GPU path (kernel -> TX ring with WAIT descriptors -> proxy) prints as
//! skipped until it lands.

mod support;

use support::args::Args;
use support::report::{gpu_skip_reason, Figure};

const USAGE: &str = "send_sched [--quick]";

fn main() {
    let _a = Args::parse(USAGE);
    let reason = gpu_skip_reason("GPU TX kernel with wait-on-time and txq glue");
    for p in ["p50", "p99"] {
        Figure::skipped(
            format!("tx/wait-on-time-error-{p}/gpu"),
            None,
            reason.clone(),
        )
        .emit();
    }
}
