//! The ported UROM samples end to end, each against a daemon started by the test.

mod support;

use std::process::Command;
use support::*;

#[test]
fn multi_workers_bootstrap_runs_and_checks_gids() {
    let dir = tempfile::tempdir().unwrap();
    install_rust_plugin("worker_graph", dir.path());
    let (d, _dev) = start_daemon(dir.path().to_str().unwrap());
    let exe = build_example("urom_multi_workers_bootstrap");
    let out = Command::new(exe)
        .args(["-d", "lo", "--duration", "0.3"])
        .env("DOCA_UROM_SERVICE_FILE", d.service_file())
        .output()
        .expect("run the example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "example failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches("loopback ok").count(), 4);
    assert!(stdout.contains("gid 1: workers [1, 3]"));
    assert!(stdout.contains("gid 0: workers [0, 2]"));
    assert!(stdout.contains("urom_multi_workers_bootstrap: success"));
}
