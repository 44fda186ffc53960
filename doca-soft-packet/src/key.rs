//! The match key of a frame: what the classifier compares pipe entries against.
//!
//! A `Key` is a byte image with the layout of DOCA Flow's `struct doca_flow_match`
//! (536 bytes: programmable metadata, parser metadata, outer headers, tunnel, inner
//! headers), filled from the parsed frame, plus a set of [`props`] bits saying which
//! headers the frame has. A compiled entry is a list of 64-bit (mask, value) words over this
//! image and the props it needs, so one entry costs a few AND-compares per frame whatever
//! fields it uses. The image keeps the C struct's byte order: big-endian header fields,
//! native-endian enums and `port_id`.
//!
//! Which union member of the image holds a header depends on the frame (an IPv4 frame fills
//! the `ip4` view, an IPv6 frame the `ip6` view at the same offsets); the props tell an
//! entry whether the view it was written for is the one present.
//!
//! The layout constants here are the key's own; `flow/` asserts that they equal the offsets
//! of the C structs.

use super::checksum::internet_checksum;
use super::parser::{Headers, Parsed, Tunnel, L3, L4};

/// Bytes of the key image (`sizeof(struct doca_flow_match)`).
pub const KEY_BYTES: usize = 536;
/// 64-bit words of the key image.
pub(crate) const KEY_WORDS: usize = KEY_BYTES / 8;

/// Offsets in the key image (those of `struct doca_flow_match`).
pub mod off {
    /// `meta.pkt_meta`.
    pub const META_PKT: usize = 0;
    /// `meta.u32[0]`.
    pub const META_U32: usize = 4;
    /// `parser_meta`.
    pub const PM: usize = 44;
    /// `parser_meta.port_id` (u16, host order).
    pub const PM_PORT_ID: usize = 44;
    /// `parser_meta.random`.
    pub const PM_RANDOM: usize = 46;
    /// `parser_meta.ipsec_syndrome`.
    pub const PM_IPSEC_SYNDROME: usize = 48;
    /// `parser_meta.ipsec_ar_syndrome`.
    pub const PM_IPSEC_AR_SYNDROME: usize = 49;
    /// `parser_meta.psp_syndrome`.
    pub const PM_PSP_SYNDROME: usize = 50;
    /// `parser_meta.meter_color`.
    pub const PM_METER_COLOR: usize = 51;
    /// `parser_meta.outer_l2_type` (u32 enum).
    pub const PM_OUTER_L2: usize = 52;
    /// `parser_meta.outer_l3_type`.
    pub const PM_OUTER_L3: usize = 56;
    /// `parser_meta.outer_l4_type`.
    pub const PM_OUTER_L4: usize = 60;
    /// `parser_meta.inner_l2_type`.
    pub const PM_INNER_L2: usize = 64;
    /// `parser_meta.inner_l3_type`.
    pub const PM_INNER_L3: usize = 68;
    /// `parser_meta.inner_l4_type`.
    pub const PM_INNER_L4: usize = 72;
    /// `parser_meta.outer_ip_fragmented`; the flag bytes follow in struct order:
    /// inner_ip_fragmented, outer_l3_ok, outer_ip4_checksum_ok, outer_l4_ok,
    /// outer_l4_checksum_ok, inner_l3_ok, inner_ip4_checksum_ok, inner_l4_ok,
    /// inner_l4_checksum_ok.
    pub const PM_OUTER_FRAG: usize = 76;
    /// `parser_meta.inner_ip_fragmented`.
    pub const PM_INNER_FRAG: usize = 77;
    /// `parser_meta.outer_l3_ok`.
    pub const PM_OUTER_L3_OK: usize = 78;
    /// `parser_meta.outer_l4_checksum_ok`.
    pub const PM_OUTER_L4_CSUM_OK: usize = 81;
    /// `parser_meta.inner_l3_ok`.
    pub const PM_INNER_L3_OK: usize = 82;
    /// `parser_meta.inner_l4_checksum_ok`.
    pub const PM_INNER_L4_CSUM_OK: usize = 85;
    /// `outer` (a `doca_flow_header_format`).
    pub const OUTER: usize = 88;
    /// `tun`.
    pub const TUN: usize = 176;
    /// `inner`.
    pub const INNER: usize = 448;

    /// Offsets inside a `doca_flow_header_format`.
    pub mod hf {
        /// `eth.src_mac`.
        pub const ETH_SRC: usize = 0;
        /// `eth.dst_mac`.
        pub const ETH_DST: usize = 6;
        /// `eth.type`.
        pub const ETH_TYPE: usize = 12;
        /// `l2_valid_headers` (u16, host order).
        pub const L2_VALID: usize = 14;
        /// `eth_vlan[0].tci`; `eth_vlan[1]` follows.
        pub const VLAN: usize = 16;
        /// `l3_type` (u32 enum).
        pub const L3_TYPE: usize = 20;
        /// The `ip4`/`ip6` union.
        pub const IP: usize = 24;
        /// `l4_type_ext` (u32 enum).
        pub const L4_TYPE: usize = 68;
        /// The L4 union (`icmp`, `udp`, `tcp`, `transport`, `roce_v2`).
        pub const L4: usize = 72;
        /// Size of the struct.
        pub const SIZE: usize = 88;
    }

    /// Offsets inside `struct doca_flow_tun`.
    pub mod tun {
        /// `type` (u32 enum).
        pub const TYPE: usize = 0;
        /// The union of tunnel views.
        pub const U: usize = 8;
    }
}

/// Header and tunnel presence bits of a `Key`. A layer's bits are `OUTER + x` or
/// `INNER + x` for x in the per-layer list.
pub mod props {
    /// Shift of the outer layer's bits.
    pub const OUTER: u32 = 0;
    /// Shift of the inner layer's bits.
    pub const INNER: u32 = 12;
    /// IPv4 header.
    pub const IP4: u32 = 0;
    /// IPv6 header.
    pub const IP6: u32 = 1;
    /// TCP header.
    pub const TCP: u32 = 2;
    /// UDP header.
    pub const UDP: u32 = 3;
    /// ICMP header.
    pub const ICMP: u32 = 4;
    /// ICMPv6 header.
    pub const ICMP6: u32 = 5;
    /// ESP header.
    pub(crate) const ESP: u32 = 6;
    /// RoCE v2 BTH after UDP.
    pub const ROCE: u32 = 7;
    /// TCP or UDP ports.
    pub const PORTS: u32 = 8;
    /// An Ethernet header.
    pub const ETH: u32 = 9;
    /// At least one VLAN tag.
    pub const VLAN0: u32 = 10;
    /// Two VLAN tags.
    pub const VLAN1: u32 = 11;
    /// A VXLAN tunnel (bit number).
    pub const TUN_VXLAN: u32 = 24;
    /// A VXLAN-GPE tunnel.
    pub const TUN_VXLAN_GPE: u32 = 25;
    /// A GRE tunnel.
    pub const TUN_GRE: u32 = 26;
    /// A GTP-U tunnel.
    pub const TUN_GTPU: u32 = 27;
    /// An ESP "tunnel" (the ESP header).
    pub const TUN_ESP: u32 = 28;
    /// A GENEVE tunnel.
    pub const TUN_GENEVE: u32 = 29;
    /// IP in IP.
    pub const TUN_IPIP: u32 = 30;

    /// The bit of `x` in the layer shifted by `layer`.
    pub const fn bit(layer: u32, x: u32) -> u32 {
        1 << (layer + x)
    }

    /// The bit of tunnel property `x`.
    pub const fn tun(x: u32) -> u32 {
        1 << x
    }
}

/// `doca_flow_l3_meta` values.
const L3_META_IPV4: u32 = 1;
const L3_META_IPV6: u32 = 2;
/// `doca_flow_l4_meta` values.
const L4_META_TCP: u32 = 1;
const L4_META_UDP: u32 = 2;
const L4_META_ICMP: u32 = 3;
const L4_META_ESP: u32 = 4;
/// `doca_flow_l2_meta` values.
const L2_META_MULTI_VLAN: u32 = 1;
const L2_META_SINGLE_VLAN: u32 = 2;
/// `doca_flow_tun_type` values.
const TUN_VXLAN: u32 = 1;
const TUN_GTPU: u32 = 2;
const TUN_GRE: u32 = 3;
const TUN_ESP: u32 = 4;
const TUN_GENEVE: u32 = 6;
const TUN_IP_IN_IP: u32 = 8;

/// The match key of one frame.
#[derive(Clone)]
#[repr(C, align(8))]
pub(crate) struct Key {
    bytes: [u8; KEY_BYTES],
    /// [`props`] bits of the frame.
    pub props: u32,
    /// Whether the L4 checksum flags have been computed (they cost a pass over the payload,
    /// so they are filled only for pipes that match on them).
    l4_csum_done: bool,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("props", &format_args!("{:#x}", self.props))
            .finish_non_exhaustive()
    }
}

impl Key {
    /// The key of `pkt` (parsed from `frame`) arriving on Flow port `port_id`, with zero
    /// metadata.
    pub(crate) fn new(pkt: &Parsed, frame: &[u8], port_id: u16) -> Key {
        let mut k = Key {
            bytes: [0; KEY_BYTES],
            props: 0,
            l4_csum_done: false,
        };
        k.fill(pkt, frame, port_id);
        k
    }

    /// Refills everything but the metadata from a (re-parsed) frame.
    pub(crate) fn refill(&mut self, pkt: &Parsed, frame: &[u8]) {
        let port = self.u16_at(off::PM_PORT_ID);
        self.bytes[off::PM..].fill(0);
        self.props = 0;
        self.l4_csum_done = false;
        self.fill(pkt, frame, port);
    }

    fn fill(&mut self, pkt: &Parsed, frame: &[u8], port_id: u16) {
        self.put(off::PM_PORT_ID, &port_id.to_ne_bytes());
        self.layer(
            &pkt.outer,
            frame,
            off::OUTER,
            props::OUTER,
            off::PM_OUTER_L2,
        );
        self.put_u8(off::PM_OUTER_FRAG, u8::from(pkt.outer.fragmented));
        if let Some(inner) = &pkt.inner {
            self.layer(inner, frame, off::INNER, props::INNER, off::PM_INNER_L2);
            self.put_u8(off::PM_INNER_FRAG, u8::from(inner.fragmented));
        }
        self.tunnel(&pkt.tun);
    }

    /// The bytes of the image.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> &[u8; KEY_BYTES] {
        &self.bytes
    }

    /// Word `i` of the image (native order, as compiled entries read theirs).
    #[inline]
    pub(crate) fn word(&self, i: usize) -> u64 {
        let b = &self.bytes[i * 8..i * 8 + 8];
        u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }

    /// Sets the bits of `mask` in word `i` to `value`'s (metadata written by actions).
    pub(crate) fn set_word(&mut self, i: usize, mask: u64, value: u64) {
        let w = (self.word(i) & !mask) | (value & mask);
        self.bytes[i * 8..i * 8 + 8].copy_from_slice(&w.to_ne_bytes());
    }

    /// Adds `add` to the big-endian 32-bit metadata word at byte offset `at` (wrapping).
    pub(crate) fn add_be32(&mut self, at: usize, add: u32) {
        let v = u32::from_be_bytes(self.bytes[at..at + 4].try_into().unwrap_or([0; 4]));
        self.put(at, &v.wrapping_add(add).to_be_bytes());
    }

    /// Fills the L4 checksum flags (a pass over each L4 segment) unless done already.
    pub(crate) fn ensure_l4_checksums(&mut self, pkt: &Parsed, frame: &[u8]) {
        if self.l4_csum_done {
            return;
        }
        self.l4_csum_done = true;
        self.put_u8(
            off::PM_OUTER_L4_CSUM_OK,
            u8::from(l4_checksum_ok(&pkt.outer, frame)),
        );
        if let Some(inner) = &pkt.inner {
            self.put_u8(
                off::PM_INNER_L4_CSUM_OK,
                u8::from(l4_checksum_ok(inner, frame)),
            );
        }
    }

    fn u16_at(&self, at: usize) -> u16 {
        u16::from_ne_bytes([self.bytes[at], self.bytes[at + 1]])
    }

    fn put(&mut self, at: usize, v: &[u8]) {
        self.bytes[at..at + v.len()].copy_from_slice(v);
    }

    fn put_u8(&mut self, at: usize, v: u8) {
        self.bytes[at] = v;
    }

    fn put_u32(&mut self, at: usize, v: u32) {
        self.put(at, &v.to_ne_bytes());
    }

    /// Fills one header layer at `base` and its parser metadata (`pm`: the layer's
    /// `*_l2_type`; l3/l4 types and the ok flags follow at fixed distances).
    fn layer(&mut self, h: &Headers, frame: &[u8], base: usize, layer: u32, pm: usize) {
        use off::hf;
        let bit = |x| props::bit(layer, x);
        if h.has_eth {
            self.props |= bit(props::ETH);
            self.put(base + hf::ETH_SRC, &h.src_mac);
            self.put(base + hf::ETH_DST, &h.dst_mac);
        }
        self.put(base + hf::ETH_TYPE, &h.eth_type.to_be_bytes());
        let mut valid = 0u16;
        for i in 0..usize::from(h.vlan_count) {
            valid |= 1 << i;
            self.props |= bit(props::VLAN0 + i as u32);
            self.put(base + hf::VLAN + 2 * i, &h.vlan_tci[i].to_be_bytes());
        }
        self.put(base + hf::L2_VALID, &valid.to_ne_bytes());
        let l2_meta = match h.vlan_count {
            0 => 0,
            1 => L2_META_SINGLE_VLAN,
            _ => L2_META_MULTI_VLAN,
        };
        self.put_u32(pm, l2_meta);
        // Parser-metadata flag bytes of this layer: l3_ok, ip4_checksum_ok, l4_ok.
        let flags = if layer == props::OUTER {
            off::PM_OUTER_L3_OK
        } else {
            off::PM_INNER_L3_OK
        };
        let ip = base + hf::IP;
        match h.l3 {
            L3::V4(v4) => {
                self.props |= bit(props::IP4);
                self.put_u32(pm + 4, L3_META_IPV4);
                self.put(ip, &v4.src.to_be_bytes());
                self.put(ip + 4, &v4.dst.to_be_bytes());
                self.put_u8(ip + 8, v4.version_ihl);
                self.put_u8(ip + 9, v4.dscp_ecn);
                self.put(ip + 10, &v4.total_len.to_be_bytes());
                self.put(ip + 12, &v4.identification.to_be_bytes());
                self.put(ip + 14, &v4.flags_fragment_offset.to_be_bytes());
                self.put_u8(ip + 16, v4.next_proto);
                self.put_u8(ip + 17, v4.ttl);
                self.put_u8(flags, 1);
                let l3 = usize::from(h.l3_off);
                let ihl = usize::from(v4.version_ihl & 0x0f) * 4;
                let ok = frame
                    .get(l3..l3 + ihl)
                    .is_some_and(|hdr| internet_checksum(hdr) == 0);
                self.put_u8(flags + 1, u8::from(ok));
            }
            L3::V6(v6) => {
                self.props |= bit(props::IP6);
                self.put_u32(pm + 4, L3_META_IPV6);
                self.put(ip, &v6.src);
                self.put(ip + 16, &v6.dst);
                self.put_u8(ip + 32, v6.traffic_class);
                self.put(ip + 36, &v6.flow_label.to_be_bytes());
                self.put(ip + 40, &v6.payload_len.to_be_bytes());
                self.put_u8(ip + 42, v6.next_proto);
                self.put_u8(ip + 43, v6.hop_limit);
                self.put_u8(flags, 1);
            }
            L3::None => {}
        }
        let l4 = base + hf::L4;
        let l4_meta = match h.l4 {
            L4::Udp { src, dst } => {
                self.props |= bit(props::UDP) | bit(props::PORTS);
                self.put(l4, &src.to_be_bytes());
                self.put(l4 + 2, &dst.to_be_bytes());
                if let Some(bth) = h.bth {
                    self.props |= bit(props::ROCE);
                    self.put(l4 + 4, &bth);
                }
                L4_META_UDP
            }
            L4::Tcp {
                src,
                dst,
                flags: tcp_flags,
                data_offset,
                seq,
                ack,
            } => {
                self.props |= bit(props::TCP) | bit(props::PORTS);
                self.put(l4, &src.to_be_bytes());
                self.put(l4 + 2, &dst.to_be_bytes());
                self.put_u8(l4 + 4, data_offset);
                self.put_u8(l4 + 5, tcp_flags);
                self.put(l4 + 8, &seq.to_be_bytes());
                self.put(l4 + 12, &ack.to_be_bytes());
                L4_META_TCP
            }
            L4::Icmp {
                kind,
                code,
                ident,
                v6,
            } => {
                self.props |= bit(if v6 { props::ICMP6 } else { props::ICMP });
                self.put_u8(l4, kind);
                self.put_u8(l4 + 1, code);
                self.put(l4 + 2, &ident.to_be_bytes());
                L4_META_ICMP
            }
            L4::Esp { .. } => {
                self.props |= bit(props::ESP);
                L4_META_ESP
            }
            L4::None => 0,
        };
        self.put_u32(pm + 8, l4_meta);
        if l4_meta != 0 {
            self.put_u8(flags + 2, 1);
        }
    }

    fn tunnel(&mut self, t: &Tunnel) {
        let base = off::TUN;
        let u = base + off::tun::U;
        let (kind, bit) = match *t {
            Tunnel::None => return,
            Tunnel::Vxlan { gpe, hdr } => {
                // vxlan_type (STANDARD 0 / GPE 1), GPE flags and next protocol (or the GBP
                // group policy id), the VNI word, the last reserved byte.
                self.put_u32(u, u32::from(gpe));
                if gpe {
                    self.put_u8(u + 4, hdr[0]);
                    self.put_u8(u + 5, hdr[3]);
                } else {
                    self.put(u + 4, &hdr[2..4]);
                }
                self.put(u + 8, &hdr[4..8]);
                self.put_u8(u + 12, hdr[7]);
                let bit = if gpe {
                    props::TUN_VXLAN_GPE
                } else {
                    props::TUN_VXLAN
                };
                (TUN_VXLAN, bit)
            }
            Tunnel::Gre { protocol, key } => {
                self.put(u + 4, &protocol.to_be_bytes());
                if let Some(k) = key {
                    self.put_u8(u + 8, 1);
                    self.put(u + 12, &k.to_be_bytes());
                }
                (TUN_GRE, props::TUN_GRE)
            }
            Tunnel::Gtpu {
                teid,
                next_ext,
                qfi,
            } => {
                self.put(u, &teid.to_be_bytes());
                self.put_u8(u + 4, next_ext);
                self.put_u8(u + 5, qfi);
                (TUN_GTPU, props::TUN_GTPU)
            }
            Tunnel::Esp { spi, sn } => {
                self.put(u, &spi.to_be_bytes());
                self.put(u + 4, &sn.to_be_bytes());
                (TUN_ESP, props::TUN_ESP)
            }
            Tunnel::Geneve { hdr } => {
                self.put(u, &hdr);
                (TUN_GENEVE, props::TUN_GENEVE)
            }
            Tunnel::IpInIp => (TUN_IP_IN_IP, props::TUN_IPIP),
        };
        self.put_u32(base + off::tun::TYPE, kind);
        self.props |= props::tun(bit);
    }
}

/// Whether the TCP/UDP/ICMP checksum of a layer is right (a UDP checksum of zero over IPv4
/// counts as right: it means "none"). False when the layer has no such header.
fn l4_checksum_ok(h: &Headers, frame: &[u8]) -> bool {
    let l3 = usize::from(h.l3_off);
    let l4 = usize::from(h.l4_off);
    let end = l3 + usize::from(h.l3_len);
    let Some(seg) = frame.get(l4..end) else {
        return false;
    };
    if l4 == 0 {
        return false;
    }
    let proto = h.ip_proto();
    let pseudo = match h.l3 {
        L3::V4(ip) => {
            if proto == 17 && seg.get(6..8) == Some(&[0, 0]) {
                return true;
            }
            if proto == 1 {
                return internet_checksum(seg) == 0;
            }
            let mut p = [0u8; 12];
            p[..4].copy_from_slice(&ip.src.to_be_bytes());
            p[4..8].copy_from_slice(&ip.dst.to_be_bytes());
            p[9] = proto;
            p[10..12].copy_from_slice(&(seg.len() as u16).to_be_bytes());
            super::checksum::sum_be_words(&p, 0)
        }
        L3::V6(ip) => {
            let mut p = [0u8; 40];
            p[..16].copy_from_slice(&ip.src);
            p[16..32].copy_from_slice(&ip.dst);
            p[32..36].copy_from_slice(&(seg.len() as u32).to_be_bytes());
            p[39] = proto;
            super::checksum::sum_be_words(&p, 0)
        }
        L3::None => return false,
    };
    super::checksum::fold_sum(super::checksum::sum_be_words(seg, pseudo)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{tcp4, udp4, vxlan4};
    use crate::parser::parse;

    fn be16_at(k: &Key, at: usize) -> u16 {
        u16::from_be_bytes([k.bytes()[at], k.bytes()[at + 1]])
    }

    #[test]
    fn key_holds_fields_at_the_match_struct_offsets() {
        let f = tcp4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 0x12, b"x");
        let p = parse(&f).unwrap();
        let k = Key::new(&p, &f, 7);
        let b = k.bytes();
        assert_eq!(u16::from_ne_bytes([b[44], b[45]]), 7, "parser_meta.port_id");
        assert_eq!(
            u32::from_ne_bytes(b[56..60].try_into().unwrap()),
            1,
            "l3 meta"
        );
        assert_eq!(
            u32::from_ne_bytes(b[60..64].try_into().unwrap()),
            1,
            "l4 meta TCP"
        );
        assert_eq!(be16_at(&k, 100), 0x0800, "outer.eth.type");
        assert_eq!(&b[112..116], &[10, 0, 0, 1], "outer.ip4.src_ip");
        assert_eq!(b[128], 6, "outer.ip4.next_proto");
        assert_eq!(be16_at(&k, 160), 1234, "outer.tcp.l4_port.src_port");
        assert_eq!(b[165], 0x12, "outer.tcp.flags");
        assert_eq!(b[79], 1, "outer_ip4_checksum_ok");
        assert_ne!(k.props & props::bit(props::OUTER, props::TCP), 0);
        assert_eq!(k.props & props::bit(props::INNER, props::IP4), 0);
    }

    #[test]
    fn tunnel_and_inner_layer_fill_their_parts() {
        let inner = udp4([192, 168, 1, 1], [192, 168, 1, 2], 5, 6, b"abc");
        let f = vxlan4([10, 0, 0, 1], [10, 0, 0, 2], 0xabcdef, &inner);
        let p = parse(&f).unwrap();
        let k = Key::new(&p, &f, 0);
        let b = k.bytes();
        assert_eq!(
            u32::from_ne_bytes(b[176..180].try_into().unwrap()),
            1,
            "tun.type"
        );
        assert_eq!(&b[192..196], &[0xab, 0xcd, 0xef, 0], "tun.vxlan_tun_id");
        assert_eq!(&b[472..476], &[192, 168, 1, 1], "inner.ip4.src_ip");
        assert_eq!(be16_at(&k, 522), 6, "inner.udp.l4_port.dst_port");
        assert_eq!(
            u32::from_ne_bytes(b[68..72].try_into().unwrap()),
            1,
            "inner l3"
        );
        assert_ne!(k.props & props::tun(props::TUN_VXLAN), 0);
        assert_ne!(k.props & props::bit(props::INNER, props::UDP), 0);
    }

    #[test]
    fn l4_checksum_flags_are_computed_on_demand() {
        let mut f = udp4([1, 2, 3, 4], [5, 6, 7, 8], 9, 10, b"data");
        // A real UDP checksum, then a broken one.
        crate::checksum::apply_offloads(&mut f, true, true);
        let p = parse(&f).unwrap();
        let mut k = Key::new(&p, &f, 0);
        assert_eq!(k.bytes()[81], 0, "not computed yet");
        k.ensure_l4_checksums(&p, &f);
        assert_eq!(k.bytes()[81], 1);
        let mut bad = f.clone();
        let n = bad.len();
        bad[n - 1] ^= 0xff;
        let p = parse(&bad).unwrap();
        let mut k = Key::new(&p, &bad, 0);
        k.ensure_l4_checksums(&p, &bad);
        assert_eq!(k.bytes()[81], 0);
    }
}
