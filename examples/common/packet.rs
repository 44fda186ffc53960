//! The frames the samples and pktgen exchange: Ethernet + IPv4 + UDP with a payload that
//! carries a magic word, a sequence number and a burst index, then a byte pattern derived
//! from the sequence number, so a receiver can verify every byte it gets.

#![allow(dead_code)]

/// Ethernet + IPv4 + UDP header bytes.
pub const HEADERS_LEN: usize = 14 + 20 + 8;
/// Payload prefix: magic (4) + sequence (8) + burst (4).
pub const PAYLOAD_PREFIX: usize = 16;
/// The smallest frame pktgen builds.
pub const MIN_FRAME: usize = HEADERS_LEN + PAYLOAD_PREFIX;
/// The largest frame pktgen builds (a standard 1500-byte MTU plus the Ethernet header).
pub const MAX_FRAME: usize = 1514;
/// "DRPG" in ASCII: marks a pktgen payload.
pub const MAGIC: u32 = 0x4452_5047;
/// Offset of the sequence number inside the frame.
pub const SEQ_OFFSET: usize = HEADERS_LEN + 4;
/// Offset of the burst index inside the frame.
pub const BURST_OFFSET: usize = HEADERS_LEN + 12;

/// Addresses and ports of a generated frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
}

impl Default for FrameSpec {
    fn default() -> Self {
        // The addresses the original simple_send sample puts in its frames.
        FrameSpec {
            dst_mac: [0x10, 0x11, 0x12, 0x13, 0x14, 0x15],
            src_mac: [0x20, 0x21, 0x22, 0x23, 0x24, 0x25],
            src_ip: [127, 0, 0, 1],
            dst_ip: [127, 0, 0, 1],
            src_port: 4000,
            dst_port: 5000,
        }
    }
}

/// The payload byte at position `i` (counted from the start of the payload) of packet `seq`.
pub fn pattern_byte(seq: u64, i: usize) -> u8 {
    (seq as u8)
        .wrapping_add(i as u8)
        .wrapping_mul(31)
        .wrapping_add(7)
}

/// One's-complement sum of `data` folded to 16 bits (not inverted).
fn ones_sum(mut acc: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc
}

/// The IPv4 header checksum of `hdr` (checksum field taken as is; 0 when computing).
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    !(ones_sum(0, hdr) as u16)
}

/// The UDP checksum over the pseudo header and `udp` (header + payload).
pub fn udp_checksum(src: [u8; 4], dst: [u8; 4], udp: &[u8]) -> u16 {
    let mut acc = ones_sum(0, &src);
    acc = ones_sum(acc, &dst);
    acc += 17 + udp.len() as u32;
    let c = !(ones_sum(acc, udp) as u16);
    // 0 means "no checksum" in UDP over IPv4; a computed 0 is sent as 0xffff.
    if c == 0 {
        0xffff
    } else {
        c
    }
}

/// Writes a full frame of `frame.len()` bytes for packet `seq` of burst `burst`.
/// With `checksums` false the IPv4 and UDP checksum fields are left 0 (for offload).
pub fn build_frame(frame: &mut [u8], spec: &FrameSpec, seq: u64, burst: u32, checksums: bool) {
    assert!(
        frame.len() >= MIN_FRAME,
        "frame shorter than {MIN_FRAME} bytes"
    );
    let len = frame.len();
    frame[0..6].copy_from_slice(&spec.dst_mac);
    frame[6..12].copy_from_slice(&spec.src_mac);
    frame[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut frame[14..34];
    ip[0] = 0x45;
    ip[1] = 0;
    ip[2..4].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&(seq as u16).to_be_bytes());
    ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // don't fragment
    ip[8] = 64;
    ip[9] = 17;
    ip[10..12].fill(0);
    ip[12..16].copy_from_slice(&spec.src_ip);
    ip[16..20].copy_from_slice(&spec.dst_ip);
    if checksums {
        let c = ipv4_checksum(ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
    }
    let udp_len = len - 34;
    frame[34..36].copy_from_slice(&spec.src_port.to_be_bytes());
    frame[36..38].copy_from_slice(&spec.dst_port.to_be_bytes());
    frame[38..40].copy_from_slice(&(udp_len as u16).to_be_bytes());
    frame[40..42].fill(0);
    write_payload(frame, seq, burst);
    if checksums {
        let c = udp_checksum(spec.src_ip, spec.dst_ip, &frame[34..]);
        frame[40..42].copy_from_slice(&c.to_be_bytes());
    }
}

/// Writes magic, sequence, burst and the pattern into the payload of `frame`.
pub fn write_payload(frame: &mut [u8], seq: u64, burst: u32) {
    let p = &mut frame[HEADERS_LEN..];
    p[0..4].copy_from_slice(&MAGIC.to_be_bytes());
    p[4..12].copy_from_slice(&seq.to_be_bytes());
    p[12..16].copy_from_slice(&burst.to_be_bytes());
    for (i, b) in p[PAYLOAD_PREFIX..].iter_mut().enumerate() {
        *b = pattern_byte(seq, i);
    }
}

/// What a received frame turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Not IPv4/UDP to the port we listen on, or not a pktgen payload: ignored.
    Other,
    /// A pktgen frame whose headers or payload are wrong.
    Corrupt(&'static str),
    /// A good pktgen frame.
    Good {
        /// Its sequence number.
        seq: u64,
        /// Its burst index.
        burst: u32,
        /// Whether its IPv4 and UDP checksums are both present and valid.
        checksums_valid: bool,
    },
}

/// Classifies and verifies `frame` as seen on UDP destination port `dst_port`.
pub fn parse_frame(frame: &[u8], dst_port: u16) -> Parsed {
    if frame.len() < HEADERS_LEN || frame[12..14] != [0x08, 0x00] {
        return Parsed::Other;
    }
    let ip = &frame[14..34];
    if ip[0] != 0x45 || ip[9] != 17 || frame[36..38] != dst_port.to_be_bytes() {
        return Parsed::Other;
    }
    if frame.len() < MIN_FRAME || frame[HEADERS_LEN..HEADERS_LEN + 4] != MAGIC.to_be_bytes() {
        return Parsed::Other;
    }
    let ip_len = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    if ip_len + 14 > frame.len() || ip_len < 28 + PAYLOAD_PREFIX {
        return Parsed::Corrupt("IPv4 total length does not fit the frame");
    }
    let frame = &frame[..ip_len + 14];
    let udp_len = usize::from(u16::from_be_bytes([frame[38], frame[39]]));
    if udp_len != ip_len - 20 {
        return Parsed::Corrupt("UDP length does not match IPv4 length");
    }
    let p = &frame[HEADERS_LEN..];
    let seq = u64::from_be_bytes(p[4..12].try_into().expect("8 bytes"));
    let burst = u32::from_be_bytes(p[12..16].try_into().expect("4 bytes"));
    if p[PAYLOAD_PREFIX..]
        .iter()
        .enumerate()
        .any(|(i, &b)| b != pattern_byte(seq, i))
    {
        return Parsed::Corrupt("payload pattern mismatch");
    }
    let ip_ok = ip[10..12] != [0, 0] && ones_sum(0, ip) == 0xffff;
    let udp_csum = u16::from_be_bytes([frame[40], frame[41]]);
    let udp_ok = udp_csum != 0 && {
        let src: [u8; 4] = ip[12..16].try_into().expect("4 bytes");
        let dst: [u8; 4] = ip[16..20].try_into().expect("4 bytes");
        let mut acc = ones_sum(0, &src);
        acc = ones_sum(acc, &dst);
        acc += 17 + udp_len as u32;
        ones_sum(acc, &frame[34..]) == 0xffff
    };
    Parsed::Good {
        seq,
        burst,
        checksums_valid: ip_ok && udp_ok,
    }
}

/// Parses "aa:bb:cc:dd:ee:ff".
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let v: Vec<u8> = s
        .split(':')
        .map(|x| u8::from_str_radix(x, 16).ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

/// Parses a dotted IPv4 address.
pub fn parse_ipv4(s: &str) -> Option<[u8; 4]> {
    s.parse::<std::net::Ipv4Addr>().ok().map(|a| a.octets())
}
