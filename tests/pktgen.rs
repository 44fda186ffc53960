//! pktgen's frame format and its send and receive modes against each other over `lo`.

#[path = "../examples/common/packet.rs"]
mod packet;
mod support;

use doca_test_support::{require_raw_sockets, wait_for_file, PATIENCE};
use packet::{FrameSpec, Parsed};
use std::process::{Command, Stdio};
use support::{example, field, ready_path};

#[test]
fn built_frames_parse_back_with_valid_checksums() {
    let spec = FrameSpec::default();
    for size in [packet::MIN_FRAME, 59, 128, 1514] {
        let mut f = vec![0u8; size];
        packet::build_frame(&mut f, &spec, 77 + size as u64, 3, true);
        assert_eq!(
            packet::parse_frame(&f, spec.dst_port),
            Parsed::Good {
                seq: 77 + size as u64,
                burst: 3,
                checksums_valid: true
            },
            "size {size}"
        );
    }
}

#[test]
fn ipv4_checksum_matches_a_known_header() {
    // A textbook header (checksum field zero) whose checksum is 0xb861.
    let hdr = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];
    assert_eq!(packet::ipv4_checksum(&hdr), 0xb861);
}

#[test]
fn frames_without_checksums_are_good_but_flagged() {
    let spec = FrameSpec::default();
    let mut f = vec![0u8; 100];
    packet::build_frame(&mut f, &spec, 5, 0, false);
    assert_eq!(
        packet::parse_frame(&f, spec.dst_port),
        Parsed::Good {
            seq: 5,
            burst: 0,
            checksums_valid: false
        }
    );
}

#[test]
fn damaged_frames_are_detected() {
    let spec = FrameSpec::default();
    let mut f = vec![0u8; 200];
    packet::build_frame(&mut f, &spec, 9, 0, true);
    let mut payload = f.clone();
    payload[150] ^= 1;
    assert_eq!(
        packet::parse_frame(&payload, spec.dst_port),
        Parsed::Corrupt("payload pattern mismatch")
    );
    let mut csum = f.clone();
    csum[20] ^= 0x10; // inside the IPv4 header (id/flags): checksum no longer valid
    assert!(matches!(
        packet::parse_frame(&csum, spec.dst_port),
        Parsed::Good {
            checksums_valid: false,
            ..
        }
    ));
    assert_eq!(packet::parse_frame(&f, spec.dst_port + 1), Parsed::Other);
    assert_eq!(packet::parse_frame(&f[..30], spec.dst_port), Parsed::Other);
}

/// Starts `pktgen recv` with `args`, waits until it listens, runs `pktgen send` with
/// `send_args`, and returns the receiver's output.
fn send_and_receive(
    port: u16,
    recv_args: &[&str],
    send_args: &[&str],
) -> Option<std::process::Output> {
    let bin = example("pktgen")?;
    if !require_raw_sockets() {
        return None;
    }
    let ready = ready_path(&format!("pktgen-{port}"));
    let rx = Command::new(&bin)
        .args([
            "recv",
            "-i",
            "lo",
            "-d",
            &port.to_string(),
            "-t",
            "700",
            "-R",
        ])
        .arg(&ready)
        .args(recv_args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pktgen recv");
    wait_for_file(&ready, PATIENCE);
    let tx = Command::new(&bin)
        .args(["send", "-i", "lo", "-d", &port.to_string()])
        .args(send_args)
        .output()
        .expect("run pktgen send");
    assert!(tx.status.success(), "pktgen send failed: {tx:?}");
    let out = rx.wait_with_output().expect("pktgen recv output");
    let _ = std::fs::remove_file(&ready);
    Some(out)
}

#[test]
fn receiver_verifies_every_frame_the_sender_sent() {
    let Some(out) = send_and_receive(
        41001,
        &["--expect", "500", "--require-csum"],
        &["-c", "500", "-s", "300", "-r", "50000"],
    ) else {
        return;
    };
    assert!(out.status.success(), "receiver failed: {out:?}");
    assert_eq!(field(&out, "received"), 500);
    assert_eq!(field(&out, "gaps"), 0);
    assert_eq!(field(&out, "csum_valid"), 500);
}

#[test]
fn receiver_fails_on_missing_sequence_numbers() {
    // The sender starts at 10, so 0..10 are missing: --expect must fail.
    let Some(out) = send_and_receive(41002, &["--expect", "50"], &["-c", "40", "-f", "10"]) else {
        return;
    };
    assert!(!out.status.success(), "receiver accepted a gap: {out:?}");
    assert_eq!(field(&out, "received"), 40);
    assert_eq!(field(&out, "first_seq"), 10);
}

#[test]
fn receiver_fails_on_missing_checksums_when_required() {
    let Some(out) = send_and_receive(41003, &["--require-csum"], &["-c", "20", "--no-csum"]) else {
        return;
    };
    assert!(
        !out.status.success(),
        "receiver accepted zero checksums: {out:?}"
    );
    assert_eq!(field(&out, "csum_invalid"), 20);
}

#[test]
fn receiver_groups_bursts_and_checks_their_spacing() {
    // 4 bursts of 8 frames, 20 ms apart. No timing assertion: the receiver must find 4
    // bursts and must reject an expected spacing of 10 s (the real one is far below).
    let Some(out) = send_and_receive(
        41004,
        &["--expect", "32", "--expect-spacing-ns", "10000000000"],
        &["-c", "32", "-b", "8", "-w", "20000000"],
    ) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1), "spacing check passed: {out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("burst spacing"));
    assert_eq!(field(&out, "bursts"), 4);
    assert_eq!(field(&out, "received"), 32);
}

#[test]
fn bad_input_is_rejected_with_status_2() {
    let Some(bin) = example("pktgen") else { return };
    for args in [
        &["send", "-s", "20"][..],
        &["nonsense"],
        &[],
        &["send", "--count", "x"],
        &["send", "--bogus"],
    ] {
        let out = Command::new(&bin).args(args).output().expect("run pktgen");
        assert_eq!(out.status.code(), Some(2), "args {args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "args {args:?}: no message");
    }
    let out = Command::new(&bin)
        .args(["send", "-i", "nosuchif0"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuchif0"));
}
