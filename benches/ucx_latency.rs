//! Figure 5's baseline: `ucx_perftest` tag-matching latency (one way, 8-byte messages)
//! between two processes on loopback, over `UCX_TLS=tcp` and `UCX_TLS=shm`, parsed from its
//! `Final:` line. The UROM command round trip and sandbox ping-pong print as skipped until
//! the UROM graph loopback lands; their target is <= 1.5 x twice this one-way latency.

mod support;

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::args::Args;
use support::report::Figure;

const USAGE: &str = "ucx_latency [--transports tcp,shm] [--iters N] [--quick]
  env UCX_PERFTEST: path of ucx_perftest (default: on PATH)";

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

fn perftest(tls: &str, iters: u64) -> Result<(f64, f64), String> {
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
    let mut server = cmd(&["-p", &port])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{exe}: {e} (source .tools/env.sh, or set UCX_PERFTEST)"))?;
    let n = iters.to_string();
    let mut result = Err("client never connected".to_string());
    for _ in 0..25 {
        std::thread::sleep(Duration::from_millis(200));
        let out = cmd(&["127.0.0.1", "-p", &port, "-t", "tag_lat", "-n", &n])
            .output()
            .map_err(|e| format!("{exe}: {e}"))?;
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

fn main() {
    let a = Args::parse(USAGE);
    let quick = a.quick();
    let tls = a.str("transports", "tcp,shm");
    let iters: u64 = a.num("iters", if quick { 20_000 } else { 200_000 });
    for t in tls.split(',') {
        let name = format!("ucx/perftest-tag-lat-one-way/{t}");
        match perftest(t, iters) {
            Ok((median, avg)) => {
                Figure::info(
                    &name,
                    median,
                    "us",
                    format!("baseline; median of {iters} iterations (average {avg:.3} us); 8 B messages, two processes on loopback"),
                )
                .emit();
                let bound = 1.5 * 2.0 * median;
                Figure::skipped(
                    format!("urom/graph-loopback-rt/{t}"),
                    Some(&format!("<= 1.5 x 2 x {median:.3} us = {bound:.3} us")),
                    "needs the UROM graph loopback (urom branch): skipped",
                )
                .emit();
                Figure::skipped(
                    format!("urom/sandbox-ping-pong/{t}"),
                    None,
                    "needs the UROM sandbox plugin (urom branch): skipped",
                )
                .emit();
            }
            Err(e) => Figure::skipped(&name, None, format!("ucx_perftest failed: {e}")).emit(),
        }
    }
}
