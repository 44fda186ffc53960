//! AF_XDP ports (`xdp:IFACE`) on a veth pair whose ends live in two network namespaces
//! this test creates: frames sent on the peer arrive through the AF_XDP port in order and
//! counted once, frames the AF_XDP port sends arrive at the peer, dropping the port takes
//! its XDP program off the interface, and a bad interface name is NOT_FOUND. Skips (with a
//! printed reason) without root, without the veth driver, or where AF_XDP cannot be used
//! (the port then says it fell back to AF_PACKET). The namespaces go with the pair's
//! handle even when the test fails.

mod support;

use std::sync::Arc;
use std::time::Duration;

use doca_soft::capi::doca_error::DocaError;
use doca_soft::testing::frames::udp4;
use doca_soft::testing::{Entry, Field, FieldMatch, Fwd, Pipe, PipeKind, Port, PortSpec};
use doca_test_support::netns::{self, NetNs, VethPair};
use doca_test_support::skip;
use support::{drop_pair_and_check_namespaces_gone, eventually, udp_dst_to, unique, RecordingSink};

const LIMIT: Duration = Duration::from_secs(10);

/// Runs `f` on a thread that has entered network namespace `ns` (threads it starts, the
/// ports' lanes among them, stay in it).
fn in_netns<T: Send>(ns: &NetNs, f: impl FnOnce() -> T + Send) -> T {
    ns.run(f).expect("thread in the namespace")
}

/// A root pipe sending UDP to `dport` to queue 0 (everything else: no match).
fn udp_to_queue0(dport: u16) -> Arc<Pipe> {
    udp_dst_to(dport, &[0], 0)
}

/// Whether `dev` in `ns` has an XDP program attached (in any mode), as the kernel
/// reports it (`IFLA_XDP`).
fn has_xdp(ns: &NetNs, dev: &str) -> bool {
    ns.run(|| netns::link(dev))
        .ok()
        .and_then(Result::ok)
        .is_some_and(|l| l.xdp_attached)
}

/// The veth pair `dev[0]` (namespace `ns[0]`) - `dev[1]` (namespace `ns[1]`), up, one
/// queue each way.
fn veth_pair() -> Option<VethPair> {
    veth_pair_with_queues(1)
}

/// The veth pair with `queues` receive and transmit queues on each end.
fn veth_pair_with_queues(queues: u32) -> Option<VethPair> {
    if let Some(why) = netns::unavailable_reason() {
        skip(&format!("{why} (also needed to attach XDP programs)"));
        return None;
    }
    // Ports are shared process-wide by interface name within a namespace: names of
    // this test only.
    let (va, vb) = (unique("xa"), unique("xb"));
    match VethPair::builder().devs(&va, &vb).queues(queues).create() {
        Ok(p) => Some(p),
        Err(e) => {
            skip(&format!("cannot make the veth pair: {e}"));
            None
        }
    }
}

fn frames(n: u16, dport: u16) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| udp4([10, 8, 0, 1], [10, 8, 0, 2], 1000, dport, &i.to_be_bytes()))
        .collect()
}

/// An AF_XDP port on `ifname` in `ns` (copy mode, or zero-copy asked for) whose queue 0
/// takes UDP to port 7777 into a recording sink.
fn xdp_rx_port(ns: &NetNs, ifname: &str, zerocopy: bool) -> (Arc<Port>, Arc<RecordingSink>) {
    let sink = Arc::new(RecordingSink::new(2048, usize::MAX));
    let s2 = sink.clone();
    let ifname = ifname.to_string();
    let port = in_netns(ns, move || {
        let port = Port::for_spec(&PortSpec::Xdp {
            ifname,
            native: false,
            zerocopy,
        })
        .expect("xdp port");
        port.set_flow_root(Some(udp_to_queue0(7777)));
        port.register_rx_queue(0, s2).expect("register");
        port
    });
    (port, sink)
}

/// Sends `frames` one by one from an AF_PACKET port on `ifname` in `ns` (the peer end).
fn send_from(ns: &NetNs, ifname: &str, frames: &[Vec<u8>]) {
    let (ifname, frames) = (ifname.to_string(), frames.to_vec());
    in_netns(ns, move || {
        let p = Port::for_spec(&PortSpec::Linux { ifname, ifindex: 0 }).expect("peer");
        for f in &frames {
            p.send(f).expect("send");
        }
    });
}

#[test]
fn xdp_port_receives_and_sends_on_a_veth_and_detaches_on_drop() {
    let Some(pair) = veth_pair() else {
        return;
    };
    let [va, vb] = pair.dev.clone();
    let [na, nb] = &pair.ns;

    // The AF_XDP port on va, queue 0 for UDP to 7777.
    let (rx, sink) = xdp_rx_port(na, &va, false);
    if !rx.backend_kind().starts_with("af_xdp") {
        skip(&format!(
            "AF_XDP unavailable here (the port fell back to {}; the log says why)",
            rx.backend_kind()
        ));
        return;
    }
    assert!(
        rx.backend_kind().contains("copy"),
        "copy mode by default: {}",
        rx.backend_kind()
    );
    assert!(has_xdp(na, &va), "program attached to {va}");

    // The peer: an AF_PACKET port on vb, sending to 7777 and receiving UDP to 8888.
    let peer_sink = Arc::new(RecordingSink::new(2048, usize::MAX));
    let p2 = peer_sink.clone();
    let vb2 = vb.clone();
    let peer = in_netns(nb, move || {
        let port = Port::for_spec(&PortSpec::Linux {
            ifname: vb2,
            ifindex: 0,
        })
        .expect("peer port");
        port.set_flow_root(Some(udp_to_queue0(8888)));
        port.register_rx_queue(0, p2).expect("register peer");
        port
    });

    // Peer -> AF_XDP port, in rounds of 200 (a veth queues at most its backlog at once).
    let to_xdp = frames(1000, 7777);
    for (i, round) in to_xdp.chunks(200).enumerate() {
        let refs: Vec<&[u8]> = round.iter().map(Vec::as_slice).collect();
        let (n, r) = peer.send_batch(&refs);
        assert_eq!((n, r), (refs.len(), Ok(())), "peer send round {i}");
        sink.wait_for((i + 1) * 200, LIMIT);
    }
    let got = sink.wait_for(to_xdp.len(), LIMIT);
    assert_eq!(got.len(), to_xdp.len(), "every frame arrived");
    assert!(got == to_xdp, "every frame once, in order");
    let c = rx.counters();
    assert_eq!(c.delivered, 1000, "{c:?}");
    assert_eq!(
        c.received,
        c.delivered + c.dropped(),
        "offered = delivered + dropped"
    );

    // AF_XDP port -> peer.
    let to_peer = frames(500, 8888);
    for f in &to_peer[..100] {
        rx.send(f).expect("xdp send");
    }
    let refs: Vec<&[u8]> = to_peer[100..].iter().map(Vec::as_slice).collect();
    assert_eq!(rx.send_batch(&refs), (400, Ok(())), "xdp send_batch");
    let got = peer_sink.wait_for(to_peer.len(), LIMIT);
    assert!(got == to_peer, "peer got {} of 500 in order", got.len());
    assert_eq!(rx.counters().sent, 500);
    // Too big for the port: refused, counted as a send error.
    let big = vec![0u8; rx.max_frame() + 1];
    assert_eq!(rx.send(&big), Err(DocaError::TOO_BIG));

    // Dropping the port detaches its program.
    rx.unregister_rx_queue(0);
    peer.unregister_rx_queue(0);
    let weak = Arc::downgrade(&rx);
    drop(rx);
    assert!(weak.upgrade().is_none(), "port gone");
    assert!(
        eventually(LIMIT, || !has_xdp(na, &va)),
        "no XDP program on {va} after the port is dropped"
    );
    drop(peer);
    drop_pair_and_check_namespaces_gone(pair, LIMIT);
}

#[test]
fn xdp_port_with_several_queues_and_lanes_delivers_every_frame_once() {
    let Some(pair) = veth_pair_with_queues(4) else {
        return;
    };
    let [va, vb] = pair.dev.clone();
    let [na, nb] = &pair.ns;
    // Two RX queues spread by RSS: two lanes share the interface's four sockets.
    let sinks: Vec<Arc<RecordingSink>> = (0..2)
        .map(|_| Arc::new(RecordingSink::new(2048, usize::MAX)))
        .collect();
    let s2 = sinks.clone();
    let va2 = va.clone();
    let rx = in_netns(na, move || {
        let port = Port::for_spec(&PortSpec::Xdp {
            ifname: va2,
            native: false,
            zerocopy: false,
        })
        .expect("xdp port");
        let root = Arc::new(Pipe::new(
            "root",
            PipeKind::Control,
            Fwd::None,
            Fwd::None,
            false,
        ));
        root.add(Entry {
            matches: vec![FieldMatch {
                field: Field::UdpDst,
                value: 7777,
                mask: 0xffff,
            }],
            priority: 0,
            fwd: Fwd::Rss {
                queues: vec![0, 1],
                flags: 0,
            },
            counter: None,
        });
        port.set_flow_root(Some(root));
        for (q, s) in s2.into_iter().enumerate() {
            port.register_rx_queue(q as u16, s).expect("register");
        }
        port
    });
    if !rx.backend_kind().starts_with("af_xdp") {
        skip(&format!("AF_XDP unavailable here ({})", rx.backend_kind()));
        return;
    }
    assert!(
        rx.backend_kind().ends_with("4 queues"),
        "{}",
        rx.backend_kind()
    );
    // 16 flows (source ports), 50 frames each, sequence numbers in the payload.
    let sent: Vec<Vec<u8>> = (0..800u16)
        .map(|i| {
            udp4(
                [10, 8, 0, 1],
                [10, 8, 0, 2],
                2000 + i % 16,
                7777,
                &i.to_be_bytes(),
            )
        })
        .collect();
    let to_send = sent.clone();
    in_netns(nb, move || {
        let p = Port::for_spec(&PortSpec::Linux {
            ifname: vb,
            ifindex: 0,
        })
        .expect("peer");
        for round in to_send.chunks(200) {
            let refs: Vec<&[u8]> = round.iter().map(Vec::as_slice).collect();
            assert_eq!(p.send_batch(&refs), (refs.len(), Ok(())));
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    assert!(
        eventually(LIMIT, || sinks
            .iter()
            .map(|s| s.frames().len())
            .sum::<usize>()
            >= sent.len()),
        "all frames arrived"
    );
    std::thread::sleep(Duration::from_millis(50));
    let got: Vec<Vec<Vec<u8>>> = sinks.iter().map(|s| s.frames()).collect();
    let mut all: Vec<Vec<u8>> = got.iter().flatten().cloned().collect();
    all.sort();
    let mut want = sent.clone();
    want.sort();
    assert!(all == want, "every frame exactly once ({} got)", all.len());
    // Per flow, order holds (a flow stays on one queue of the NIC and one of ours).
    for frames in &got {
        for flow in 0..16u16 {
            let seqs: Vec<&Vec<u8>> = frames
                .iter()
                .filter(|f| f[34..36] == (2000 + flow).to_be_bytes())
                .collect();
            let pos: Vec<usize> = seqs
                .iter()
                .map(|f| sent.iter().position(|s| s == *f).expect("sent"))
                .collect();
            assert!(pos.windows(2).all(|w| w[0] < w[1]), "flow {flow} in order");
        }
    }
    assert!(rx.rx_lanes() >= 1);
    let c = rx.counters();
    assert_eq!(c.delivered, 800, "{c:?}");
    assert_eq!(c.received, c.delivered + c.dropped());
    rx.unregister_rx_queue(0);
    rx.unregister_rx_queue(1);
    drop(rx);
    assert!(eventually(LIMIT, || !has_xdp(na, &va)), "detached");
    drop(pair);
}

#[test]
fn xdp_port_falls_back_to_af_packet_when_the_interface_is_taken() {
    let Some(pair) = veth_pair() else {
        return;
    };
    let [va, vb] = pair.dev.clone();
    let [na, nb] = &pair.ns;
    // A generic-mode port holds va's XDP hook; a driver-mode port on the same interface
    // cannot attach and must carry frames over AF_PACKET instead.
    let va2 = va.clone();
    let (first, second) = in_netns(na, move || {
        let open = |native| {
            Port::for_spec(&PortSpec::Xdp {
                ifname: va2.clone(),
                native,
                zerocopy: false,
            })
            .expect("xdp port")
        };
        let first = open(false);
        (first.clone(), open(true))
    });
    if !first.backend_kind().starts_with("af_xdp") {
        skip(&format!(
            "AF_XDP unavailable here ({})",
            first.backend_kind()
        ));
        return;
    }
    assert_eq!(second.backend_kind(), "af_packet");
    // The fallback port works: it receives what the peer sends.
    let sink = Arc::new(RecordingSink::new(2048, usize::MAX));
    second.set_flow_root(Some(udp_to_queue0(7777)));
    let s2 = sink.clone();
    let sec = second.clone();
    in_netns(na, move || sec.register_rx_queue(0, s2).expect("register"));
    // The AF_XDP port has no lane running: its program passes frames to the stack, where
    // the AF_PACKET port sees them.
    let to_send = frames(50, 7777);
    send_from(nb, &vb, &to_send);
    let got = sink.wait_for(to_send.len(), LIMIT);
    assert!(
        got == to_send,
        "fallback port got {} of 50 in order",
        got.len()
    );
    second.unregister_rx_queue(0);
    drop((first, second));
    assert!(eventually(LIMIT, || !has_xdp(na, &va)), "detached");
    drop(pair);
}

#[test]
fn xdp_zerocopy_request_on_a_veth_keeps_copy_mode_in_driver_mode() {
    let Some(pair) = veth_pair() else {
        return;
    };
    let [va, vb] = pair.dev.clone();
    let [na, nb] = &pair.ns;
    let (rx, sink) = xdp_rx_port(na, &va, true);
    if !rx.backend_kind().starts_with("af_xdp") {
        skip(&format!("AF_XDP unavailable here ({})", rx.backend_kind()));
        return;
    }
    // veth has native XDP but no zero-copy sockets.
    assert_eq!(
        rx.backend_kind(),
        "af_xdp copy driver mode, 1 queue",
        "zero-copy refused, copy mode kept"
    );
    let to_send = frames(100, 7777);
    send_from(nb, &vb, &to_send);
    let got = sink.wait_for(to_send.len(), LIMIT);
    assert!(got == to_send, "got {} of 100 in order", got.len());
    rx.unregister_rx_queue(0);
    drop(rx);
    assert!(eventually(LIMIT, || !has_xdp(na, &va)), "detached");
    drop(pair);
}

#[test]
fn xdp_port_on_a_missing_interface_is_not_found() {
    let r = Port::for_spec(&PortSpec::Xdp {
        ifname: "nosuchif0".into(),
        native: false,
        zerocopy: false,
    });
    assert_eq!(r.err(), Some(DocaError::NOT_FOUND));
    let r = Port::for_spec(&PortSpec::Xdp {
        ifname: "bad\0name".into(),
        native: false,
        zerocopy: false,
    });
    assert_eq!(r.err(), Some(DocaError::INVALID_VALUE));
}
