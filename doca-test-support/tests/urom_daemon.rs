//! The daemon launcher: a real `doca_urom_daemon` (built by a nested cargo call) starts on
//! loopback with a plugin, accepts a connection, and stops on SIGTERM; stand-in daemons
//! (shell scripts) show the plugin path, the service file, and every way a start can fail.

use doca_test_support::urom::{service_line, Daemon, UromBinaries, BANNER};
use doca_test_support::wait::PATIENCE;
use std::net::TcpStream;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

/// A stand-in daemon: prints `banner`, records its environment, then sleeps.
fn fake(banner: &str, record: &std::path::Path) -> doca_test_support::urom::DaemonBuilder {
    Daemon::builder("sh").arg("-c").arg(format!(
        "echo \"$UROM_PLUGIN_PATH\" > {rec}; echo \"$EXTRA\" >> {rec}; echo '{banner}'; exec sleep 30",
        rec = record.display()
    ))
}

fn process_gone(pid: u32) -> bool {
    // SAFETY: probing with signal 0 only.
    unsafe { libc::kill(pid as i32, 0) != 0 }
}

#[test]
fn a_real_daemon_starts_with_a_plugin_and_stops_on_sigterm() {
    let bins = UromBinaries::build_for_tests();
    assert!(bins.has(&["worker_graph", "worker_sandbox"]), "{bins:?}");
    let mut d = Daemon::builder(bins.daemon())
        .plugin(bins.plugin("worker_graph"), "worker_graph")
        .env("UCX_WARN_UNUSED_ENV_VARS", "n")
        .start()
        .unwrap();
    assert_eq!(
        d.addr().ip().octets(),
        [127, 0, 0, 1],
        "loopback by default"
    );
    assert_ne!(d.addr().port(), 0);
    assert!(d.plugin_dir().join("worker_graph.so").is_file());
    assert!(d.alive());
    TcpStream::connect(d.addr()).expect("the daemon accepts connections");
    let f = d.service_file("0000:a2:07.0", "lo");
    let line = std::fs::read_to_string(&f).unwrap();
    assert_eq!(line, service_line(d.addr(), "0000:a2:07.0", "lo"));
    assert!(
        line.ends_with(&format!(" dpu {} 0000:a2:07.0 lo\n", d.addr())),
        "{line}"
    );
    let pid = d.pid();
    let dir = f.parent().unwrap().to_path_buf();
    let status = d.stop().expect("reaped");
    assert!(status.success(), "a clean exit on SIGTERM: {status}");
    assert!(process_gone(pid));
    assert!(!dir.exists(), "its folder is removed");
}

#[test]
fn plugins_and_plugin_dirs_form_the_plugin_path_in_order() {
    let t = tempfile::tempdir().unwrap();
    let so = t.path().join("libx.so");
    std::fs::write(&so, b"not really a library").unwrap();
    let rec = t.path().join("env");
    let d = fake(&format!("{BANNER}127.0.0.1:4242"), &rec)
        .plugin_dir("/first")
        .plugin(&so, "x")
        .plugin(&so, "y")
        .plugin_dir("/nonexistent")
        .env("EXTRA", "seen")
        .start()
        .unwrap();
    assert_eq!(d.addr(), "127.0.0.1:4242".parse().unwrap());
    let env = std::fs::read_to_string(&rec).unwrap();
    let plugins = d.plugin_dir();
    assert_eq!(
        env,
        format!("/first;{};/nonexistent\nseen\n", plugins.display())
    );
    assert_eq!(
        std::fs::read(plugins.join("x.so")).unwrap(),
        b"not really a library"
    );
    assert!(plugins.join("y.so").is_file());
    let status = d.stop().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM));
}

#[test]
fn without_plugins_the_path_is_the_empty_plugin_folder() {
    let t = tempfile::tempdir().unwrap();
    let rec = t.path().join("env");
    let d = fake(&format!("{BANNER}127.0.0.1:1"), &rec).start().unwrap();
    let env = std::fs::read_to_string(&rec).unwrap();
    assert_eq!(
        env.lines().next().unwrap(),
        d.plugin_dir().display().to_string()
    );
    assert_eq!(std::fs::read_dir(d.plugin_dir()).unwrap().count(), 0);
}

#[test]
fn a_daemon_ignoring_sigterm_is_killed_after_the_grace_period() {
    let d = Daemon::builder("sh")
        .arg("-c")
        .arg(format!(
            "trap '' TERM; echo '{BANNER}127.0.0.1:7'; exec sleep 30"
        ))
        .grace(Duration::from_millis(200))
        .start()
        .unwrap();
    let pid = d.pid();
    let t = Instant::now();
    let status = d.stop().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(t.elapsed() < PATIENCE);
    assert!(process_gone(pid));
}

#[test]
fn a_dropped_daemon_is_stopped() {
    let d = Daemon::builder("sh")
        .arg("-c")
        .arg(format!("echo '{BANNER}127.0.0.1:7'; exec sleep 30"))
        .start()
        .unwrap();
    let pid = d.pid();
    drop(d);
    assert!(process_gone(pid));
}

#[test]
fn failed_starts_say_why_and_leave_nothing_running() {
    let cases: [(&str, &str); 3] = [
        (
            "echo hello; exec sleep 30",
            "unexpected banner \"hello\\n\"",
        ),
        ("exit 4", "exited before its banner"),
        (
            "echo 'doca_urom_daemon listening on nowhere'; exec sleep 30",
            "unexpected banner",
        ),
    ];
    for (script, why) in cases {
        let e = Daemon::builder("sh")
            .arg("-c")
            .arg(script)
            .start()
            .unwrap_err();
        assert!(e.contains(why), "{script}: {e}");
    }
    let t = Instant::now();
    let e = Daemon::builder("sh")
        .arg("-c")
        .arg("exec sleep 30")
        .banner_timeout(Duration::from_millis(100))
        .start()
        .unwrap_err();
    assert!(e.contains("no banner within 100ms"), "{e}");
    assert!(e.contains("signal: 15"), "stopped with SIGTERM: {e}");
    assert!(t.elapsed() < PATIENCE);
    let e = Daemon::builder("/nonexistent/doca_urom_daemon")
        .start()
        .unwrap_err();
    assert!(e.contains("starting /nonexistent/doca_urom_daemon"), "{e}");
    let e = Daemon::builder("sh")
        .plugin("/nonexistent/libp.so", "p")
        .start()
        .unwrap_err();
    assert!(e.contains("copying plugin /nonexistent/libp.so"), "{e}");
}

#[test]
fn a_daemon_in_a_network_namespace_sees_its_interfaces_only() {
    if let Some(why) = doca_test_support::netns::unavailable_reason() {
        return doca_test_support::skip(&why);
    }
    let ns = doca_test_support::netns::NetNs::new().expect("a namespace");
    let t = tempfile::tempdir().unwrap();
    let rec = t.path().join("seen");
    let d = Daemon::builder("sh")
        .arg("-c")
        .arg(format!(
            "readlink /proc/self/ns/net > {rec}; ls /sys/class/net >> {rec}; \
             echo '{BANNER}127.0.0.1:4243'; exec sleep 30",
            rec = rec.display()
        ))
        .netns(&ns)
        .start()
        .unwrap();
    let seen = std::fs::read_to_string(&rec).unwrap();
    let want = format!("net:[{}]\nlo\n", ns.id().unwrap());
    assert_eq!(seen, want, "the namespace's own id and interfaces");
    drop(d);
}
