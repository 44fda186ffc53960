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

use cuda_kernels::{ExitFlag, Kernels, RemoteBuf, Shape, VerbsErrors};
use doca::gpunetio::verbs::NicHandler;
use std::process::ExitCode;
use verbs_common::cli::{self, Args, Extra};
use verbs_common::oob::Oob;
use verbs_common::setup::{check_bytes, connect, data_access, Verbs};
use verbs_common::*;

const PROG: &str = "verbs_get_bw";

fn main() -> ExitCode {
    let args = cli::parse(
        PROG,
        "GPU verbs get bandwidth",
        &[Extra::Nic, Extra::Threads, Extra::Exec],
    );
    install_signals();
    exit(
        PROG,
        if args.is_server() {
            server(&args)
        } else {
            client(&args)
        },
    )
}

fn sizes(args: &Args) -> Vec<u32> {
    if args.sizes.is_empty() {
        SIZES.to_vec()
    } else {
        args.sizes.clone()
    }
}

fn server(args: &Args) -> Result<(), String> {
    let v = Verbs::open(args)?;
    let qp = v.qp(args, NicHandler::Auto)?;
    let sizes = sizes(args);
    let bufs = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            v.host_mem(
                args.threads as usize * s as usize,
                i as u8 + 1,
                data_access(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut oob = Oob::server(PROG, args.oob_port)?;
    for b in &bufs {
        oob.send_buf(RemoteBuf {
            addr: b.mr().addr(),
            key: b.mr().key(),
        })?;
    }
    let peer = oob.exchange_qps(&[qp.info().map_err(|e| e.to_string())?])?;
    connect(PROG, &qp, &peer[0])?;
    wait_for_signal(PROG);
    Ok(())
}

fn client(args: &Args) -> Result<(), String> {
    let v = Verbs::open(args)?;
    let kernels = Kernels::load(&v.gpu).map_err(|e| e.to_string())?;
    let qp = v.qp(args, args.nic_handler)?;
    let sizes = sizes(args);
    let bufs = sizes
        .iter()
        .map(|&s| v.gpu_mem(args.threads as usize * s as usize, 0, data_access()))
        .collect::<Result<Vec<_>, _>>()?;
    let dump = v.gpu_mem(1, 0, data_access())?;
    let server = args.client.as_deref().expect("client role");
    let mut oob = Oob::client(PROG, server, args.oob_port)?;
    let remote = (0..sizes.len())
        .map(|_| oob.recv_buf())
        .collect::<Result<Vec<_>, _>>()?;
    let peer = oob.exchange_qps(&[qp.info().map_err(|e| e.to_string())?])?;
    connect(PROG, &qp, &peer[0])?;
    let proxy = qp.start_cpu_proxy().map_err(|e| e.to_string())?;
    if let Some(p) = &proxy {
        info(
            PROG,
            format!("Thread CPU proxy progress is running... {}", p.pthread_id()),
        );
    }
    let handle = qp.handle().map_err(|e| e.to_string())?;
    let errors = VerbsErrors::new(&v.gpu).map_err(|e| e.to_string())?;
    info(
        PROG,
        format!(
            "Launching {PROG} kernel with 2 CUDA Blocks, {} CUDA threads, scope {:?}",
            args.threads / 2,
            args.scope
        ),
    );
    report::bw_header();
    let exit = ExitFlag::new(&v.gpu).map_err(|e| e.to_string())?;
    kernels.scope(|s| -> Result<(), String> {
        for (i, &size) in sizes.iter().enumerate() {
            let shape = Shape {
                threads: args.threads,
                iters: args.iters,
                size,
                scope: args.scope,
            };
            let ms = warmup_then_timed(|_| {
                s.verbs_get_bw(
                    handle,
                    shape,
                    &bufs[i].mr,
                    remote[i],
                    &dump.mr,
                    &errors,
                    &exit,
                )
            })?;
            no_errors(&errors, size)?;
            report::bw_row(size, args.iters, ms);
        }
        Ok(())
    })?;
    for (i, (b, &s)) in bufs.iter().zip(&sizes).enumerate() {
        check_bytes(&b.read(args.threads as usize * s as usize)?, i, i as u8 + 1)?;
    }
    warn(
        PROG,
        "Validation successful! Data received correctly from server",
    );
    Ok(())
}
