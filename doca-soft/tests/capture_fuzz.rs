//! Captures a pcap port reads, crafted and mutated here: every capture is either refused
//! with a clear code (never a crash or a hang) or replayed with every record accounted for
//! (received = records, received = delivered + dropped), each drop under its own reason:
//! snap-truncated records as truncated (not too big), raw-IP captures as Ethernet frames,
//! pcapng read rather than rejected as a wrong magic.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_soft_port::PortCountersSnapshot;
use doca_soft::testing::frames::udp4;
use doca_soft::testing::{Port, PortSpec};
use support::{eventually, RecordingSink};

const LIMIT: Duration = Duration::from_secs(20);

/// One record of a classic pcap: (captured bytes, original length).
type Rec = (Vec<u8>, u32);

/// A classic little-endian microsecond pcap of `recs`, with `link` and `snap`.
fn pcap(link: u32, snap: u32, recs: &[Rec]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    f.extend_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&0i32.to_le_bytes());
    f.extend_from_slice(&0u32.to_le_bytes());
    f.extend_from_slice(&snap.to_le_bytes());
    f.extend_from_slice(&link.to_le_bytes());
    for (i, (data, orig)) in recs.iter().enumerate() {
        f.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        f.extend_from_slice(&(i as u32).to_le_bytes());
        f.extend_from_slice(&(data.len() as u32).to_le_bytes());
        f.extend_from_slice(&orig.to_le_bytes());
        f.extend_from_slice(data);
    }
    f
}

/// A pcapng block of `kind` with `body` (padded to 4 bytes).
fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let mut b = body.to_vec();
    b.resize(body.len().div_ceil(4) * 4, 0);
    let len = (b.len() + 12) as u32;
    let mut f = kind.to_le_bytes().to_vec();
    f.extend_from_slice(&len.to_le_bytes());
    f.extend_from_slice(&b);
    f.extend_from_slice(&len.to_le_bytes());
    f
}

/// A pcapng section of one interface of `link`, its packets as Enhanced Packet Blocks
/// (microsecond stamps) and one Simple Packet Block at the end when `simple` is given.
fn pcapng(link: u16, recs: &[Rec], simple: Option<&[u8]>) -> Vec<u8> {
    let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut f = block(0x0a0d_0d0a, &shb);
    let mut idb = link.to_le_bytes().to_vec();
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&0u32.to_le_bytes());
    f.extend(block(1, &idb));
    for (i, (data, orig)) in recs.iter().enumerate() {
        let ts = 1_700_000_000_000_000u64 + i as u64;
        let mut epb = 0u32.to_le_bytes().to_vec();
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&orig.to_le_bytes());
        epb.extend_from_slice(data);
        f.extend(block(6, &epb));
    }
    if let Some(d) = simple {
        let mut spb = (d.len() as u32).to_le_bytes().to_vec();
        spb.extend_from_slice(d);
        f.extend(block(3, &spb));
    }
    f
}

fn good(i: u16) -> Vec<u8> {
    udp4([10, 1, 0, 1], [10, 1, 0, 2], 1000 + i, 2000, &[i as u8; 18])
}

/// What a replay counted.
#[derive(Debug)]
struct Replayed {
    frames: Vec<Vec<u8>>,
    c: PortCountersSnapshot,
}

/// Replays `bytes` through a pcap port with default queue 0 and waits until `records`
/// were received; asserts the accounting identity. `Err` when the port refuses the file.
fn replay(dir: &Path, name: &str, bytes: &[u8], records: usize) -> Result<Replayed, DocaError> {
    let input = dir.join(name);
    std::fs::write(&input, bytes).unwrap();
    open_and_replay(&input, &dir.join(format!("{name}.out")), records)
}

fn open_and_replay(input: &Path, output: &Path, records: usize) -> Result<Replayed, DocaError> {
    let port = Port::for_spec(&PortSpec::Pcap {
        input: input.to_path_buf(),
        output: output.to_path_buf(),
    })?;
    let sink = Arc::new(RecordingSink::new(65536, usize::MAX));
    port.register_rx_queue(0, sink.clone()).unwrap();
    port.set_default_queue(Some(0));
    let done = eventually(LIMIT, || port.counters().received >= records as u64);
    // The outcomes are added with the received count; give late ones no chance to hide.
    let c = port.counters();
    port.unregister_rx_queue(0);
    assert!(
        done,
        "{}: {c:?}, expected {records} records",
        input.display()
    );
    assert_eq!(c.received, records as u64, "{}", input.display());
    assert_eq!(
        c.received,
        c.delivered + c.dropped(),
        "{}: offered = delivered + dropped: {c:?}",
        input.display()
    );
    let frames = sink.frames();
    assert_eq!(frames.len() as u64, c.delivered, "{}", input.display());
    Ok(Replayed { frames, c })
}

#[test]
fn snap_truncated_records_have_their_own_reason() {
    let dir = tempfile::tempdir().unwrap();
    let whole = good(1);
    let cut = (good(2)[..30].to_vec(), good(2).len() as u32);
    let huge = (good(3)[..40].to_vec(), 70_000);
    let r = replay(
        dir.path(),
        "cut.pcap",
        &pcap(1, 65535, &[(whole.clone(), whole.len() as u32), cut, huge]),
        3,
    )
    .unwrap();
    assert_eq!(r.frames, vec![whole]);
    assert_eq!(
        r.c.dropped_truncated, 1,
        "cut by the snap length: {:?}",
        r.c
    );
    assert_eq!(r.c.dropped_too_big, 1, "longer than any frame: {:?}", r.c);
}

#[test]
fn raw_ip_captures_become_ethernet_frames() {
    let dir = tempfile::tempdir().unwrap();
    let ip: Vec<u8> = good(7)[14..].to_vec();
    for link in [101u32, 228] {
        let r = replay(
            dir.path(),
            &format!("raw{link}.pcap"),
            &pcap(
                link,
                65535,
                &[(ip.clone(), ip.len() as u32), (vec![0x45], 20)],
            ),
            2,
        )
        .unwrap();
        let mut want = vec![0u8; 12];
        want.extend_from_slice(&[0x08, 0x00]);
        want.extend_from_slice(&ip);
        assert_eq!(r.frames, vec![want], "link type {link}");
        assert_eq!(r.c.dropped_truncated, 1, "a one-byte record of 20");
    }
    // Other link types are refused by number, not parsed as Ethernet.
    let e = replay(
        dir.path(),
        "wifi.pcap",
        &pcap(105, 65535, &[(ip.clone(), ip.len() as u32)]),
        1,
    );
    assert_eq!(e.err(), Some(DocaError::NOT_SUPPORTED));
}

#[test]
fn pcapng_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let frames: Vec<Vec<u8>> = (0..5).map(good).collect();
    let recs: Vec<Rec> = frames.iter().map(|f| (f.clone(), f.len() as u32)).collect();
    let last = good(99);
    let r = replay(dir.path(), "eth.pcapng", &pcapng(1, &recs, Some(&last)), 6).unwrap();
    let mut want = frames.clone();
    want.push(last);
    assert_eq!(
        r.frames, want,
        "Enhanced and Simple Packet Blocks, in order"
    );
    let ip: Vec<u8> = good(5)[14..].to_vec();
    let r = replay(
        dir.path(),
        "raw.pcapng",
        &pcapng(101, &[(ip.clone(), ip.len() as u32)], None),
        1,
    )
    .unwrap();
    assert_eq!(&r.frames[0][14..], &ip[..]);
    let e = replay(dir.path(), "x.pcapng", &pcapng(105, &recs, None), 0);
    assert_eq!(e.err(), Some(DocaError::NOT_SUPPORTED));
}

#[test]
fn malformed_files_and_non_files_are_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let ok = pcap(1, 65535, &[(good(1), good(1).len() as u32)]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("short", vec![0xd4, 0xc3]),
        ("magic", b"GIF89a not a capture at all".to_vec()),
        ("header", ok[..20].to_vec()),
        ("record-header", ok[..30].to_vec()),
        ("record-data", ok[..ok.len() - 3].to_vec()),
        ("huge-record", {
            // A record header claiming 300,000 bytes (more than any capture keeps).
            let mut f = ok[..24].to_vec();
            for v in [0u32, 0, 300_000, 300_000] {
                f.extend_from_slice(&v.to_le_bytes());
            }
            f.extend_from_slice(&[0; 64]);
            f
        }),
        ("ng-short", pcapng(1, &[], None)[..10].to_vec()),
    ];
    for (name, bytes) in cases {
        let e = replay(dir.path(), name, &bytes, 0).err();
        assert_eq!(e, Some(DocaError::INVALID_VALUE), "{name}");
    }
    // A directory and a FIFO without a writer: refused, not read (a FIFO would block).
    let out = dir.path().join("o.pcap");
    assert_eq!(
        open_and_replay(dir.path(), &out, 0).err(),
        Some(DocaError::INVALID_VALUE)
    );
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let f2 = fifo.clone();
    std::thread::spawn(move || {
        let r = open_and_replay(&f2, &PathBuf::from(format!("{}.out", f2.display())), 0);
        let _ = tx.send(r.err());
    });
    assert_eq!(
        rx.recv_timeout(LIMIT),
        Ok(Some(DocaError::INVALID_VALUE)),
        "a FIFO is refused without waiting for a writer"
    );
}

/// A small deterministic generator (xorshift), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// How many records `bytes` (a little-endian microsecond pcap, or what a mutation made
/// of one) holds by the format's rules, or the code the port must refuse it with.
fn expected(bytes: &[u8]) -> Result<usize, DocaError> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    if bytes.len() < 24 || word(0) != 0xa1b2_c3d4 {
        // Too short, or a magic a mutation changed (none lands on another valid one).
        return Err(DocaError::INVALID_VALUE);
    }
    if ![1, 101, 228, 229].contains(&(word(20) & 0xffff)) {
        return Err(DocaError::NOT_SUPPORTED);
    }
    let (mut at, mut n) = (24, 0);
    while at < bytes.len() {
        if bytes.len() - at < 16 {
            return Err(DocaError::INVALID_VALUE);
        }
        let incl = word(at + 8) as usize;
        at += 16;
        if incl > 262_144 || bytes.len() - at < incl {
            return Err(DocaError::INVALID_VALUE);
        }
        at += incl;
        n += 1;
    }
    Ok(n)
}

#[test]
fn mutated_captures_are_refused_or_fully_accounted() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut seed_recs: Vec<Rec> = (0..12).map(|i| (good(i), good(i).len() as u32)).collect();
    seed_recs.push((vec![0xff; 9], 9)); // malformed
    seed_recs.push((good(50)[..20].to_vec(), 60)); // truncated
    let seed = pcap(1, 65535, &seed_recs);
    let (mut refused, mut replayed, mut frames) = (0, 0, 0u64);
    for case in 0..400 {
        let mut b = seed.clone();
        for _ in 0..1 + rng.below(6) {
            match rng.below(4) {
                // Flip a byte anywhere (header fields, lengths, payloads).
                0 | 1 => {
                    let i = rng.below(b.len());
                    b[i] ^= 1 << rng.below(8);
                }
                // Set a 32-bit word to an extreme.
                2 if b.len() > 4 => {
                    let i = rng.below(b.len() - 4);
                    let v = [0u32, 1, 0xffff, 0x7fff_ffff, u32::MAX][rng.below(5)];
                    b[i..i + 4].copy_from_slice(&v.to_le_bytes());
                }
                // Cut the file short.
                _ => b.truncate(rng.below(b.len()).max(1)),
            }
        }
        let name = format!("m{case}.pcap");
        match (
            expected(&b),
            replay(dir.path(), &name, &b, expected(&b).unwrap_or(0)),
        ) {
            (Ok(n), Ok(r)) => {
                replayed += 1;
                frames += n as u64;
                assert_eq!(r.c.received, n as u64, "{name}");
            }
            (Err(want), Err(got)) => {
                refused += 1;
                assert_eq!(got, want, "{name}");
            }
            (want, got) => panic!("{name}: expected {want:?}, port gave {:?}", got.err()),
        }
    }
    println!("mutated captures: {replayed} replayed ({frames} frames), {refused} refused");
    assert!(
        replayed > 0 && refused > 0,
        "the corpus exercises both outcomes"
    );
}
