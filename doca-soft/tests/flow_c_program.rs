//! tests/c/flow_pipeline.c, a DOCA Flow program written the way DOCA programs are (argp
//! flags, entry and pipe callbacks, BASIC + CONTROL + HASH pipes, actions, port forwards),
//! built with gcc and with g++ (-Wall -Wextra -Werror) against include/ and
//! libdoca_soft.so, and run on a pcap port: the frames it sends back out are the input
//! rewritten as its pipes say, byte for byte (IPv4 header checksums fixed, L4 checksums
//! fixed only where a rewrite reached the pseudo-header: the ICMP frames keep their zero
//! checksum through a DSCP rewrite), in input order; what the program prints (counters,
//! hash slots) is checked against the frames sent. The program uses doca_argp_init(NULL, ..)
//! as DOCA 3.3 programs may.

use doca_test_support::cc;
use doca_test_support::frames::{checksum, ones_complement_sum};
mod cdylib;

use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cc::{C, CXX};
use doca_soft::testing::frames::{icmp4_echo, tcp4, udp4};
use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let mut w = PcapWriter::new(File::create(path).unwrap()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        let ts = Duration::from_micros(1_000_000 + i as u64);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
            .unwrap();
    }
}

fn read_pcap(path: &Path) -> Vec<Vec<u8>> {
    let mut r = PcapReader::new(File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        out.push(p.unwrap().data.into_owned());
    }
    out
}

/// IPv4 header checksum and the UDP checksum (if non-zero) of an Ethernet + IPv4 frame.
fn fix(f: &mut [u8]) {
    f[24..26].fill(0);
    let c = checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    if f[23] == 17 && f[40..42] != [0, 0] {
        f[40..42].fill(0);
        let mut pseudo = f[26..34].to_vec();
        pseudo.extend_from_slice(&[0, 17]);
        pseudo.extend_from_slice(&((f.len() - 34) as u16).to_be_bytes());
        let c = !ones_complement_sum(ones_complement_sum(0, &pseudo), &f[34..]);
        f[40..42].copy_from_slice(&c.to_be_bytes());
    }
}

/// A UDP frame with a real UDP checksum.
fn udp_checksummed(dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = udp4([10, 0, 0, 9], [10, 0, 0, 10], 7777, dport, payload);
    f[40] = 1; // non-zero: fix computes it
    fix(&mut f);
    f
}

fn build(lang: cc::Lang, dir: &Path) -> std::path::PathBuf {
    let exe = dir.join(format!("flow_pipeline_{}", lang.x.replace('+', "x")));
    cdylib::compile_linked(lang, &cc::c_source("flow_pipeline.c"), &exe)
        .unwrap_or_else(|e| panic!("flow_pipeline.c as {}:\n{e}", lang.x));
    exe
}

fn run_and_check(exe: &Path, dir: &Path) {
    let input = dir.join("in.pcap");
    let output = dir.join("out.pcap");
    let udp = [
        udp_checksummed(5000, b"one"),
        udp_checksummed(5000, b"two!"),
        udp_checksummed(5000, b"three"),
    ];
    let icmp: Vec<Vec<u8>> = (1..=4u8)
        .map(|i| icmp4_echo([10, 0, 0, i], [10, 0, 0, 100], b"hash me"))
        .collect();
    let mut frames = udp.to_vec();
    frames.push(udp_checksummed(6000, b"miss")); // UDP_REWRITE miss: dropped
    frames.push(tcp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 80, 0x02, b"")); // SYN: dropped
    frames.push(tcp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 80, 0x12, b"")); // SYN+ACK: dropped
    let ack = tcp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 80, 0x10, b"");
    frames.push(ack.clone()); // ACK: the TCP catch-all, back out unchanged
    frames.extend(icmp.iter().cloned());
    write_pcap(&input, &frames);
    let run = Command::new(exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .env(
            "DOCA_SOFT_PORTS",
            format!("pcap:{},{}", input.display(), output.display()),
        )
        .args(["-p", "pcap0", "-n", &frames.len().to_string()])
        .output()
        .expect("run flow_pipeline");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success() && stdout.contains("flow pipeline ok"),
        "{}: {stdout}\n{stderr}",
        exe.display()
    );
    assert!(stdout.contains("udp_entry 3\n"), "{stdout}");
    assert!(stdout.contains("syn_drop 2\n"), "{stdout}");
    assert!(stdout.contains("tcp_other 1\n"), "{stdout}");
    assert!(stdout.contains("udp_miss 1\n"), "{stdout}");
    assert!(stdout.contains("icmp 4\n"), "{stdout}");
    let out = read_pcap(&output);
    // The three UDP frames, rewritten; the ACK as it was; then the four ICMP frames, each
    // with its slot's DSCP.
    assert_eq!(out.len(), 8, "frames sent back out: {}", out.len());
    assert_eq!(out[3], ack, "the TCP catch-all forwards the ACK unchanged");
    for (got, orig) in out[..3].iter().zip(&udp) {
        let mut want = orig.clone();
        want[..6].copy_from_slice(&[0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
        want[30..34].copy_from_slice(&[192, 168, 100, 1]);
        want[22] -= 1;
        fix(&mut want);
        assert_eq!(got, &want);
    }
    for (i, orig) in icmp.iter().enumerate() {
        let line = format!("slot 10.0.0.{} ", i + 1);
        let slot: u8 = stdout
            .lines()
            .find_map(|l| l.strip_prefix(&line))
            .unwrap_or_else(|| panic!("no {line:?} in {stdout}"))
            .parse()
            .unwrap();
        let mut want = orig.clone();
        want[15] = (slot + 1) << 2;
        fix(&mut want);
        assert!(
            out[4..].contains(&want),
            "ICMP from 10.0.0.{} with DSCP of slot {slot}: want {want:02x?} got {:02x?}",
            i + 1,
            &out[4..]
        );
    }
}

#[test]
fn doca_style_flow_program_runs_as_c_and_cpp() {
    for lang in [C, CXX] {
        if Command::new(lang.compiler())
            .arg("--version")
            .output()
            .is_err()
        {
            doca_test_support::skip(&format!(
                "no {} compiler; {}",
                lang.x,
                doca_test_support::GET_A_C_COMPILER
            ));
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let exe = build(lang, dir.path());
        run_and_check(&exe, dir.path());
    }
}
