//! The namespace helper on a machine without a GPU: two namespaces joined by a veth pair
//! carry UDP both ways between their addresses, a process started in a namespace sees
//! that namespace's interfaces (sysfs and procfs) and none of the host's, and the host's
//! namespace never sees the pair; links report their state and go when deleted, pairs
//! take the names, addresses and queue counts asked for, a namespace joined to the
//! host's carries UDP and takes its host end with it, and nothing of this process holds
//! a namespace after its owner is dropped. Skips, saying why, without root.

use doca_test_support::netns::{self, HostLink, NetNs, Veth, VethPair};
use doca_test_support::{poll_until, skip};
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
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
    let ids = pair.ids().unwrap();
    assert_ne!(ids[0], ids[1]);
    assert!(!netns::held_by_this_process(ids[0]).unwrap().is_empty());
    drop(pair);
    for id in ids {
        // Polled: a thread just joined may not have left the namespace yet.
        let gone = || netns::held_by_this_process(id).is_ok_and(|h| h.is_empty());
        assert!(
            poll_until(Duration::from_secs(10), gone),
            "namespace {id} still held by {:?}",
            netns::held_by_this_process(id)
        );
    }
    // Fixed names in fresh namespaces: a second pair right away must not collide.
    let again = VethPair::create().expect("a second pair after the first was dropped");
    assert_eq!(again.dev, VethPair::DEVS.map(String::from));
}

/// The number of `rx-*` (or `tx-*`) queue folders of `dev` under `/sys`.
fn queue_count(dev: &str, kind: &str) -> usize {
    std::fs::read_dir(format!("/sys/class/net/{dev}/queues"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(kind))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn links_in_one_namespace_report_their_state_and_go_when_deleted() {
    if let Some(why) = netns::unavailable_reason() {
        return skip(&why);
    }
    let ns = NetNs::new().expect("a namespace");
    ns.run(|| -> std::io::Result<()> {
        Veth::new("qa", "qb").queues(4).create()?;
        let (a, b) = (netns::link("qa")?, netns::link("qb")?);
        assert!(
            a.index > 1 && b.index > 1 && a.index != b.index,
            "{a:?} {b:?}"
        );
        assert!(!a.is_up() && !a.has_carrier() && !a.xdp_attached, "{a:?}");
        netns::link_up("qa")?;
        netns::link_up("qb")?;
        let carrier = || netns::link("qa").is_ok_and(|l| l.is_up() && l.has_carrier());
        assert!(poll_until(Duration::from_secs(10), carrier));
        assert!(netns::link("lo")?.is_up(), "lo is up in a new namespace");
        // Same name again: refused, and the error names the pair.
        let e = Veth::new("qa", "qc").create().unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        assert!(e.to_string().contains("veth qa/qc"), "{e}");
        netns::delete_link("qa")?;
        for dev in ["qa", "qb"] {
            let e = netns::link(dev).unwrap_err();
            let enodev = std::io::Error::from_raw_os_error(libc::ENODEV).to_string();
            assert!(
                e.to_string()
                    .contains(&format!("RTM_GETLINK {dev}: {enodev}")),
                "{e}"
            );
        }
        let e = netns::delete_link("qa").unwrap_err();
        assert!(e.to_string().starts_with("RTM_DELLINK qa"), "{e}");
        Ok(())
    })
    .expect("thread in the namespace")
    .expect("link steps");
    // The queue counts as sysfs shows them (made again, as it was deleted above).
    let queues = ns
        .run_with_sysfs(|| -> std::io::Result<[usize; 4]> {
            Veth::new("qa", "qb").queues(4).create()?;
            Ok([
                queue_count("qa", "rx-"),
                queue_count("qa", "tx-"),
                queue_count("qb", "rx-"),
                queue_count("qb", "tx-"),
            ])
        })
        .expect("thread with a private /sys")
        .expect("veth with four queues");
    assert_eq!(queues, [4; 4]);
    // The host's namespace has neither end.
    assert!(netns::link("qa").is_err());
}

#[test]
fn pairs_take_the_names_addresses_and_queues_asked_for() {
    if let Some(why) = netns::unavailable_reason() {
        return skip(&why);
    }
    let addrs = [Ipv4Addr::new(10, 88, 0, 1), Ipv4Addr::new(10, 88, 0, 2)];
    let pair = VethPair::builder()
        .devs("pa", "pb")
        .addrs(addrs[0], addrs[1])
        .queues(2)
        .create()
        .expect("the pair");
    assert_eq!(pair.dev, ["pa", "pb"]);
    assert_eq!(pair.addr, addrs);
    for (i, &addr) in addrs.iter().enumerate() {
        let dev = pair.dev[i].clone();
        let (link, bound, queues) = pair.ns[i]
            .run_with_sysfs(move || {
                (
                    netns::link(&dev).expect("link"),
                    UdpSocket::bind((addr, 0)).is_ok(),
                    queue_count(&dev, "rx-"),
                )
            })
            .unwrap();
        assert!(link.is_running() && link.has_carrier(), "{link:?}");
        assert!(bound, "{addr} is an address of namespace {i}");
        assert_eq!(queues, 2);
    }
}

#[test]
fn a_host_link_carries_udp_and_takes_its_host_end_along() {
    if let Some(why) = netns::unavailable_reason() {
        return skip(&why);
    }
    // The host's namespace is shared with everything else on the machine: a name and a
    // subnet of this process.
    let pid = std::process::id();
    let host_dev = format!("hl{}", pid % 100_000);
    let net = (pid % 250) as u8;
    let (host_addr, addr) = (
        Ipv4Addr::new(10, 216, net, 1),
        Ipv4Addr::new(10, 216, net, 2),
    );
    let l = HostLink::create(&host_dev, host_addr, "hlpeer", addr).expect("the host link");
    assert_eq!(
        (l.host_dev.as_str(), l.dev.as_str()),
        (host_dev.as_str(), "hlpeer")
    );
    assert!(netns::link(&host_dev).is_ok_and(|k| k.has_carrier()));
    assert!(netns::link("hlpeer").is_err(), "the other end is not here");
    let peer =
        l.ns.run(move || UdpSocket::bind((addr, 0)))
            .unwrap()
            .expect("bind in the namespace");
    peer.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let host = UdpSocket::bind((host_addr, 0)).expect("bind the host end's address");
    host.send_to(b"to the namespace", peer.local_addr().unwrap())
        .unwrap();
    let mut buf = [0u8; 32];
    let (n, from) = peer.recv_from(&mut buf).expect("datagram arrives");
    assert_eq!(&buf[..n], b"to the namespace");
    assert_eq!(from, host.local_addr().unwrap());
    let id = l.ns.id().unwrap();
    drop(peer);
    drop(l);
    let e = netns::link(&host_dev).unwrap_err();
    let enodev = std::io::Error::from_raw_os_error(libc::ENODEV).to_string();
    assert!(e.to_string().ends_with(&enodev), "{e}");
    let gone = || netns::held_by_this_process(id).is_ok_and(|h| h.is_empty());
    assert!(
        poll_until(Duration::from_secs(10), gone),
        "{:?}",
        netns::held_by_this_process(id)
    );
}
