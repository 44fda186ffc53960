//! RX queues behind DOCA Flow classification: frames that a port's pipes forward with RSS
//! over two applied queue ids reach exactly one of the two rings; other frames reach none.

use doca_soft::capi::doca_ctx::{doca_ctx_start, doca_ctx_stop};
use doca_soft::capi::doca_eth_rxq::*;
use doca_soft::capi::doca_eth_rxq_gpu_data_path::*;
use doca_soft::testing::{
    CpuRxq, Entry, Field, FieldMatch, Fwd, Pipe, PipeKind, Port, PortSpec, RxqHandle,
};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

fn udp(sport: u16, seq: u8) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[16..18].copy_from_slice(&46u16.to_be_bytes());
    f[22] = 64;
    f[23] = 17;
    f[26..30].copy_from_slice(&[10, 0, 0, 1]);
    f[30..34].copy_from_slice(&[10, 0, 0, 2]);
    f[34..36].copy_from_slice(&sport.to_be_bytes());
    f[36..38].copy_from_slice(&53u16.to_be_bytes());
    f[38..40].copy_from_slice(&26u16.to_be_bytes());
    f[42] = seq;
    f
}

fn arp(seq: u8) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    f[42] = seq;
    f
}

#[test]
fn rss_spreads_udp_over_two_queues_and_nothing_else_arrives() {
    let info = doca_soft::testing::dev_info(
        "f0:00.0",
        "rssw0",
        [2, 0, 0, 0, 3, 0],
        PortSpec::Wire {
            name: "rssw".into(),
            side: 0,
        },
    );
    let dev = doca_soft::testing::open_dev(info);
    let mut bufs = [vec![0u8; 128 * 128], vec![0u8; 128 * 128]];
    let mut queues = Vec::new();
    // SAFETY: live objects throughout; host data path (handles are CPU pointers).
    unsafe {
        for (id, buf) in bufs.iter_mut().enumerate() {
            let mut q = null_mut();
            assert_eq!(doca_eth_rxq_create(dev, 128, 128, &mut q), 0);
            doca_soft::testing::rxq_set_host_pkt_buf(q.cast(), buf.as_mut_ptr(), buf.len(), 0)
                .unwrap();
            doca_soft::testing::rxq_set_host_datapath(q.cast()).unwrap();
            assert_eq!(doca_ctx_start(doca_eth_rxq_as_doca_ctx(q)), 0);
            assert_eq!(doca_eth_rxq_apply_queue_id(q, id as u16), 0);
            let mut h: *mut c_void = null_mut();
            assert_eq!(doca_eth_rxq_get_gpu_handle(q, &mut h), 0);
            queues.push((q, CpuRxq::new(h as *mut RxqHandle)));
        }
        let root = Arc::new(Pipe::new(
            "udp",
            PipeKind::Control,
            Fwd::None,
            Fwd::Drop,
            false,
        ));
        root.add(Entry {
            matches: vec![FieldMatch {
                field: Field::OuterL4Meta,
                value: 2,
                mask: 0xff,
            }],
            priority: 0,
            fwd: Fwd::Rss {
                queues: vec![0, 1],
                flags: doca_soft::testing::RSS_IPV4 | doca_soft::testing::RSS_UDP,
            },
            counter: None,
        });
        let port = doca_soft::testing::port_of(dev).unwrap();
        port.set_flow_root(Some(root));
        let peer = Port::for_spec(&PortSpec::Wire {
            name: "rssw".into(),
            side: 1,
        })
        .unwrap();
        let n_udp = 64u8;
        for i in 0..n_udp {
            peer.send(&udp(1000 + u16::from(i) * 7, i)).unwrap();
            peer.send(&arp(200)).unwrap();
        }
        // A last UDP frame, after every ARP frame on the wire.
        peer.send(&udp(1, 255)).unwrap();
        let mut seen = vec![0u32; 256];
        let mut per_queue = [0u32; 2];
        // Both rings publish at the end of each dispatcher batch: wait until every UDP frame
        // and the last one came out of one of them (frames are classified in wire order, so
        // the ARP frames were classified by then too).
        let t0 = std::time::Instant::now();
        while per_queue[0] + per_queue[1] < u32::from(n_udp) + 1 {
            assert!(
                t0.elapsed().as_secs() < 60,
                "gave up waiting for the frames"
            );
            for (k, (_, c)) in queues.iter().enumerate() {
                c.recv_with(0, 100_000, |_, _, p| {
                    seen[usize::from(p[42])] += 1;
                    per_queue[k] += 1;
                });
            }
        }
        for i in 0..n_udp {
            assert_eq!(
                seen[usize::from(i)],
                1,
                "UDP frame {i} delivered exactly once"
            );
        }
        assert_eq!(seen[200], 0, "ARP frames match no RSS entry");
        assert_eq!(seen[255], 1, "last UDP frame");
        assert!(
            per_queue[0] > 0 && per_queue[1] > 0,
            "RSS used both queues: {per_queue:?}"
        );
        port.set_flow_root(None);
        for (q, _) in queues {
            assert_eq!(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(q)), 0);
            assert_eq!(doca_eth_rxq_destroy(q), 0);
        }
        drop(Box::from_raw(dev));
    }
}
