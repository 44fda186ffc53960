//! A "DPU" in its own network namespace, reached over a veth pair: the daemon and its
//! workers run in the namespace on the veth address; the host library reaches them from
//! the root namespace. (Alone in its test binary: UCX contexts created while the veth
//! exists may pick it as a TCP lane, so no other UCX test should overlap its removal.)
//! Skips, saying why, without root or the veth driver.

mod urom_support;

use doca_soft::testing::urom::{Decoder, Event, Msg, Node, SpawnReq};
use doca_test_support::netns::HostLink;
use std::net::{Ipv4Addr, SocketAddrV4};
use urom_support::*;

/// The namespace and the veth pair between it and the test's namespace, with names of
/// this process (the host end lives in the machine's shared namespace).
fn dpu_link(tag: u8) -> Result<HostLink, String> {
    let pid = std::process::id() % 100_000;
    HostLink::create(
        &format!("uh{pid}{tag}"),
        Ipv4Addr::new(10, 213, tag, 1),
        &format!("ud{pid}{tag}"),
        Ipv4Addr::new(10, 213, tag, 2),
    )
}

#[test]
fn dpu_in_a_network_namespace_over_veth() {
    let link = match dpu_link(1) {
        Ok(l) => l,
        Err(why) => {
            return doca_test_support::skip(&format!("a network namespace and veth pair: {why}"))
        }
    };
    let dpu = link.addr;
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start_in(
        Some(&link.ns),
        dir.path().to_str().unwrap(),
        &["--listen", &dpu.to_string()],
    );
    assert_eq!(*d.addr.ip(), dpu);
    let mut host = Raw::connect(d.addr);
    host.send(&Msg::Hello { max_msg: 4096 });
    assert!(matches!(host.recv(T), Some(Msg::HelloOk { .. })));
    host.send(&Msg::Spawn(SpawnReq {
        req: 1,
        worker_id: 9,
        gid: 0,
        plugins: 1,
        cpuset: vec![],
        env: vec![],
    }));
    let (port, token) = match host.recv(T) {
        Some(Msg::Spawned { port, token, .. }) => (port, token),
        other => panic!("{other:?}"),
    };
    let worker = SocketAddrV4::new(dpu, port);
    // The worker listens on the namespace's veth address too; over TCP first.
    let mut w = Raw::connect(worker);
    w.send(&Msg::Attach {
        worker_id: 9,
        token: token.clone(),
        ucx_addr: vec![],
        unwatched: false,
    });
    assert!(matches!(w.recv(T), Some(Msg::Attached { .. })));
    w.send(&Msg::Cmd(echo_cmd(1, 5, 0, 0xabcdef)));
    match w.recv(T) {
        Some(Msg::Notify(n)) => assert_eq!(&n[40..48], &0xabcdefu64.to_le_bytes()),
        other => panic!("{other:?}"),
    }
    // Then moved to UCX: endpoints made from the worker addresses reach across the
    // namespaces too.
    let mut node = Node::new();
    node.enable_ucx().expect("UCX");
    let c = node.connect(worker).unwrap();
    let ours = node.ucx_address().unwrap().to_vec();
    node.send(
        c,
        Msg::Attach {
            worker_id: 9,
            token,
            ucx_addr: ours,
            unwatched: false,
        }
        .encode(),
    )
    .unwrap();
    let mut dec = Decoder::new(1 << 20);
    let next = |node: &mut Node, dec: &mut Decoder| -> Msg {
        let deadline = std::time::Instant::now() + T;
        loop {
            if let Ok(Some(m)) = dec.next_msg() {
                return m;
            }
            assert!(std::time::Instant::now() < deadline, "no answer");
            for e in node.poll() {
                if let Event::Data(_, b) = e {
                    dec.push(&b);
                }
            }
        }
    };
    match next(&mut node, &mut dec) {
        Msg::Attached { ucx_addr, .. } => {
            assert!(!ucx_addr.is_empty(), "the worker moves to UCX");
            node.upgrade(c, &ucx_addr).expect("upgrade");
        }
        other => panic!("{other:?}"),
    }
    node.send(c, Msg::Cmd(echo_cmd(1, 6, 0, 0x5151)).encode())
        .unwrap();
    match next(&mut node, &mut dec) {
        Msg::Notify(n) => assert_eq!(&n[40..48], &0x5151u64.to_le_bytes()),
        other => panic!("{other:?}"),
    }
    assert!(node.is_upgraded(c));
    // Not reachable on loopback from the host side: the daemon only listens on the veth.
    drop(w);
    drop(host);
    drop(d);
    drop(link);
}
