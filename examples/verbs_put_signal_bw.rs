//! verbs_put_signal_bw: DOCA GPUNetIO's `gpunetio_verbs_put_signal_bw` sample. The client's kernel (two blocks of `-t`/2 threads, per thread or per warp with `-e`) puts into the server's host memory; each put adds 1 to a flag at the peer on the same QP (`doca_gpu_dev_verbs_put_signal`). The server waits for SIGINT/SIGTERM, checks the data and prints each size's flag sum.
//!
//! ```sh
//! verbs_put_signal_bw -d lo -g 0                  # server (Ctrl-C after the client is done)
//! verbs_put_signal_bw -d lo -g 0 -c 127.0.0.1      # client: prints the bandwidth table
//! ```

#[path = "verbs_common/mod.rs"]
mod verbs_common;

use std::process::ExitCode;
use verbs_common::cli::{self, Extra};

const PROG: &str = "verbs_put_signal_bw";

fn main() -> ExitCode {
    let args = cli::parse(
        PROG,
        "GPU verbs put with signal bandwidth",
        &[Extra::Nic, Extra::Threads, Extra::Exec],
    );
    verbs_common::install_signals();
    verbs_common::exit(PROG, verbs_common::signal::bw(PROG, &args, false))
}
