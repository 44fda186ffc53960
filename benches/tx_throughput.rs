//! Figure 3: end-to-end TX. Baseline: `sendmmsg` from the CPU, frames per second per sending
//! core, every frame verified by a `recvmmsg` receiver (sequence numbers per sender). The
//! GPU path (send kernel `kernels/bench_tx.cu` -> TX ring -> proxy -> `lo`) is measured the
//! same way where there is a GPU (skipped with the reason otherwise); the same path with a
//! CPU producer in place of the kernel (the device API's send algorithm
//! writing a host TX ring, the TX proxy thread sending on the `lo` port) is measured and
//! verified the same way, as the proxy's cost per core. Everything runs in a network
//! namespace of its own (see `support::netns`).

mod support;

use std::sync::Arc;

use clap::Parser;
use doca_soft::testing::Port;
use support::args::{self, Common};
use support::gpu_rx::GpuEnv;
use support::gpu_tx::run_gpu_tx;
use support::report::{Figure, Status};
use support::soft::{port_spec, Mode};
use support::tx::run_soft_tx;
use support::udp::{run_recvmmsg, zero_loss_search, UdpRun, MIN_SIZE};

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "tx_throughput",
    about = "Send throughput of the software runtime"
)]
struct Cli {
    #[command(flatten)]
    load: args::Load,
    #[command(flatten)]
    common: Common,
}

fn verified(r: &UdpRun) -> String {
    if r.lost == 0 {
        format!("all {} frames verified by the receiver", r.sent)
    } else {
        format!("LOSS: {} of {} frames not verified", r.lost, r.sent)
    }
}

fn pace(paced: f64) -> String {
    if paced > 0.0 {
        format!("paced at {:.3} Mpps total", paced / 1e6)
    } else {
        "unpaced".into()
    }
}

/// Frames per `Port::send_batch` call in the batching figure (what a TX proxy would hand
/// over when that many frames are due).
const PORT_BATCH: usize = 32;

/// One thread sending `frames` frames of `size` bytes on the `lo` port, per frame
/// (`Port::send`) or in batches (`Port::send_batch`, one `sendmmsg` per batch): frames per
/// second (best of three). The frames end at kernel-dropping sockets.
fn port_send_rate(lo: &Port, size: usize, frames: usize, batched: bool) -> f64 {
    let f = support::soft::wire_frame(0, size);
    let batch: Vec<&[u8]> = (0..PORT_BATCH).map(|_| f.as_slice()).collect();
    let mut best = 0.0f64;
    for _ in 0..3 {
        let start = std::time::Instant::now();
        let mut sent = 0;
        while sent < frames {
            if batched {
                let (n, _) = lo.send_batch(&batch);
                sent += n.max(1);
            } else {
                let _ = lo.send(&f);
                sent += 1;
            }
        }
        best = best.max(sent as f64 / start.elapsed().as_secs_f64());
    }
    best
}

/// The port's batched send against its per-frame send, on `lo`, one thread (what batching
/// in the TX proxy can gain per core).
fn port_batch_figure(lo: &Port, size: usize, frames: usize) {
    let name = format!("tx/port-send-batch/{size}B");
    let _sinks = match support::udp::DropSinks::bind(1) {
        Ok(s) => s,
        Err(e) => return Figure::skipped(&name, None, format!("failed: drop socket: {e}")).emit(),
    };
    let single = port_send_rate(lo, size, frames, false);
    let batched = port_send_rate(lo, size, frames, true);
    Figure::info(
        &name,
        batched / 1e6,
        "Mpps",
        format!(
            "one thread, Port::send_batch of {PORT_BATCH} frames (one sendmmsg) on the lo AF_PACKET port, {frames} frames, best of 3; baseline: Port::send per frame (one send(2) each), same thread, same run; not verified by a receiver (frames end at a kernel-dropping socket)"
        ),
    )
    .with_baseline(format!("tx/port-send-single/{size}B"), single / 1e6)
    .emit();
}

/// The TX proxy's cost per frame on `lo`, one thread (`support::tx::proxy_drain_ns`).
fn proxy_drain_figure(lo: &Arc<Port>, size: usize, frames: u64) {
    let name = format!("tx/proxy-drain-lo/{size}B");
    let _sinks = match support::udp::DropSinks::bind(1) {
        Ok(s) => s,
        Err(e) => return Figure::skipped(&name, None, format!("failed: drop socket: {e}")).emit(),
    };
    let ns = support::tx::proxy_drain_ns(lo, size, frames);
    Figure::info(
        &name,
        ns,
        "ns/frame",
        format!(
            "one thread: TxProxy::progress draining 256 descriptors written ahead (not timed) into the lo port; {frames} frames, best of 3; <= {:.3} Mpps per proxy core; frames end at a kernel-dropping socket",
            1e3 / ns.max(1e-9)
        ),
    )
    .emit();
}

/// What the first frame a freshly opened port sends costs more than the next ones (the
/// median of 200), on `lo`, 64 B, in microseconds; the port is closed again afterwards.
fn first_send_figure() {
    let name = "tx/port-first-send-extra/64B";
    let _sinks = match support::udp::DropSinks::bind(1) {
        Ok(s) => s,
        Err(e) => return Figure::skipped(name, None, format!("failed: drop socket: {e}")).emit(),
    };
    let f = support::soft::wire_frame(0, 64);
    let mut extra = Vec::new();
    let mut firsts = Vec::new();
    for _ in 0..5 {
        let port = Port::for_spec(&port_spec(Mode::Lo, "", 0)).expect("lo port");
        let t = std::time::Instant::now();
        let _ = port.send(&f);
        let first = t.elapsed().as_secs_f64() * 1e6;
        let mut later: Vec<f64> = (0..200)
            .map(|_| {
                let t = std::time::Instant::now();
                let _ = port.send(&f);
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        later.sort_by(f64::total_cmp);
        extra.push(first - later[later.len() / 2]);
        firsts.push(first);
        drop(port);
    }
    extra.sort_by(f64::total_cmp);
    Figure::info(
        name,
        extra[extra.len() / 2],
        "us",
        format!(
            "Port::send on a port just opened (Port::for_spec on lo, then the first send), minus the median of the next 200 sends; median of 5 fresh ports (first sends {:?} us)",
            firsts.iter().map(|x| (x * 10.0).round() / 10.0).collect::<Vec<_>>()
        ),
    )
    .emit();
}

fn main() {
    let a: Cli = args::parse();
    let isolated = support::netns::isolate_or_warn();
    if isolated {
        first_send_figure();
    }
    let c = &a.common;
    let queues = a.load.queues(c, vec![1], vec![1, 2, 4]);
    let sizes = a.load.size.clone();
    let frames = a.load.frames(c);
    let tries = a.load.tries(c);
    let gpu = GpuEnv::open();
    let lo: Arc<Port> = Port::for_spec(&port_spec(Mode::Lo, "", 0)).expect("lo port");
    for &size in &sizes {
        assert!(size >= MIN_SIZE, "--size {size}: smallest is {MIN_SIZE}");
        if isolated {
            port_batch_figure(&lo, size, c.pick(100_000, 1_000_000));
            proxy_drain_figure(&lo, size, c.pick(50_000, 500_000));
        }
        for &q in &queues {
            let tag = format!("{size}B/{q}q");
            let base_name = format!("tx/sendmmsg-per-core/{tag}");
            let mut base = None;
            match zero_loss_search(
                tries,
                q as u64 * frames,
                |rate| run_recvmmsg(q, size, frames, rate),
                |r| r.lost,
                |r| r.rx_pps(),
            ) {
                Ok((r, paced)) => {
                    base = Some(r.tx_pps_per_core(q) / 1e6);
                    Figure::info(
                        &base_name,
                        r.tx_pps_per_core(q) / 1e6,
                        "Mpps",
                        format!(
                            "baseline; {q} sender thread(s); {}; {}",
                            verified(&r),
                            pace(paced)
                        ),
                    )
                    .emit()
                }
                Err(e) => Figure::skipped(&base_name, None, format!("failed: {e}")).emit(),
            }
            let name = format!("tx/soft-lo-cpu-producer-per-core/{tag}");
            if !isolated {
                Figure::skipped(&name, None, "needs a private network namespace (frames injected on lo are martian on the host): skipped").emit();
            } else {
                match zero_loss_search(
                    tries,
                    q as u64 * frames,
                    |rate| run_soft_tx(&lo, q, size, frames, rate),
                    |r| r.lost,
                    |r| r.tx_pps_per_core(q) * q as f64,
                ) {
                    Ok((r, paced)) => {
                        let mut f = Figure::info(
                        &name,
                        r.tx_pps_per_core(q) / 1e6,
                        "Mpps",
                        format!(
                            "CPU producer -> TX ring -> proxy thread -> lo (proxy cost, not the GPU path); {}; {}",
                            verified(&r),
                            pace(paced)
                        ),
                    );
                        if let Some(b) = base {
                            f = f.with_baseline(&base_name, b);
                        }
                        f.emit();
                    }
                    Err(e) => Figure::skipped(&name, None, format!("failed: {e}")).emit(),
                }
            }
            let name = format!("tx/soft-lo-gpu-per-core/{tag}");
            let target = "ratio >= 1.0 vs sendmmsg per core, all frames verified";
            let env = match (&gpu, isolated) {
                (Err(reason), _) => {
                    Figure::skipped(&name, Some(target), reason.clone()).emit();
                    continue;
                }
                (Ok(_), false) => {
                    Figure::skipped(&name, Some(target), "needs a private network namespace (frames injected on lo are martian on the host): skipped").emit();
                    continue;
                }
                (Ok(env), true) => env,
            };
            match zero_loss_search(
                tries,
                q as u64 * frames,
                |rate| run_gpu_tx(env, q, size, frames, rate),
                |r| r.lost,
                |r| r.tx_pps_per_core(q) * q as f64,
            ) {
                Ok((r, paced)) => {
                    let v = r.tx_pps_per_core(q) / 1e6;
                    let mut f = Figure::info(
                        &name,
                        v,
                        "Mpps",
                        format!(
                            "send kernel (device API, thread scope) on {} -> TX ring -> proxy thread -> lo; per proxy core; {}; {}",
                            env.name,
                            verified(&r),
                            pace(paced)
                        ),
                    );
                    match base {
                        Some(b) => {
                            f = f
                                .with_baseline(&base_name, b)
                                .with_target(target, Status::check(r.lost == 0 && v >= b));
                        }
                        None => f = f.with_target(target, Status::Info),
                    }
                    f.emit();
                }
                Err(e) => Figure::skipped(&name, Some(target), format!("failed: {e}")).emit(),
            }
        }
    }
}
