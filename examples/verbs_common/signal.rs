//! put_signal_bw / put_counter_bw and put_signal_lat / put_counter_lat: the same flows with
//! a single QP (signal: the flag add rides on the data QP) or a QP group (counter: the
//! companion QP adds after a WAIT for the write).

use super::cli::Args;
use super::oob::Oob;
use super::setup::{
    atomic_access, check_bytes, connect, connect_group, data_access, start_proxy, Verbs,
};
use super::*;
use cuda_kernels::{ExitFlag, Kernels, RemoteBuf};
use doca::gpunetio::verbs::{CpuProxy, GpuQp, GpuQpGroup, NicHandler, QpHandle, QpInfo};

/// One QP or a group, as the sample needs.
enum Qps {
    One(GpuQp),
    Group(Box<GpuQpGroup>),
}

impl Qps {
    fn new(v: &Verbs, args: &Args, handler: NicHandler, counter: bool) -> Result<Qps, String> {
        Ok(if counter {
            Qps::Group(Box::new(v.qp_group(args, handler)?))
        } else {
            Qps::One(v.qp(args, handler)?)
        })
    }

    fn infos(&self) -> Result<Vec<QpInfo>, String> {
        let e = |e: doca::gpunetio::Error| e.to_string();
        Ok(match self {
            Qps::One(q) => vec![q.info().map_err(e)?],
            Qps::Group(g) => vec![g.main.info().map_err(e)?, g.companion.info().map_err(e)?],
        })
    }

    fn connect(&self, prog: &str, peer: &[QpInfo]) -> Result<(), String> {
        match self {
            Qps::One(q) => connect(prog, q, &peer[0]),
            Qps::Group(g) => connect_group(prog, g, peer),
        }
    }

    fn proxy(&self, prog: &str) -> Result<Option<CpuProxy<'_>>, String> {
        start_proxy(
            prog,
            match self {
                Qps::One(q) => q.start_cpu_proxy(),
                Qps::Group(g) => g.start_cpu_proxy(),
            },
        )
    }

    fn handles(&self) -> Result<(QpHandle<'_>, Option<QpHandle<'_>>), String> {
        let e = |e: doca::gpunetio::Error| e.to_string();
        Ok(match self {
            Qps::One(q) => (q.handle().map_err(e)?, None),
            Qps::Group(g) => (
                g.main.handle().map_err(e)?,
                Some(g.companion.handle().map_err(e)?),
            ),
        })
    }
}

/// put_signal_bw (`counter` false) or put_counter_bw.
pub fn bw(prog: &'static str, args: &Args, counter: bool) -> Result<(), String> {
    let v = Verbs::open(args)?;
    let sizes = args.sizes();
    let t = args.threads as usize;
    if args.is_server() {
        let qps = Qps::new(&v, args, NicHandler::Auto, counter)?;
        let data = sizes
            .iter()
            .map(|&s| v.host_mem(t * s as usize, 0, data_access()))
            .collect::<Result<Vec<_>, _>>()?;
        let flags = sizes
            .iter()
            .map(|_| v.host_mem(t * 8, 0, atomic_access()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut oob = Oob::server(prog, args.oob_port)?;
        for (d, f) in data.iter().zip(&flags) {
            oob.send_mr(d.mr())?;
            oob.send_mr(f.mr())?;
        }
        if counter {
            // The client's buffers come back (the sample exchanges both directions).
            for _ in 0..2 * sizes.len() {
                oob.recv_buf()?;
            }
        }
        let peer = oob.exchange_qps(&qps.infos()?)?;
        qps.connect(prog, &peer)?;
        wait_for_signal(prog);
        for (i, (d, &s)) in data.iter().zip(&sizes).enumerate() {
            check_bytes(&d.read(t * s as usize), i, i as u8 + 1)?;
        }
        warn(
            prog,
            "Data validation successful! Data received correctly from client",
        );
        for (f, &s) in flags.iter().zip(&sizes) {
            let sum: u64 = (0..t).map(|k| f.u64_at(8 * k)).sum();
            println!("Flag value for message size {s} is {sum}");
        }
        return Ok(());
    }
    let kernels = Kernels::load(&v.gpu).map_err(|e| e.to_string())?;
    let qps = Qps::new(&v, args, args.nic_handler, counter)?;
    let data = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| v.gpu_mem(t * s as usize, i as u8 + 1, data_access()))
        .collect::<Result<Vec<_>, _>>()?;
    let flag = v.gpu_mem(t * 8, 0, atomic_access())?;
    let prev = sizes
        .iter()
        .map(|_| v.gpu_mem(t * 8, 0, atomic_access()))
        .collect::<Result<Vec<_>, _>>()?;
    let server = args.client.as_deref().expect("client role");
    let mut oob = Oob::client(prog, server, args.oob_port)?;
    let mut remote = Vec::new();
    for _ in 0..sizes.len() {
        remote.push((oob.recv_buf()?, oob.recv_buf()?));
    }
    if counter {
        for d in &data {
            oob.send_mr(&d.mr)?;
            oob.send_mr(&flag.mr)?;
        }
    }
    let peer = oob.exchange_qps(&qps.infos()?)?;
    qps.connect(prog, &peer)?;
    let _proxy = qps.proxy(prog)?;
    let (qp, companion) = qps.handles()?;
    launching_two_blocks(prog, args);
    report::bw_header();
    let exit = ExitFlag::new(&v.gpu).map_err(|e| e.to_string())?;
    kernels.scope(|s| {
        bw_rows(args, &sizes, args.scope, None, |i, shape, n| {
            let (dst, flags) = remote[i];
            s.verbs_put_signal_bw(
                qp,
                companion,
                shape,
                &data[i].mr,
                dst,
                flags,
                &prev[i].mr,
                n * shape.rounds(),
                &exit,
            )
        })
    })
}

/// put_signal_lat (`counter` false) or put_counter_lat: both sides run the ping-pong and
/// print the table; each then checks its flag counted every round trip of both launches.
pub fn lat(prog: &'static str, args: &Args, counter: bool) -> Result<(), String> {
    let v = Verbs::open(args)?;
    let kernels = Kernels::load(&v.gpu).map_err(|e| e.to_string())?;
    let sizes = args.sizes();
    let qps = Qps::new(&v, args, args.handler(), counter)?;
    let data = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| v.gpu_mem(s as usize, i as u8 + 1, data_access()))
        .collect::<Result<Vec<_>, _>>()?;
    let flags = sizes
        .iter()
        .map(|_| v.gpu_mem(8, 0, atomic_access()))
        .collect::<Result<Vec<_>, _>>()?;
    let prev = v.gpu_mem(8, 0, atomic_access())?;
    let mut oob = oob_open(prog, args)?;
    let send = |oob: &mut Oob| -> Result<(), String> {
        for (d, f) in data.iter().zip(&flags) {
            oob.send_mr(&d.mr)?;
            oob.send_mr(&f.mr)?;
        }
        Ok(())
    };
    let recv = |oob: &mut Oob| -> Result<Vec<(RemoteBuf, RemoteBuf)>, String> {
        (0..sizes.len())
            .map(|_| Ok((oob.recv_buf()?, oob.recv_buf()?)))
            .collect()
    };
    let remote = swap_bufs(args, &mut oob, send, recv)?;
    let peer = oob.exchange_qps(&qps.infos()?)?;
    qps.connect(prog, &peer)?;
    let _proxy = qps.proxy(prog)?;
    let (qp, companion) = qps.handles()?;
    launching_one_thread(prog);
    report::lat_header();
    let exit = ExitFlag::new(&v.gpu).map_err(|e| e.to_string())?;
    kernels.scope(|s| {
        lat_rows(args, &sizes, None, |i, size, n| {
            let (dst, rflag) = remote[i];
            s.verbs_put_signal_lat(
                qp,
                companion,
                args.role(),
                args.iters,
                size,
                &data[i].mr,
                dst,
                rflag,
                &prev.mr,
                &flags[i].mr,
                n * args.iters as u64,
                &exit,
            )
        })
    })?;
    for (i, f) in flags.iter().enumerate() {
        let got = f.u64_at(0)?;
        if got != 2 * args.iters as u64 {
            return Err(format!(
                "Validation error: the flag of message size {} is {got}, expected {} (one per round trip)",
                sizes[i],
                2 * args.iters
            ));
        }
    }
    info(
        prog,
        "Validation successful! Every round trip signalled its flag",
    );
    Ok(())
}
