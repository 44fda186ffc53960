//! The ported UROM samples end to end, each against a daemon started by the test.

mod support;

use std::process::Command;
use support::*;

/// Runs the example `exe` with `args` against daemon `d` (its service file in the
/// environment); asserts that it succeeded and returns what it printed.
fn run_on_daemon(exe: &std::path::Path, args: &[&str], d: &Daemon) -> String {
    let out = Command::new(exe)
        .args(args)
        .env("DOCA_UROM_SERVICE_FILE", d.service_file())
        .output()
        .expect("run the example");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "example failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn multi_workers_bootstrap_runs_and_checks_gids() {
    let (d, _dev) = start_daemon(&["worker_graph"]);
    let exe = build_example("urom_multi_workers_bootstrap");
    let stdout = run_on_daemon(&exe, &["-d", "lo", "--duration", "0.3"], &d);
    assert_eq!(stdout.matches("loopback ok").count(), 4);
    assert!(stdout.contains("gid 1: workers [1, 3]"));
    assert!(stdout.contains("gid 0: workers [0, 2]"));
    assert!(stdout.contains("urom_multi_workers_bootstrap: success"));
}

#[test]
fn ping_pong_under_mpi_message_arrives_both_ways() {
    let (d, _dev) = start_daemon(&["worker_sandbox"]);
    let exe = build_example("urom_ping_pong");
    let msg = "ping pong payload 42";
    let out = Command::new("mpirun")
        .args([
            "-np",
            "2",
            "--oversubscribe",
            "--mca",
            "pml",
            "ob1",
            "--mca",
            "btl",
            "self,vader,tcp",
        ])
        .args(["-x", "DOCA_UROM_SERVICE_FILE", "-x", "LD_LIBRARY_PATH"])
        .arg(exe)
        .args(["-d", "lo", "-m", msg])
        .env("DOCA_UROM_SERVICE_FILE", d.service_file())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("run mpirun");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ping-pong failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("rank 0: received PING \"{msg}\"")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("rank 1: received PONG \"{msg}\"")),
        "{stdout}"
    );
    assert_eq!(stdout.matches("ping-pong done").count(), 2);
}

#[test]
fn async_example_echoes_through_command_futures_under_tokio() {
    let (d, _dev) = start_daemon(&["worker_graph"]);
    let exe = build_example("urom_async");
    let stdout = run_on_daemon(&exe, &["-d", "lo"], &d);
    for v in ["7 -> 7", "42 -> 42", "1099511627776 -> 1099511627776"] {
        assert!(stdout.contains(&format!("loopback {v}")), "{stdout}");
    }
    assert!(stdout.contains("urom_async: success"), "{stdout}");

    // Without a service file it says how to start a daemon, and fails.
    let out = Command::new(&exe)
        .env_remove("DOCA_UROM_SERVICE_FILE")
        .output()
        .expect("run the example");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("DOCA_UROM_SERVICE_FILE is not set"),
        "{stderr}"
    );
    assert!(stderr.contains("doca_urom_daemon"), "{stderr}");
}
