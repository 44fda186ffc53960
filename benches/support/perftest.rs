//! UCX's own benchmark, `ucx_perftest`, as the benches' baseline: a server and a client on
//! loopback, and the columns of the client's `Final:` line.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The numbers of the last `Final:` line of `out` (iterations, then the test's latency,
/// bandwidth and rate columns).
pub fn final_columns(out: &str) -> Option<Vec<f64>> {
    let line = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("Final:"))?;
    Some(
        line.split_whitespace()
            .skip(1)
            .filter_map(|c| c.parse().ok())
            .collect(),
    )
}

fn free_port() -> String {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(13337)
        .to_string()
}

/// Runs a `ucx_perftest` server (`-p PORT` and `server_args`), then the client
/// (`127.0.0.1 -p PORT` and `client_args`) until it reports (up to 25 tries 200 ms apart:
/// the server may not listen yet), with `env` set and `env_remove` unset for both; the
/// client's `Final:` columns, at least `min_columns` of them. `UCX_PERFTEST` names the
/// binary (default: `ucx_perftest` on PATH).
pub fn run(
    env: &[(&str, &str)],
    env_remove: &[&str],
    server_args: &[&str],
    client_args: &[&str],
    min_columns: usize,
) -> Result<Vec<f64>, String> {
    let exe = std::env::var("UCX_PERFTEST").unwrap_or_else(|_| "ucx_perftest".into());
    let port = free_port();
    let cmd = |args: &[&str]| {
        let mut c = Command::new(&exe);
        c.args(args)
            .envs(env.iter().copied())
            .env("UCX_WARN_UNUSED_ENV_VARS", "n")
            .stdin(Stdio::null());
        for v in env_remove {
            c.env_remove(v);
        }
        c
    };
    let mut server = cmd(&[&["-p", port.as_str()], server_args].concat())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{exe}: {e} (source .tools/env.sh, or set UCX_PERFTEST)"))?;
    let client: Vec<&str> = [&["127.0.0.1", "-p", port.as_str()], client_args].concat();
    let mut result = Err("client never connected".to_string());
    for _ in 0..25 {
        std::thread::sleep(Duration::from_millis(200));
        let out = cmd(&client).output().map_err(|e| format!("{exe}: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if let Some(v) = final_columns(&text).filter(|c| c.len() >= min_columns) {
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
