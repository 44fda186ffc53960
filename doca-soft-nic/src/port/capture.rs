//! Reading capture files for the pcap port: classic pcap (either byte order, microsecond or
//! nanosecond stamps) and pcapng (Enhanced and Simple Packet Blocks, each interface's time
//! resolution applied), of Ethernet or raw IP.
//!
//! Raw IP (link types 101 `RAW`, 228 `IPV4`, 229 `IPV6`) has no link header; each packet
//! gets one here (zero MAC addresses, the EtherType of its IP version), so the port carries
//! Ethernet frames as every other port does. Any other link type is refused with its
//! number. A record shorter than its original length (cut by the capture's snap length) is
//! kept as it is: the port counts it as a truncated drop.
//!
//! Only regular files are read (a FIFO or a device would block or never end).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::DataLink;

use crate::error::{DocaError, DocaResult};

/// Bytes of the Ethernet header given to a raw IP packet.
pub(crate) const RAW_IP_HEADER: usize = 14;

/// One captured frame.
pub(crate) struct Record {
    /// The frame as stored (at most its original length).
    pub(crate) data: Vec<u8>,
    /// Capture time, nanoseconds since the epoch.
    pub(crate) ts_ns: u64,
    /// Length of the frame on the wire.
    pub(crate) orig_len: usize,
}

/// How the packets of one interface become Ethernet frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Ethernet,
    /// Raw IP; `Some(ethertype)` when the link type fixes the IP version.
    RawIp(Option<u16>),
}

impl Link {
    fn of(datalink: DataLink, path: &Path) -> DocaResult<Link> {
        match datalink {
            DataLink::ETHERNET => Ok(Link::Ethernet),
            DataLink::RAW => Ok(Link::RawIp(None)),
            DataLink::IPV4 => Ok(Link::RawIp(Some(0x0800))),
            DataLink::IPV6 => Ok(Link::RawIp(Some(0x86dd))),
            other => {
                sdk_err!(
                    "pcap",
                    "{}: link type {} ({other:?}) is not supported (Ethernet and raw IP are)",
                    path.display(),
                    u32::from(other)
                );
                Err(DocaError::NOT_SUPPORTED)
            }
        }
    }

    /// The Ethernet frame of a packet of this link, and its original length as a frame.
    fn frame(self, data: &[u8], orig_len: usize) -> (Vec<u8>, usize) {
        match self {
            Link::Ethernet => (data.to_vec(), orig_len),
            Link::RawIp(fixed) => {
                let ethertype = fixed.unwrap_or(match data.first().map(|b| b >> 4) {
                    Some(4) => 0x0800,
                    Some(6) => 0x86dd,
                    // Not IP: the parser drops it as malformed.
                    _ => 0,
                });
                let mut f = Vec::with_capacity(RAW_IP_HEADER + data.len());
                f.extend_from_slice(&[0; 12]);
                f.extend_from_slice(&ethertype.to_be_bytes());
                f.extend_from_slice(data);
                (f, orig_len.saturating_add(RAW_IP_HEADER))
            }
        }
    }
}

/// The magic numbers a capture file starts with.
const PCAP_MAGICS: [u32; 4] = [0xa1b2_c3d4, 0xd4c3_b2a1, 0xa1b2_3c4d, 0x4d3c_b2a1];
const PCAPNG_MAGIC: u32 = 0x0a0d_0d0a;

/// Reads every record of the capture at `path`. NOT_FOUND when it cannot be opened,
/// INVALID_VALUE (logged, naming the format and the problem) when it is not a regular
/// file or not a well-formed capture, NOT_SUPPORTED for a link type other than Ethernet
/// or raw IP.
pub(crate) fn read_capture(path: &Path) -> DocaResult<Vec<Record>> {
    // Non-blocking: opening a FIFO without a writer would otherwise wait for one.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            sdk_err!("pcap", "cannot open {}: {e}", path.display());
            DocaError::NOT_FOUND
        })?;
    let meta = file.metadata().map_err(|_| DocaError::IO_FAILED)?;
    if !meta.is_file() {
        sdk_err!("pcap", "{} is not a regular file", path.display());
        return Err(DocaError::INVALID_VALUE);
    }
    let mut r = BufReader::new(file);
    let mut magic = [0u8; 4];
    r.read_exact(&mut magic).map_err(|_| {
        sdk_err!(
            "pcap",
            "{} is not a capture file (too short for a header)",
            path.display()
        );
        DocaError::INVALID_VALUE
    })?;
    let head = Cursorish {
        first: magic,
        used: 0,
        rest: r,
    };
    let magic = u32::from_be_bytes(magic);
    // The parser library reads untrusted bytes: any panic in it is a malformed file.
    let run = |f: fn(Cursorish, &Path) -> DocaResult<Vec<Record>>| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(head, path))).unwrap_or_else(
            |_| {
                sdk_err!("pcap", "{}: malformed capture", path.display());
                Err(DocaError::INVALID_VALUE)
            },
        )
    };
    if PCAP_MAGICS.contains(&magic) {
        run(read_pcap)
    } else if magic == PCAPNG_MAGIC {
        run(read_pcapng)
    } else {
        sdk_err!(
            "pcap",
            "{} is not a capture file (magic {magic:#010x} is neither pcap nor pcapng)",
            path.display()
        );
        Err(DocaError::INVALID_VALUE)
    }
}

/// The file again from its start: the four bytes already read, then the rest.
struct Cursorish {
    first: [u8; 4],
    used: usize,
    rest: BufReader<File>,
}

impl Read for Cursorish {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.used < self.first.len() {
            let n = (self.first.len() - self.used).min(buf.len());
            buf[..n].copy_from_slice(&self.first[self.used..self.used + n]);
            self.used += n;
            return Ok(n);
        }
        self.rest.read(buf)
    }
}

fn bad(path: &Path, format: &str, e: impl std::fmt::Display) -> DocaError {
    sdk_err!("pcap", "{}: bad {format} file: {e}", path.display());
    DocaError::INVALID_VALUE
}

/// Longest record a classic pcap may hold (the largest snap length capture tools use).
pub(crate) const MAX_RECORD: u32 = 262_144;

/// Reads a classic pcap: the 24-byte file header, then records of a 16-byte header and
/// their bytes. Read here rather than by the library, which refuses a whole file for an
/// original length above the snap length (legal: the snap length bounds what is kept).
fn read_pcap(mut r: Cursorish, path: &Path) -> DocaResult<Vec<Record>> {
    let mut h = [0u8; 24];
    r.read_exact(&mut h)
        .map_err(|_| bad(path, "pcap", "file header cut short"))?;
    let (big, nanos) = match u32::from_be_bytes([h[0], h[1], h[2], h[3]]) {
        0xa1b2_c3d4 => (true, false),
        0xd4c3_b2a1 => (false, false),
        0xa1b2_3c4d => (true, true),
        _ => (false, true),
    };
    let word = |b: &[u8]| {
        let w = [b[0], b[1], b[2], b[3]];
        if big {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    };
    // The upper bits of the link type field carry FCS information, not the type.
    let link = Link::of(DataLink::from(word(&h[20..24]) & 0xffff), path)?;
    let mut out = Vec::new();
    let mut rh = [0u8; 16];
    loop {
        match read_full(&mut r, &mut rh) {
            Ok(0) => break,
            Ok(16) => {}
            _ => return Err(bad(path, "pcap", "record header cut short")),
        }
        let (sec, frac, incl, orig) = (
            u64::from(word(&rh[0..4])),
            u64::from(word(&rh[4..8])),
            word(&rh[8..12]),
            word(&rh[12..16]),
        );
        if incl > MAX_RECORD {
            return Err(bad(
                path,
                "pcap",
                format!(
                    "record {} holds {incl} bytes (at most {MAX_RECORD})",
                    out.len()
                ),
            ));
        }
        let mut data = vec![0u8; incl as usize];
        r.read_exact(&mut data)
            .map_err(|_| bad(path, "pcap", format!("record {} cut short", out.len())))?;
        let frac_ns = if nanos { frac } else { frac * 1000 };
        let (data, orig_len) = link.frame(&data, orig.max(incl) as usize);
        out.push(Record {
            data,
            ts_ns: sec.saturating_mul(1_000_000_000).saturating_add(frac_ns),
            orig_len,
        });
    }
    Ok(out)
}

/// Reads until `buf` is full or the file ends; the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Nanoseconds per unit of an interface's `if_tsresol` (default: microseconds).
fn unit_ns(options: &[InterfaceDescriptionOption]) -> DocaResult<u64> {
    let res = options.iter().find_map(|o| match o {
        InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
        _ => None,
    });
    match res.unwrap_or(6) {
        r if r & 0x80 == 0 && r <= 9 => Ok(10u64.pow(9 - u32::from(r))),
        // Finer than a nanosecond or a power of two: not kept exactly here.
        _ => Err(DocaError::NOT_SUPPORTED),
    }
}

fn read_pcapng(r: Cursorish, path: &Path) -> DocaResult<Vec<Record>> {
    let mut reader = PcapNgReader::new(r).map_err(|e| bad(path, "pcapng", e))?;
    // Per interface of the current section: its link and time unit.
    let mut ifaces: Vec<(Link, u64, u32)> = Vec::new();
    let mut out = Vec::new();
    while let Some(b) = reader.next_block() {
        let b = b.map_err(|e| bad(path, "pcapng", e))?;
        let (iface, raw_ts, orig_len, data): (u32, u64, u32, Cow<[u8]>) = match b {
            Block::SectionHeader(_) => {
                ifaces.clear();
                continue;
            }
            Block::InterfaceDescription(idb) => {
                let link = Link::of(idb.linktype, path)?;
                let unit = unit_ns(&idb.options).inspect_err(|_| {
                    sdk_err!(
                        "pcap",
                        "{}: pcapng time resolution other than 10^-N s (N <= 9)",
                        path.display()
                    )
                })?;
                ifaces.push((link, unit, idb.snaplen));
                continue;
            }
            Block::EnhancedPacket(p) => (
                p.interface_id,
                u64::try_from(p.timestamp.as_nanos()).unwrap_or(u64::MAX),
                p.original_len,
                p.data,
            ),
            Block::SimplePacket(p) => {
                // No stamp, no captured length: the data (padded to 4 bytes) is cut to the
                // original length and interface 0's snap length.
                let snap = ifaces.first().map_or(0, |i| i.2);
                let mut n = (p.original_len as usize).min(p.data.len());
                if snap > 0 {
                    n = n.min(snap as usize);
                }
                let data = match p.data {
                    Cow::Borrowed(d) => Cow::Borrowed(&d[..n]),
                    Cow::Owned(d) => Cow::Owned(d[..n].to_vec()),
                };
                (0, 0, p.original_len, data)
            }
            Block::Packet(_) => {
                sdk_err!(
                    "pcap",
                    "{}: obsolete pcapng Packet Block is not supported",
                    path.display()
                );
                return Err(DocaError::NOT_SUPPORTED);
            }
            // Name resolution, statistics, journal and unknown blocks carry no frames.
            _ => continue,
        };
        let &(link, unit, _) = ifaces.get(iface as usize).ok_or_else(|| {
            bad(
                path,
                "pcapng",
                format!("packet of interface {iface}, which is not described"),
            )
        })?;
        let (data, orig_len) = link.frame(&data, orig_len as usize);
        out.push(Record {
            data,
            // The library reads the raw stamp as nanoseconds; it counts `unit`s.
            ts_ns: raw_ts.saturating_mul(unit),
            orig_len,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> DocaResult<Vec<Record>> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c");
        std::fs::write(&p, bytes).unwrap();
        read_capture(&p)
    }

    /// A one-record classic pcap, big- or little-endian, of the given magic.
    fn pcap(magic: u32, big: bool, sec: u32, frac: u32, data: &[u8]) -> Vec<u8> {
        let w = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let h = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut f = w(magic).to_vec();
        f.extend(h(2));
        f.extend(h(4));
        f.extend([0; 8]);
        f.extend(w(65535));
        f.extend(w(1));
        for v in [sec, frac, data.len() as u32, data.len() as u32] {
            f.extend(w(v));
        }
        f.extend_from_slice(data);
        f
    }

    fn block(kind: u32, body: &[u8]) -> Vec<u8> {
        let mut b = body.to_vec();
        b.resize(body.len().div_ceil(4) * 4, 0);
        let len = (b.len() + 12) as u32;
        let mut f = kind.to_le_bytes().to_vec();
        f.extend(len.to_le_bytes());
        f.extend(b);
        f.extend(len.to_le_bytes());
        f
    }

    /// A pcapng of one Ethernet interface (with `if_tsresol` when given) and one packet.
    fn pcapng(tsresol: Option<u8>, raw_ts: u64, data: &[u8]) -> Vec<u8> {
        let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
        shb.extend(1u16.to_le_bytes());
        shb.extend(0u16.to_le_bytes());
        shb.extend((-1i64).to_le_bytes());
        let mut f = block(PCAPNG_MAGIC, &shb);
        let mut idb = 1u16.to_le_bytes().to_vec();
        idb.extend([0; 6]);
        if let Some(r) = tsresol {
            idb.extend(9u16.to_le_bytes()); // if_tsresol
            idb.extend(1u16.to_le_bytes());
            idb.extend([r, 0, 0, 0]);
            idb.extend([0; 4]); // opt_endofopt
        }
        f.extend(block(1, &idb));
        let mut epb = 0u32.to_le_bytes().to_vec();
        epb.extend(((raw_ts >> 32) as u32).to_le_bytes());
        epb.extend((raw_ts as u32).to_le_bytes());
        epb.extend((data.len() as u32).to_le_bytes());
        epb.extend((data.len() as u32).to_le_bytes());
        epb.extend_from_slice(data);
        f.extend(block(6, &epb));
        f
    }

    #[test]
    fn stamps_follow_each_format_resolution_and_byte_order() {
        let data = [0xaau8; 60];
        for (magic, big, want) in [
            (0xa1b2_c3d4, false, 5_000_007_000u64), // microseconds
            (0xa1b2_c3d4, true, 5_000_007_000),
            (0xa1b2_3c4d, false, 5_000_000_007), // nanoseconds
            (0xa1b2_3c4d, true, 5_000_000_007),
        ] {
            let r = read(&pcap(magic, big, 5, 7, &data)).unwrap();
            assert_eq!(r.len(), 1);
            assert_eq!(
                (r[0].ts_ns, r[0].orig_len),
                (want, 60),
                "{magic:#x} big {big}"
            );
            assert_eq!(r[0].data, data);
        }
        // pcapng: microseconds by default, nanoseconds with if_tsresol 9.
        let r = read(&pcapng(None, 1_000_000, &data)).unwrap();
        assert_eq!(r[0].ts_ns, 1_000_000_000);
        let r = read(&pcapng(Some(9), 1_000_000, &data)).unwrap();
        assert_eq!(r[0].ts_ns, 1_000_000);
        assert_eq!(r[0].data, data);
        // A power-of-two resolution is refused, not misread.
        assert_eq!(
            read(&pcapng(Some(0x80 | 10), 1, &data)).err(),
            Some(DocaError::NOT_SUPPORTED)
        );
    }
}
