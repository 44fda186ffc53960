//! gpu_packet_processing's DOCA Flow steering without a GPU: the example's own pipes
//! (`flow_setup.rs`) and session entries (`tcp_cpu.rs`'s `FlowOffload`) on a wire port of
//! the software runtime, with host-memory receive queues consumed on the CPU in place of
//! the GPU queues (ids as the application applies them). Checks the facts' steering table
//! (§6.4): UDP to the UDP queues, ICMP to queue 16, TCP with SYN/RST/FIN to the CPU queues
//! and other TCP to the GPU TCP queues only for open sessions (with `-s`), or always
//! (without); nothing for removed sessions; other traffic nowhere.

#![cfg(feature = "soft")]
#![allow(dead_code)]

#[path = "../doca-gpunetio/tests/eth_support/mod.rs"]
mod eth_support;
#[path = "../examples/gpu_packet_processing/flow_setup.rs"]
mod flow_setup;
#[path = "../examples/gpu_packet_processing/log.rs"]
mod log;
#[path = "../examples/gpu_packet_processing/packets.rs"]
mod packets;
#[path = "../examples/gpu_packet_processing/tcp_cpu.rs"]
mod tcp_cpu;
#[path = "../examples/gpu_packet_processing/tcp_sessions.rs"]
mod tcp_sessions;

use doca::gpunetio::{Device, EthRxq, Flow, FlowConfig, FlowPort};
use eth_support::*;
use std::sync::Mutex;
use tcp_sessions::{Offload, SessionKey};

/// Flow is process-global: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> std::sync::MutexGuard<'static, ()> {
    declare_wires(&["gpps", "gppn"]);
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn rxq(dev: &Device, queue_id: u16) -> EthRxq {
    steered_rxq(dev, queue_id, 2048)
}

/// The application's queues for 2 queues per protocol, by queue id.
struct Queues {
    ids: Vec<u16>,
    qs: Vec<EthRxq>,
}

impl Queues {
    fn new(dev: &Device, http_server: bool) -> Queues {
        let mut ids = vec![0, 1, 4, 5, 16];
        if http_server {
            ids.extend([12, 13]);
        }
        let qs = ids.iter().map(|&i| rxq(dev, i)).collect();
        Queues { ids, qs }
    }

    /// Waits until `n` frames arrived over all queues (bounded), then returns the frames
    /// per queue id, sorted by id.
    fn collect(&self, n: usize) -> Vec<(u16, Vec<Vec<u8>>)> {
        let mut got: Vec<(u16, Vec<Vec<u8>>)> = self.ids.iter().map(|&i| (i, Vec::new())).collect();
        doca_test_support::eventually(|| {
            for (k, q) in self.qs.iter().enumerate() {
                got[k].1.extend(drain(q));
            }
            got.iter().map(|g| g.1.len()).sum::<usize>() >= n
        });
        // Anything extra that was on its way.
        std::thread::sleep(std::time::Duration::from_millis(50));
        for (k, q) in self.qs.iter().enumerate() {
            got[k].1.extend(drain(q));
        }
        got
    }
}

fn count_in(got: &[(u16, Vec<Vec<u8>>)], ids: &[u16]) -> usize {
    got.iter()
        .filter(|g| ids.contains(&g.0))
        .map(|g| g.1.len())
        .sum()
}

/// Flow as the sample starts it (two pipe queues, vnf,hws) and `dev` started as its port 0.
/// Drop the port before the Flow (bind them in this order: the port drops first).
fn flow_port(dev: &Device) -> (Flow, FlowPort) {
    let flow = Flow::init(FlowConfig {
        pipe_queues: 2,
        mode_args: "vnf,hws".into(),
        nr_counters: 524228,
    })
    .unwrap();
    let port = FlowPort::start(&flow, dev, 0).unwrap();
    (flow, port)
}

fn session_of(f: &[u8]) -> SessionKey {
    SessionKey::of(&packets::parse_tcp(f).unwrap())
}

#[test]
fn http_server_mode_steers_by_protocol_flags_and_session() {
    let _g = setup();
    let (dev, peer) = wire("gpps");
    let (_flow, port) = flow_port(&dev);
    let queues = Queues::new(&dev, true);
    let pipes = flow_setup::create(&port, 2, true).unwrap();
    let tx = soft_port(&peer);

    let udp: Vec<_> = (0..8u8)
        .map(|i| {
            udp_frame(
                4000 + u16::from(i),
                if i % 2 == 0 { 53 } else { 5300 },
                20,
                i,
            )
        })
        .collect();
    let icmp: Vec<_> = (0..3u8).map(icmp_frame).collect();
    let syn = tcp_frame(40000, 80, 0x02, 1);
    let rst = tcp_frame(40001, 80, 0x04, 2);
    let fin_ack = tcp_frame(40002, 80, 0x11, 3);
    let syn_ack = tcp_frame(40003, 80, 0x12, 4);
    let ack = tcp_frame(40000, 80, 0x10, 1); // no session yet: dropped
    let arp = {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 9, 0x08, 0x06]);
        f.extend_from_slice(&[0; 28]);
        f
    };
    for f in udp
        .iter()
        .chain(&icmp)
        .chain([&syn, &rst, &fin_ack, &syn_ack, &ack, &arp])
    {
        tx.send(f).unwrap();
    }
    let got = queues.collect(8 + 3 + 4);
    assert_eq!(
        count_in(&got, &[0, 1]),
        8,
        "UDP to the UDP queues: {:?}",
        sizes(&got)
    );
    assert_eq!(count_in(&got, &[16]), 3, "ICMP to queue 16");
    assert_eq!(
        count_in(&got, &[12, 13]),
        4,
        "SYN, RST, FIN, SYN-ACK to the CPU queues"
    );
    assert_eq!(
        count_in(&got, &[4, 5]),
        0,
        "no TCP to the GPU without a session"
    );

    // A session opened through pipe queue 1, as CPU thread 1 does.
    let mut off = tcp_cpu::FlowOffload {
        pipe: pipes.gpu_tcp.clone(),
        port: port.clone(),
        queue: 1,
    };
    let key = session_of(&syn);
    let entry = off.enable(&key).unwrap();
    // Same addresses as the SYN (the seed picks the destination address).
    let data = tcp_frame(40000, 80, 0x18, 1);
    let other_session = tcp_frame(40009, 80, 0x10, 6);
    let mut reverse = ack.clone();
    let (src, dst) = (ack[26..30].to_vec(), ack[30..34].to_vec());
    reverse[26..30].copy_from_slice(&dst);
    reverse[30..34].copy_from_slice(&src);
    reverse[34..36].copy_from_slice(&80u16.to_be_bytes());
    reverse[36..38].copy_from_slice(&40000u16.to_be_bytes());
    for f in [&ack, &data, &other_session, &reverse] {
        tx.send(f).unwrap();
    }
    let got = queues.collect(2);
    assert_eq!(
        count_in(&got, &[4, 5]),
        2,
        "the session's ACK and data to the GPU TCP queues: {:?}",
        sizes(&got)
    );
    let all: Vec<&Vec<u8>> = got.iter().flat_map(|g| &g.1).collect();
    assert_eq!(
        all.len(),
        2,
        "another session and the reverse direction are dropped"
    );
    assert!(all.iter().all(|f| session_of(f) == key));
    // A FIN of the session still goes to the CPU (priority 1 beats the TCP pipe).
    tx.send(&tcp_frame(40000, 80, 0x11, 1)).unwrap();
    let got = queues.collect(1);
    assert_eq!(count_in(&got, &[12, 13]), 1);

    // Removed: its packets are dropped at once (no stale session).
    off.disable(entry).unwrap();
    tx.send(&data).unwrap();
    tx.send(&icmp[0]).unwrap();
    let got = queues.collect(1);
    assert_eq!(count_in(&got, &[16]), 1, "the marker frame arrived");
    assert_eq!(count_in(&got, &[4, 5]), 0, "removed session: dropped");
    drop(pipes);
}

#[test]
fn plain_mode_sends_every_tcp_packet_to_the_gpu_queues() {
    let _g = setup();
    let (dev, peer) = wire("gppn");
    let (_flow, port) = flow_port(&dev);
    let queues = Queues::new(&dev, false);
    let pipes = flow_setup::create(&port, 2, false).unwrap();
    assert!(pipes.cpu_tcp.is_none());
    let tx = soft_port(&peer);
    let frames: Vec<_> = [0x02u8, 0x04, 0x11, 0x10, 0x18, 0x00]
        .iter()
        .enumerate()
        .map(|(i, fl)| tcp_frame(41000 + i as u16, 80, *fl, i as u8))
        .collect();
    for f in &frames {
        tx.send(f).unwrap();
    }
    tx.send(&udp_frame(1, 53, 10, 9)).unwrap();
    let got = queues.collect(7);
    assert_eq!(count_in(&got, &[4, 5]), 6, "{:?}", sizes(&got));
    assert_eq!(count_in(&got, &[0, 1]), 1);
    assert_eq!(count_in(&got, &[16]), 0);
    drop(pipes);
}

fn sizes(got: &[(u16, Vec<Vec<u8>>)]) -> Vec<(u16, usize)> {
    got.iter().map(|g| (g.0, g.1.len())).collect()
}
