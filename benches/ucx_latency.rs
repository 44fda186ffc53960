//! Figure 5: the UROM command round trip against its baseline, `ucx_perftest`
//! tag-matching latency (one way, 8-byte messages) between two processes on loopback,
//! parsed from its `Final:` line; over `UCX_TLS=tcp` and `UCX_TLS=shm`.
//!
//! - `urom/graph-loopback-rt/<tls>`: host -> worker -> host with the graph plugin's
//!   loopback command (callback form, the host progressing its PE without sleeping),
//!   median and p99 after a warm-up. Target: <= 1.5 x twice the one-way perftest median.
//!   The daemon, the workers and this process all run with `UCX_TLS=<tls>`.
//!   The worker process busy-polls for `DOCA_SOFT_UROM_SPIN_US` (default 100 us) after
//!   its last activity before it sleeps.
//! - `urom/graph-loopback-rt-sleep/<tls>`: the same with `DOCA_SOFT_UROM_SPIN_US=0` (the
//!   worker sleeps whenever idle): info, next to perftest's sleep mode.
//! - `urom/graph-loopback-rt-blocking/<tls>`: the same through the blocking
//!   `Graph::loopback` (spins for the same window, then sleeps 100 us whenever a progress
//!   call finds nothing): info.
//! - `urom/sandbox-ping-pong/<tls>`: two workers of one domain (ranks = threads of this
//!   process, allgather between threads), tag send/recv PING -> PONG through the sandbox
//!   plugin, round trip seen by rank 1: four host<->worker commands and two worker<->worker
//!   messages per round trip; info, with the graph round trip as its reference.
//! - `urom/sandbox-ping-pong-sleep/<tls>`: the same with `DOCA_SOFT_UROM_SPIN_US=0`: every
//!   worker-to-worker message wakes its receiver through the plugin's event descriptor.
//!
//! Binaries: see `support/urom.rs` (DOCA_UROM_DAEMON_BIN / UROM_PLUGIN_PATH, next to
//! this binary, or target/bench-urom built on demand).

mod support;

use clap::Parser;
use support::args::{self, Common};
use support::report::{Figure, Status};
use support::urom::{
    endpoint_transports, loopback_spin, sandbox_ping_pong, time_each, Latencies, Urom, UromBins,
};

/// The worker's default busy-poll window (doca-soft's `DOCA_SOFT_UROM_SPIN_US` default).
const DEFAULT_SPIN_US: u64 = doca_soft::testing::urom::DEFAULT_SPIN_US;

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "ucx_latency",
    about = "UCX and UROM latencies",
    after_help = "Environment: UCX_PERFTEST, the path of ucx_perftest (default: on PATH); \
                  DOCA_UROM_DAEMON_BIN and UROM_PLUGIN_PATH, the UROM daemon and plugin directory"
)]
struct Cli {
    /// UCX transports for ucx_perftest
    #[arg(long, value_delimiter = ',', default_value = "tcp,shm")]
    transports: Vec<String>,
    /// ucx_perftest iterations
    #[arg(long)]
    iters: Option<u64>,
    /// UROM round trips
    #[arg(long = "urom-iters")]
    urom_iters: Option<usize>,
    #[command(flatten)]
    common: Common,
}

/// ucx_perftest's tag latency over `tls` (microseconds): (median, average).
fn perftest(tls: &str, iters: u64, extra: &[&str]) -> Result<(f64, f64), String> {
    let n = iters.to_string();
    let client: Vec<&str> = [&["-t", "tag_lat", "-n", n.as_str()], extra].concat();
    // Columns: iterations, 50%ile, average, overall, bandwidth avg/overall, rate avg/overall.
    let cols = support::perftest::run(&[("UCX_TLS", tls)], &["UCX_HOME"], extra, &client, 4)?;
    Ok((cols[1], cols[2]))
}

/// Graph round trips: spinning, blocking (when asked), and the transports of the
/// host-worker endpoint they ran over (`endpoint_transports`).
type GraphRoundTrips = (Latencies, Option<Latencies>, String);

/// Graph loopback round trips in callback form, the host spinning (`iters` after
/// `warmup`) on worker `id` started with `spin_us` (see `Urom::worker_spin`); with `blocking`
/// also `blocking` round trips of the blocking `Graph::loopback`.
fn graph_round_trips(
    u: &Urom,
    id: u64,
    spin_us: Option<u64>,
    warmup: usize,
    iters: usize,
    blocking: usize,
) -> Result<GraphRoundTrips, String> {
    let w = u.worker_spin(id, u.graph.plugin.id, spin_us)?;
    let spin = time_each(warmup, iters, |i| {
        let got = loopback_spin(&u.graph, &w, i)?;
        (got == i)
            .then_some(())
            .ok_or_else(|| format!("loopback {i} returned {got}"))
    })?;
    let lanes = endpoint_transports(&w);
    if blocking == 0 {
        return Ok((spin, None, lanes));
    }
    let block = time_each(warmup / 10, blocking, |i| {
        let got = u.graph.loopback(&w, i).map_err(|e| e.to_string())?;
        (got == i)
            .then_some(())
            .ok_or_else(|| format!("loopback {i} returned {got}"))
    })?;
    Ok((spin, Some(block), lanes))
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
    let rt_sleep = format!("urom/graph-loopback-rt-sleep/{tls}");
    let blocking = format!("urom/graph-loopback-rt-blocking/{tls}");
    let pp = format!("urom/sandbox-ping-pong/{tls}");
    let pp_sleep = format!("urom/sandbox-ping-pong-sleep/{tls}");
    let target = base.map(|b| format!("<= 1.5 x 2 x {b:.3} us = {:.3} us", 3.0 * b));
    let skip_all = |why: &str| {
        Figure::skipped(&rt, target.as_deref(), why).emit();
        for n in [&rt_sleep, &blocking, &pp, &pp_sleep] {
            Figure::skipped(n, None, why).emit();
        }
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
    let n_block = (iters / 10).max(100);
    let graph_med = match graph_round_trips(&u, 10, None, warmup, iters, n_block) {
        Ok((spin, block, lanes)) => {
            let (med, p99) = (spin.median(), spin.p99());
            let mut f = Figure::info(
                &rt,
                med,
                "us",
                format!(
                    "median of {iters} round trips after {warmup} (p99 {p99:.3} us); 16 B loopback command, worker_graph plugin, one worker; host spins on its PE; the worker polls for up to DOCA_SOFT_UROM_SPIN_US (default {DEFAULT_SPIN_US} us; shortened while spinning does not pay) after its last activity before sleeping, so at this rate it does not sleep; UCX_TLS={} for daemon, worker and host; the host reaches the worker directly (no daemon hop on the command path), over UCP streams on an endpoint made from the worker's address ({lanes}: ucp_ep_query's transports; unwatched, so shared memory allowed, between processes of one machine unless DOCA_SOFT_UROM_UCX_WATCH=always; watched = TCP or RDMA)",
                    u.tls
                ),
            );
            if let (Some(b), Some(t)) = (base, target.as_deref()) {
                let bound = 3.0 * b;
                let ok = med <= bound;
                f = f
                    .with_baseline(format!("ucx/perftest-tag-lat-one-way/{tls}"), b)
                    .with_target(t, Status::check(ok));
                f.notes += &format!("; {:.2} x the two-way perftest latency", med / (2.0 * b));
                if !ok {
                    f.notes += &format!(
                        "; missed by {:.3} us ({:.2} x the bound); what bounds it: per round trip two UCP stream messages plus the UROM framing on both sides, the plugin call (malloc'd command and notification descriptors, as the plugin ABI says) and the completion path of the host library; host and worker each spin a core, on a 2-core machine they compete with the daemon and other load",
                        med - bound,
                        med / bound,
                    );
                    if tls.contains("shm") && lanes.contains("tcp") {
                        f.notes += "; and above all: the endpoint runs over TCP (watched), so this is a TCP round trip against a shared-memory baseline";
                    }
                }
            }
            f.emit();
            if let Some(block) = block {
                Figure::info(
                    &blocking,
                    block.median(),
                    "us",
                    format!(
                        "median of {n_block} (p99 {:.3} us); blocking Graph::loopback: polls without sleeping for DOCA_SOFT_UROM_SPIN_US (default {DEFAULT_SPIN_US} us) after submitting, then sleeps 100 us whenever a progress call finds nothing",
                        block.p99()
                    ),
                )
                .emit();
            }
            Some(med)
        }
        Err(e) => {
            Figure::skipped(&rt, target.as_deref(), format!("failed: {e}")).emit();
            Figure::skipped(&blocking, None, format!("failed: {e}")).emit();
            None
        }
    };
    let n_sleep = (iters / 4).max(100);
    match graph_round_trips(&u, 11, Some(0), warmup / 4, n_sleep, 0) {
        Ok((l, _, _)) => {
            let mut notes = format!(
                "median of {n_sleep} (p99 {:.3} us); as urom/graph-loopback-rt with DOCA_SOFT_UROM_SPIN_US=0: the worker arms UCX's event descriptor and sleeps in poll() whenever it is idle (the previous behaviour), so every command wakes it",
                l.p99()
            );
            if let Some(sl) = sleep {
                notes += &format!(
                    "; 2 x the sleep-mode perftest one-way latency is {:.3} us ({:.2} x this)",
                    2.0 * sl,
                    2.0 * sl / l.median()
                );
            }
            Figure::info(&rt_sleep, l.median(), "us", notes).emit()
        }
        Err(e) => Figure::skipped(&rt_sleep, None, format!("failed: {e}")).emit(),
    }
    let pp_iters = (iters / 4).max(100);
    let pp_notes = "8 B PING/PONG between two workers of one domain (ranks = threads of this process), worker_sandbox tag send/recv; per round trip 2 recv + 2 send commands and 2 worker-to-worker messages";
    match sandbox_ping_pong(&u, 0, None, pp_iters / 10, pp_iters, 8) {
        Ok(l) => {
            let mut notes = format!(
                "median of {pp_iters} round trips (p99 {:.3} us); {pp_notes}; the workers poll their host connections and the sandbox plugin's UCP worker for up to DOCA_SOFT_UROM_SPIN_US (default {DEFAULT_SPIN_US} us, adaptive) after their last activity, and the plugin's UCP event descriptor is in the worker's poll set (doca-soft wake-up extension) when they do sleep; two host threads and two worker processes are busy here: with fewer CPUs than that, spinning costs more than it saves (compare urom/sandbox-ping-pong-sleep)",
                l.p99()
            );
            if let Some(g) = graph_med {
                notes += &format!("; {:.2} x the graph command round trip", l.median() / g);
            }
            Figure::info(&pp, l.median(), "us", notes).emit()
        }
        Err(e) => Figure::skipped(&pp, None, format!("failed: {e}")).emit(),
    }
    match sandbox_ping_pong(&u, 2, Some(0), pp_iters / 10, pp_iters, 8) {
        Ok(l) => Figure::info(
            &pp_sleep,
            l.median(),
            "us",
            format!(
                "median of {pp_iters} round trips (p99 {:.3} us); as urom/sandbox-ping-pong with DOCA_SOFT_UROM_SPIN_US=0: the workers sleep whenever idle and each worker-to-worker message wakes its receiver through the plugin's UCP event descriptor (before that extension it waited for the worker's 2 ms poll timeout)",
                l.p99()
            ),
        )
        .emit(),
        Err(e) => Figure::skipped(&pp_sleep, None, format!("failed: {e}")).emit(),
    }
}

fn main() {
    let a: Cli = args::parse();
    let tls = a.transports.join(",");
    let iters = a.iters.unwrap_or(a.common.pick(20_000, 200_000));
    let urom_iters = a.urom_iters.unwrap_or(a.common.pick(2_000, 20_000));
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
