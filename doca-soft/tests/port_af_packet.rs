//! AF_PACKET port on `lo`: UDP datagrams sent with a std socket reach the queue that a
//! UDP-destination-port pipe selects, each exactly once (outgoing copies are not received).

mod support;

use std::net::UdpSocket;
use std::sync::Arc;
use std::time::Duration;

use support::{af_packet_allowed, eventually, lo_port, udp_dst_to, RecordingSink};

const LIMIT: Duration = Duration::from_secs(10);

#[test]
fn lo_udp_pipe_delivers_exactly_the_sent_datagrams() {
    if !af_packet_allowed() {
        return;
    }
    // The receiver's port is the destination the pipe matches; nothing else uses it.
    let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
    let dport = receiver.local_addr().unwrap().port();
    let port = lo_port();
    port.set_flow_root(Some(udp_dst_to(dport, &[7], 0)));
    let sink = Arc::new(RecordingSink::new(65536 + 64, usize::MAX));
    port.register_rx_queue(7, sink.clone()).unwrap();

    let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
    let n = 200;
    for i in 0..n as u32 {
        sender
            .send_to(&i.to_be_bytes(), ("127.0.0.1", dport))
            .unwrap();
    }
    let got = sink.wait_for(n, LIMIT);
    // A late duplicate (an outgoing copy) would show up shortly after: give it the chance.
    std::thread::sleep(Duration::from_millis(50));
    let got_after = sink.frames();
    assert_eq!(got.len(), n);
    assert_eq!(got_after.len(), n, "no outgoing copies delivered");
    let mut payloads: Vec<u32> = got_after
        .iter()
        .map(|f| u32::from_be_bytes(f[f.len() - 4..].try_into().unwrap()))
        .collect();
    payloads.sort_unstable();
    assert_eq!(payloads, (0..n as u32).collect::<Vec<_>>());
    assert!(got_after
        .iter()
        .all(|f| u16::from_be_bytes([f[36], f[37]]) == dport));
    assert!(eventually(LIMIT, || port.counters().delivered == n as u64));

    // TX: a frame sent through the port comes back on lo (as incoming) and is delivered.
    let mut frame = got_after[0].clone();
    let last = frame.len() - 1;
    frame[last] = 0xee;
    port.send(&frame).unwrap();
    assert_eq!(sink.wait_for(n + 1, LIMIT).len(), n + 1);
    assert_eq!(port.counters().sent, 1);
    // Batched TX (sendmmsg): 100 frames in one call, all delivered once.
    let batch: Vec<Vec<u8>> = (0..100u8)
        .map(|i| {
            let mut f = frame.clone();
            f[last] = i;
            f
        })
        .collect();
    let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
    let (sent, r) = port.send_batch(&refs);
    assert_eq!((sent, r), (100, Ok(())));
    assert_eq!(sink.wait_for(n + 101, LIMIT).len(), n + 101);
    assert_eq!(port.counters().sent, 101);
    let too_big = vec![0u8; port.max_frame() + 1];
    let (sent, r) = port.send_batch(&[&batch[0], &too_big, &batch[1]]);
    assert_eq!(
        (sent, r),
        (1, Err(doca_soft::capi::doca_error::DocaError::TOO_BIG))
    );
    port.unregister_rx_queue(7);
    assert!(!port.dispatcher_running());
}
