//! DOCA Flow pipes built with the safe API classify frames arriving on a wire port into
//! the right `EthRxq` (host-memory data path, consumed on the CPU): the shapes of
//! gpunetio_simple_receive and gpu_packet_processing, per-entry counters, entry removal,
//! miss drops, builder validation, clean teardown.

// These tests drive the software runtime (its host-memory hooks and wire ports).
#![cfg(doca_backend = "soft")]

mod eth_support;

use doca_gpunetio::flow::{Forward, Match};
use doca_gpunetio::soft::SoftCountersExt;
use doca_gpunetio::{
    take_drop_errors, Device, Error, EthRxq, Flow, FlowConfig, FlowPort, Pipe, RssFlags, TcpFlags,
};
use eth_support::*;
use std::sync::Mutex;

/// Flow is process-global: the tests of this binary run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> std::sync::MutexGuard<'static, ()> {
    declare_wires(&["sfcu", "sfcg", "sfcr", "sfcv"]);
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn rxq(dev: &Device, queue_id: u16) -> EthRxq {
    steered_rxq(dev, queue_id, 1024)
}

#[test]
fn simple_receive_shape_sends_udp_to_queue_0_and_drops_the_rest() {
    let _g = setup();
    let (dev, peer) = wire("sfcu");
    let flow = Flow::init(FlowConfig::default()).unwrap();
    let port = FlowPort::start(&flow, &dev, 0).unwrap();
    let q0 = rxq(&dev, 0);
    let udp = Pipe::basic(&port, "udp")
        .match_udp_ipv4()
        .rss_to(&[0], RssFlags::IPV4 | RssFlags::UDP)
        .miss_drop()
        .counter()
        .build()
        .unwrap();
    let udp_entry = udp.add_entry().unwrap();
    let root = Pipe::control_root(&port).unwrap();
    let root_udp = root.forward_ipv4_udp_to(&udp, 0).unwrap();
    port.entries_process().unwrap();

    let udp_frames: Vec<Vec<u8>> = (0..6u8)
        .map(|i| udp_frame(5000 + i as u16, 53, 10 + i as usize, i))
        .collect();
    let others = [
        tcp_frame(1, 80, 0x02, 1),
        icmp_frame(2),
        tcp_frame(2, 443, 0x10, 3),
    ];
    let tx = soft_port(&peer);
    for (i, f) in udp_frames.iter().enumerate() {
        tx.send(f).unwrap();
        if i < others.len() {
            tx.send(&others[i]).unwrap();
        }
    }
    let total = (udp_frames.len() + others.len()) as u64;
    assert!(
        eventually(|| port.counters().unwrap().received == total),
        "{:?}",
        port.counters().unwrap()
    );
    let c = port.counters().unwrap();
    assert_eq!(c.delivered, 6, "{c:?}");
    assert_eq!(c.dropped(), 3, "TCP and ICMP match no root entry: {c:?}");
    assert_eq!(
        drain(&q0),
        udp_frames,
        "UDP frames, in order, byte for byte"
    );
    let bytes: u64 = udp_frames.iter().map(|f| f.len() as u64).sum();
    assert_eq!(udp_entry.query().unwrap(), (6, bytes));
    assert_eq!(udp_entry.pipe().name(), "udp");
    assert_eq!(root_udp.pipe().name(), "root");

    drop((udp_entry, root_udp));
    drop(root);
    drop(udp);
    q0.stop().unwrap();
    drop(port);
    drop(flow);
    assert!(!Flow::is_initialized());
    assert!(take_drop_errors().is_empty());
}

#[test]
fn packet_processing_shape_routes_by_protocol_priority_and_tcp_flags() {
    let _g = setup();
    let (dev, peer) = wire("sfcg");
    let flow = Flow::init(FlowConfig {
        pipe_queues: 1,
        mode_args: "vnf,hws".into(),
        nr_counters: 1024,
    })
    .unwrap();
    let port = FlowPort::start(&flow, &dev, 0).unwrap();
    let (q_udp0, q_udp1, q_tcp, q_ctl, q_icmp) = (
        rxq(&dev, 0),
        rxq(&dev, 1),
        rxq(&dev, 4),
        rxq(&dev, 12),
        rxq(&dev, 16),
    );
    let udp = Pipe::basic(&port, "udp")
        .match_udp_ipv4()
        .rss_to(&[0, 1], RssFlags::IPV4 | RssFlags::UDP)
        .miss_drop()
        .counter()
        .build()
        .unwrap();
    let udp_e = udp.add_entry().unwrap();
    let tcp = Pipe::basic(&port, "tcp")
        .match_tcp_ipv4()
        .rss_to(&[4], RssFlags::IPV4 | RssFlags::TCP)
        .counter()
        .build()
        .unwrap();
    let tcp_e = tcp.add_entry().unwrap();
    let icmp = Pipe::basic(&port, "icmp")
        .match_icmp_ipv4()
        .rss_to(&[16], RssFlags::IPV4)
        .counter()
        .build()
        .unwrap();
    let icmp_e = icmp.add_entry().unwrap();
    let root = Pipe::control_root(&port).unwrap();
    root.forward_ipv4_udp_to(&udp, 0).unwrap();
    let ctl = root
        .forward_tcp_flags_to(
            TcpFlags::SYN | TcpFlags::FIN | TcpFlags::RST,
            Forward::rss(&[12], RssFlags::IPV4),
            1,
        )
        .unwrap();
    assert_eq!(ctl.len(), 3);
    root.forward_ipv4_proto_to(6, &tcp, 3).unwrap();
    root.forward_ipv4_proto_to(1, &icmp, 3).unwrap();
    port.entries_process().unwrap();

    let udp_frames: Vec<Vec<u8>> = (0..16u8)
        .map(|i| udp_frame(1000 + 37 * i as u16, 53, 8, i))
        .collect();
    let tcp_ctl = [
        tcp_frame(1, 80, 0x02, 1),
        tcp_frame(1, 80, 0x12, 2),
        tcp_frame(1, 80, 0x11, 3),
        tcp_frame(1, 80, 0x04, 4),
    ];
    let tcp_data = [tcp_frame(1, 80, 0x18, 5), tcp_frame(1, 80, 0x10, 6)];
    let icmp_frames = [icmp_frame(7), icmp_frame(8)];
    let tx = soft_port(&peer);
    for f in udp_frames
        .iter()
        .chain(&tcp_ctl)
        .chain(&tcp_data)
        .chain(&icmp_frames)
    {
        tx.send(f).unwrap();
    }
    let total = (udp_frames.len() + tcp_ctl.len() + tcp_data.len() + icmp_frames.len()) as u64;
    assert!(
        eventually(|| port.counters().unwrap().received == total),
        "{:?}",
        port.counters().unwrap()
    );
    assert_eq!(
        port.counters().unwrap().delivered,
        total,
        "{:?}",
        port.counters().unwrap()
    );

    // RSS spreads UDP over queues 0 and 1 only; nothing is lost or duplicated.
    let (u0, u1) = (drain(&q_udp0), drain(&q_udp1));
    assert_eq!(u0.len() + u1.len(), udp_frames.len());
    let mut all_udp: Vec<Vec<u8>> = u0.iter().chain(&u1).cloned().collect();
    all_udp.sort();
    let mut want = udp_frames.clone();
    want.sort();
    assert_eq!(all_udp, want);
    assert_eq!(
        drain(&q_ctl),
        tcp_ctl.to_vec(),
        "SYN, SYN+ACK, FIN+ACK, RST go to the control queue"
    );
    assert_eq!(
        drain(&q_tcp),
        tcp_data.to_vec(),
        "other TCP goes to the TCP pipe"
    );
    assert_eq!(drain(&q_icmp), icmp_frames.to_vec());
    assert_eq!(udp_e.query().unwrap().0, 16);
    assert_eq!(tcp_e.query().unwrap().0, 2);
    assert_eq!(icmp_e.query().unwrap().0, 2);
    // Entries in flag bit order FIN, SYN, RST: SYN and SYN+ACK hit the SYN entry.
    let per_flag: Vec<u64> = ctl.iter().map(|e| e.query().unwrap().0).collect();
    assert_eq!(per_flag, vec![1, 2, 1]);

    // A higher-priority ICMP entry added and removed again leaves the original route.
    let before = port.counters().unwrap();
    drop(ctl);
    let icmp_root = root.forward_ipv4_proto_to(1, &icmp, 2).unwrap();
    icmp_root.remove().unwrap();
    port.entries_process().unwrap();
    tx.send(&icmp_frame(9)).unwrap();
    assert!(eventually(
        || port.counters().unwrap().received == before.received + 1
    ));
    assert_eq!(drain(&q_icmp).len(), 1);
    assert_eq!(icmp_e.query().unwrap().0, 3);

    for q in [q_udp0, q_udp1, q_tcp, q_ctl, q_icmp] {
        q.stop().unwrap();
    }
    drop((udp_e, tcp_e, icmp_e, root, udp, tcp, icmp, port, flow));
    assert!(take_drop_errors().is_empty());
}

#[test]
fn removed_entries_stop_matching_and_misses_are_dropped() {
    let _g = setup();
    let (dev, peer) = wire("sfcr");
    let flow = Flow::init(FlowConfig::default()).unwrap();
    let port = FlowPort::start(&flow, &dev, 0).unwrap();
    let q = rxq(&dev, 2);
    let root = Pipe::basic(&port, "dns")
        .root()
        .matching(Match::new().udp_dst_port(53))
        .rss_to(&[2], RssFlags::IPV4 | RssFlags::UDP)
        .miss_drop()
        .counter()
        .build()
        .unwrap();
    let e = root
        .add_basic_entry(&Match::new().udp_dst_port(53))
        .unwrap();
    port.entries_process().unwrap();
    let tx = soft_port(&peer);
    tx.send(&udp_frame(7, 53, 4, 1)).unwrap();
    tx.send(&udp_frame(7, 54, 4, 2)).unwrap(); // another port: a miss
    assert!(eventually(|| port.counters().unwrap().received == 2));
    assert_eq!(drain(&q).len(), 1);
    let c = port.counters().unwrap();
    assert_eq!((c.delivered, c.dropped()), (1, 1), "{c:?}");
    assert_eq!(e.query().unwrap().0, 1);

    e.remove().unwrap();
    port.entries_process().unwrap();
    tx.send(&udp_frame(7, 53, 4, 3)).unwrap();
    assert!(eventually(|| port.counters().unwrap().received == 3));
    assert_eq!(drain(&q).len(), 0, "no entry left");
    assert_eq!(port.counters().unwrap().dropped(), 2);

    q.stop().unwrap();
    drop((root, port, flow));
    assert!(take_drop_errors().is_empty());
}

#[test]
fn pipe_misuse_is_refused_with_clear_errors() {
    let _g = setup();
    let (dev, _) = wire("sfcv");
    let flow = Flow::init(FlowConfig::default()).unwrap();
    let port = FlowPort::start(&flow, &dev, 0).unwrap();
    let e = Pipe::basic(&port, "nofwd")
        .match_udp_ipv4()
        .build()
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("\"nofwd\"") && m.contains("no forward")),
        "{e}"
    );
    let e = Pipe::basic(&port, "noq")
        .rss_to(&[], RssFlags::IPV4)
        .build()
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("no queues")),
        "{e}"
    );
    let e = Pipe::basic(&port, "bad\0name")
        .drop_matches()
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let root = Pipe::control_root(&port).unwrap();
    let basic = Pipe::basic(&port, "b")
        .match_udp_ipv4()
        .drop_matches()
        .build()
        .unwrap();
    assert!(matches!(root.add_entry(), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        basic.add_control_entry(0, &Match::new().udp(), None, Forward::Drop),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        root.forward_tcp_flags_to(TcpFlags::empty(), &basic, 0),
        Err(Error::InvalidArgument(_))
    ));
    // DOCA's own refusal surfaces with the call's name: a second root pipe on the port.
    match Pipe::control_root(&port) {
        Ok(_) => {}
        Err(e) => assert!(
            e.to_string().starts_with("doca_flow_pipe_create failed"),
            "{e}"
        ),
    }
    drop((root, basic, port, flow));
    assert!(take_drop_errors().is_empty());
}
