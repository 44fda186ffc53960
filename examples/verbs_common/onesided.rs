//! write_bw, put_bw and get_bw: one flow, three kernels. The server registers one host
//! buffer per message size and waits for SIGINT/SIGTERM; the client's kernel writes (raw
//! WQEs, one block) or puts (two blocks, per thread or warp) into them, or gets from them.
//! Who checks the bytes follows the data: the server after a write or put, the client
//! after a get.

use super::cli::Args;
use super::oob::Oob;
use super::setup::{atomic_access, check_bytes, connect, data_access, Verbs};
use super::*;
use cuda_kernels::{ExitFlag, Kernels, VerbsErrors, VerbsScope};
use doca::gpunetio::verbs::NicHandler;

/// Which of the three samples.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// verbs_write_bw: raw RDMA-write WQEs, one block of `-t` threads.
    Write,
    /// verbs_put_bw: `doca_gpu_dev_verbs_put`, two blocks of `-t`/2 threads.
    Put,
    /// verbs_get_bw: `doca_gpu_dev_verbs_get`, two blocks of `-t`/2 threads.
    Get,
}

impl Op {
    /// The byte every buffer of size index `i` holds: filled where the data starts, what
    /// the other side checks.
    fn fill(i: usize) -> u8 {
        i as u8 + 1
    }
}

/// Runs the sample `op` as the server or the client, as `args` says.
pub fn bw(prog: &'static str, args: &Args, op: Op) -> Result<(), String> {
    if args.is_server() {
        server(prog, args, op)
    } else {
        client(prog, args, op)
    }
}

fn server(prog: &'static str, args: &Args, op: Op) -> Result<(), String> {
    let v = Verbs::open(args)?;
    let qp = v.qp(args, NicHandler::Auto)?;
    let sizes = args.sizes();
    let t = args.threads as usize;
    let access = if op == Op::Put {
        atomic_access()
    } else {
        data_access()
    };
    let bufs = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let fill = if op == Op::Get { Op::fill(i) } else { 0 };
            v.host_mem(t * s as usize, fill, access)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut oob = Oob::server(prog, args.oob_port)?;
    for b in &bufs {
        oob.send_mr(b.mr())?;
    }
    let peer = oob.exchange_qps(&[qp.info().map_err(|e| e.to_string())?])?;
    connect(prog, &qp, &peer[0])?;
    wait_for_signal(prog);
    if op != Op::Get {
        for (i, (b, &s)) in bufs.iter().zip(&sizes).enumerate() {
            check_bytes(&b.read(t * s as usize), i, Op::fill(i))?;
        }
        warn(
            prog,
            "Validation successful! Data received correctly from client",
        );
    }
    Ok(())
}

fn client(prog: &'static str, args: &Args, op: Op) -> Result<(), String> {
    let v = Verbs::open(args)?;
    let kernels = Kernels::load(&v.gpu).map_err(|e| e.to_string())?;
    let qp = v.qp(args, args.nic_handler)?;
    let sizes = args.sizes();
    let t = args.threads as usize;
    let bufs = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let fill = if op == Op::Get { 0 } else { Op::fill(i) };
            v.gpu_mem(t * s as usize, fill, data_access())
        })
        .collect::<Result<Vec<_>, _>>()?;
    // get_bw's kernel dumps each completion's first byte here (the others need none).
    let dump = match op {
        Op::Get => Some(v.gpu_mem(1, 0, data_access())?),
        _ => None,
    };
    let server = args.client.as_deref().expect("client role");
    let mut oob = Oob::client(prog, server, args.oob_port)?;
    let remote = oob.recv_bufs(sizes.len())?;
    let peer = oob.exchange_qps(&[qp.info().map_err(|e| e.to_string())?])?;
    connect(prog, &qp, &peer[0])?;
    let _proxy = setup::start_proxy(prog, qp.start_cpu_proxy())?;
    let handle = qp.handle().map_err(|e| e.to_string())?;
    let errors = VerbsErrors::new(&v.gpu).map_err(|e| e.to_string())?;
    let scope = if op == Op::Write {
        info(
            prog,
            format!(
                "Launching {prog} kernel with 1 CUDA Blocks, {} CUDA threads",
                args.threads
            ),
        );
        VerbsScope::Thread
    } else {
        launching_two_blocks(prog, args);
        args.scope
    };
    report::bw_header();
    let exit = ExitFlag::new(&v.gpu).map_err(|e| e.to_string())?;
    kernels.scope(|s| {
        bw_rows(args, &sizes, scope, Some(&errors), |i, shape, _| match op {
            Op::Write => s.verbs_write_bw(handle, shape, &bufs[i].mr, remote[i], &errors, &exit),
            Op::Put => s.verbs_put_bw(handle, shape, &bufs[i].mr, remote[i], &errors, &exit),
            Op::Get => s.verbs_get_bw(
                handle,
                shape,
                &bufs[i].mr,
                remote[i],
                &dump.as_ref().expect("get_bw has a dump buffer").mr,
                &errors,
                &exit,
            ),
        })
    })?;
    if op == Op::Get {
        for (i, (b, &s)) in bufs.iter().zip(&sizes).enumerate() {
            check_bytes(&b.read(t * s as usize)?, i, Op::fill(i))?;
        }
        warn(
            prog,
            "Validation successful! Data received correctly from server",
        );
    }
    Ok(())
}
