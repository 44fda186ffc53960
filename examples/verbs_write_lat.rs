//! verbs_write_lat: DOCA GPUNetIO's `gpunetio_verbs_write_lat` sample. One thread on each
//! side plays a byte ping-pong with RDMA writes built by the low-level helpers: the client
//! writes `size` bytes whose first byte is the round number into the server's poll buffer,
//! the server answers the same way. Both sides print the latency table, then check that
//! the last round's byte arrived.
//!
//! ```sh
//! verbs_write_lat -d lo -g 0                  # server
//! verbs_write_lat -d lo -g 0 -c 127.0.0.1     # client
//! ```

#[path = "verbs_common/mod.rs"]
mod verbs_common;

use cuda_kernels::{ExitFlag, Kernels, VerbsErrors};
use std::process::ExitCode;
use verbs_common::cli::{self, Args, Extra};
use verbs_common::setup::{connect, data_access, start_proxy, Verbs};
use verbs_common::*;

const PROG: &str = "verbs_write_lat";

fn main() -> ExitCode {
    let args = cli::parse(
        PROG,
        "GPU verbs RDMA write latency (byte ping-pong)",
        &[Extra::Nic, Extra::SendDbr],
    );
    install_signals();
    exit(PROG, run(&args))
}

fn run(args: &Args) -> Result<(), String> {
    let v = Verbs::open(args)?;
    let kernels = Kernels::load(&v.gpu).map_err(|e| e.to_string())?;
    let sizes = args.sizes();
    let qp = v.qp(args, args.handler())?;
    let poll = sizes
        .iter()
        .map(|&s| v.gpu_mem(s as usize, 0, data_access()))
        .collect::<Result<Vec<_>, _>>()?;
    let post = sizes
        .iter()
        .map(|&s| v.gpu_mem(s as usize, 0, data_access()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut oob = oob_open(PROG, args)?;
    let remote = swap_bufs(
        args,
        &mut oob,
        |oob| poll.iter().try_for_each(|p| oob.send_mr(&p.mr)),
        |oob| oob.recv_bufs(sizes.len()),
    )?;
    let peer = oob.exchange_qps(&[qp.info().map_err(|e| e.to_string())?])?;
    connect(PROG, &qp, &peer[0])?;
    let _proxy = start_proxy(PROG, qp.start_cpu_proxy())?;
    let handle = qp.handle().map_err(|e| e.to_string())?;
    let errors = VerbsErrors::new(&v.gpu).map_err(|e| e.to_string())?;
    launching_one_thread(PROG);
    report::lat_header();
    let exit = ExitFlag::new(&v.gpu).map_err(|e| e.to_string())?;
    kernels.scope(|s| {
        lat_rows(args, &sizes, Some(&errors), |i, size, n| {
            let start = (n * args.iters as u64) as u32;
            s.verbs_write_lat(
                handle,
                args.role(),
                args.iters,
                size,
                &poll[i].mr,
                &post[i].mr,
                remote[i],
                start,
                &errors,
                &exit,
            )
        })
    })?;
    if args.iters > 0 {
        let want = (2 * args.iters as u64) as u8;
        for (i, p) in poll.iter().enumerate() {
            let got = p.read(1)?[0];
            if got != want {
                return Err(format!(
                    "Validation error: buffer {i} pos 0 has invalid data {got} expected {want} (the last round)"
                ));
            }
        }
    }
    info(
        PROG,
        "Validation successful! The last round trip of every size arrived",
    );
    Ok(())
}
