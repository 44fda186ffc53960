//! Ethernet frames for tests: IPv4 with UDP, TCP or ICMP echo, optional VLAN tags, correct
//! checksums (or zero ones, for checksum offload), and the Internet checksum itself.
//!
//! Written independently of doca-soft's parser, so a test that builds frames here and
//! checks what the runtime made of them is an independent check.
//!
//! ```
//! use doca_test_support::frames::{self, FrameBuilder, Tcp};
//!
//! let b = FrameBuilder::new().ips([10, 0, 0, 1], [10, 0, 0, 9]);
//! let udp = b.udp(4000, 53, b"hello");
//! assert_eq!(udp.len(), 14 + 20 + 8 + 5);
//! assert!(frames::ipv4_checksum_ok(&udp) && frames::l4_checksum_ok(&udp));
//! let syn = b.tcp(&Tcp::new(1234, 80, frames::tcp::SYN), &[]);
//! let ping = b.icmp_echo(1, 1, &frames::pattern(7, 32));
//! assert_eq!((syn[23], ping[23]), (6, 1)); // IPv4 protocol numbers
//! ```

/// Ethertype of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// Ethertype of an 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// IPv4 protocol number of ICMP.
pub const PROTO_ICMP: u8 = 1;
/// IPv4 protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IPv4 protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// Bytes of an Ethernet header without VLAN tags.
pub const ETH_LEN: usize = 14;
/// Bytes of an IPv4 header without options.
pub const IPV4_LEN: usize = 20;
/// Bytes of a UDP header.
pub const UDP_LEN: usize = 8;
/// Bytes of a TCP header without options.
pub const TCP_LEN: usize = 20;

/// TCP flag bits (byte 13 of the header).
pub mod tcp {
    /// No more data.
    pub const FIN: u8 = 0x01;
    /// Synchronise sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Reset.
    pub const RST: u8 = 0x04;
    /// Push.
    pub const PSH: u8 = 0x08;
    /// Acknowledgement field valid.
    pub const ACK: u8 = 0x10;
    /// Urgent pointer valid.
    pub const URG: u8 = 0x20;
}

/// The one's-complement sum of `data` as big-endian 16-bit words (an odd last byte is
/// padded with zero), added to `acc` and folded to 16 bits. Not inverted.
pub fn ones_complement_sum(acc: u16, data: &[u8]) -> u16 {
    let mut sum = u64::from(acc);
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        sum += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        sum += u64::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The Internet checksum (RFC 1071) of `data`: the inverted one's-complement sum. Over data
/// that includes a correct checksum field, the sum is 0xffff (and this returns 0).
pub fn checksum(data: &[u8]) -> u16 {
    !ones_complement_sum(0, data)
}

/// The one's-complement sum of the IPv4 pseudo header of a `len`-byte `proto` segment.
fn pseudo_header_sum(src: [u8; 4], dst: [u8; 4], proto: u8, len: usize) -> u16 {
    let mut p = [0u8; 12];
    p[0..4].copy_from_slice(&src);
    p[4..8].copy_from_slice(&dst);
    p[9] = proto;
    p[10..12].copy_from_slice(&(len as u16).to_be_bytes());
    ones_complement_sum(0, &p)
}

/// The TCP or UDP checksum of `segment` (header with a zero checksum field, then payload)
/// between `src` and `dst`. For UDP a computed 0 is sent as 0xffff (0 means "none").
pub fn l4_checksum(src: [u8; 4], dst: [u8; 4], proto: u8, segment: &[u8]) -> u16 {
    let acc = pseudo_header_sum(src, dst, proto, segment.len());
    let c = !ones_complement_sum(acc, segment);
    if proto == PROTO_UDP && c == 0 {
        0xffff
    } else {
        c
    }
}

/// A byte pattern of `len` bytes that differs per `seed` (payloads that a receiver can tell
/// apart and check).
pub fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| seed.wrapping_mul(31).wrapping_add(i as u8))
        .collect()
}

/// Fields of a TCP header ([`FrameBuilder::tcp`]); data offset is 5 (no options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tcp {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// Flag bits ([`tcp`]).
    pub flags: u8,
    /// Receive window.
    pub window: u16,
}

impl Tcp {
    /// Ports and flags; sequence 1, acknowledgement 0, window 0xffff.
    pub fn new(src_port: u16, dst_port: u16, flags: u8) -> Tcp {
        Tcp {
            src_port,
            dst_port,
            seq: 1,
            ack: 0,
            flags,
            window: 0xffff,
        }
    }
}

/// Addresses and header fields shared by the frames it builds. Defaults: MACs
/// 02:00:00:00:00:01 -> 02:00:00:00:00:02, no VLAN, 10.0.0.1 -> 10.0.0.2, TTL 64,
/// identification 0, don't-fragment set, checksums computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameBuilder {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// 802.1Q tags (TCI values), outermost first.
    pub vlans: Vec<u16>,
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// Time to live.
    pub ttl: u8,
    /// IPv4 identification.
    pub ip_id: u16,
    /// IPv4 don't-fragment flag.
    pub dont_fragment: bool,
    /// Whether IPv4 and L4 checksums are computed (false: left zero, as for offload).
    pub checksums: bool,
}

impl Default for FrameBuilder {
    fn default() -> Self {
        FrameBuilder {
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_mac: [2, 0, 0, 0, 0, 1],
            vlans: Vec::new(),
            src_ip: [10, 0, 0, 1],
            dst_ip: [10, 0, 0, 2],
            ttl: 64,
            ip_id: 0,
            dont_fragment: true,
            checksums: true,
        }
    }
}

impl FrameBuilder {
    /// The defaults.
    pub fn new() -> FrameBuilder {
        FrameBuilder::default()
    }

    /// Source and destination MACs.
    pub fn macs(mut self, src: [u8; 6], dst: [u8; 6]) -> FrameBuilder {
        self.src_mac = src;
        self.dst_mac = dst;
        self
    }

    /// Source and destination IPv4 addresses.
    pub fn ips(mut self, src: [u8; 4], dst: [u8; 4]) -> FrameBuilder {
        self.src_ip = src;
        self.dst_ip = dst;
        self
    }

    /// Adds an 802.1Q tag (inside the ones added before).
    pub fn vlan(mut self, tci: u16) -> FrameBuilder {
        self.vlans.push(tci);
        self
    }

    /// IPv4 identification.
    pub fn ip_id(mut self, id: u16) -> FrameBuilder {
        self.ip_id = id;
        self
    }

    /// Leaves every checksum zero (what an application hands to checksum offload).
    pub fn without_checksums(mut self) -> FrameBuilder {
        self.checksums = false;
        self
    }

    /// Ethernet header (with the VLAN tags) and `payload` of `ethertype`.
    pub fn ethernet(&self, ethertype: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = Vec::with_capacity(ETH_LEN + 4 * self.vlans.len() + payload.len());
        f.extend_from_slice(&self.dst_mac);
        f.extend_from_slice(&self.src_mac);
        for tci in &self.vlans {
            f.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
            f.extend_from_slice(&tci.to_be_bytes());
        }
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    /// An IPv4 packet of protocol `proto` around `l4` (taken as is), in a frame.
    pub fn ipv4(&self, proto: u8, l4: &[u8]) -> Vec<u8> {
        let mut ip = Vec::with_capacity(IPV4_LEN + l4.len());
        let total = (IPV4_LEN + l4.len()) as u16;
        let flags: u16 = if self.dont_fragment { 0x4000 } else { 0 };
        ip.extend_from_slice(&[0x45, 0]);
        ip.extend_from_slice(&total.to_be_bytes());
        ip.extend_from_slice(&self.ip_id.to_be_bytes());
        ip.extend_from_slice(&flags.to_be_bytes());
        ip.extend_from_slice(&[self.ttl, proto, 0, 0]);
        ip.extend_from_slice(&self.src_ip);
        ip.extend_from_slice(&self.dst_ip);
        if self.checksums {
            let c = checksum(&ip);
            ip[10..12].copy_from_slice(&c.to_be_bytes());
        }
        ip.extend_from_slice(l4);
        self.ethernet(ETHERTYPE_IPV4, &ip)
    }

    /// A UDP datagram in IPv4 in a frame.
    pub fn udp(&self, src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
        let mut u = Vec::with_capacity(UDP_LEN + payload.len());
        u.extend_from_slice(&src_port.to_be_bytes());
        u.extend_from_slice(&dst_port.to_be_bytes());
        u.extend_from_slice(&((UDP_LEN + payload.len()) as u16).to_be_bytes());
        u.extend_from_slice(&[0, 0]);
        u.extend_from_slice(payload);
        self.fill_l4_checksum(PROTO_UDP, &mut u, 6);
        self.ipv4(PROTO_UDP, &u)
    }

    /// A TCP segment in IPv4 in a frame.
    pub fn tcp(&self, h: &Tcp, payload: &[u8]) -> Vec<u8> {
        let mut t = Vec::with_capacity(TCP_LEN + payload.len());
        t.extend_from_slice(&h.src_port.to_be_bytes());
        t.extend_from_slice(&h.dst_port.to_be_bytes());
        t.extend_from_slice(&h.seq.to_be_bytes());
        t.extend_from_slice(&h.ack.to_be_bytes());
        t.extend_from_slice(&[0x50, h.flags]);
        t.extend_from_slice(&h.window.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
        t.extend_from_slice(payload);
        self.fill_l4_checksum(PROTO_TCP, &mut t, 16);
        self.ipv4(PROTO_TCP, &t)
    }

    /// An ICMP echo request in IPv4 in a frame.
    pub fn icmp_echo(&self, id: u16, seq: u16, payload: &[u8]) -> Vec<u8> {
        let mut m = vec![8, 0, 0, 0];
        m.extend_from_slice(&id.to_be_bytes());
        m.extend_from_slice(&seq.to_be_bytes());
        m.extend_from_slice(payload);
        if self.checksums {
            let c = checksum(&m);
            m[2..4].copy_from_slice(&c.to_be_bytes());
        }
        self.ipv4(PROTO_ICMP, &m)
    }

    fn fill_l4_checksum(&self, proto: u8, segment: &mut [u8], at: usize) {
        if self.checksums {
            let c = l4_checksum(self.src_ip, self.dst_ip, proto, segment);
            segment[at..at + 2].copy_from_slice(&c.to_be_bytes());
        }
    }
}

/// Where the IPv4 header of `frame` starts (after the VLAN tags), if it is IPv4.
pub fn ipv4_offset(frame: &[u8]) -> Option<usize> {
    let mut off = 12;
    loop {
        let ty = u16::from_be_bytes([*frame.get(off)?, *frame.get(off + 1)?]);
        match ty {
            ETHERTYPE_VLAN => off += 4,
            ETHERTYPE_IPV4 => return Some(off + 2),
            _ => return None,
        }
    }
}

/// Whether `frame` is IPv4 whose header checksum is correct (a zero field is a checksum
/// like any other: IPv4 has no "no checksum" value).
pub fn ipv4_checksum_ok(frame: &[u8]) -> bool {
    let Some(ip) = ipv4_offset(frame) else {
        return false;
    };
    let Some(&vihl) = frame.get(ip) else {
        return false;
    };
    let ihl = usize::from(vihl & 0x0f) * 4;
    match frame.get(ip..ip + ihl) {
        Some(h) if ihl >= IPV4_LEN => ones_complement_sum(0, h) == 0xffff,
        _ => false,
    }
}

/// Whether `frame` is IPv4 carrying TCP, UDP or ICMP whose checksum is correct (over the
/// length the IPv4 header gives). A zero UDP checksum means "none" and is not correct.
pub fn l4_checksum_ok(frame: &[u8]) -> bool {
    let Some(ip) = ipv4_offset(frame) else {
        return false;
    };
    let Some(h) = frame.get(ip..ip + IPV4_LEN) else {
        return false;
    };
    let ihl = usize::from(h[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let Some(seg) = frame.get(ip + ihl..ip + total) else {
        return false;
    };
    let (src, dst) = ([h[12], h[13], h[14], h[15]], [h[16], h[17], h[18], h[19]]);
    let field = match h[9] {
        PROTO_UDP => 6,
        PROTO_TCP => 16,
        PROTO_ICMP => 2,
        _ => return false,
    };
    if seg.len() < field + 2 || (h[9] == PROTO_UDP && seg[field..field + 2] == [0, 0]) {
        return false;
    }
    let acc = if h[9] == PROTO_ICMP {
        0
    } else {
        pseudo_header_sum(src, dst, h[9], seg.len())
    };
    ones_complement_sum(acc, seg) == 0xffff
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A textbook IPv4 header (192.168.0.1 -> 192.168.0.199, UDP, total length 115,
    /// don't-fragment, TTL 64) whose checksum is 0xb861.
    const TEXTBOOK: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn checksum_of_the_textbook_header() {
        let mut h = TEXTBOOK;
        h[10..12].fill(0);
        assert_eq!(checksum(&h), 0xb861);
        // Over the header with its checksum in place, the sum is all ones.
        assert_eq!(ones_complement_sum(0, &TEXTBOOK), 0xffff);
        assert_eq!(checksum(&TEXTBOOK), 0);
    }

    #[test]
    fn builder_reproduces_the_textbook_header() {
        // UDP length 115 - 20 = 95: 8 header bytes and 87 of payload.
        let f = FrameBuilder::new()
            .ips([192, 168, 0, 1], [192, 168, 0, 199])
            .udp(1, 2, &[0u8; 87]);
        assert_eq!(f[14..34], TEXTBOOK);
    }

    #[test]
    fn checksum_properties() {
        // Empty and all-zero data sum to zero, so the checksum is all ones.
        assert_eq!(checksum(&[]), 0xffff);
        assert_eq!(checksum(&[0; 7]), 0xffff);
        // An odd last byte counts as the high byte of a zero-padded word.
        assert_eq!(
            checksum(&[0x12, 0x34, 0x56]),
            checksum(&[0x12, 0x34, 0x56, 0x00])
        );
        // End-around carry: 0xffff + 0x0001 folds to 0x0001.
        assert_eq!(ones_complement_sum(0, &[0xff, 0xff, 0x00, 0x01]), 0x0001);
        // Word order does not matter; swapping bytes in every word swaps the sum's bytes.
        let data: Vec<u8> = (0..64u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(11))
            .collect();
        let mut words: Vec<[u8; 2]> = data.chunks(2).map(|c| [c[0], c[1]]).collect();
        words.reverse();
        let reordered: Vec<u8> = words.concat();
        assert_eq!(checksum(&data), checksum(&reordered));
        let swapped: Vec<u8> = data.chunks(2).flat_map(|c| [c[1], c[0]]).collect();
        assert_eq!(checksum(&swapped), checksum(&data).swap_bytes());
        // Appending the checksum makes the whole verify.
        let mut with = data.clone();
        with.extend_from_slice(&checksum(&data).to_be_bytes());
        assert_eq!(ones_complement_sum(0, &with), 0xffff);
    }

    #[test]
    fn udp_frame_bytes_by_hand() {
        // 10.0.0.1:1 -> 10.0.0.2:2, payload "ab". Pseudo header 0a00+0001+0a00+0002+0011+
        // 000a = 141e; header 0001+0002+000a = 000d; data 6162: sum 758d, checksum 8a72.
        let f = FrameBuilder::new().udp(1, 2, b"ab");
        let want_udp = [0x00, 0x01, 0x00, 0x02, 0x00, 0x0a, 0x8a, 0x72, b'a', b'b'];
        assert_eq!(f[34..], want_udp);
        assert_eq!(
            f[..14],
            [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00],
            "MACs and ethertype"
        );
        assert_eq!(
            f[14..18],
            [0x45, 0, 0, 30],
            "version/IHL, TOS, total length 30"
        );
        assert_eq!(f[20..24], [0x40, 0, 64, 17], "DF, TTL 64, UDP");
        assert!(ipv4_checksum_ok(&f) && l4_checksum_ok(&f));
    }

    #[test]
    fn tcp_and_icmp_checksums_by_hand() {
        // SYN 10.0.0.1:1 -> 10.0.0.2:2, seq 1, window ffff: pseudo 141d, header words
        // 0001+0002+0001+5002+ffff -> sum 6423, checksum 9bdc.
        let t = FrameBuilder::new().tcp(&Tcp::new(1, 2, tcp::SYN), &[]);
        assert_eq!(t.len(), 54);
        assert_eq!(
            t[34..],
            [0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0x9b, 0xdc, 0, 0]
        );
        // Echo request id 1 seq 1 "ab": 0800+0001+0001+6162 = 6964, checksum 969b.
        let i = FrameBuilder::new().icmp_echo(1, 1, b"ab");
        assert_eq!(i[34..], [8, 0, 0x96, 0x9b, 0, 1, 0, 1, b'a', b'b']);
        assert!(l4_checksum_ok(&t) && l4_checksum_ok(&i));
    }

    #[test]
    fn a_computed_zero_udp_checksum_is_sent_as_all_ones() {
        // Find a payload word that makes the sum 0xffff (checksum 0).
        let b = FrameBuilder::new();
        let base = b.udp(7, 7, &[0, 0]);
        let sum = !u16::from_be_bytes([base[40], base[41]]);
        let fill = (!sum).to_be_bytes();
        let f = b.udp(7, 7, &fill);
        assert_eq!(f[40..42], [0xff, 0xff]);
        assert!(l4_checksum_ok(&f));
    }

    #[test]
    fn verifiers_catch_any_single_bit_flip() {
        let b = FrameBuilder::new().vlan(5).ip_id(9);
        for f in [
            b.udp(1000, 53, &pattern(3, 41)),
            b.tcp(&Tcp::new(80, 4000, tcp::ACK | tcp::PSH), &pattern(4, 10)),
            b.icmp_echo(7, 8, &pattern(5, 16)),
        ] {
            assert_eq!(ipv4_offset(&f), Some(18));
            assert!(ipv4_checksum_ok(&f) && l4_checksum_ok(&f));
            for byte in 18..f.len() {
                let mut g = f.clone();
                g[byte] ^= 0x04;
                let ok = ipv4_checksum_ok(&g) && l4_checksum_ok(&g);
                assert!(!ok, "flip in byte {byte} of {f:02x?} went unnoticed");
            }
        }
    }

    #[test]
    fn without_checksums_leaves_zeros_and_verifiers_say_so() {
        let b = FrameBuilder::new().without_checksums();
        for f in [
            b.udp(1, 2, b"x"),
            b.tcp(&Tcp::new(1, 2, 0), b""),
            b.icmp_echo(1, 1, b""),
        ] {
            let l4 = match f[23] {
                PROTO_UDP => 40,
                PROTO_TCP => 50,
                _ => 36,
            };
            assert_eq!((&f[24..26], &f[l4..l4 + 2]), (&[0, 0][..], &[0, 0][..]));
            assert!(!ipv4_checksum_ok(&f) && !l4_checksum_ok(&f));
        }
    }

    #[test]
    fn a_computed_zero_is_a_valid_icmp_checksum() {
        // 0800 + 0001 + 0001 + f7fd = ffff: the checksum field is 0, and correct.
        let f = FrameBuilder::new().icmp_echo(1, 1, &[0xf7, 0xfd]);
        assert_eq!(f[36..38], [0, 0]);
        assert!(l4_checksum_ok(&f));
    }

    #[test]
    fn vlan_tags_sit_between_the_macs_and_the_ethertype() {
        let f = FrameBuilder::new().vlan(0x0064).vlan(0x2005).udp(1, 2, b"");
        assert_eq!(
            f[12..22],
            [0x81, 0x00, 0x00, 0x64, 0x81, 0x00, 0x20, 0x05, 0x08, 0x00]
        );
        assert_eq!(ipv4_offset(&f), Some(22));
        assert_eq!(
            ipv4_offset(&FrameBuilder::new().ethernet(0x0806, &[0; 28])),
            None
        );
    }

    #[test]
    fn patterns_differ_per_seed() {
        assert_eq!(pattern(1, 4), [31, 32, 33, 34]);
        assert_ne!(pattern(1, 16), pattern(2, 16));
    }
}
