//! Figure 2: end-to-end RX on the soft NIC, with its baseline, a plain Linux UDP receiver
//! (`recvmmsg`) fed by the same `sendmmsg` senders with the same frames, in the same run.
//!
//! Modes (`--mode`, comma list): `recvmmsg` (baseline), `lo` (senders -> kernel -> `lo` ->
//! AF_PACKET port -> proxy -> RX ring), `wire` (generator threads -> in-memory wire -> proxy
//! -> RX ring). Each runs twice: `rx/soft-*-cpu` with host rings consumed on the CPU (the
//! device API's receive algorithm, `CpuRxq`): the proxy's cost, no pass/miss; and
//! `rx/soft-*-gpu` with `doca_eth_rxq` queues whose packet buffers are GPU memory, consumed by
//! the receive kernel `kernels/bench_rx.cu` (the target path; skipped with the reason when
//! there is no GPU or the kernel was not built).
//!
//! With `lo` selected it also times lone frames (`rx/soft-lo-latency-*` against a UDP
//! socket's `rx/udp-socket-latency-*`; see `support::latency`).
//!
//! Every reported rate is from a run with zero loss (sequence numbers checked per sender)
//! when one was reached within `--tries` runs (each retry paced to 90% of the last delivered
//! rate); otherwise the figure says how many frames were lost. Everything runs in a network
//! namespace of its own when the process may create one (see `support::netns`), so other
//! traffic on the machine's `lo` does not reach the AF_PACKET port.
//!
//! The port receives on lanes: one dispatcher thread per RX queue, at most
//! `DOCA_SOFT_RX_LANES` (default: the CPU count); each note says how many ran. The CPU
//! figures also say what each stage costs per frame (lane and sender CPU time, from the
//! threads' own clocks) and so which stage bounds the rate: a stage of `n` threads at `c`
//! ns/frame cannot pass more than `n * 1e9 / c` frames/s. On machines with fewer cores than
//! threads (senders + lanes + consumers) the rate is bounded by the CPUs instead; the
//! per-frame costs still hold.

mod support;

use clap::Parser;
use std::time::{Duration, Instant};
use support::args::{self, Common};

use support::gpu_rx::{run_gpu_rx, GpuEnv};
use support::latency::{soft_lo_latency, udp_socket_latency, Latency};
use support::point::{self, Outcome};
use support::report::{Figure, Status};
use support::soft::{run_soft_rx_costed, wire_stage_costs, Mode, RxCost, StageCosts};
use support::udp::{run_recvmmsg, zero_loss_search, MIN_SIZE};

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "rx_throughput",
    about = "Receive throughput of the software runtime"
)]
struct Cli {
    /// Modes to measure: recvmmsg, lo, wire
    #[arg(long, value_delimiter = ',', default_value = "recvmmsg,lo,wire")]
    mode: Vec<String>,
    #[command(flatten)]
    load: args::Load,
    /// Time bound of one GPU point (seconds; its tries included): past it the point is
    /// killed and reported as STALL with its trace
    #[arg(long, default_value_t = 40.0)]
    point_timeout: f64,
    /// Time budget of the whole bench (seconds): points not started within it are reported
    /// as skipped (default: none)
    #[arg(long)]
    budget: Option<f64>,
    #[command(flatten)]
    common: Common,
}

fn gbps(pps: f64, size: usize) -> f64 {
    pps * size as f64 * 8.0 / 1e9
}

fn loss_note(lost: u64, sent: u64, paced: f64) -> String {
    let pace = if paced > 0.0 {
        format!("paced at {:.3} Mpps", paced / 1e6)
    } else {
        "unpaced".to_string()
    };
    if lost == 0 {
        format!("zero loss, {pace}")
    } else {
        format!("LOSS {lost} of {sent} frames after retries ({pace}); rate is of delivered frames")
    }
}

/// What the CPU figures say about lanes and the stage that bounds them.
fn cost_note(c: &RxCost, senders: usize, pps: f64) -> String {
    let limit = |n: usize, ns: f64| {
        if ns > 0.0 {
            n as f64 * 1e9 / ns
        } else {
            f64::INFINITY
        }
    };
    let lanes = limit(c.lanes, c.lane_ns);
    let send = c.sender_ns.map_or(f64::INFINITY, |ns| limit(senders, ns));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = senders + c.lanes + senders;
    let bound = if threads > cpus {
        format!("CPUs ({threads} busy threads on {cpus} CPUs)")
    } else if lanes <= send && lanes < 1.25 * pps {
        "lanes".to_string()
    } else if send < lanes && send < 1.25 * pps {
        "senders".to_string()
    } else {
        "consumers / ring hand-off".to_string()
    };
    format!(
        "{} lane(s) of cap {}; lane {:.0} ns/frame (<= {:.2} Mpps per lane), sender {}; bound: {bound}",
        c.lanes,
        doca_soft::testing::lane_cap(),
        c.lane_ns,
        1e3 / c.lane_ns.max(1e-9),
        c.sender_ns
            .map_or("n/a (paced)".to_string(), |ns| format!("{ns:.0} ns/frame")),
    )
}

/// An isolated GPU point's result line: `ok sent received lost ring_full secs paced` or
/// `err why`.
fn gpu_point_line(r: Result<(support::soft::SoftRun, f64), String>) -> String {
    match r {
        Ok((r, paced)) => format!(
            "ok {} {} {} {} {} {}",
            r.sent, r.received, r.lost, r.ring_full, r.secs, paced
        ),
        Err(e) => format!("err {e}"),
    }
}

fn parse_gpu_point_line(l: &str) -> Result<(support::soft::SoftRun, f64), String> {
    if let Some(e) = l.strip_prefix("err ") {
        return Err(e.to_string());
    }
    let v: Vec<&str> = l.strip_prefix("ok ").unwrap_or(l).split(' ').collect();
    let n = |i: usize| v.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    let f = |i: usize| v.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    if v.len() != 6 {
        return Err(format!("bad result line from the point's process: {l}"));
    }
    Ok((
        support::soft::SoftRun {
            sent: n(0),
            received: n(1),
            lost: n(2),
            ring_full: n(3),
            secs: f(4),
        },
        f(5),
    ))
}

/// The child side of an isolated GPU point (`BENCH_POINT=gpu,MODE,SIZE,QUEUES`): runs the
/// point's tries and prints the result line.
fn gpu_point_child(a: &Cli, key: &str) {
    let parts: Vec<&str> = key.split(',').collect();
    let mode = match parts.get(1) {
        Some(&"lo") => Mode::Lo,
        _ => Mode::Wire,
    };
    let num = |i: usize| {
        parts
            .get(i)
            .and_then(|x| x.parse::<usize>().ok())
            .unwrap_or(1)
    };
    let (size, q) = (num(2), num(3));
    let c = &a.common;
    let frames = a.load.frames(c);
    let tries = a.load.tries(c);
    let r = GpuEnv::open().and_then(|env| {
        zero_loss_search(
            tries,
            q as u64 * frames,
            |rate| run_gpu_rx(&env, mode, q, size, frames, rate),
            |r| r.lost,
            |r| r.pps(),
        )
    });
    println!("{}{}", point::RESULT, gpu_point_line(r));
}

fn main() {
    let a: Cli = args::parse();
    if let Some(key) = point::child_point() {
        // A child started by run_isolated: one point, in the parent's network namespace.
        gpu_point_child(&a, &key);
        return;
    }
    let started = Instant::now();
    let over_budget = || {
        a.budget
            .is_some_and(|b| started.elapsed().as_secs_f64() > b)
    };
    let point_limit = Duration::from_secs_f64(a.point_timeout.max(1.0));
    let isolated = support::netns::isolate_or_warn();
    let c = &a.common;
    let modes: Vec<&str> = a.mode.iter().map(String::as_str).collect();
    let queues = a.load.queues(c, vec![1, 2], vec![1, 2, 4, 8]);
    let sizes = a.load.size.clone();
    let frames = a.load.frames(c);
    let tries = a.load.tries(c);
    let ns = if isolated {
        "private netns"
    } else {
        "host netns"
    };
    // Only whether the GPU points can run, and the GPU's name: each point opens the GPU in
    // a process of its own.
    let gpu = if modes.contains(&"lo") || modes.contains(&"wire") {
        GpuEnv::open().map(|env| env.name.clone())
    } else {
        Err("GPU modes not selected".to_string())
    };
    let mut wire_gpu_64: Vec<(usize, f64)> = Vec::new();
    let mut gpu_failed: [Option<String>; 2] = [None, None];
    if modes.contains(&"lo") {
        lone_frame_latency(c.pick(300, 2000), ns);
    }

    for &size in &sizes {
        if size < MIN_SIZE {
            eprintln!("--size {size}: smallest is {MIN_SIZE}");
            std::process::exit(2);
        }
        if modes.contains(&"wire") {
            stage_figures(size);
        }
        for &q in &queues {
            let tag = format!("{size}B/{q}q");
            if over_budget() {
                let why = format!(
                    "not measured: the bench's --budget of {:.0} s was spent",
                    a.budget.unwrap_or(0.0)
                );
                for m in modes.iter().filter(|m| **m != "recvmmsg") {
                    for v in ["cpu", "gpu"] {
                        Figure::skipped(format!("rx/soft-{m}-{v}/{tag}"), None, why.clone()).emit();
                    }
                }
                continue;
            }
            let mut base_pps = None;
            if modes.contains(&"recvmmsg") || modes.contains(&"lo") {
                match zero_loss_search(
                    tries,
                    q as u64 * frames,
                    |rate| run_recvmmsg(q, size, frames, rate),
                    |r| r.lost,
                    |r| r.rx_pps(),
                ) {
                    Ok((r, paced)) => {
                        let pps = r.rx_pps();
                        base_pps = Some(pps);
                        Figure::info(
                            format!("rx/recvmmsg/{tag}"),
                            pps / 1e6,
                            "Mpps",
                            format!(
                                "baseline; {:.2} Gbit/s; {}; {ns}",
                                gbps(pps, size),
                                loss_note(r.lost, r.sent, paced)
                            ),
                        )
                        .emit();
                    }
                    Err(e) => {
                        Figure::skipped(format!("rx/recvmmsg/{tag}"), None, format!("failed: {e}"))
                            .emit()
                    }
                }
            }
            for (mode, flag) in [(Mode::Lo, "lo"), (Mode::Wire, "wire")] {
                if !modes.contains(&flag) {
                    continue;
                }
                let ((r, cost), paced) = zero_loss_search(
                    tries,
                    q as u64 * frames,
                    |rate| Ok::<_, std::io::Error>(run_soft_rx_costed(mode, q, size, frames, rate)),
                    |r| r.0.lost,
                    |r| r.0.pps(),
                )
                .expect("soft run does not fail");
                let mut f = Figure::info(
                    format!("rx/soft-{}-cpu/{tag}", mode.name()),
                    r.pps() / 1e6,
                    "Mpps",
                    format!(
                        "CPU consumer (proxy cost, not the GPU path); {:.2} Gbit/s; {}; ring-full drops {}; {}; {ns}",
                        gbps(r.pps(), size),
                        loss_note(r.lost, r.sent, paced),
                        r.ring_full,
                        cost_note(&cost, q, r.pps()),
                    ),
                );
                if mode == Mode::Lo {
                    if let Some(b) = base_pps {
                        f = f.with_baseline(format!("rx/recvmmsg/{tag}"), b / 1e6);
                    }
                }
                f.emit();
                let name = format!("rx/soft-{}-gpu/{tag}", mode.name());
                let target = match mode {
                    Mode::Lo => "ratio >= 1.0 vs recvmmsg, zero loss",
                    Mode::Wire if size == 64 && q == 4 => ">= 20 Mpps, zero loss",
                    Mode::Wire => ">= 20 Mpps at 64 B x 4 queues (figure at that point)",
                };
                let gpu_name = match (&gpu, &gpu_failed[mode as usize]) {
                    (Ok(name), None) => name,
                    (Err(reason), _) | (Ok(_), Some(reason)) => {
                        Figure::skipped(&name, Some(target), reason.clone()).emit();
                        continue;
                    }
                };
                let key = format!("gpu,{},{size},{q}", mode.name());
                let (outcome, trace) = match point::run_isolated(&key, point_limit) {
                    Outcome::Done { result, trace } => (parse_gpu_point_line(&result), trace),
                    Outcome::Stall { secs, trace } => {
                        Figure::stalled(
                            &name,
                            Some(target),
                            format!(
                                "STALL: no result after {secs:.0} s (--point-timeout; the point was killed and the run went on); last trace: {}",
                                Outcome::trace_note(&trace)
                            ),
                        )
                        .emit();
                        continue;
                    }
                    Outcome::Failed { why, trace } => (
                        Err(format!(
                            "{why}; last trace: {}",
                            Outcome::trace_note(&trace)
                        )),
                        trace,
                    ),
                };
                let last_trace = trace.last().cloned().unwrap_or_default();
                match outcome {
                    Ok((r, paced)) => {
                        let pps = r.pps();
                        let zero = r.lost == 0;
                        let mut f = Figure::info(
                            &name,
                            pps / 1e6,
                            "Mpps",
                            format!(
                                "{}; receive kernel (device API, block scope, headers parsed) on {}; {:.2} Gbit/s; {}; ring-full drops {}; {} lane(s) (cap {}); {ns}; trace at end: {last_trace}",
                                match mode {
                                    Mode::Lo => "senders -> lo -> AF_PACKET -> proxy -> GPU ring (the destination ports end at kernel-dropping sockets, as the baseline's end at its receivers)",
                                    Mode::Wire => "generators -> wire -> proxy -> GPU ring",
                                },
                                gpu_name,
                                gbps(pps, size),
                                loss_note(r.lost, r.sent, paced),
                                r.ring_full,
                                q.min(doca_soft::testing::lane_cap()),
                                doca_soft::testing::lane_cap(),
                            ),
                        );
                        match mode {
                            Mode::Lo => {
                                if let Some(b) = base_pps {
                                    f = f.with_baseline(format!("rx/recvmmsg/{tag}"), b / 1e6);
                                    let ok = zero && pps >= b;
                                    f = f.with_target(target, Status::check(ok));
                                } else {
                                    f = f.with_target(target, Status::Info);
                                }
                            }
                            Mode::Wire if size == 64 && q == 4 => {
                                f = f.with_target(target, Status::check(zero && pps >= 20e6));
                            }
                            Mode::Wire => {
                                f = f.with_target(target, Status::Info);
                            }
                        }
                        if mode == Mode::Wire && size == 64 {
                            wire_gpu_64.push((q, pps));
                        }
                        f.emit();
                    }
                    Err(e) => {
                        Figure::skipped(&name, Some(target), format!("failed: {e}")).emit();
                        // The other sizes and queue counts of this mode would fail the same
                        // way (each after a kernel timeout): skip them with this reason.
                        gpu_failed[mode as usize] =
                            Some(format!("skipped after an earlier failure: {e}"));
                    }
                }
            }
        }
    }
    scaling(&wire_gpu_64, &gpu);
}

/// Latency of a lone frame on `lo`: to a UDP socket (baseline) and to a host RX ring behind
/// the AF_PACKET port (`support::latency`).
fn lone_frame_latency(samples: usize, ns: &str) {
    let gap = Duration::from_micros(200);
    let note = |l: &Latency| {
        format!(
            "{} lone datagrams on lo, {} us apart, {} lost; max {:.1} us",
            l.samples,
            gap.as_micros(),
            l.lost,
            l.max_us
        )
    };
    let base = udp_socket_latency(samples, gap);
    match &base {
        Ok(l) => {
            for (q, v) in [("p50", l.p50_us), ("p99", l.p99_us)] {
                Figure::info(
                    format!("rx/udp-socket-latency-{q}/lo"),
                    v,
                    "us",
                    format!(
                        "baseline: send_to -> blocking recv_from on a UDP socket; {}; {ns}",
                        note(l)
                    ),
                )
                .emit();
            }
        }
        Err(e) => {
            Figure::skipped("rx/udp-socket-latency-p50/lo", None, format!("failed: {e}")).emit()
        }
    }
    match soft_lo_latency(samples, gap) {
        Ok(l) => {
            for (q, v) in [("p50", l.p50_us), ("p99", l.p99_us)] {
                let mut f = Figure::info(
                    format!("rx/soft-lo-latency-{q}/lo"),
                    v,
                    "us",
                    format!("send_to -> lo -> AF_PACKET lane -> host RX ring -> CPU consumer (spinning); {}; {ns}", note(&l)),
                );
                if let Ok(b) = &base {
                    let bv = if q == "p50" { b.p50_us } else { b.p99_us };
                    f = f.with_baseline(format!("rx/udp-socket-latency-{q}/lo"), bv);
                }
                f.emit();
            }
        }
        Err(e) => Figure::skipped("rx/soft-lo-latency-p50/lo", None, format!("failed: {e}")).emit(),
    }
}

/// The wire's per-frame costs, stage by stage (best of three): what one lane and one
/// sender can pass at most, whatever the machine's core count.
fn stage_figures(size: usize) {
    let best = (0..3)
        .map(|_| wire_stage_costs(size, 65536))
        .reduce(|a, b| StageCosts {
            frames: a.frames,
            send_ns: a.send_ns.min(b.send_ns),
            lane_ns: a.lane_ns.min(b.lane_ns),
            consume_ns: a.consume_ns.min(b.consume_ns),
        })
        .expect("three runs");
    Figure::info(
        format!("rx/soft-wire-lane/{size}B"),
        best.lane_ns,
        "ns/frame",
        format!(
            "one lane alone: take from its queue, parse, RSS classify, host ring push + flush ({} frames pre-queued, no consumer; best of 3); <= {:.2} Mpps per lane; budget ~200 ns",
            best.frames,
            1e3 / best.lane_ns.max(1e-9)
        ),
    )
    .emit();
    Figure::info(
        format!("rx/soft-wire-send/{size}B"),
        best.send_ns,
        "ns/frame",
        format!(
            "one sender alone: Port::send on a wire into a lane queue nobody drains meanwhile ({} frames; best of 3); <= {:.2} Mpps per sender",
            best.frames,
            1e3 / best.send_ns.max(1e-9)
        ),
    )
    .emit();
    Figure::info(
        format!("rx/soft-wire-consume/{size}B"),
        best.consume_ns,
        "ns/frame",
        format!(
            "the -cpu figures' consumer alone: CpuRxq receive + sequence check of a full host ring ({} frames; best of 3); <= {:.2} Mpps per queue",
            best.frames,
            1e3 / best.consume_ns.max(1e-9)
        ),
    )
    .emit();
}

/// Figure 2b's scaling: the 64 B wire rate at the most queues measured against that many
/// times the 1-queue rate.
fn scaling(points: &[(usize, f64)], gpu: &Result<String, String>) {
    let name = "rx/soft-wire-gpu/64B/scaling";
    let target = ">= 0.8 x linear from 1 to 8 queues";
    let one = points.iter().find(|p| p.0 == 1);
    let most = points.iter().filter(|p| p.0 > 1).max_by_key(|p| p.0);
    match (one, most) {
        (Some(&(_, p1)), Some(&(n, pn))) if p1 > 0.0 => {
            let s = pn / (n as f64 * p1);
            Figure::info(
                name,
                s,
                "x linear",
                format!(
                    "{n} queues {:.3} Mpps vs 1 queue {:.3} Mpps",
                    pn / 1e6,
                    p1 / 1e6
                ),
            )
            .with_target(
                target,
                if n >= 8 {
                    Status::check(s >= 0.8)
                } else {
                    Status::Info
                },
            )
            .emit()
        }
        _ => {
            let why = match gpu {
                Err(r) => r.clone(),
                Ok(_) => "needs the 64 B wire GPU figures at 1 and more queues: skipped".into(),
            };
            Figure::skipped(name, Some(target), why).emit()
        }
    }
}
