//! verbs_write_bw: DOCA GPUNetIO's `gpunetio_verbs_write_bw` sample. The client's kernel
//! builds raw RDMA-write WQEs with the low-level verbs helpers (one block of `-t` threads,
//! one WQE per thread per round) into the server's host memory; the server waits for
//! SIGINT/SIGTERM, then checks every byte.
//!
//! ```sh
//! verbs_write_bw -d lo -g 0                  # server (Ctrl-C after the client is done)
//! verbs_write_bw -d lo -g 0 -c 127.0.0.1     # client: prints the bandwidth table
//! ```

#[path = "verbs_common/mod.rs"]
mod verbs_common;

use std::process::ExitCode;
use verbs_common::cli::{self, Extra};
use verbs_common::onesided::{bw, Op};

const PROG: &str = "verbs_write_bw";

fn main() -> ExitCode {
    let args = cli::parse(
        PROG,
        "GPU verbs RDMA write bandwidth (raw WQEs)",
        &[Extra::Nic, Extra::Threads],
    );
    verbs_common::install_signals();
    verbs_common::exit(PROG, bw(PROG, &args, Op::Write))
}
