//! The daemon and worker processes end to end over the raw wire protocol, with the C plugin.

mod urom_support;

use doca_soft::capi::doca_error::DocaError;
use doca_soft::testing::urom::{Msg, PluginDesc, SpawnReq, HEADER_LEN};
use std::time::{Duration, Instant};
use urom_support::*;

fn hello(r: &mut Raw) -> Vec<PluginDesc> {
    r.send(&Msg::Hello { max_msg: 4096 });
    match r.recv(T) {
        Some(Msg::HelloOk {
            plugins,
            cpuset,
            max_msg,
        }) => {
            assert_eq!(cpuset.len(), 16);
            assert_eq!(max_msg, 4096);
            plugins
        }
        other => panic!("expected HelloOk, got {other:?}"),
    }
}

fn spawn(r: &mut Raw, req: u64, worker_id: u64, gid: u32, plugins: u64, env: Vec<String>) -> Msg {
    r.send(&Msg::Spawn(SpawnReq {
        req,
        worker_id,
        gid,
        plugins,
        cpuset: vec![],
        env,
    }));
    r.recv(T).expect("spawn reply")
}

fn echo_cmd(plugin: u64, ctx: u64, kind: u64, data: u64) -> Vec<u8> {
    let mut c = Vec::new();
    for v in [plugin, ctx, 16, kind, data] {
        c.extend_from_slice(&v.to_le_bytes());
    }
    c
}

#[test]
fn c_plugin_echo_through_daemon_and_worker() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    let mut host = Raw::connect(d.addr);
    let plugins = hello(&mut host);
    assert_eq!(plugins.len(), 1);
    assert_eq!(plugins[0].name, "worker_echo_c");
    assert_eq!((plugins[0].id, plugins[0].version), (1, 1));

    let port = match spawn(&mut host, 7, 5, 1, 1, vec!["X_TEST=1".into()]) {
        Msg::Spawned {
            req: 7,
            worker_id: 5,
            port,
        } => port,
        other => panic!("spawn: {other:?}"),
    };
    let mut w = Raw::local(port);
    w.send(&Msg::Attach { worker_id: 5 });
    let dest = match w.recv(T) {
        Some(Msg::Attached { dest_id, addrs }) => {
            assert_eq!(addrs, vec![(1, b"echo-c\0".to_vec())]);
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
    // Same id again: the same process (same port), env refused on reuse.
    match spawn(&mut host, 8, 5, 1, 1, vec![]) {
        Msg::Spawned { port: p2, .. } => assert_eq!(p2, port),
        other => panic!("respawn: {other:?}"),
    }
    match spawn(&mut host, 9, 5, 1, 1, vec!["A=b".into()]) {
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
}

#[test]
fn spawn_requests_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    let mut host = Raw::connect(d.addr);
    hello(&mut host);
    let code = |m: Msg| match m {
        Msg::Error { code, .. } => DocaError(code),
        other => panic!("expected an error, got {other:?}"),
    };
    assert_eq!(
        code(spawn(&mut host, 1, 1, 0, 0, vec![])),
        DocaError::INVALID_VALUE,
        "no plugin"
    );
    assert_eq!(
        code(spawn(&mut host, 2, 1, 0, 2, vec![])),
        DocaError::NOT_FOUND,
        "unknown plugin bit"
    );
    assert_eq!(
        code(spawn(&mut host, 3, 1, 0, 1, vec!["BAD ENV=1".into()])),
        DocaError::INVALID_VALUE
    );
    assert_eq!(
        code(spawn(&mut host, 4, 1, 0, 1, vec!["NOVALUE".into()])),
        DocaError::INVALID_VALUE
    );
    // ANY picks distinct ids.
    let a = spawn(&mut host, 5, u64::MAX, 0, 1, vec![]);
    let b = spawn(&mut host, 6, u64::MAX, 0, 1, vec![]);
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

#[test]
fn killed_worker_is_seen_by_host_and_daemon_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    let mut host = Raw::connect(d.addr);
    hello(&mut host);
    let port = match spawn(&mut host, 1, 3, 0, 1, vec![]) {
        Msg::Spawned { port, .. } => port,
        other => panic!("{other:?}"),
    };
    let mut w = Raw::local(port);
    w.send(&Msg::Attach { worker_id: 3 });
    assert!(matches!(w.recv(T), Some(Msg::Attached { .. })));
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
        match spawn(&mut host, req, 3, 0, 1, vec![]) {
            Msg::Spawned { port: p, .. } if p != port => {
                respawned = Some(p);
                break;
            }
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let p = respawned.expect("a new worker process for id 3");
    let mut w2 = Raw::local(p);
    w2.send(&Msg::Attach { worker_id: 3 });
    assert!(matches!(w2.recv(T), Some(Msg::Attached { .. })));
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
    let plugins = hello(&mut host);
    assert_eq!(
        plugins.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        vec!["worker_echo_c"]
    );
    // Hosts name plugins only by id bits: any bit the daemon did not assign is refused.
    for bit in 1..64 {
        match spawn(&mut host, bit, 1, 0, 1 << bit, vec![]) {
            Msg::Error { code, .. } => assert_eq!(code, DocaError::NOT_FOUND.0),
            other => panic!("bit {bit}: {other:?}"),
        }
    }
    assert!(d.worker_pids().is_empty());
}

#[test]
fn host_disconnect_tears_its_workers_down() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    {
        let mut host = Raw::connect(d.addr);
        hello(&mut host);
        assert!(matches!(
            spawn(&mut host, 1, 11, 0, 1, vec![]),
            Msg::Spawned { .. }
        ));
        assert!(matches!(
            spawn(&mut host, 2, 12, 0, 1, vec![]),
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
        assert_eq!(d.worker_pids().len(), 1);
    }
    let deadline = std::time::Instant::now() + T;
    while !d.worker_pids().is_empty() && std::time::Instant::now() < deadline {
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
    host.send(&Msg::Hello { max_msg: 4096 });
    assert!(matches!(host.recv(T), Some(Msg::HelloOk { .. })));
    for id in [1u64, 2] {
        host.send(&Msg::Spawn(SpawnReq {
            req: id,
            worker_id: id,
            gid: 0,
            plugins: 1,
            cpuset: vec![],
            env: vec![],
        }));
        assert!(matches!(host.recv(T), Some(Msg::Spawned { .. })));
    }
    let pids = d.worker_pids();
    assert_eq!(pids.len(), 2);
    // SAFETY: signalling the daemon this test started.
    unsafe { libc::kill(d.child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = d.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "daemon exits on SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "clean exit: {status:?}");
    for p in pids {
        // SAFETY: probing with signal 0 only.
        let alive = unsafe { libc::kill(p, 0) } == 0
            && !std::fs::read_to_string(format!("/proc/{p}/stat"))
                .unwrap_or_default()
                .contains(") Z");
        assert!(!alive, "worker {p} was torn down");
    }
    assert!(host.wait_closed(T), "hosts see the daemon go away");
}

#[test]
fn worker_cpuset_is_applied_to_the_process() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    let mut host = Raw::connect(d.addr);
    hello(&mut host);
    host.send(&Msg::Spawn(SpawnReq {
        req: 1,
        worker_id: 1,
        gid: 0,
        plugins: 1,
        cpuset: vec![1],
        env: vec![],
    }));
    assert!(matches!(host.recv(T), Some(Msg::Spawned { .. })));
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
