//! AF_PACKET ports on a veth pair whose ends live in two network namespaces this test
//! creates: frames sent by the port on one end arrive at the port on the other end.
//! Skips (with a printed reason) without root or without the veth driver; the
//! namespaces go with the pair's handle even when the test fails, and the test checks
//! that nothing of this process (a socket, a thread) keeps them once it is dropped.

mod support;

use std::sync::Arc;
use std::time::Duration;

use doca_soft::testing::frames::udp4;
use doca_soft::testing::{Port, PortSpec};
use doca_test_support::netns::{self, NetNs, VethPair};
use doca_test_support::skip;
use support::{drop_pair_and_check_namespaces_gone, udp_dst_to, unique, RecordingSink};

const LIMIT: Duration = Duration::from_secs(10);

/// Runs `f` on a thread that has entered network namespace `ns`.
fn in_netns<T: Send>(ns: &NetNs, f: impl FnOnce() -> T + Send) -> T {
    ns.run(f).expect("thread in the namespace")
}

#[test]
fn veth_between_namespaces_carries_frames() {
    if let Some(why) = netns::unavailable_reason() {
        skip(&why);
        return;
    }
    // Ports are shared process-wide by interface name within a namespace: names of this
    // test only, so that no other test's port of the same name in the same namespace is
    // handed out.
    let (va, vb) = (unique("va"), unique("vb"));
    let pair = match VethPair::builder().devs(&va, &vb).create() {
        Ok(p) => p,
        Err(why) => {
            skip(&format!("cannot make the veth pair: {why}"));
            return;
        }
    };
    let [na, nb] = &pair.ns;

    // Receiving port on va (namespace A): UDP to port 7777 -> queue 0. The kernel's own
    // IPv6 chatter on the new link matches nothing.
    let sink = Arc::new(RecordingSink::new(2048, usize::MAX));
    let s2 = sink.clone();
    let va2 = va.clone();
    let rx = in_netns(na, move || {
        let port = Port::for_spec(&PortSpec::Linux {
            ifname: va2,
            ifindex: 0,
        })
        .unwrap();
        port.set_flow_root(Some(udp_dst_to(7777, &[0], 0)));
        port.register_rx_queue(0, s2).unwrap();
        port
    });

    let frames: Vec<Vec<u8>> = (0..100u16)
        .map(|i| udp4([10, 7, 0, 1], [10, 7, 0, 2], 1000, 7777, &i.to_be_bytes()))
        .collect();
    let to_send = frames.clone();
    let vb2 = vb.clone();
    let sent = in_netns(nb, move || {
        let port = Port::for_spec(&PortSpec::Linux {
            ifname: vb2,
            ifindex: 0,
        })
        .unwrap();
        for f in &to_send {
            port.send(f).unwrap();
        }
        port.counters().sent
    });
    assert_eq!(sent, 100);
    let got = sink.wait_for(frames.len(), LIMIT);
    assert_eq!(got, frames, "every frame once, in order");
    assert_eq!(rx.counters().delivered, 100);
    rx.unregister_rx_queue(0);
    drop(rx);
    drop_pair_and_check_namespaces_gone(pair, LIMIT);
}

/// One interface name in two namespaces is two ports: each thread gets the port of the
/// interface its own namespace has, and asking again in the same namespace gives the same
/// port.
#[test]
fn one_interface_name_in_two_namespaces_is_two_ports() {
    if let Some(why) = netns::unavailable_reason() {
        skip(&why);
        return;
    }
    let name = unique("sn");
    let pair = match VethPair::builder().devs(&name, &name).create() {
        Ok(p) => p,
        Err(why) => {
            skip(&format!("cannot make the veth pair: {why}"));
            return;
        }
    };
    let spec = PortSpec::Linux {
        ifname: name.clone(),
        ifindex: 0,
    };
    let open = |ns: &NetNs| {
        let spec = spec.clone();
        in_netns(ns, move || {
            Port::for_spec(&spec).expect("the interface of this namespace")
        })
    };
    let (a, b) = (open(&pair.ns[0]), open(&pair.ns[1]));
    assert!(
        !Arc::ptr_eq(&a, &b),
        "{name} of namespace A and {name} of namespace B got the same port"
    );
    let a2 = open(&pair.ns[0]);
    assert!(
        Arc::ptr_eq(&a, &a2),
        "a second open in namespace A made a new port"
    );
    let spec2 = spec.clone();
    let seen_in_b = in_netns(&pair.ns[1], move || Port::existing(&spec2));
    assert!(
        seen_in_b.is_some_and(|p| Arc::ptr_eq(&p, &b)),
        "Port::existing in namespace B is B's port"
    );
    assert_eq!(
        a.name(),
        b.name(),
        "both are named after the interface alone"
    );
    drop((a, a2, b));
}
