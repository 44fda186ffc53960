//! The nine GPU verbs samples (`examples/verbs_*.rs`) end to end: a server and a client
//! process on one GPU, connected over `lo` (soft NIC over UCX), each run checked by what
//! the samples themselves verify and print:
//! - write_bw, put_bw: the server finds every byte of every size's buffer written
//!   ("Validation successful! Data received correctly from client");
//! - get_bw: the client finds every byte read ("... Data received correctly from server");
//! - put_signal_bw, put_counter_bw: data validated and each size's flag sum exactly the
//!   number of signals/counter updates the kernels posted (2 launches);
//! - write_lat, put_signal_lat, put_counter_lat: both sides finish every round trip and the
//!   last round's byte / the flag count arrived;
//! - twosided_bw: receive buffers hold the client's data, or (inline) stay zero while the
//!   kernels check the data inside the CQEs;
//! - every client prints one table row per size with the iteration count, and exits 0.
//!
//! Scopes (thread, warp), NIC handlers (AUTO, CPU proxy) and send DBR mode are varied.
//! The `two_hosts_*` tests run all nine with server and client in two network namespaces
//! joined by a veth pair (UCX over TCP,
//! `UCX_TLS=tcp,cuda_copy` unless `DOCA_RS_NETNS_UCX_TLS` says otherwise), with the same
//! checks; they need root (no `ip` command) and skip, saying why, without it.
//! Without a CUDA driver the GPU tests print why they skip; the command-line tests run
//! everywhere. Example binaries come from `DOCA_RS_EXAMPLES` or `target/<profile>/examples`.

mod support;

use doca_test_support::netns::VethPair;
use doca_test_support::require_cuda;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use support::{example, run, veth_pair_or_skip, Finished, Proc};

/// One sample pair at a time: they share the GPU and spin while waiting for each other.
static GPU: Mutex<()> = Mutex::new(());

const ITERS: u32 = 512;
const THREADS: u32 = 64;
const SIZES: [u32; 4] = [1, 64, 1024, 16384];
/// Seconds a sample may take (the soft NIC under a loaded CI-sized machine is slow).
const LIMIT: u64 = 300;

fn gpu_lock() -> std::sync::MutexGuard<'static, ()> {
    GPU.lock().unwrap_or_else(|p| p.into_inner())
}

/// A TCP port nobody listens on right now, for the out-of-band exchange.
fn free_port() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    l.local_addr().expect("local addr").port().to_string()
}

fn sizes_arg(sizes: &[u32]) -> String {
    sizes
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The sample's binary when a GPU run is possible, or None with the reason printed.
fn gpu_sample(name: &str) -> Option<PathBuf> {
    if !require_cuda(&format!("GPU verbs sample {name}")) {
        return None;
    }
    example(name)
}

/// The table rows of `out`: (bytes, iterations), in order.
fn rows(out: &str) -> Vec<(u32, u32)> {
    out.lines()
        .filter(|l| l.starts_with(' '))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let bytes = f.next()?.parse().ok()?;
            let iters = f.next()?.parse().ok()?;
            Some((bytes, iters))
        })
        .collect()
}

fn assert_table(f: &Finished, sizes: &[u32], what: &str) {
    let want: Vec<(u32, u32)> = sizes.iter().map(|&s| (s, ITERS)).collect();
    assert_eq!(rows(&f.stdout), want, "{what}: one row per size:\n{f}");
    bench_parser_agrees(&f.stdout, &want, what);
}

/// The verbs bench target (scripts/bench-verbs.py) reads the same rows from this real
/// output: sizes and iterations as above, a finite value each. Needs python3 (scripts/bench
/// does too); without it, says so and checks nothing more.
fn bench_parser_agrees(stdout: &str, want: &[(u32, u32)], what: &str) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bench-verbs.py");
    let child = Command::new("python3")
        .arg(&script)
        .args(["--parse", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("note: no python3: the bench parser was not checked against {what}'s table");
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdout.as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("bench-verbs.py --parse");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{script:?} --parse: {out:?}");
    let mut lines = text.lines();
    let kind = lines.next().unwrap_or("");
    assert!(
        kind == "bw" || kind == "lat",
        "table kind {kind:?} of {what}:\n{stdout}"
    );
    let got: Vec<(u32, u32)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let v: f64 = f[2].parse().unwrap_or(f64::NAN);
            assert!(v.is_finite() && v > 0.0, "{what}: bench value {l:?}");
            (f[0].parse().unwrap(), f[1].parse().unwrap())
        })
        .collect();
    assert_eq!(got, want, "bench-verbs.py reads {what}'s table:\n{stdout}");
}

fn assert_ok(f: &Finished, what: &str) {
    assert_eq!(f.code, Some(0), "{what} failed:\n{f}");
    assert!(
        !f.stdout.contains("Error CQE"),
        "{what}: error completions:\n{f}"
    );
}

/// Runs server and client of `sample` with `common` flags (plus `client_extra` for the
/// client), over `lo` (`net` None) or with the server in the first namespace of `net` and
/// the client in the second, each on its veth end, connecting to the server's address.
/// `signal_server`: the bandwidth servers run until SIGTERM, sent once the client is done.
/// Returns (server, client).
fn pair_on(
    net: Option<&VethPair>,
    bin: &Path,
    common: &[&str],
    client_extra: &[&str],
    signal_server: bool,
    sizes: &[u32],
) -> (Finished, Finished) {
    let port = free_port();
    let sizes = sizes_arg(sizes);
    let (devs, server_addr) = match net {
        Some(n) => (
            [n.dev[0].as_str(), n.dev[1].as_str()],
            n.addr[0].to_string(),
        ),
        None => (["lo", "lo"], "127.0.0.1".to_string()),
    };
    // Both sides: their device, GPU 0, the out-of-band port, the sizes, then `common`.
    let side_args = |dev| {
        let mut v = vec!["-d", dev, "-g", "0", "--oob-port", &port, "--sizes", &sizes];
        v.extend_from_slice(common);
        v
    };
    let sargs = side_args(devs[0]);
    let mut cargs = side_args(devs[1]);
    cargs.extend_from_slice(&["-c", &server_addr]);
    cargs.extend_from_slice(client_extra);
    let spawn = |args: &[&str], i: usize| match net {
        Some(n) => Proc::spawn_in(bin, args, &n.ns[i]),
        None => Proc::spawn(bin, args),
    };
    let server = spawn(&sargs, 0);
    let client = spawn(&cargs, 1).wait(LIMIT);
    if signal_server && client.code == Some(0) {
        // SAFETY: kill(2) on the server's pid, a child of this process not yet reaped.
        assert_eq!(unsafe { libc::kill(server.pid(), libc::SIGTERM) }, 0);
    }
    let server = server.wait(if client.code == Some(0) { LIMIT } else { 5 });
    (server, client)
}

fn iters() -> String {
    ITERS.to_string()
}

fn threads() -> String {
    THREADS.to_string()
}

/// write_bw / put_bw: the server validates every byte.
fn one_sided_write(sample: &str, extra: &[&str], client_extra: &[&str]) {
    let Some(bin) = gpu_sample(sample) else {
        return;
    };
    one_sided_write_on(None, &bin, extra, client_extra);
}

fn one_sided_write_on(net: Option<&VethPair>, bin: &Path, extra: &[&str], client_extra: &[&str]) {
    let _g = gpu_lock();
    let (i, t) = (iters(), threads());
    let mut common = vec!["-i", &i, "-t", &t];
    common.extend_from_slice(extra);
    let (server, client) = pair_on(net, bin, &common, client_extra, true, &SIZES);
    assert_ok(&client, "client");
    assert_table(&client, &SIZES, "client");
    assert_ok(&server, "server");
    assert!(
        server
            .stdout
            .contains("Validation successful! Data received correctly from client"),
        "server validation:\n{server}"
    );
}

#[test]
fn write_bw_raw_wqes_reach_the_server() {
    one_sided_write("verbs_write_bw", &[], &[]);
}

#[test]
fn write_bw_through_the_cpu_proxy() {
    one_sided_write("verbs_write_bw", &[], &["-n", "1"]);
}

#[test]
fn put_bw_thread_scope() {
    one_sided_write("verbs_put_bw", &["-e", "0"], &[]);
}

#[test]
fn put_bw_warp_scope() {
    one_sided_write("verbs_put_bw", &["-e", "1"], &[]);
}

#[test]
fn put_bw_cpu_proxy_warp_scope() {
    one_sided_write("verbs_put_bw", &["-e", "1"], &["-n", "1"]);
}

fn get_bw(scope: &str) {
    let Some(bin) = gpu_sample("verbs_get_bw") else {
        return;
    };
    get_bw_on(None, &bin, scope);
}

/// A bandwidth sample's server and client at `scope` over all [`SIZES`] (the GPU held for
/// the run), the client's success and size table checked; returns (server, client).
fn bw_pair_checked(net: Option<&VethPair>, bin: &Path, scope: &str) -> (Finished, Finished) {
    let _g = gpu_lock();
    let (i, t) = (iters(), threads());
    let common = ["-i", &i, "-t", &t, "-e", scope];
    let (server, client) = pair_on(net, bin, &common, &[], true, &SIZES);
    assert_ok(&client, "client");
    assert_table(&client, &SIZES, "client");
    (server, client)
}

fn get_bw_on(net: Option<&VethPair>, bin: &Path, scope: &str) {
    let (server, client) = bw_pair_checked(net, bin, scope);
    assert!(
        client
            .stdout
            .contains("Validation successful! Data received correctly from server"),
        "client validation:\n{client}"
    );
    assert_ok(&server, "server");
}

#[test]
fn get_bw_thread_scope_reads_the_server() {
    get_bw("0");
}

#[test]
fn get_bw_warp_scope_reads_the_server() {
    get_bw("1");
}

/// put_signal_bw / put_counter_bw: data validated and the flag sums exact.
fn signal_bw(sample: &str, scope: &str) {
    let Some(bin) = gpu_sample(sample) else {
        return;
    };
    signal_bw_on(None, &bin, scope);
}

fn signal_bw_on(net: Option<&VethPair>, bin: &Path, scope: &str) {
    let (server, _client) = bw_pair_checked(net, bin, scope);
    assert_ok(&server, "server");
    assert!(
        server
            .stdout
            .contains("Data validation successful! Data received correctly from client"),
        "server validation:\n{server}"
    );
    // Two launches per size; each thread (warp: each warp) signals ITERS / THREADS times.
    let rounds = (ITERS / THREADS) as u64;
    let signallers = if scope == "1" { THREADS / 32 } else { THREADS } as u64;
    for s in SIZES {
        let line = format!(
            "Flag value for message size {s} is {}",
            2 * rounds * signallers
        );
        assert!(server.stdout.contains(&line), "want {line:?}:\n{server}");
    }
}

#[test]
fn put_signal_bw_thread_scope_flags_count_every_put() {
    signal_bw("verbs_put_signal_bw", "0");
}

#[test]
fn put_signal_bw_warp_scope_flags_count_every_warp() {
    signal_bw("verbs_put_signal_bw", "1");
}

#[test]
fn put_counter_bw_thread_scope_counters_follow_the_writes() {
    signal_bw("verbs_put_counter_bw", "0");
}

#[test]
fn put_counter_bw_warp_scope_counters_follow_the_writes() {
    signal_bw("verbs_put_counter_bw", "1");
}

/// The latency samples: both sides print the table and validate.
fn latency(sample: &str, extra: &[&str], client_extra: &[&str], ok_line: &str) {
    let Some(bin) = gpu_sample(sample) else {
        return;
    };
    latency_on(None, &bin, extra, client_extra, ok_line);
}

fn latency_on(
    net: Option<&VethPair>,
    bin: &Path,
    extra: &[&str],
    client_extra: &[&str],
    ok_line: &str,
) {
    let _g = gpu_lock();
    let i = iters();
    let mut common = vec!["-i", i.as_str()];
    common.extend_from_slice(extra);
    let (server, client) = pair_on(net, bin, &common, client_extra, false, &SIZES);
    for (f, who) in [(&client, "client"), (&server, "server")] {
        assert_ok(f, who);
        assert_table(f, &SIZES, who);
        assert!(f.stdout.contains(ok_line), "{who} validation:\n{f}");
    }
}

#[test]
fn write_lat_ping_pong() {
    latency(
        "verbs_write_lat",
        &[],
        &[],
        "Validation successful! The last round trip of every size arrived",
    );
}

#[test]
fn write_lat_without_send_dbr_through_the_cpu_proxy() {
    latency(
        "verbs_write_lat",
        &["-r", "1"],
        &["-n", "1"],
        "Validation successful! The last round trip of every size arrived",
    );
}

#[test]
fn put_signal_lat_ping_pong() {
    latency(
        "verbs_put_signal_lat",
        &[],
        &[],
        "Validation successful! Every round trip signalled its flag",
    );
}

#[test]
fn put_counter_lat_ping_pong() {
    latency(
        "verbs_put_counter_lat",
        &["-r", "1"],
        &[],
        "Validation successful! Every round trip signalled its flag",
    );
}

fn twosided(extra: &[&str], sizes: &[u32]) {
    let Some(bin) = gpu_sample("verbs_twosided_bw") else {
        return;
    };
    twosided_on(None, &bin, extra, sizes);
}

fn twosided_on(net: Option<&VethPair>, bin: &Path, extra: &[&str], sizes: &[u32]) {
    let _g = gpu_lock();
    let (i, t) = (iters(), threads());
    let mut common = vec!["-i", i.as_str(), "-t", t.as_str()];
    common.extend_from_slice(extra);
    let (server, client) = pair_on(net, bin, &common, &[], false, sizes);
    for (f, who) in [(&client, "client"), (&server, "server")] {
        assert_ok(f, who);
        assert_table(f, sizes, who);
    }
    assert!(
        server
            .stdout
            .contains("Data validation successful! Data received correctly from client"),
        "server validation:\n{server}"
    );
}

#[test]
fn twosided_bw_thread_scope_receives_in_order() {
    twosided(&["-e", "0"], &SIZES);
}

#[test]
fn twosided_bw_warp_scope_receives_in_order() {
    twosided(&["-e", "1"], &SIZES);
}

#[test]
fn twosided_bw_inline_receives_stay_in_the_cqes() {
    twosided(&["-x", "1"], &[1, 8, 30, 32]);
}

// ---- Two hosts: server and client in two network namespaces over a veth pair ----

/// The sample and a fresh namespace pair, or None with the reason printed.
fn two_hosts(sample: &str) -> Option<(PathBuf, VethPair)> {
    let bin = gpu_sample(sample)?;
    let net = veth_pair_or_skip(sample)?;
    Some((bin, net))
}

#[test]
fn two_hosts_write_bw_reaches_the_server_over_tcp() {
    let Some((bin, net)) = two_hosts("verbs_write_bw") else {
        return;
    };
    one_sided_write_on(Some(&net), &bin, &[], &[]);
}

#[test]
fn two_hosts_put_bw_warp_scope_reaches_the_server_over_tcp() {
    let Some((bin, net)) = two_hosts("verbs_put_bw") else {
        return;
    };
    one_sided_write_on(Some(&net), &bin, &["-e", "1"], &[]);
}

#[test]
fn two_hosts_get_bw_reads_the_server_over_tcp() {
    let Some((bin, net)) = two_hosts("verbs_get_bw") else {
        return;
    };
    get_bw_on(Some(&net), &bin, "0");
}

#[test]
fn two_hosts_put_signal_bw_flags_count_every_put() {
    let Some((bin, net)) = two_hosts("verbs_put_signal_bw") else {
        return;
    };
    signal_bw_on(Some(&net), &bin, "1");
}

#[test]
fn two_hosts_put_counter_bw_counters_follow_the_writes() {
    let Some((bin, net)) = two_hosts("verbs_put_counter_bw") else {
        return;
    };
    signal_bw_on(Some(&net), &bin, "0");
}

/// A latency sample across two namespaces: both sides print the table and `validation`.
fn two_hosts_latency(name: &str, validation: &str) {
    let Some((bin, net)) = two_hosts(name) else {
        return;
    };
    latency_on(Some(&net), &bin, &[], &[], validation);
}

#[test]
fn two_hosts_put_signal_lat_ping_pong() {
    two_hosts_latency(
        "verbs_put_signal_lat",
        "Validation successful! Every round trip signalled its flag",
    );
}

#[test]
fn two_hosts_put_counter_lat_ping_pong() {
    two_hosts_latency(
        "verbs_put_counter_lat",
        "Validation successful! Every round trip signalled its flag",
    );
}

#[test]
fn two_hosts_write_lat_ping_pong() {
    two_hosts_latency(
        "verbs_write_lat",
        "Validation successful! The last round trip of every size arrived",
    );
}

#[test]
fn two_hosts_twosided_bw_receives_in_order_over_tcp() {
    let Some((bin, net)) = two_hosts("verbs_twosided_bw") else {
        return;
    };
    twosided_on(Some(&net), &bin, &["-e", "0"], &SIZES);
}

// ---- Command line (no GPU needed) ----

const ALL: [&str; 9] = [
    "verbs_write_bw",
    "verbs_write_lat",
    "verbs_put_bw",
    "verbs_get_bw",
    "verbs_put_signal_bw",
    "verbs_put_signal_lat",
    "verbs_put_counter_bw",
    "verbs_put_counter_lat",
    "verbs_twosided_bw",
];

fn status_and_err(bin: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = run(std::process::Command::new(bin).args(args));
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn samples_reject_bad_command_lines() {
    for name in ALL {
        let Some(bin) = example(name) else {
            return;
        };
        let (code, err) = status_and_err(&bin, &["-g", "0"]);
        assert_eq!(code, Some(2), "{name} without -d: {err}");
        assert!(err.contains("-d/--device"), "{name}: {err}");
        let (code, err) = status_and_err(&bin, &["-d", "lo"]);
        assert_eq!(code, Some(2), "{name} without -g: {err}");
        assert!(err.contains("-g/--gpu"), "{name}: {err}");
        let (code, err) = status_and_err(&bin, &["-d", "lo", "-g", "0000:17:00.0.0"]);
        assert_eq!(
            code,
            Some(2),
            "{name} with a 14-character GPU address: {err}"
        );
        let (code, err) = status_and_err(&bin, &["-d", "lo", "-g", "0", "-i", "x"]);
        assert_eq!(code, Some(2), "{name} -i x: {err}");
        assert!(err.contains("invalid value"), "{name}: {err}");
        let (code, err) = status_and_err(&bin, &["-d", "lo", "-g", "0", "--bogus", "1"]);
        assert_eq!(code, Some(2), "{name} --bogus: {err}");
        assert!(err.contains("unknown option"), "{name}: {err}");
    }
}

#[test]
fn samples_accept_only_their_own_flags() {
    let bad: &[(&str, &[&str], &str)] = &[
        // Latency samples run one thread: no -t; twosided fixes the handler: no -n.
        ("verbs_write_lat", &["-t", "128"], "unknown option"),
        ("verbs_twosided_bw", &["-n", "1"], "unknown option"),
        // -t must be even and >= 64; -e 0 or 1; -r 0 or 1; NIC handlers 0..=4.
        ("verbs_put_bw", &["-t", "63"], "even and >= 64"),
        ("verbs_put_bw", &["-t", "32"], "even and >= 64"),
        ("verbs_put_bw", &["-e", "2"], "exec-shared must be 0 or 1"),
        ("verbs_write_lat", &["-r", "2"], "send DBR mode"),
        ("verbs_write_bw", &["-n", "9"], "unknown NIC handler"),
        ("verbs_write_bw", &["-e", "1"], "unknown option"),
        ("verbs_twosided_bw", &["--sizes", "0"], "positive"),
    ];
    for (name, args, msg) in bad {
        let Some(bin) = example(name) else {
            return;
        };
        let mut a = vec!["-d", "lo", "-g", "0"];
        a.extend_from_slice(args);
        let (code, err) = status_and_err(&bin, &a);
        assert_eq!(code, Some(2), "{name} {args:?}: {err}");
        assert!(err.contains(msg), "{name} {args:?}: want {msg:?} in {err}");
    }
    // The multi-letter -gid and the long names parse (help exits 0 before anything runs).
    let Some(bin) = example("verbs_put_bw") else {
        return;
    };
    let o = run(std::process::Command::new(&bin).arg("-v"));
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("verbs_put_bw "));
    let (code, err) = status_and_err(&bin, &["-d", "lo", "-g", "0", "-l", "loud"]);
    assert_eq!(code, Some(2), "-l loud: {err}");
    assert!(err.contains("no DOCA log level"), "{err}");
    let o = run(std::process::Command::new(&bin).arg("--help"));
    assert_eq!(o.status.code(), Some(0));
    let help = String::from_utf8_lossy(&o.stdout);
    for flag in [
        "-l, --log-level",
        "-v, --version",
        "-gid, --gid-index",
        "-n, --nic handler",
        "-e, --exec-shared",
        "-t, --thread",
    ] {
        assert!(help.contains(flag), "help lists {flag}:\n{help}");
    }
}

#[test]
fn samples_without_a_cuda_driver_say_so() {
    if doca::gpunetio::cuda_available() {
        doca_test_support::skip("a CUDA driver is present: the GPU tests above cover the samples");
        return;
    }
    for name in ALL {
        let Some(bin) = example(name) else {
            return;
        };
        let (code, err) = status_and_err(&bin, &["-d", "lo", "-g", "0", "-gid", "0"]);
        assert_eq!(code, Some(1), "{name}: {err}");
        assert!(err.contains("no CUDA driver"), "{name}: {err}");
    }
}
