//! pcap port round trip: frames replayed from an input capture are classified to a queue,
//! the test echoes them out through the port, and the output capture holds exactly those
//! bytes (read back with pcap-file, and with tcpdump when it is installed).

mod support;

use std::fs::File;
use std::sync::Arc;
use std::time::Duration;

use doca_soft::testing::frames::{tcp4, udp4};
use doca_soft::testing::{Port, PortSpec};
use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use support::{eventually, udp_dst_to, RecordingSink};

const LIMIT: Duration = Duration::from_secs(10);

fn write_pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
    let mut w = PcapWriter::new(File::create(path).unwrap()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        let ts = Duration::from_micros(1_000_000 + i as u64);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
            .unwrap();
    }
}

fn read_pcap(path: &std::path::Path) -> Vec<Vec<u8>> {
    let mut r = PcapReader::new(File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        out.push(p.unwrap().data.into_owned());
    }
    out
}

#[test]
fn pcap_in_queue_pcap_out_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in.pcap"), dir.path().join("out.pcap"));
    let udp: Vec<Vec<u8>> = (0..50u16)
        .map(|i| {
            udp4(
                [192, 168, 0, 1],
                [192, 168, 0, 2],
                4000 + i,
                9999,
                &vec![i as u8; 20 + usize::from(i)],
            )
        })
        .collect();
    let mut all = udp.clone();
    all.insert(
        10,
        tcp4([192, 168, 0, 1], [192, 168, 0, 2], 1, 9999, 2, b""),
    ); // not UDP
    all.push(vec![1, 2, 3]); // malformed
    write_pcap(&input, &all);

    let port = Port::for_spec(&PortSpec::Pcap {
        input: input.clone(),
        output: output.clone(),
    })
    .unwrap();
    port.set_flow_root(Some(udp_dst_to(9999, &[0], 0)));
    let sink = Arc::new(RecordingSink::new(2048, usize::MAX));
    port.register_rx_queue(0, sink.clone()).unwrap();
    // Not armed yet: nothing replayed.
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(port.counters().received, 0, "replay waits for arm()");
    port.arm();
    let got = sink.wait_for(udp.len(), LIMIT);
    assert!(eventually(LIMIT, || port.counters().received == all.len() as u64));
    assert_eq!(got, udp, "UDP frames in capture order");
    let c = port.counters();
    assert_eq!((c.dropped_no_match, c.dropped_malformed), (1, 1));

    for f in &got {
        port.send(f).unwrap();
    }
    assert_eq!(port.counters().sent, udp.len() as u64);
    port.unregister_rx_queue(0);
    drop(port);
    assert_eq!(
        read_pcap(&output),
        udp,
        "output capture holds the sent bytes"
    );

    match std::process::Command::new("tcpdump")
        .arg("-nr")
        .arg(&output)
        .output()
    {
        Ok(out) => {
            assert!(
                out.status.success(),
                "tcpdump failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let lines = String::from_utf8_lossy(&out.stdout).lines().count();
            assert_eq!(lines, udp.len(), "tcpdump parses every record");
        }
        Err(e) => {
            doca_test_support::skip(&format!(
                "tcpdump check only: tcpdump not runnable ({e}); install tcpdump"
            ));
        }
    }
}

#[test]
fn pcap_port_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = PortSpec::Pcap {
        input: dir.path().join("nope.pcap"),
        output: dir.path().join("o.pcap"),
    };
    assert!(Port::for_spec(&missing).is_err());
    let junk = dir.path().join("junk.pcap");
    std::fs::write(&junk, b"not a capture").unwrap();
    let bad = PortSpec::Pcap {
        input: junk,
        output: dir.path().join("o2.pcap"),
    };
    assert!(Port::for_spec(&bad).is_err());
}
