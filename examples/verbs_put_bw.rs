//! verbs_put_bw: DOCA GPUNetIO's `gpunetio_verbs_put_bw` sample. The client's kernel (two
//! blocks of `-t`/2 threads) calls `doca_gpu_dev_verbs_put` per thread (`-e 0`) or per
//! warp (`-e 1`) into the server's host memory and polls each completion; the server waits
//! for SIGINT/SIGTERM, then checks every byte.
//!
//! ```sh
//! verbs_put_bw -d lo -g 0                       # server (Ctrl-C after the client is done)
//! verbs_put_bw -d lo -g 0 -c 127.0.0.1 -e 1     # client: prints the bandwidth table
//! ```

#[path = "verbs_common/mod.rs"]
mod verbs_common;

use std::process::ExitCode;
use verbs_common::cli::{self, Extra};
use verbs_common::onesided::{bw, Op};

const PROG: &str = "verbs_put_bw";

fn main() -> ExitCode {
    let args = cli::parse(
        PROG,
        "GPU verbs put bandwidth",
        &[Extra::Nic, Extra::Threads, Extra::Exec],
    );
    verbs_common::install_signals();
    verbs_common::exit(PROG, bw(PROG, &args, Op::Put))
}
