//! Figure 5: the UROM command round trip against its baseline, `ucx_perftest`
//! tag-matching latency (one way, 8-byte messages) between two processes on loopback,
//! parsed from its `Final:` line; over `UCX_TLS=tcp` and `UCX_TLS=shm`.
//!
//! - `urom/graph-loopback-rt/<tls>`: host -> worker -> host with the graph plugin's
//!   loopback command (callback form, the host progressing its PE without sleeping),
//!   median and p99 after a warm-up. Target: <= 1.5 x twice the one-way perftest median.
//!   The daemon, the workers and this process all run with `UCX_TLS=<tls>`.
//! - `urom/graph-loopback-rt-blocking/<tls>`: the same through the blocking
//!   `Graph::loopback` (it sleeps 100 us whenever a progress call finds nothing): info.
//! - `urom/sandbox-ping-pong/<tls>`: two workers of one domain (ranks = threads of this
//!   process, allgather between threads), tag send/recv PING -> PONG through the sandbox
//!   plugin, round trip seen by rank 1: four host<->worker commands and two worker<->worker
//!   messages per round trip; info, with the graph round trip as its reference.
//!
//! Binaries: see `support/urom.rs` (DOCA_UROM_DAEMON_BIN / UROM_PLUGIN_PATH, next to
//! this binary, or target/bench-urom built on demand).

mod support;

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::args::Args;
use support::report::{Figure, Status};
use support::urom::{loopback_spin, sandbox_ping_pong, time_each, Urom, UromBins};

const USAGE: &str = "ucx_latency [--transports tcp,shm] [--iters N] [--urom-iters N] [--quick]
  env UCX_PERFTEST: path of ucx_perftest (default: on PATH)
  env DOCA_UROM_DAEMON_BIN, UROM_PLUGIN_PATH: the UROM daemon and plugin directory";

/// Latencies of a `Final:` line (microseconds): (median, average).
fn parse_final(out: &str) -> Option<(f64, f64)> {
    let line = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("Final:"))?;
    let cols: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|c| c.parse().ok())
        .collect();
    // iterations, 50%ile, average, overall, bandwidth avg/overall, rate avg/overall
    (cols.len() >= 4).then(|| (cols[1], cols[2]))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(13337)
}

fn perftest(tls: &str, iters: u64, extra: &[&str]) -> Result<(f64, f64), String> {
    let exe = std::env::var("UCX_PERFTEST").unwrap_or_else(|_| "ucx_perftest".into());
    let port = free_port().to_string();
    let cmd = |args: &[&str]| {
        let mut c = Command::new(&exe);
        c.args(args)
            .env("UCX_TLS", tls)
            .env("UCX_WARN_UNUSED_ENV_VARS", "n")
            .env_remove("UCX_HOME")
            .stdin(Stdio::null());
        c
    };
    let server_args: Vec<&str> = ["-p", port.as_str()].iter().chain(extra).copied().collect();
    let mut server = cmd(&server_args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{exe}: {e} (source .tools/env.sh, or set UCX_PERFTEST)"))?;
    let n = iters.to_string();
    let mut result = Err("client never connected".to_string());
    for _ in 0..25 {
        std::thread::sleep(Duration::from_millis(200));
        let mut args = vec!["127.0.0.1", "-p", &port, "-t", "tag_lat", "-n", &n];
        args.extend(extra);
        let out = cmd(&args).output().map_err(|e| format!("{exe}: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if let Some(v) = parse_final(&text) {
            result = Ok(v);
            break;
        }
        result = Err(format!(
            "no Final line: {}",
            text.lines().last().unwrap_or("").trim()
        ));
    }
    // The server exits after one test; make sure it is gone (we started it).
    let _ = server.kill();
    let _ = server.wait();
    result
}

/// The UROM figures of transport `tls`, against the one-way perftest median `base` (None
/// when the baseline failed; `sleep`: perftest's one-way median in sleep mode).
fn urom_figures(
    bins: &Result<UromBins, String>,
    tls: &str,
    base: Option<f64>,
    sleep: Option<f64>,
    iters: usize,
) {
    let rt = format!("urom/graph-loopback-rt/{tls}");
    let blocking = format!("urom/graph-loopback-rt-blocking/{tls}");
    let pp = format!("urom/sandbox-ping-pong/{tls}");
    let target = base.map(|b| format!("<= 1.5 x 2 x {b:.3} us = {:.3} us", 3.0 * b));
    let skip_all = |why: &str| {
        Figure::skipped(&rt, target.as_deref(), why).emit();
        Figure::skipped(&blocking, None, why).emit();
        Figure::skipped(&pp, None, why).emit();
    };
    let bins = match bins {
        Ok(b) => b,
        Err(e) => return skip_all(&format!("no UROM daemon/plugins: {e}")),
    };
    let u = match Urom::start(bins, tls, 4) {
        Ok(u) => u,
        Err(e) => return skip_all(&format!("failed: {e}")),
    };
    let warmup = (iters / 10).max(100);
    let graph_rt = u.worker(10, u.graph.plugin.id).and_then(|w| {
        let spin = time_each(warmup, iters, |i| {
            let got = loopback_spin(&u.graph, &w, i)?;
            (got == i)
                .then_some(())
                .ok_or_else(|| format!("loopback {i} returned {got}"))
        })?;
        let n = (iters / 10).max(100);
        let block = time_each(warmup / 10, n, |i| {
            let got = u.graph.loopback(&w, i).map_err(|e| e.to_string())?;
            (got == i)
                .then_some(())
                .ok_or_else(|| format!("loopback {i} returned {got}"))
        })?;
        Ok((spin, block, n))
    });
    let graph_med = match graph_rt {
        Ok((spin, block, n)) => {
            let (med, p99) = (spin.median(), spin.p99());
            let mut f = Figure::info(
                &rt,
                med,
                "us",
                format!(
                    "median of {iters} round trips after {warmup} (p99 {p99:.3} us); 16 B loopback command, worker_graph plugin, one worker; host spins on its PE; UCX_TLS={} for daemon, worker and host",
                    u.tls
                ),
            );
            if let (Some(b), Some(t)) = (base, target.as_deref()) {
                let bound = 3.0 * b;
                let ok = med <= bound;
                f = f
                    .with_baseline(format!("ucx/perftest-tag-lat-one-way/{tls}"), b)
                    .with_target(t, Status::check(ok));
                if !ok {
                    f.notes += &format!(
                        "; missed by {:.3} us ({:.2} x the bound, {:.2} x the two-way perftest latency)",
                        med - bound,
                        med / bound,
                        med / (2.0 * b)
                    );
                    if let Some(sl) = sleep {
                        f.notes += &format!(
                            "; what bounds it: the worker process sleeps in poll() on UCX's event fd between commands (perftest spins), and 2 x the sleep-mode perftest one-way latency is {:.3} us ({:.2} x this round trip); the host reaches the worker directly (no daemon hop on the command path), over UCP streams",
                            2.0 * sl,
                            2.0 * sl / med
                        );
                    }
                }
            }
            f.emit();
            Figure::info(
                &blocking,
                block.median(),
                "us",
                format!(
                    "median of {n} (p99 {:.3} us); blocking Graph::loopback, which sleeps 100 us when a progress call finds nothing",
                    block.p99()
                ),
            )
            .emit();
            Some(med)
        }
        Err(e) => {
            Figure::skipped(&rt, target.as_deref(), format!("failed: {e}")).emit();
            Figure::skipped(&blocking, None, format!("failed: {e}")).emit();
            None
        }
    };
    let pp_iters = (iters / 4).max(100);
    match sandbox_ping_pong(&u, pp_iters / 10, pp_iters, 8) {
        Ok(l) => {
            let mut notes = format!(
                "median of {pp_iters} round trips (p99 {:.3} us); 8 B PING/PONG between workers 0 and 1 of one domain (ranks = threads of this process), worker_sandbox tag send/recv; per round trip 2 recv + 2 send commands and 2 worker-to-worker messages; bounded by the worker's idle wait (poll on the UCX event fd of its host connections, 2 ms timeout): the sandbox plugin's own UCP worker is not in that poll set, so a worker-to-worker message waits for the timeout",
                l.p99()
            );
            if let Some(g) = graph_med {
                notes += &format!("; {:.2} x the graph command round trip", l.median() / g);
            }
            Figure::info(&pp, l.median(), "us", notes).emit()
        }
        Err(e) => Figure::skipped(&pp, None, format!("failed: {e}")).emit(),
    }
}

fn main() {
    let a = Args::parse(USAGE);
    let quick = a.quick();
    let tls = a.str("transports", "tcp,shm");
    let iters: u64 = a.num("iters", if quick { 20_000 } else { 200_000 });
    let urom_iters: usize = a.num("urom-iters", if quick { 2_000 } else { 20_000 });
    let bins = UromBins::find();
    for t in tls.split(',') {
        let name = format!("ucx/perftest-tag-lat-one-way/{t}");
        let base = match perftest(t, iters, &[]) {
            Ok((median, avg)) => {
                Figure::info(
                    &name,
                    median,
                    "us",
                    format!("baseline; median of {iters} iterations (average {avg:.3} us); 8 B messages, two processes on loopback"),
                )
                .emit();
                Some(median)
            }
            Err(e) => {
                Figure::skipped(&name, None, format!("ucx_perftest failed: {e}")).emit();
                None
            }
        };
        // The UROM worker sleeps in poll() on UCX's event fd when idle: the one-way
        // latency of perftest in sleep mode is the comparable floor.
        let sleep_name = format!("ucx/perftest-tag-lat-one-way-sleep/{t}");
        let sleep = match perftest(t, iters / 10, &["-E", "sleep"]) {
            Ok((median, avg)) => {
                Figure::info(
                &sleep_name,
                median,
                "us",
                format!("reference; perftest -E sleep (waits on the UCX event fd like the UROM worker does); median of {} iterations (average {avg:.3} us)", iters / 10),
            )
            .emit();
                Some(median)
            }
            Err(e) => {
                Figure::skipped(&sleep_name, None, format!("ucx_perftest failed: {e}")).emit();
                None
            }
        };
        urom_figures(&bins, t, base, sleep, urom_iters);
    }
}
