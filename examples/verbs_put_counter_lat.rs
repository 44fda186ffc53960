//! verbs_put_counter_lat: DOCA GPUNetIO's `gpunetio_verbs_put_counter_lat` sample. One thread on each side plays ping-pong: each put is followed, on a core-direct companion QP that WAITs for the write, by an add of 1 to a counter at the peer (`doca_gpu_dev_verbs_put_counter`), and waits until its own flag counts the peer's answer. Both sides print the latency table and check their flags.
//!
//! ```sh
//! verbs_put_counter_lat -d lo -g 0                 # server
//! verbs_put_counter_lat -d lo -g 0 -c 127.0.0.1     # client
//! ```

#[path = "verbs_common/mod.rs"]
mod verbs_common;

use std::process::ExitCode;
use verbs_common::cli::{self, Extra};

const PROG: &str = "verbs_put_counter_lat";

fn main() -> ExitCode {
    let args = cli::parse(
        PROG,
        "GPU verbs put with counter latency",
        &[Extra::Nic, Extra::SendDbr],
    );
    verbs_common::install_signals();
    verbs_common::exit(PROG, verbs_common::signal::lat(PROG, &args, true))
}
