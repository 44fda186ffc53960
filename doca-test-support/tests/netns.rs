//! The namespace helper on a machine without a GPU: two namespaces joined by a veth pair
//! carry UDP both ways between their addresses, a process started in a namespace sees
//! that namespace's interfaces (sysfs and procfs) and none of the host's, and the host's
//! namespace never sees the pair. Skips, saying why, without root.

use doca_test_support::netns::VethPair;
use doca_test_support::skip;
use std::net::{SocketAddr, UdpSocket};
use std::process::Command;
use std::time::Duration;

fn pair_or_skip() -> Option<VethPair> {
    match VethPair::create() {
        Ok(p) => Some(p),
        Err(why) => {
            skip(&format!("two network namespaces: {why}"));
            None
        }
    }
}

#[test]
fn udp_crosses_the_veth_pair_both_ways() {
    let Some(pair) = pair_or_skip() else { return };
    let bind = |i: usize| {
        let addr = pair.addr[i];
        pair.ns[i]
            .run(move || UdpSocket::bind((addr, 0)))
            .expect("thread in the namespace")
            .unwrap_or_else(|e| panic!("bind {addr} in namespace {i}: {e}"))
    };
    let (a, b) = (bind(0), bind(1));
    for s in [&a, &b] {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    let b_addr = b.local_addr().unwrap();
    a.send_to(b"ping over veth", b_addr).unwrap();
    let mut buf = [0u8; 64];
    let (n, from) = b.recv_from(&mut buf).expect("ping arrives in namespace 1");
    assert_eq!(&buf[..n], b"ping over veth");
    assert_eq!(
        from,
        SocketAddr::from((pair.addr[0], a.local_addr().unwrap().port()))
    );
    b.send_to(b"pong", from).unwrap();
    let (n, from) = a.recv_from(&mut buf).expect("pong arrives in namespace 0");
    assert_eq!(&buf[..n], b"pong");
    assert_eq!(from, b_addr);
}

#[test]
fn sockets_of_a_namespace_cannot_bind_the_other_ends_address() {
    let Some(pair) = pair_or_skip() else { return };
    // Address 1 lives only in namespace 1: namespace 0 (and the host) cannot bind it.
    let addr = pair.addr[1];
    let r = pair.ns[0].run(move || UdpSocket::bind((addr, 0))).unwrap();
    assert!(r.is_err(), "namespace 0 bound {addr}");
    assert!(UdpSocket::bind((addr, 0)).is_err(), "the host bound {addr}");
}

#[test]
fn processes_in_a_namespace_see_its_interfaces_only() {
    let Some(pair) = pair_or_skip() else { return };
    for i in 0..2 {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "ls /sys/class/net; cat /proc/net/dev"]);
        let out = pair.ns[i]
            .enter(&mut cmd)
            .output()
            .expect("spawn sh in the namespace");
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let sys: Vec<&str> = text.lines().take_while(|l| !l.contains('|')).collect();
        let mut sys = sys;
        sys.sort();
        let mut want = vec!["lo", pair.dev[i].as_str()];
        want.sort();
        assert_eq!(sys, want, "/sys/class/net in namespace {i}:\n{text}");
        assert!(text.contains(&format!("{}:", pair.dev[i])), "{text}");
        assert!(!text.contains(&format!("{}:", pair.dev[1 - i])), "{text}");
    }
    // The host's own namespace and mounts are untouched.
    for dev in &pair.dev {
        assert!(
            !std::path::Path::new(&format!("/sys/class/net/{dev}")).exists(),
            "{dev} leaked into the host namespace"
        );
    }
}

#[test]
fn a_dropped_pair_leaves_nothing_behind() {
    let Some(pair) = pair_or_skip() else { return };
    let ns_fd = pair.ns[0].fd();
    assert!(ns_fd >= 0);
    drop(pair);
    // Fixed names in fresh namespaces: a second pair right away must not collide.
    let again = VethPair::create().expect("a second pair after the first was dropped");
    assert_eq!(again.dev, VethPair::DEVS.map(String::from));
}
