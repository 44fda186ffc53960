//! A "DPU" in its own network namespace, reached over a veth pair: the daemon and its
//! workers run in the namespace on the veth address; the host library reaches them from
//! the root namespace. (Alone in its test binary: UCX contexts created while the veth
//! exists may pick it as a TCP lane, so no other UCX test should overlap its removal.)

mod urom_support;

use doca_soft::testing::urom::{Decoder, Event, Msg, Node, SpawnReq};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::Command;
use urom_support::*;

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A namespace with one end of a veth pair; removed on drop.
struct Netns {
    name: String,
    host_if: String,
}

impl Netns {
    fn create(tag: u8) -> Option<Netns> {
        let pid = std::process::id();
        let name = format!("urom{pid}_{tag}");
        let host_if = format!("uh{}{tag}", pid % 100000);
        let dpu_if = format!("ud{}{tag}", pid % 100000);
        if !ip(&["netns", "add", &name]) {
            return None;
        }
        let ns = Netns { name, host_if };
        let host_addr = format!("10.213.{tag}.1/24");
        let dpu_addr = format!("10.213.{tag}.2/24");
        let ok = ip(&[
            "link",
            "add",
            &ns.host_if,
            "type",
            "veth",
            "peer",
            "name",
            &dpu_if,
        ]) && ip(&["link", "set", &dpu_if, "netns", &ns.name])
            && ip(&["addr", "add", &host_addr, "dev", &ns.host_if])
            && ip(&["link", "set", &ns.host_if, "up"])
            && ip(&["-n", &ns.name, "addr", "add", &dpu_addr, "dev", &dpu_if])
            && ip(&["-n", &ns.name, "link", "set", &dpu_if, "up"])
            && ip(&["-n", &ns.name, "link", "set", "lo", "up"]);
        ok.then_some(ns)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        ip(&["link", "del", &self.host_if]);
        ip(&["netns", "del", &self.name]);
    }
}

#[test]
fn dpu_in_a_network_namespace_over_veth() {
    let Some(ns) = Netns::create(1) else {
        panic!("creating a network namespace and veth pair failed (the tests run as root)");
    };
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start_in(
        Some(&ns.name),
        dir.path().to_str().unwrap(),
        &["--listen", "10.213.1.2"],
    );
    assert_eq!(*d.addr.ip(), Ipv4Addr::new(10, 213, 1, 2));
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
    let worker = SocketAddrV4::new(Ipv4Addr::new(10, 213, 1, 2), port);
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
    drop(ns);
}
