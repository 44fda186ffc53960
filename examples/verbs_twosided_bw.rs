//! verbs_twosided_bw: DOCA GPUNetIO's `gpunetio_verbs_twosided_bw` sample. Per round the
//! server's kernel posts one receive per thread (or warp, `-e 1`) and RDMA-writes the round
//! number into the client's flag; the client's kernel waits for it and sends one message
//! per thread. With `-x` receives of up to 32 bytes arrive inside the CQEs (the server's
//! threads check them) and the receive buffers stay zero. Both sides print the table; the
//! server then checks its buffers.
//!
//! ```sh
//! verbs_twosided_bw -d lo -g 0                  # server
//! verbs_twosided_bw -d lo -g 0 -c 127.0.0.1     # client
//! ```

#[path = "verbs_common/mod.rs"]
mod verbs_common;

use cuda_kernels::{ExitFlag, Kernels, VerbsErrors};
use doca::gpunetio::verbs::NicHandler;
use std::process::ExitCode;
use verbs_common::cli::{self, Args, Extra};
use verbs_common::setup::{check_bytes, connect, data_access, Verbs};
use verbs_common::*;

const PROG: &str = "verbs_twosided_bw";

fn main() -> ExitCode {
    let args = cli::parse(
        PROG,
        "GPU verbs send/receive bandwidth",
        &[Extra::Threads, Extra::Exec, Extra::Inline],
    );
    install_signals();
    exit(PROG, run(&args))
}

fn run(args: &Args) -> Result<(), String> {
    let v = Verbs::open(args)?;
    let kernels = Kernels::load(&v.gpu).map_err(|e| e.to_string())?;
    let sizes = match (args.sizes.is_empty(), args.inline) {
        (true, true) => INLINE_SIZES.to_vec(),
        _ => args.sizes(),
    };
    let t = args.threads as usize;
    let server = args.is_server();
    // The sample fixes the handler: GPU doorbells.
    let qp = v.qp(args, NicHandler::GpuSmDb)?;
    let data = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            v.gpu_mem(
                t * s as usize,
                if server { 0 } else { i as u8 + 1 },
                data_access(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let flags = sizes
        .iter()
        .map(|_| v.gpu_mem(8, 0, data_access()))
        .collect::<Result<Vec<_>, _>>()?;
    let dump = v.gpu_mem(1, 0, data_access())?;
    let mut oob = oob_open(PROG, args)?;
    let remote = swap_bufs(
        args,
        &mut oob,
        |oob| flags.iter().try_for_each(|f| oob.send_mr(&f.mr)),
        |oob| oob.recv_bufs(sizes.len()),
    )?;
    let peer = oob.exchange_qps(&[qp.info().map_err(|e| e.to_string())?])?;
    connect(PROG, &qp, &peer[0])?;
    let handle = qp.handle().map_err(|e| e.to_string())?;
    let errors = VerbsErrors::new(&v.gpu).map_err(|e| e.to_string())?;
    info(
        PROG,
        format!(
            "Launching {PROG} kernel with 1 CUDA Blocks, {t} CUDA threads, scope {:?}",
            args.scope
        ),
    );
    report::bw_header();
    let exit = ExitFlag::new(&v.gpu).map_err(|e| e.to_string())?;
    kernels.scope(|s| {
        bw_rows(args, &sizes, args.scope, Some(&errors), |i, shape, n| {
            let start = n * shape.rounds();
            if server {
                s.verbs_twosided_server(
                    handle,
                    shape,
                    args.inline,
                    &data[i].mr,
                    &flags[i].mr,
                    remote[i],
                    &dump.mr,
                    start,
                    i as u8 + 1,
                    &errors,
                    &exit,
                )
            } else {
                s.verbs_twosided_client(
                    handle,
                    shape,
                    &data[i].mr,
                    &flags[i].mr,
                    start,
                    &errors,
                    &exit,
                )
            }
        })
    })?;
    if server {
        for (i, (d, &s)) in data.iter().zip(&sizes).enumerate() {
            let want = if args.inline { 0 } else { i as u8 + 1 };
            check_bytes(&d.read(t * s as usize)?, i, want)?;
        }
        warn(
            PROG,
            "Data validation successful! Data received correctly from client",
        );
    }
    Ok(())
}
