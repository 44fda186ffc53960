//! The daemon and worker processes end to end over the raw wire protocol, with the C plugin.

mod urom_support;

use doca_soft::capi::doca_error::DocaError;
use doca_soft::testing::urom::{Msg, SpawnReq, HEADER_LEN};
use std::time::{Duration, Instant};
use urom_support::*;

#[test]
fn c_plugin_echo_through_daemon_and_worker() {
    let (_dir, d) = echo_daemon();
    let mut host = Raw::connect(d.addr);
    let plugins = host.hello();
    assert_eq!(plugins.len(), 1);
    assert_eq!(plugins[0].name, "worker_echo_c");
    assert_eq!((plugins[0].id, plugins[0].version), (1, 1));

    let (port, token) = match host.spawn(7, 5, 1, 1, vec!["UCX_LOG_LEVEL=error".into()]) {
        Msg::Spawned {
            req: 7,
            worker_id: 5,
            port,
            token,
        } => (port, token),
        other => panic!("spawn: {other:?}"),
    };
    assert_eq!(token.len(), 16);
    let (mut w, attached) = attach(port, 5, token.clone());
    let dest = match attached {
        Msg::Attached {
            dest_id,
            addrs,
            ucx_addr,
            ..
        } => {
            assert_eq!(addrs, vec![(1, b"echo-c\0".to_vec())]);
            assert!(ucx_addr.is_empty(), "no UCX address offered: TCP stays");
            dest_id
        }
        other => panic!("attach: {other:?}"),
    };
    assert_ne!(dest, 0);
    w.send(&Msg::Cmd(echo_cmd(1, 0xabc, 0, 0x1234_5678)));
    match w.recv(T) {
        Some(Msg::Notify(n)) => {
            assert_eq!(n.len(), 32 + 16);
            assert_eq!(&n[0..8], &1u64.to_le_bytes(), "type = plugin id");
            assert_eq!(&n[8..16], &0xabcu64.to_le_bytes(), "urom_context echoed");
            assert_eq!(&n[24..28], &0u32.to_le_bytes(), "status SUCCESS");
            assert_eq!(&n[40..48], &0x1234_5678u64.to_le_bytes());
        }
        other => panic!("notify: {other:?}"),
    }
    // Unknown plugin id: an error notification, connection kept.
    w.send(&Msg::Cmd(echo_cmd(4, 9, 0, 0)));
    match w.recv(T) {
        Some(Msg::Notify(n)) => assert_eq!(&n[24..28], &DocaError::NOT_FOUND.0.to_le_bytes()),
        other => panic!("notify: {other:?}"),
    }
    // A live worker answers pings.
    w.send(&Msg::Ping { seq: 3 });
    assert_eq!(w.recv(T), Some(Msg::Pong { seq: 3 }));
    // Same id again: the same process (same port and token), env refused on reuse.
    assert_eq!(spawned(host.spawn(8, 5, 1, 1, vec![])), (port, token));
    match host.spawn(9, 5, 1, 1, vec!["UCX_TLS=tcp".into()]) {
        Msg::Error { req: 9, code } => assert_eq!(code, DocaError::ALREADY_EXIST.0),
        other => panic!("env on reuse: {other:?}"),
    }
    host.send(&Msg::GidQuery { req: 3, gid: 1 });
    assert_eq!(
        host.recv(T),
        Some(Msg::GidList {
            req: 3,
            ids: vec![5]
        })
    );
    host.send(&Msg::GidQuery { req: 4, gid: 0 });
    assert_eq!(
        host.recv(T),
        Some(Msg::GidList {
            req: 4,
            ids: vec![]
        })
    );
    host.send(&Msg::Ping { seq: 11 });
    assert_eq!(
        host.recv(T),
        Some(Msg::Pong { seq: 11 }),
        "the daemon answers pings"
    );
}

#[test]
fn spawn_requests_are_validated() {
    let (_dir, d) = echo_daemon();
    let mut host = Raw::connect(d.addr);
    host.hello();
    let code = |m: Msg| match m {
        Msg::Error { code, .. } => DocaError(code),
        other => panic!("expected an error, got {other:?}"),
    };
    assert_eq!(
        code(host.spawn(1, 1, 0, 0, vec![])),
        DocaError::INVALID_VALUE,
        "no plugin"
    );
    assert_eq!(
        code(host.spawn(2, 1, 0, 2, vec![])),
        DocaError::NOT_FOUND,
        "unknown plugin bit"
    );
    assert_eq!(
        code(host.spawn(3, 1, 0, 1, vec!["BAD ENV=1".into()])),
        DocaError::INVALID_VALUE
    );
    assert_eq!(
        code(host.spawn(4, 1, 0, 1, vec!["NOVALUE".into()])),
        DocaError::INVALID_VALUE
    );
    // A CPU this machine does not have (CPU 1000): refused, not ignored.
    let mut cpus = vec![0u64; 16];
    cpus[15] = 1 << 40;
    cpus[0] = 1;
    assert_eq!(
        code(host.spawn_on(10, 1, 0, 1, vec![], cpus)),
        DocaError::INVALID_VALUE,
        "non-existent CPU"
    );
    assert_eq!(
        code(host.spawn_on(11, 1, 0, 1, vec![], vec![1; 17])),
        DocaError::INVALID_VALUE,
        "more than 1024 CPUs"
    );
    // ANY picks distinct ids.
    let a = host.spawn(5, u64::MAX, 0, 1, vec![]);
    let b = host.spawn(6, u64::MAX, 0, 1, vec![]);
    match (a, b) {
        (Msg::Spawned { worker_id: x, .. }, Msg::Spawned { worker_id: y, .. }) => {
            assert_ne!(x, y);
            assert_ne!(x, u64::MAX);
        }
        other => panic!("ANY spawns: {other:?}"),
    }
    assert_eq!(d.worker_pids().len(), 2);
}

#[test]
fn malformed_and_oversized_messages_are_rejected_and_daemon_survives() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let mut d = Daemon::start(dir.path().to_str().unwrap(), &["-m", "1024"]);

    let mut bad = Raw::connect(d.addr);
    bad.send_raw(b"this is not a UROM frame at all".to_vec());
    assert_eq!(
        bad.recv(T),
        Some(Msg::Error {
            req: 0,
            code: DocaError::INVALID_VALUE.0
        })
    );
    assert!(
        bad.wait_closed(T),
        "daemon drops a connection that broke the protocol"
    );

    let mut big = Raw::connect(d.addr);
    big.send(&Msg::Hello { max_msg: 1024 });
    assert!(matches!(big.recv(T), Some(Msg::HelloOk { .. })));
    let mut frame = Msg::Cmd(vec![0; 4000]).encode();
    frame.truncate(HEADER_LEN + 10);
    big.send_raw(frame);
    assert_eq!(
        big.recv(T),
        Some(Msg::Error {
            req: 0,
            code: DocaError::TOO_BIG.0
        })
    );
    assert!(big.wait_closed(T));

    let mut early = Raw::connect(d.addr);
    early.send(&Msg::GidQuery { req: 1, gid: 0 });
    assert_eq!(
        early.recv(T),
        Some(Msg::Error {
            req: 0,
            code: DocaError::BAD_STATE.0
        }),
        "hello first"
    );

    let mut huge_hello = Raw::connect(d.addr);
    huge_hello.send(&Msg::Hello { max_msg: 1 << 20 });
    assert_eq!(
        huge_hello.recv(T),
        Some(Msg::Error {
            req: 0,
            code: DocaError::TOO_BIG.0
        })
    );

    assert!(d.alive());
    let mut good = Raw::connect(d.addr);
    good.send(&Msg::Hello { max_msg: 1024 });
    assert!(
        matches!(good.recv(T), Some(Msg::HelloOk { .. })),
        "daemon still serves hosts"
    );
}

/// Sends `n` bytes of garbage on a plain TCP connection to `addr`, closes its write side,
/// and returns whether the peer closed it within 10 s.
fn garbage(addr: std::net::SocketAddrV4, n: usize) -> bool {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let junk: Vec<u8> = (0..n).map(|i| (i * 7919 % 251) as u8 ^ 0x5a).collect();
    let _ = s.write_all(&junk);
    let _ = s.shutdown(std::net::Shutdown::Write);
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// Whether no descriptor of `pid` is a TCP socket in CLOSE-WAIT.
fn no_close_wait(pid: i32) -> bool {
    let sockets: Vec<String> = fd_targets(pid)
        .into_iter()
        .filter_map(|(_, t)| {
            t.strip_prefix("socket:[")
                .and_then(|r| r.strip_suffix(']'))
                .map(str::to_owned)
        })
        .collect();
    let tcp = std::fs::read_to_string(format!("/proc/{pid}/net/tcp")).unwrap_or_default();
    // Column 4 is the state (08: CLOSE_WAIT), column 10 the inode.
    !tcp.lines().skip(1).any(|l| {
        let c: Vec<&str> = l.split_whitespace().collect();
        c.len() > 9 && c[3] == "08" && sockets.iter().any(|s| s == c[9])
    })
}

#[test]
fn garbage_on_the_daemon_and_worker_ports_closes_those_connections_and_costs_no_cpu() {
    let (_dir, d) = echo_daemon();
    let mut host = Raw::connect(d.addr);
    host.hello();
    let (port, token) = spawned(host.spawn(1, 3, 0, 1, vec![]));
    let (mut w, attached) = attach(port, 3, token);
    assert!(matches!(attached, Msg::Attached { .. }));
    let worker = d.worker_pids()[0];
    let worker_addr = std::net::SocketAddrV4::new(*d.addr.ip(), port);
    for n in [1, 64, 3000, 4000, 65536] {
        assert!(
            garbage(d.addr, n),
            "daemon closes a connection of {n} garbage bytes"
        );
        assert!(
            garbage(worker_addr, n),
            "worker closes a connection of {n} garbage bytes"
        );
    }
    // Nothing left behind, and nobody spins: over 2 s the daemon and the worker use a
    // fraction of a CPU (UCX's listener spun one forever on such input).
    std::thread::sleep(Duration::from_millis(200));
    assert!(no_close_wait(d.pid()), "no CLOSE-WAIT socket in the daemon");
    assert!(no_close_wait(worker), "no CLOSE-WAIT socket in the worker");
    let (d0, w0) = (cpu_time(d.pid()), cpu_time(worker));
    std::thread::sleep(Duration::from_secs(2));
    let (dd, dw) = (cpu_time(d.pid()) - d0, cpu_time(worker) - w0);
    assert!(
        dd < Duration::from_millis(600),
        "daemon used {dd:?} of CPU in 2 s"
    );
    assert!(
        dw < Duration::from_millis(600),
        "worker used {dw:?} of CPU in 2 s"
    );
    // Both still serve.
    w.send(&Msg::Cmd(echo_cmd(1, 5, 0, 42)));
    assert!(
        matches!(w.recv(T), Some(Msg::Notify(_))),
        "the worker still serves"
    );
    host.send(&Msg::GidQuery { req: 2, gid: 0 });
    assert!(
        matches!(host.recv(T), Some(Msg::GidList { .. })),
        "the daemon still serves"
    );
}

#[test]
fn idle_connections_time_out_and_a_flood_of_them_does_not_lock_hosts_out() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(
        dir.path().to_str().unwrap(),
        &["--hello-timeout-ms", "500", "--max-connections", "64"],
    );
    // A host that greeted stays; a silent connection is closed after the timeout.
    let mut host = Raw::connect(d.addr);
    host.hello();
    let mut silent = std::net::TcpStream::connect(d.addr).unwrap();
    let started = Instant::now();
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut b = [0u8; 1];
    assert!(
        matches!(std::io::Read::read(&mut silent, &mut b), Ok(0) | Err(_)),
        "a silent connection is closed"
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(8),
        "after {took:?}"
    );
    // A flood: far more idle connections than the daemon takes (and than a default
    // 1024-descriptor process could hold for all of them).
    let mut flood = Vec::new();
    let addr = std::net::SocketAddr::V4(d.addr);
    for _ in 0..400 {
        if let Ok(s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            flood.push(s);
        }
    }
    assert!(flood.len() >= 200, "opened {} connections", flood.len());
    // A new host still gets in, at once, and the greeted one still works.
    let t = Instant::now();
    let mut late = Raw::connect(d.addr);
    late.hello();
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "hello took {:?}",
        t.elapsed()
    );
    host.send(&Msg::GidQuery { req: 1, gid: 0 });
    assert!(matches!(host.recv(T), Some(Msg::GidList { .. })));
    // The daemon holds a bounded number of descriptors.
    let fds = fd_targets(d.pid()).len();
    assert!(fds < 64 + 40, "daemon holds {fds} descriptors");
}

#[test]
fn connections_from_one_peer_are_capped_and_greeted_hosts_keep_their_room() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    // 16 connections: 8 per peer, 4 pending at once.
    let d = Daemon::start(dir.path().to_str().unwrap(), &["--max-connections", "16"]);
    let mut hosts: Vec<Raw> = Vec::new();
    for _ in 0..8 {
        let mut h = Raw::connect(d.addr);
        h.hello();
        hosts.push(h);
    }
    let mut ninth = Raw::connect(d.addr);
    ninth.send(&Msg::Hello { max_msg: 4096 });
    assert!(ninth.recv(Duration::from_secs(3)).is_none());
    assert!(
        ninth.wait_closed(T),
        "a ninth connection from one peer is refused"
    );
    // One host leaves: room for another.
    drop(hosts.pop());
    let deadline = Instant::now() + T;
    loop {
        let mut again = Raw::connect(d.addr);
        again.send(&Msg::Hello { max_msg: 4096 });
        if matches!(
            again.recv(Duration::from_secs(2)),
            Some(Msg::HelloOk { .. })
        ) {
            break;
        }
        assert!(Instant::now() < deadline, "room again after a host left");
    }
    // Silent connections are evicted oldest first: they never take a greeted host's room.
    let silent: Vec<_> = (0..10)
        .map(|_| std::net::TcpStream::connect(d.addr).unwrap())
        .collect();
    hosts[0].send(&Msg::GidQuery { req: 5, gid: 0 });
    assert!(matches!(hosts[0].recv(T), Some(Msg::GidList { .. })));
    drop(silent);
}

#[test]
fn a_slow_worker_start_blocks_nobody_else() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    build_c_plugin("worker_slow_c", dir.path());
    let d = Daemon::start_with(
        None,
        dir.path().to_str().unwrap(),
        &[],
        &[("UROM_TEST_OPEN_SLEEP_MS", "4000")],
    );
    let mut a = Raw::connect(d.addr);
    let plugins = a.hello();
    let slow = plugins
        .iter()
        .find(|p| p.name == "worker_slow_c")
        .unwrap()
        .id;
    let echo = plugins
        .iter()
        .find(|p| p.name == "worker_echo_c")
        .unwrap()
        .id;
    let asked = Instant::now();
    a.send(&Msg::Spawn(SpawnReq {
        req: 1,
        worker_id: 1,
        gid: 0,
        plugins: slow,
        cpuset: vec![],
        env: vec![],
    }));
    // Meanwhile another host greets, queries and starts a worker of its own.
    let mut b = Raw::connect(d.addr);
    b.hello();
    b.send(&Msg::GidQuery { req: 2, gid: 0 });
    assert_eq!(
        b.recv(T),
        Some(Msg::GidList {
            req: 2,
            ids: vec![1]
        })
    );
    let (port, token) = spawned(b.spawn(3, 2, 0, echo, vec![]));
    let (mut w, _) = attach(port, 2, token);
    w.send(&Msg::Cmd(echo_cmd(echo, 1, 0, 7)));
    assert!(matches!(w.recv(T), Some(Msg::Notify(_))));
    let other = asked.elapsed();
    assert!(
        other < Duration::from_millis(3500),
        "the other host was served while the slow worker started ({other:?})"
    );
    // The slow worker comes up in the end.
    assert!(matches!(a.recv(T), Some(Msg::Spawned { req: 1, .. })));
    assert!(asked.elapsed() >= Duration::from_millis(3500));
}

#[test]
fn a_worker_start_that_takes_too_long_fails_with_time_out() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_slow_c", dir.path());
    let d = Daemon::start_with(
        None,
        dir.path().to_str().unwrap(),
        &["--spawn-timeout-ms", "300"],
        &[("UROM_TEST_OPEN_SLEEP_MS", "10000")],
    );
    let mut h = Raw::connect(d.addr);
    h.hello();
    match h.spawn(1, 1, 0, 1, vec![]) {
        Msg::Error { req: 1, code } => assert_eq!(DocaError(code), DocaError::TIME_OUT),
        other => panic!("{other:?}"),
    }
    let deadline = Instant::now() + T;
    while !d.worker_pids().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(d.worker_pids().is_empty(), "the slow worker is stopped");
}

#[test]
fn worker_environment_is_filtered_through_the_allowlist() {
    let (dir, d) = echo_daemon();
    let mut h = Raw::connect(d.addr);
    h.hello();
    for bad in [
        "LD_PRELOAD=/tmp/evil.so",
        "LD_LIBRARY_PATH=/tmp",
        "UCX_MODULE_DIR=/tmp",
        "UROM_PLUGIN_PATH=/tmp",
        "X_TEST=1",
    ] {
        match h.spawn(1, 1, 0, 1, vec![bad.into()]) {
            Msg::Error { code, .. } => {
                assert_eq!(DocaError(code), DocaError::NOT_PERMITTED, "{bad}")
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    assert!(
        d.worker_pids().is_empty(),
        "no worker started for a refused environment"
    );
    assert!(matches!(
        h.spawn(
            2,
            2,
            0,
            1,
            vec![
                "UCX_LOG_LEVEL=error".into(),
                "DOCA_SOFT_UROM_SPIN_US=0".into()
            ]
        ),
        Msg::Spawned { .. }
    ));
    let pid = d.worker_pids()[0];
    let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let env: Vec<String> = env
        .split(|b| *b == 0)
        .map(|e| String::from_utf8_lossy(e).into_owned())
        .collect();
    assert!(env.iter().any(|e| e == "UCX_LOG_LEVEL=error"), "{env:?}");
    assert!(env.iter().any(|e| e == "DOCA_SOFT_UROM_SPIN_US=0"));
    // The operator's allowlist decides, and LD_* is refused even there.
    let d2 = Daemon::start(dir.path().to_str().unwrap(), &["--worker-env-allow", "X_*"]);
    let mut h2 = Raw::connect(d2.addr);
    h2.hello();
    assert!(matches!(
        h2.spawn(1, 1, 0, 1, vec!["X_TEST=1".into()]),
        Msg::Spawned { .. }
    ));
    assert!(matches!(
        h2.spawn(2, 2, 0, 1, vec!["UCX_TLS=tcp".into()]),
        Msg::Error { .. }
    ));
    let out =
        std::process::Command::new(doca_test_support::urom::UromBinaries::for_tests().daemon())
            .args(["--worker-env-allow", "LD_*"])
            .output()
            .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("LD_"));
}

#[test]
fn workers_inherit_no_descriptor_of_the_daemon() {
    let (_dir, d) = echo_daemon();
    // Some host connections open in the daemon while it spawns.
    let mut others: Vec<Raw> = (0..3).map(|_| Raw::connect(d.addr)).collect();
    for o in others.iter_mut() {
        o.hello();
    }
    let mut h = Raw::connect(d.addr);
    h.hello();
    let (port, token) = spawned(h.spawn(1, 1, 0, 1, vec![]));
    let (_w, _) = attach(port, 1, token);
    let worker = d.worker_pids()[0];
    let daemon_fds = fd_targets(d.pid());
    let worker_fds = fd_targets(worker);
    let shared: Vec<&(i32, String)> = worker_fds
        .iter()
        .filter(|(fd, t)| {
            *fd > 2
                && (t.starts_with("socket:")
                    || t.starts_with("pipe:")
                    || t.starts_with("anon_inode:"))
                && daemon_fds
                    .iter()
                    .any(|(_, dt)| dt == t && !dt.starts_with("anon_inode:"))
        })
        .collect();
    assert!(
        shared.is_empty(),
        "worker holds the daemon's descriptors {shared:?}\nworker: {worker_fds:?}\ndaemon: {daemon_fds:?}"
    );
    let listener = daemon_fds
        .iter()
        .filter(|(_, t)| t.starts_with("socket:"))
        .count();
    assert!(listener > 0, "the daemon's sockets were seen");
}

#[test]
fn a_plugin_that_crashes_or_exits_when_loaded_costs_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    build_c_plugin("worker_crash_c", dir.path());
    build_c_plugin("worker_exit_c", dir.path());
    std::fs::write(dir.path().join("junk.so"), b"not an ELF").unwrap();
    std::fs::write(dir.path().join("README"), b"notes").unwrap();
    let mut d = Daemon::start(
        &format!("{};/nonexistent/plugins", dir.path().display()),
        &[],
    );
    let report = d.report(|l| l.starts_with("skipped "), 5);
    let line = |needle: &str| {
        report
            .iter()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line about {needle}: {report:#?}"))
            .clone()
    };
    assert!(
        line("worker_crash_c.so").contains("killed by signal"),
        "{report:#?}"
    );
    assert!(line("worker_exit_c.so").contains("exit"), "{report:#?}");
    assert!(line("junk.so").contains("cannot load it"), "{report:#?}");
    assert!(line("README").contains("not a .so file"));
    assert!(line("/nonexistent/plugins").contains("not readable"));
    assert!(line("plugin worker_echo_c").contains("id 0x1"));
    assert!(d.alive());
    let mut h = Raw::connect(d.addr);
    let names: Vec<String> = h.hello().into_iter().map(|p| p.name).collect();
    assert_eq!(names, vec!["worker_echo_c"]);
}

#[test]
fn an_empty_plugin_path_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    let report = d.report(|l| l.starts_with("no plugins"), 1);
    assert!(
        report
            .iter()
            .any(|l| l.contains("plugin directory is empty")),
        "{report:?}"
    );
    assert!(report
        .iter()
        .any(|l| l.starts_with("no plugins: UROM_PLUGIN_PATH=")));
}

#[test]
fn attaching_takes_the_token_and_nothing_runs_before_it() {
    let (_dir, d) = echo_daemon();
    let mut h = Raw::connect(d.addr);
    h.hello();
    let (port, token) = spawned(h.spawn(1, 1, 0, 1, vec![]));
    let (mut bad, m) = attach(port, 1, vec![0; 16]);
    assert_eq!(
        m,
        Msg::Error {
            req: 0,
            code: DocaError::AUTHENTICATION.0
        }
    );
    assert!(bad.wait_closed(T));
    let mut early = Raw::local(port);
    early.send(&Msg::Cmd(echo_cmd(1, 1, 0, 1)));
    assert_eq!(
        early.recv(T),
        Some(Msg::Error {
            req: 0,
            code: DocaError::BAD_STATE.0
        }),
        "a command before attaching is refused"
    );
    let (_ok, m) = attach(port, 1, token);
    assert!(matches!(m, Msg::Attached { .. }));
}

#[test]
fn killed_worker_is_seen_by_host_and_daemon_keeps_serving() {
    let (_dir, d) = echo_daemon();
    let mut host = Raw::connect(d.addr);
    host.hello();
    let (port, token) = spawned(host.spawn(1, 3, 0, 1, vec![]));
    let (mut w, m) = attach(port, 3, token);
    assert!(matches!(m, Msg::Attached { .. }));
    w.send(&Msg::Cmd(echo_cmd(1, 1, 1, 0))); // HOLD: stays in flight
    let pids = d.worker_pids();
    assert_eq!(pids.len(), 1);
    // SAFETY: killing the worker process the daemon spawned for this test.
    unsafe { libc::kill(pids[0], libc::SIGKILL) };
    assert!(
        w.wait_closed(Duration::from_secs(10)),
        "host sees the worker connection fail"
    );
    // The daemon reaps it and serves a new worker under the same id.
    let mut respawned = None;
    for req in 10..200 {
        match host.spawn(req, 3, 0, 1, vec![]) {
            Msg::Spawned { port: p, token, .. } if p != port => {
                respawned = Some((p, token));
                break;
            }
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let (p, token) = respawned.expect("a new worker process for id 3");
    let (_w2, m) = attach(p, 3, token);
    assert!(matches!(m, Msg::Attached { .. }));
}

#[test]
fn plugins_outside_the_plugin_path_are_never_loaded() {
    let good = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", good.path());
    // A plugin in another directory, and a non-plugin .so in the path.
    build_c_plugin("worker_echo_c", other.path());
    std::fs::write(good.path().join("junk.so"), b"not an ELF").unwrap();
    let d = Daemon::start(&format!("{};/nonexistent", good.path().display()), &[]);
    let mut host = Raw::connect(d.addr);
    let plugins = host.hello();
    assert_eq!(
        plugins.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        vec!["worker_echo_c"]
    );
    // Hosts name plugins only by id bits: any bit the daemon did not assign is refused.
    for bit in 1..64 {
        match host.spawn(bit, 1, 0, 1 << bit, vec![]) {
            Msg::Error { code, .. } => assert_eq!(code, DocaError::NOT_FOUND.0),
            other => panic!("bit {bit}: {other:?}"),
        }
    }
    assert!(d.worker_pids().is_empty());
}

#[test]
fn host_disconnect_tears_its_workers_down() {
    let (_dir, d) = echo_daemon();
    {
        let mut host = Raw::connect(d.addr);
        host.hello();
        assert!(matches!(
            host.spawn(1, 11, 0, 1, vec![]),
            Msg::Spawned { .. }
        ));
        assert!(matches!(
            host.spawn(2, 12, 0, 1, vec![]),
            Msg::Spawned { .. }
        ));
        assert_eq!(d.worker_pids().len(), 2);
        host.send(&Msg::Destroy {
            req: 3,
            worker_id: 11,
        });
        assert_eq!(
            host.recv(T),
            Some(Msg::Destroyed {
                req: 3,
                worker_id: 11
            })
        );
        let deadline = Instant::now() + T;
        while d.worker_pids().len() > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(d.worker_pids().len(), 1);
    }
    let deadline = Instant::now() + T;
    while !d.worker_pids().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        d.worker_pids().is_empty(),
        "workers of a gone host are torn down"
    );
}

#[test]
fn sigterm_to_the_daemon_tears_workers_down_and_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let mut d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    let mut host = Raw::connect(d.addr);
    host.hello();
    for id in [1u64, 2] {
        assert!(matches!(
            host.spawn(id, id, 0, 1, vec![]),
            Msg::Spawned { .. }
        ));
    }
    let pids = d.worker_pids();
    assert_eq!(pids.len(), 2);
    // SAFETY: signalling the daemon this test started.
    unsafe { libc::kill(d.pid(), libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = d.child_mut().try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "daemon exits on SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "clean exit: {status:?}");
    for p in pids {
        // SAFETY: probing with signal 0 only.
        let alive = unsafe { libc::kill(p, 0) } == 0 && proc_state(p).is_some_and(|s| s != 'Z');
        assert!(!alive, "worker {p} was torn down");
    }
    assert!(host.wait_closed(T), "hosts see the daemon go away");
}

#[test]
fn worker_cpuset_is_applied_to_the_process_and_the_reported_set_is_the_option() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(dir.path().to_str().unwrap(), &["--cpuset", "0-7"]);
    let mut host = Raw::connect(d.addr);
    host.send(&Msg::Hello { max_msg: 4096 });
    match host.recv(T) {
        Some(Msg::HelloOk { cpuset, .. }) => {
            assert_eq!(cpuset[0], 0xff, "CPUs 0-7 reported");
            assert!(cpuset[1..].iter().all(|w| *w == 0));
        }
        other => panic!("{other:?}"),
    }
    let report = d.report(|l| l.starts_with("reporting CPUs"), 1);
    assert!(
        report
            .iter()
            .any(|l| l.starts_with("reporting CPUs 0-7 to hosts")),
        "{report:?}"
    );
    assert!(matches!(
        host.spawn_on(1, 1, 0, 1, vec![], vec![1]),
        Msg::Spawned { .. }
    ));
    let pids = d.worker_pids();
    assert_eq!(pids.len(), 1);
    let status = std::fs::read_to_string(format!("/proc/{}/status", pids[0])).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))
        .unwrap();
    assert_eq!(
        line.split_whitespace().nth(1),
        Some("0"),
        "worker pinned to CPU 0"
    );
}

#[test]
fn command_lines_use_clap_help_exits_0_and_errors_exit_2() {
    let urom = doca_test_support::urom::UromBinaries::for_tests();
    for path in [urom.daemon(), urom.worker()] {
        let bin = path.display();
        let help = std::process::Command::new(&path)
            .arg("-h")
            .output()
            .unwrap();
        assert_eq!(help.status.code(), Some(0), "{bin} -h");
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.contains("Usage:"), "{bin}: {text}");
        let bad = std::process::Command::new(&path)
            .arg("--no-such-flag")
            .output()
            .unwrap();
        assert_eq!(bad.status.code(), Some(2), "{bin} --no-such-flag");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains("--no-such-flag"), "{bin}: {err}");
    }
    let daemon_help =
        std::process::Command::new(doca_test_support::urom::UromBinaries::for_tests().daemon())
            .arg("--help")
            .output()
            .unwrap();
    let text = String::from_utf8_lossy(&daemon_help.stdout);
    for flag in [
        "--cpuset",
        "--worker-env-allow",
        "--max-connections",
        "--hello-timeout-ms",
        "--spawn-timeout-ms",
        "--log-level",
    ] {
        assert!(text.contains(flag), "documents {flag}: {text}");
    }
}
