//! In-memory wire ports and the port dispatcher: delivery, drop reasons, counters, and
//! the dispatcher thread's lifecycle.

mod support;

use std::sync::Arc;
use std::time::Duration;

use doca_soft::capi::doca_error::DocaError;
use doca_soft::testing::frames::udp4;
use doca_soft::testing::{Entry, Field, FieldMatch, Fwd, Port, PortSpec};
use support::{control_root, eventually, unique, RecordingSink};

const LIMIT: Duration = Duration::from_secs(10);

fn wire(name: &str, side: u8) -> Arc<Port> {
    Port::for_spec(&PortSpec::Wire {
        name: name.to_string(),
        side,
    })
    .unwrap()
}

#[test]
fn frames_sent_on_side_0_arrive_on_side_1_exactly() {
    let name = unique("w");
    let (a, b) = (wire(&name, 0), wire(&name, 1));
    let sink = Arc::new(RecordingSink::new(4096, usize::MAX));
    b.register_rx_queue(0, sink.clone()).unwrap();
    b.set_default_queue(Some(0));
    let frames: Vec<Vec<u8>> = (0..500u16)
        .map(|i| udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000, 2000, &i.to_be_bytes()))
        .collect();
    for f in &frames {
        a.send(f).unwrap();
    }
    let got = sink.wait_for(frames.len(), LIMIT);
    assert_eq!(got, frames, "every frame, in order, once");
    assert_eq!(a.counters().sent, 500);
    let c = b.counters();
    assert_eq!((c.received, c.delivered, c.dropped()), (500, 500, 0));
    assert!(sink.flushes.load(std::sync::atomic::Ordering::Relaxed) > 0);
    // Nothing comes back on side 0.
    assert_eq!(a.counters().received, 0);
    b.unregister_rx_queue(0);
    assert!(!b.dispatcher_running());
}

#[test]
fn same_device_gives_same_port_and_queue_ids_are_exclusive() {
    let name = unique("w");
    let a = wire(&name, 0);
    assert!(Arc::ptr_eq(&a, &wire(&name, 0)));
    let s = Arc::new(RecordingSink::new(2048, 10));
    a.register_rx_queue(5, s.clone()).unwrap();
    assert_eq!(a.register_rx_queue(5, s.clone()), Err(DocaError::IN_USE));
    a.register_rx_queue(6, s).unwrap();
    assert!(a.dispatcher_running());
    a.unregister_rx_queue(5);
    assert!(a.dispatcher_running(), "queue 6 still registered");
    a.unregister_rx_queue(6);
    assert!(!a.dispatcher_running(), "last user gone: dispatcher joined");
    a.unregister_rx_queue(6); // unknown id: no-op
    assert!(Port::for_spec(&PortSpec::Wire {
        name: name.clone(),
        side: 2
    })
    .is_err());
}

#[test]
fn drop_reasons_are_counted() {
    let name = unique("w");
    let (a, b) = (wire(&name, 0), wire(&name, 1));
    let small = Arc::new(RecordingSink::new(100, 3));
    b.register_rx_queue(1, small.clone()).unwrap();
    // Root pipe: UDP dst 7 -> queue 1, dst 8 -> queue 2 (not registered), dst 9 -> drop.
    let root = control_root();
    let dst = |p| FieldMatch {
        field: Field::UdpDst,
        value: p,
        mask: 0xffff,
    };
    let rss = |q| Fwd::Rss {
        queues: vec![q],
        flags: 0,
    };
    for (port, fwd) in [(7, rss(1)), (8, rss(2)), (9, Fwd::Drop)] {
        root.add(Entry {
            matches: vec![dst(port)],
            priority: 0,
            fwd,
            counter: None,
        });
    }
    b.set_flow_root(Some(root));
    let f = |dport, len: usize| udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, dport, &vec![0u8; len]);
    for _ in 0..4 {
        a.send(&f(7, 10)).unwrap(); // 3 delivered, then ring full
    }
    a.send(&f(7, 200)).unwrap(); // too big for the queue
    a.send(&f(8, 10)).unwrap(); // no queue
    a.send(&f(9, 10)).unwrap(); // dropped by flow
    a.send(&f(10, 10)).unwrap(); // no match
    a.send(&[0u8; 20]).unwrap(); // Ethernet type 0: parses, matches nothing
    a.send(&[0xffu8; 9]).unwrap(); // malformed: shorter than Ethernet
    b.inject_rx(&f(7, 10)).unwrap(); // injected: ring full again
    assert!(eventually(LIMIT, || b.counters().received == 11));
    let c = b.counters();
    assert_eq!(c.delivered, 3);
    assert_eq!(c.dropped_ring_full, 2);
    assert_eq!(c.dropped_too_big, 1);
    assert_eq!(c.dropped_no_queue, 1);
    assert_eq!(c.dropped_by_flow, 1);
    // The all-zero 20-byte frame is Ethernet with type 0: parses, matches nothing.
    assert_eq!(c.dropped_no_match, 2);
    assert_eq!(c.dropped_malformed, 1);
    assert_eq!(c.delivered + c.dropped(), c.received);
    assert_eq!(small.frames().len(), 3);
    // Frames above the port's max frame are refused at send.
    assert_eq!(
        a.send(&vec![0u8; a.max_frame() + 1]),
        Err(DocaError::TOO_BIG)
    );
    assert_eq!(a.counters().send_errors, 1);
    b.unregister_rx_queue(1);
}

#[test]
fn no_root_and_no_default_queue_is_no_match() {
    let name = unique("w");
    let b = wire(&name, 1);
    let s = Arc::new(RecordingSink::new(2048, 100));
    b.register_rx_queue(0, s.clone()).unwrap();
    b.inject_rx(&udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b""))
        .unwrap();
    assert!(eventually(LIMIT, || b.counters().dropped_no_match == 1));
    assert!(s.frames().is_empty());
    b.unregister_rx_queue(0);
}
