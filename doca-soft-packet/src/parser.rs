//! Packet parser for classification: Ethernet (up to two VLAN tags), IPv4, IPv6 (fixed
//! header), UDP, TCP, ICMP, ESP, the RoCE v2 BTH; tunnels (VXLAN and VXLAN-GPE, GENEVE base
//! header, GRE with its optional words, GTP-U with its extension headers, IP in IP) and the
//! headers they carry.
//!
//! Total: any byte string gives a [`Parsed`] or [`Malformed`], never a panic. Only the outer
//! headers decide `Malformed`: a tunnel or inner header that does not parse leaves the frame
//! with fewer headers (no inner layer), as a NIC parser stops where it stops understanding.
//! Reads fields in place; no allocation.

/// The frame's outer headers are truncated or inconsistent.
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
    /// Traffic class.
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Payload length.
    pub payload_len: u16,
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
        /// Identifier (bytes 4..6, echo messages), 0 when the message is shorter.
        ident: u16,
        /// Whether this is ICMPv6.
        v6: bool,
    },
    /// ESP.
    Esp {
        /// Security parameters index.
        spi: u32,
        /// Sequence number.
        sn: u32,
    },
}

/// The headers of one layer (the outer one, or the one a tunnel carries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headers {
    /// Whether the layer starts with an Ethernet header (an inner layer of GTP-U, GRE-IP
    /// or IP in IP does not).
    pub has_eth: bool,
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Ether type after the VLAN tags (for a layer without Ethernet: 0x0800 or 0x86dd).
    pub eth_type: u16,
    /// VLAN TCIs (outer first); `vlan_count` of them are valid.
    pub vlan_tci: [u16; 2],
    /// Number of VLAN tags (0..=2).
    pub vlan_count: u8,
    /// L3 header.
    pub l3: L3,
    /// L4 header.
    pub l4: L4,
    /// Offset of the Ethernet header (or of the L3 header when there is none).
    pub l2_off: u16,
    /// Offset of the L3 header (0: none).
    pub l3_off: u16,
    /// Offset of the L4 header (0: none).
    pub l4_off: u16,
    /// Bytes of the L3 packet per its own length field (IPv4 total length, IPv6 40 +
    /// payload length).
    pub l3_len: u16,
    /// IPv4 fragment (more-fragments flag or a non-zero offset).
    pub fragmented: bool,
    /// The RoCE v2 base transport header (UDP to port 4791), when present.
    pub bth: Option<[u8; 12]>,
}

/// A tunnel header between the outer and the inner layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tunnel {
    /// No tunnel.
    None,
    /// VXLAN (UDP 4789) or VXLAN-GPE (UDP 4790): the 8 header bytes.
    Vxlan {
        /// Whether this is VXLAN-GPE.
        gpe: bool,
        /// The header as received.
        hdr: [u8; 8],
    },
    /// GRE (IP protocol 47).
    Gre {
        /// Protocol type of the payload.
        protocol: u16,
        /// The key word, when the K bit is set.
        key: Option<u32>,
    },
    /// GTP-U (UDP 2152).
    Gtpu {
        /// Tunnel endpoint id.
        teid: u32,
        /// Next extension header type (0: none).
        next_ext: u8,
        /// QFI of a PDU session container extension (0: none).
        qfi: u8,
    },
    /// ESP (IP protocol 50); the payload is encrypted, so no inner layer.
    Esp {
        /// Security parameters index.
        spi: u32,
        /// Sequence number.
        sn: u32,
    },
    /// GENEVE (UDP 6081): the 8 base-header bytes (options are not parsed).
    Geneve {
        /// The base header as received.
        hdr: [u8; 8],
    },
    /// IPv4 or IPv6 carried directly in IP (protocol 4 or 41).
    IpInIp,
}

/// The parsed headers of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The outer headers.
    pub outer: Headers,
    /// The tunnel, if any.
    pub tun: Tunnel,
    /// The headers the tunnel carries, when they parse.
    pub inner: Option<Headers>,
    /// Offset of the innermost L4 payload in the frame (0 when there is no L4 header).
    pub payload_offset: usize,
}

const ETH_HDR: usize = 14;
const ETH_P_IPV4: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
const ETH_P_VLAN: u16 = 0x8100;
const ETH_P_QINQ: u16 = 0x88a8;
const ETH_P_TEB: u16 = 0x6558;
const PROTO_ICMP: u8 = 1;
const PROTO_IPIP4: u8 = 4;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const PROTO_IPIP6: u8 = 41;
const PROTO_GRE: u8 = 47;
const PROTO_ESP: u8 = 50;
const PROTO_ICMPV6: u8 = 58;
const PORT_VXLAN: u16 = 4789;
const PORT_VXLAN_GPE: u16 = 4790;
const PORT_GTPU: u16 = 2152;
const PORT_GENEVE: u16 = 6081;
const PORT_ROCE: u16 = 4791;

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

fn off16(at: usize) -> u16 {
    u16::try_from(at).unwrap_or(u16::MAX)
}

impl Headers {
    fn empty() -> Headers {
        Headers {
            has_eth: false,
            dst_mac: [0; 6],
            src_mac: [0; 6],
            eth_type: 0,
            vlan_tci: [0; 2],
            vlan_count: 0,
            l3: L3::None,
            l4: L4::None,
            l2_off: 0,
            l3_off: 0,
            l4_off: 0,
            l3_len: 0,
            fragmented: false,
            bth: None,
        }
    }

    /// The IP protocol of the L3 header (0 without IP).
    pub fn ip_proto(&self) -> u8 {
        match self.l3 {
            L3::V4(ip) => ip.next_proto,
            L3::V6(ip) => ip.next_proto,
            L3::None => 0,
        }
    }
}

/// Parses `frame`.
pub fn parse(frame: &[u8]) -> Result<Parsed, Malformed> {
    let (outer, end) = layer(frame, 0, true)?;
    let mut p = Parsed {
        outer,
        tun: Tunnel::None,
        inner: None,
        payload_offset: end,
    };
    // Everything past the outer layer is best effort: a failure leaves no inner layer.
    if let Some((tun, inner_at, inner_eth)) = tunnel(frame, &outer) {
        p.tun = tun;
        if let Some(at) = inner_at {
            let l3_end = usize::from(outer.l3_off) + usize::from(outer.l3_len);
            let bounded = frame.get(..l3_end.min(frame.len())).unwrap_or(frame);
            if let Ok((inner, end)) = layer(bounded, at, inner_eth) {
                p.inner = Some(inner);
                p.payload_offset = end;
            }
        }
    }
    Ok(p)
}

/// Parses one layer starting at `at`: Ethernet (when `eth`), VLAN tags, IP, L4. Returns
/// the headers and the offset of the L4 payload (0 when there is no L4 header).
fn layer(frame: &[u8], at: usize, eth: bool) -> Result<(Headers, usize), Malformed> {
    let mut h = Headers::empty();
    h.l2_off = off16(at);
    let mut off = at;
    if eth {
        if frame.len() < at + ETH_HDR {
            return Err(Malformed);
        }
        h.has_eth = true;
        h.dst_mac = array(frame, at)?;
        h.src_mac = array(frame, at + 6)?;
        h.eth_type = be16(frame, at + 12)?;
        off += ETH_HDR;
        while matches!(h.eth_type, ETH_P_VLAN | ETH_P_QINQ) {
            if h.vlan_count == 2 {
                return Err(Malformed); // more tags than we support
            }
            h.vlan_tci[usize::from(h.vlan_count)] = be16(frame, off)?;
            h.eth_type = be16(frame, off + 2)?;
            h.vlan_count += 1;
            off += 4;
        }
    } else {
        // An IP packet without Ethernet: its version says which.
        h.eth_type = match byte(frame, off)? >> 4 {
            4 => ETH_P_IPV4,
            6 => ETH_P_IPV6,
            _ => return Err(Malformed),
        };
    }
    let (proto, l4_off, first_fragment) = match h.eth_type {
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
            h.l3 = L3::V4(ip);
            h.l3_len = ip.total_len;
            h.fragmented = ip.flags_fragment_offset & 0x3fff != 0;
            (
                ip.next_proto,
                off + ihl,
                ip.flags_fragment_offset & 0x1fff == 0,
            )
        }
        ETH_P_IPV6 => {
            let w0 = be32(frame, off)?;
            if w0 >> 28 != 6 {
                return Err(Malformed);
            }
            let payload = be16(frame, off + 4)?;
            if frame.len() < off + 40 + usize::from(payload) {
                return Err(Malformed);
            }
            let ip = Ipv6 {
                traffic_class: (w0 >> 20) as u8,
                flow_label: w0 & 0x000f_ffff,
                payload_len: payload,
                next_proto: byte(frame, off + 6)?,
                hop_limit: byte(frame, off + 7)?,
                src: array(frame, off + 8)?,
                dst: array(frame, off + 24)?,
            };
            h.l3 = L3::V6(ip);
            h.l3_len = payload.saturating_add(40);
            (ip.next_proto, off + 40, true)
        }
        _ => return Ok((h, 0)),
    };
    h.l3_off = off16(off);
    if !first_fragment {
        return Ok((h, 0));
    }
    let payload = match proto {
        PROTO_UDP => {
            let dst = be16(frame, l4_off + 2)?;
            h.l4 = L4::Udp {
                src: be16(frame, l4_off)?,
                dst,
            };
            let _len = be16(frame, l4_off + 4)?;
            let _csum = be16(frame, l4_off + 6)?;
            if dst == PORT_ROCE {
                h.bth = array(frame, l4_off + 8).ok();
            }
            l4_off + 8
        }
        PROTO_TCP => {
            let data_offset = byte(frame, l4_off + 12)?;
            let hdr = usize::from(data_offset >> 4) * 4;
            if hdr < 20 || frame.len() < l4_off + hdr {
                return Err(Malformed);
            }
            h.l4 = L4::Tcp {
                src: be16(frame, l4_off)?,
                dst: be16(frame, l4_off + 2)?,
                seq: be32(frame, l4_off + 4)?,
                ack: be32(frame, l4_off + 8)?,
                data_offset,
                flags: byte(frame, l4_off + 13)?,
            };
            l4_off + hdr
        }
        PROTO_ICMP | PROTO_ICMPV6 => {
            h.l4 = L4::Icmp {
                kind: byte(frame, l4_off)?,
                code: byte(frame, l4_off + 1)?,
                ident: be16(frame, l4_off + 4).unwrap_or(0),
                v6: proto == PROTO_ICMPV6,
            };
            let _csum = be16(frame, l4_off + 2)?;
            l4_off + 4
        }
        PROTO_ESP => {
            h.l4 = L4::Esp {
                spi: be32(frame, l4_off)?,
                sn: be32(frame, l4_off + 4)?,
            };
            l4_off + 8
        }
        _ => return Ok((h, 0)),
    };
    h.l4_off = off16(l4_off);
    Ok((h, payload))
}

/// The tunnel after the outer headers, where its inner layer starts (None: it carries no
/// headers we parse) and whether that layer has Ethernet.
fn tunnel(frame: &[u8], outer: &Headers) -> Option<(Tunnel, Option<usize>, bool)> {
    let l4 = usize::from(outer.l4_off);
    match outer.l4 {
        L4::Udp {
            dst: PORT_VXLAN | PORT_VXLAN_GPE,
            ..
        } if !outer.fragmented => {
            let hdr: [u8; 8] = array(frame, l4 + 8).ok()?;
            let gpe = matches!(
                outer.l4,
                L4::Udp {
                    dst: PORT_VXLAN_GPE,
                    ..
                }
            );
            let (at, eth) = if gpe {
                match hdr[3] {
                    1 | 2 => (Some(l4 + 16), false),
                    3 => (Some(l4 + 16), true),
                    _ => (None, false),
                }
            } else {
                (Some(l4 + 16), true)
            };
            Some((Tunnel::Vxlan { gpe, hdr }, at, eth))
        }
        L4::Udp {
            dst: PORT_GENEVE, ..
        } if !outer.fragmented => {
            let hdr: [u8; 8] = array(frame, l4 + 8).ok()?;
            let opt_len = usize::from(hdr[0] & 0x3f) * 4;
            let proto = u16::from_be_bytes([hdr[2], hdr[3]]);
            let at = l4 + 16 + opt_len;
            let inner = match proto {
                ETH_P_TEB => (Some(at), true),
                ETH_P_IPV4 | ETH_P_IPV6 => (Some(at), false),
                _ => (None, false),
            };
            Some((Tunnel::Geneve { hdr }, inner.0, inner.1))
        }
        L4::Udp { dst: PORT_GTPU, .. } if !outer.fragmented => gtpu(frame, l4 + 8),
        L4::Esp { spi, sn } => Some((Tunnel::Esp { spi, sn }, None, false)),
        _ if outer.fragmented => None,
        _ => match outer.ip_proto() {
            PROTO_GRE => gre(frame, usize::from(outer.l3_off), &outer.l3),
            PROTO_IPIP4 | PROTO_IPIP6 => {
                let at = ip_payload(&outer.l3, usize::from(outer.l3_off))?;
                Some((Tunnel::IpInIp, Some(at), false))
            }
            _ => None,
        },
    }
}

/// Where the payload of the L3 header at `off` starts.
fn ip_payload(l3: &L3, off: usize) -> Option<usize> {
    match l3 {
        L3::V4(ip) => Some(off + usize::from(ip.version_ihl & 0x0f) * 4),
        L3::V6(_) => Some(off + 40),
        L3::None => None,
    }
}

fn gre(frame: &[u8], l3_off: usize, l3: &L3) -> Option<(Tunnel, Option<usize>, bool)> {
    let at = ip_payload(l3, l3_off)?;
    let flags = be16(frame, at).ok()?;
    if flags & 0x0007 != 0 {
        return None; // version 1 (PPTP) and others: not parsed
    }
    let protocol = be16(frame, at + 2).ok()?;
    let mut next = at + 4;
    if flags & 0x8000 != 0 {
        next += 4; // checksum and reserved
    }
    let key = if flags & 0x2000 != 0 {
        let k = be32(frame, next).ok()?;
        next += 4;
        Some(k)
    } else {
        None
    };
    if flags & 0x1000 != 0 {
        next += 4; // sequence number
    }
    let inner = match protocol {
        ETH_P_TEB => (Some(next), true),
        ETH_P_IPV4 | ETH_P_IPV6 => (Some(next), false),
        _ => (None, false),
    };
    Some((Tunnel::Gre { protocol, key }, inner.0, inner.1))
}

fn gtpu(frame: &[u8], at: usize) -> Option<(Tunnel, Option<usize>, bool)> {
    let flags = byte(frame, at).ok()?;
    if flags >> 5 != 1 {
        return None; // not GTP version 1
    }
    let msg_type = byte(frame, at + 1).ok()?;
    let teid = be32(frame, at + 4).ok()?;
    let mut next = at + 8;
    let (mut next_ext, mut qfi) = (0u8, 0u8);
    if flags & 0x07 != 0 {
        // Sequence number, N-PDU number and the first extension type follow.
        next_ext = byte(frame, at + 11).ok()?;
        next += 4;
        let mut ext = next_ext;
        let mut guard = 0;
        while ext != 0 && guard < 8 {
            let len = usize::from(byte(frame, next).ok()?) * 4;
            if len == 0 {
                return None;
            }
            if ext == 0x85 {
                qfi = byte(frame, next + 2).ok()? & 0x3f;
            }
            ext = byte(frame, next + len - 1).ok()?;
            next += len;
            guard += 1;
        }
    }
    let tun = Tunnel::Gtpu {
        teid,
        next_ext,
        qfi,
    };
    // Only G-PDUs (type 255) carry user packets.
    let inner = (msg_type == 0xff).then_some(next);
    Some((tun, inner, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::*;

    #[test]
    fn parses_udp_tcp_icmp() {
        let f = udp4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 53, b"hello");
        let p = parse(&f).unwrap();
        assert_eq!(p.outer.eth_type, 0x0800);
        assert_eq!(p.outer.l4, L4::Udp { src: 1234, dst: 53 });
        assert_eq!((p.outer.l3_off, p.outer.l4_off), (14, 34));
        match p.outer.l3 {
            L3::V4(ip) => {
                assert_eq!(ip.src, 0x0a00_0001);
                assert_eq!(ip.next_proto, 17);
            }
            _ => panic!("not v4"),
        }
        assert_eq!(&f[p.payload_offset..], b"hello");
        assert_eq!(p.tun, Tunnel::None);
        assert!(p.inner.is_none());
        let t = parse(&tcp4([1, 1, 1, 1], [2, 2, 2, 2], 80, 4000, 0x12, b"")).unwrap();
        assert!(matches!(
            t.outer.l4,
            L4::Tcp {
                flags: 0x12,
                src: 80,
                dst: 4000,
                ..
            }
        ));
        let i = parse(&icmp4_echo([1, 1, 1, 1], [2, 2, 2, 2], b"x")).unwrap();
        assert!(matches!(
            i.outer.l4,
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
        assert_eq!(p.outer.vlan_count, 2);
        assert_eq!(p.outer.vlan_tci, [1, 2]);
        assert_eq!(p.outer.l4, L4::Udp { src: 1, dst: 2 });
        assert_eq!(p.outer.l3_off, 22);
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
        assert_eq!(parse(&frag).unwrap().outer.l4, L4::None);
        assert!(parse(&frag).unwrap().outer.fragmented);
        assert!(!parse(&f).unwrap().outer.fragmented);
        // Non-IP frames parse with no L3.
        let mut arp = f[..14].to_vec();
        arp[12] = 0x08;
        arp[13] = 0x06;
        assert_eq!(parse(&arp).unwrap().outer.l3, L3::None);
    }

    #[test]
    fn tunnels_and_inner_headers() {
        let inner = tcp4([192, 168, 0, 1], [192, 168, 0, 2], 1111, 80, 0x02, b"in");
        let v = vxlan4([10, 0, 0, 1], [10, 0, 0, 2], 0x12_3456, &inner);
        let p = parse(&v).unwrap();
        assert_eq!(
            p.outer.l4,
            L4::Udp {
                src: 49152,
                dst: 4789
            }
        );
        let Tunnel::Vxlan { gpe: false, hdr } = p.tun else {
            panic!("not vxlan: {:?}", p.tun)
        };
        assert_eq!(&hdr[4..7], &[0x12, 0x34, 0x56]);
        let i = p.inner.expect("inner layer");
        assert!(i.has_eth);
        assert_eq!(i.l2_off, 50);
        assert!(matches!(
            i.l4,
            L4::Tcp {
                src: 1111,
                dst: 80,
                flags: 0x02,
                ..
            }
        ));
        assert_eq!(&v[p.payload_offset..], b"in");

        let ip_only = &inner[14..];
        let g = gtpu4([10, 0, 0, 1], [10, 0, 0, 2], 0xdead_beef, ip_only);
        let p = parse(&g).unwrap();
        assert_eq!(
            p.tun,
            Tunnel::Gtpu {
                teid: 0xdead_beef,
                next_ext: 0,
                qfi: 0
            }
        );
        let i = p.inner.expect("inner IP");
        assert!(!i.has_eth);
        assert_eq!(i.eth_type, 0x0800);
        assert!(matches!(i.l3, L3::V4(ip) if ip.src == 0xc0a8_0001));

        let r = gre4([10, 0, 0, 1], [10, 0, 0, 2], Some(77), 0x0800, ip_only);
        let p = parse(&r).unwrap();
        assert_eq!(
            p.tun,
            Tunnel::Gre {
                protocol: 0x0800,
                key: Some(77)
            }
        );
        assert!(matches!(p.inner.unwrap().l4, L4::Tcp { dst: 80, .. }));

        // A broken inner layer leaves the frame parsed, without inner headers.
        let mut broken = v.clone();
        broken[50 + 14] = 0x47; // inner IPv4 IHL 7 > total header room
        broken[50 + 14 + 2] = 0;
        broken[50 + 14 + 3] = 1;
        let p = parse(&broken).unwrap();
        assert!(p.inner.is_none());
        assert!(matches!(p.tun, Tunnel::Vxlan { .. }));
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
        let inner = udp4([1, 2, 3, 4], [5, 6, 7, 8], 9, 10, &[0u8; 24]);
        let templates = [
            udp4([1, 2, 3, 4], [5, 6, 7, 8], 9, 10, &[0u8; 40]),
            tcp4([1, 2, 3, 4], [5, 6, 7, 8], 9, 10, 2, &[0u8; 40]),
            icmp4_echo([1, 2, 3, 4], [5, 6, 7, 8], &[0u8; 16]),
            vxlan4([1, 2, 3, 4], [5, 6, 7, 8], 5, &inner),
            gtpu4([1, 2, 3, 4], [5, 6, 7, 8], 5, &inner[14..]),
            gre4([1, 2, 3, 4], [5, 6, 7, 8], Some(1), 0x6558, &inner),
        ];
        let mut parsed_ok = 0;
        for i in 0..30_000 {
            let mut f = if i % 2 == 0 {
                let len = (next() % 200) as usize;
                (0..len).map(|_| next() as u8).collect::<Vec<u8>>()
            } else {
                templates[i % templates.len()].clone()
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
