//! Packet parser for classification: Ethernet (up to two VLAN tags), IPv4, IPv6 (fixed
//! header), UDP, TCP, ICMP. Total: any byte string gives a [`Parsed`] or [`Malformed`],
//! never a panic. Reads fields in place; no allocation.

/// The frame's headers are truncated or inconsistent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed;

/// Layer-3 header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L3 {
    /// Not IP (ARP, ...).
    None,
    /// IPv4.
    V4(Ipv4),
    /// IPv6 (fixed header only; extension headers are not walked).
    V6(Ipv6),
}

/// IPv4 header fields (addresses in host order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Version and IHL byte.
    pub version_ihl: u8,
    /// DSCP/ECN byte.
    pub dscp_ecn: u8,
    /// Total length.
    pub total_len: u16,
    /// Identification.
    pub identification: u16,
    /// Flags and fragment offset.
    pub flags_fragment_offset: u16,
    /// Protocol.
    pub next_proto: u8,
    /// TTL.
    pub ttl: u8,
}

/// IPv6 fixed-header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6 {
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Next header.
    pub next_proto: u8,
    /// Hop limit.
    pub hop_limit: u8,
}

/// Layer-4 header fields (ports in host order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L4 {
    /// No L4 header parsed (other protocol, or a non-first fragment).
    None,
    /// UDP.
    Udp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// TCP.
    Tcp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
        /// Flag byte (FIN=1, SYN=2, RST=4, PSH=8, ACK=16, ...).
        flags: u8,
        /// Data offset byte (high nibble = header words).
        data_offset: u8,
        /// Sequence number.
        seq: u32,
        /// Acknowledgement number.
        ack: u32,
    },
    /// ICMP (v4) or ICMPv6.
    Icmp {
        /// Type.
        kind: u8,
        /// Code.
        code: u8,
        /// Whether this is ICMPv6.
        v6: bool,
    },
}

/// The parsed headers of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Ether type after the VLAN tags.
    pub eth_type: u16,
    /// VLAN TCIs (outer first); `vlan_count` of them are valid.
    pub vlan_tci: [u16; 2],
    /// Number of VLAN tags (0..=2).
    pub vlan_count: u8,
    /// L3 header.
    pub l3: L3,
    /// L4 header.
    pub l4: L4,
    /// Offset of the L4 payload in the frame (0 when there is no L4 header).
    pub payload_offset: usize,
    /// IPv4 fragment (more-fragments flag or a non-zero offset).
    pub ip_fragmented: bool,
}

const ETH_HDR: usize = 14;
const ETH_P_IPV4: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
const ETH_P_VLAN: u16 = 0x8100;
const ETH_P_QINQ: u16 = 0x88a8;
const PROTO_ICMP: u8 = 1;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const PROTO_ICMPV6: u8 = 58;

fn be16(b: &[u8], at: usize) -> Result<u16, Malformed> {
    match b.get(at..at + 2) {
        Some(s) => Ok(u16::from_be_bytes([s[0], s[1]])),
        None => Err(Malformed),
    }
}

fn be32(b: &[u8], at: usize) -> Result<u32, Malformed> {
    match b.get(at..at + 4) {
        Some(s) => Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]])),
        None => Err(Malformed),
    }
}

fn byte(b: &[u8], at: usize) -> Result<u8, Malformed> {
    b.get(at).copied().ok_or(Malformed)
}

fn array<const N: usize>(b: &[u8], at: usize) -> Result<[u8; N], Malformed> {
    b.get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .ok_or(Malformed)
}

/// Parses `frame`.
pub fn parse(frame: &[u8]) -> Result<Parsed, Malformed> {
    if frame.len() < ETH_HDR {
        return Err(Malformed);
    }
    let mut p = Parsed {
        dst_mac: array(frame, 0)?,
        src_mac: array(frame, 6)?,
        eth_type: be16(frame, 12)?,
        vlan_tci: [0; 2],
        vlan_count: 0,
        l3: L3::None,
        l4: L4::None,
        payload_offset: 0,
        ip_fragmented: false,
    };
    let mut off = ETH_HDR;
    while matches!(p.eth_type, ETH_P_VLAN | ETH_P_QINQ) {
        if p.vlan_count == 2 {
            return Err(Malformed); // more tags than we support
        }
        p.vlan_tci[usize::from(p.vlan_count)] = be16(frame, off)?;
        p.eth_type = be16(frame, off + 2)?;
        p.vlan_count += 1;
        off += 4;
    }
    let (proto, l4_off, first_fragment) = match p.eth_type {
        ETH_P_IPV4 => {
            let vihl = byte(frame, off)?;
            let ihl = usize::from(vihl & 0x0f) * 4;
            if vihl >> 4 != 4 || ihl < 20 {
                return Err(Malformed);
            }
            let ip = Ipv4 {
                version_ihl: vihl,
                dscp_ecn: byte(frame, off + 1)?,
                total_len: be16(frame, off + 2)?,
                identification: be16(frame, off + 4)?,
                flags_fragment_offset: be16(frame, off + 6)?,
                ttl: byte(frame, off + 8)?,
                next_proto: byte(frame, off + 9)?,
                src: be32(frame, off + 12)?,
                dst: be32(frame, off + 16)?,
            };
            let total = usize::from(ip.total_len);
            if total < ihl || frame.len() < off + total {
                return Err(Malformed);
            }
            p.l3 = L3::V4(ip);
            p.ip_fragmented = ip.flags_fragment_offset & 0x3fff != 0;
            (
                ip.next_proto,
                off + ihl,
                ip.flags_fragment_offset & 0x1fff == 0,
            )
        }
        ETH_P_IPV6 => {
            if byte(frame, off)? >> 4 != 6 {
                return Err(Malformed);
            }
            let payload = usize::from(be16(frame, off + 4)?);
            if frame.len() < off + 40 + payload {
                return Err(Malformed);
            }
            let ip = Ipv6 {
                next_proto: byte(frame, off + 6)?,
                hop_limit: byte(frame, off + 7)?,
                src: array(frame, off + 8)?,
                dst: array(frame, off + 24)?,
            };
            p.l3 = L3::V6(ip);
            (ip.next_proto, off + 40, true)
        }
        _ => return Ok(p),
    };
    if !first_fragment {
        return Ok(p);
    }
    match proto {
        PROTO_UDP => {
            p.l4 = L4::Udp {
                src: be16(frame, l4_off)?,
                dst: be16(frame, l4_off + 2)?,
            };
            let _len = be16(frame, l4_off + 4)?;
            p.payload_offset = l4_off + 8;
        }
        PROTO_TCP => {
            let data_offset = byte(frame, l4_off + 12)?;
            let hdr = usize::from(data_offset >> 4) * 4;
            if hdr < 20 || frame.len() < l4_off + hdr {
                return Err(Malformed);
            }
            p.l4 = L4::Tcp {
                src: be16(frame, l4_off)?,
                dst: be16(frame, l4_off + 2)?,
                seq: be32(frame, l4_off + 4)?,
                ack: be32(frame, l4_off + 8)?,
                data_offset,
                flags: byte(frame, l4_off + 13)?,
            };
            p.payload_offset = l4_off + hdr;
        }
        PROTO_ICMP | PROTO_ICMPV6 => {
            p.l4 = L4::Icmp {
                kind: byte(frame, l4_off)?,
                code: byte(frame, l4_off + 1)?,
                v6: proto == PROTO_ICMPV6,
            };
            let _csum = be16(frame, l4_off + 2)?;
            p.payload_offset = l4_off + 4;
        }
        _ => {}
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::frames::*;

    #[test]
    fn parses_udp_tcp_icmp() {
        let f = udp4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 53, b"hello");
        let p = parse(&f).unwrap();
        assert_eq!(p.eth_type, 0x0800);
        assert_eq!(p.l4, L4::Udp { src: 1234, dst: 53 });
        match p.l3 {
            L3::V4(ip) => {
                assert_eq!(ip.src, 0x0a00_0001);
                assert_eq!(ip.next_proto, 17);
            }
            _ => panic!("not v4"),
        }
        assert_eq!(&f[p.payload_offset..], b"hello");
        let t = parse(&tcp4([1, 1, 1, 1], [2, 2, 2, 2], 80, 4000, 0x12, b"")).unwrap();
        assert!(matches!(
            t.l4,
            L4::Tcp {
                flags: 0x12,
                src: 80,
                dst: 4000,
                ..
            }
        ));
        let i = parse(&icmp4_echo([1, 1, 1, 1], [2, 2, 2, 2], b"x")).unwrap();
        assert!(matches!(
            i.l4,
            L4::Icmp {
                kind: 8,
                v6: false,
                ..
            }
        ));
    }

    #[test]
    fn vlan_tags_and_limits() {
        let f = udp4([1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"");
        let tagged = |n: usize| {
            let mut v = f[..12].to_vec();
            for i in 0..n {
                v.extend_from_slice(&[0x81, 0x00, 0x00, i as u8 + 1]);
            }
            v.extend_from_slice(&f[12..]);
            v
        };
        let p = parse(&tagged(2)).unwrap();
        assert_eq!(p.vlan_count, 2);
        assert_eq!(p.vlan_tci, [1, 2]);
        assert_eq!(p.l4, L4::Udp { src: 1, dst: 2 });
        assert_eq!(parse(&tagged(3)), Err(Malformed));
    }

    #[test]
    fn truncation_and_bad_headers_are_malformed() {
        let f = udp4([1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"abcd");
        for n in 0..f.len() {
            assert_eq!(parse(&f[..n]), Err(Malformed), "prefix {n}");
        }
        let mut bad_ihl = f.clone();
        bad_ihl[14] = 0x44;
        assert_eq!(parse(&bad_ihl), Err(Malformed));
        // A non-first fragment has no L4 header to read.
        let mut frag = f.clone();
        frag[20] = 0x00;
        frag[21] = 0x10;
        assert_eq!(parse(&frag).unwrap().l4, L4::None);
        assert!(parse(&frag).unwrap().ip_fragmented);
        assert!(!parse(&f).unwrap().ip_fragmented);
        // Non-IP frames parse with no L3.
        let mut arp = f[..14].to_vec();
        arp[12] = 0x08;
        arp[13] = 0x06;
        assert_eq!(parse(&arp).unwrap().l3, L3::None);
    }

    /// Seeded random and truncated frames: the parser must return, never panic.
    #[test]
    fn fuzz_random_and_truncated_frames_never_panic() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let templates = [
            udp4([1, 2, 3, 4], [5, 6, 7, 8], 9, 10, &[0u8; 40]),
            tcp4([1, 2, 3, 4], [5, 6, 7, 8], 9, 10, 2, &[0u8; 40]),
            icmp4_echo([1, 2, 3, 4], [5, 6, 7, 8], &[0u8; 16]),
        ];
        let mut parsed_ok = 0;
        for i in 0..20_000 {
            let mut f = if i % 2 == 0 {
                let len = (next() % 200) as usize;
                (0..len).map(|_| next() as u8).collect::<Vec<u8>>()
            } else {
                templates[i % 3].clone()
            };
            // Mutate a few bytes, then cut at a random length.
            for _ in 0..(next() % 4) {
                if !f.is_empty() {
                    let at = (next() as usize) % f.len();
                    f[at] = next() as u8;
                }
            }
            let cut = if f.is_empty() {
                0
            } else {
                (next() as usize) % (f.len() + 1)
            };
            if parse(&f[..cut]).is_ok() {
                parsed_ok += 1;
            }
            let _ = parse(&f);
        }
        // Some inputs must parse, or the test would not exercise the deep paths.
        assert!(parsed_ok > 0);
    }
}
