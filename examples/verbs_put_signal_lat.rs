//! verbs_put_signal_lat: DOCA GPUNetIO's `gpunetio_verbs_put_signal_lat` sample. One thread on each side plays ping-pong: each put adds 1 to a flag at the peer on the same QP (`doca_gpu_dev_verbs_put_signal`), and waits until its own flag counts the peer's answer. Both sides print the latency table and check their flags.
//!
//! ```sh
//! verbs_put_signal_lat -d lo -g 0                 # server
//! verbs_put_signal_lat -d lo -g 0 -c 127.0.0.1     # client
//! ```

#[path = "verbs_common/mod.rs"]
mod verbs_common;

use std::process::ExitCode;
use verbs_common::cli::{self, Extra};

const PROG: &str = "verbs_put_signal_lat";

fn main() -> ExitCode {
    let args = cli::parse(PROG, "GPU verbs put with signal latency", &[Extra::Nic]);
    verbs_common::install_signals();
    verbs_common::exit(PROG, verbs_common::signal::lat(PROG, &args, false))
}
