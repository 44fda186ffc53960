//! verbs_get_bw: DOCA GPUNetIO's `gpunetio_verbs_get_bw` sample. The server exposes host
//! buffers filled with the size index + 1; the client's kernel (two blocks of `-t`/2
//! threads, `doca_gpu_dev_verbs_get` per thread or per warp) reads them into zeroed GPU
//! memory, and the client checks every byte. The server waits for SIGINT/SIGTERM.
//!
//! ```sh
//! verbs_get_bw -d lo -g 0                       # server (Ctrl-C after the client is done)
//! verbs_get_bw -d lo -g 0 -c 127.0.0.1 -e 0     # client: table, then validation
//! ```

#[path = "verbs_common/mod.rs"]
mod verbs_common;

use std::process::ExitCode;
use verbs_common::cli::{self, Extra};
use verbs_common::onesided::{bw, Op};

const PROG: &str = "verbs_get_bw";

fn main() -> ExitCode {
    let args = cli::parse(
        PROG,
        "GPU verbs get bandwidth",
        &[Extra::Nic, Extra::Threads, Extra::Exec],
    );
    verbs_common::install_signals();
    verbs_common::exit(PROG, bw(PROG, &args, Op::Get))
}
