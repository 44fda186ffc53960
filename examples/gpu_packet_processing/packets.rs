//! Packet formats: header offsets, the TCP view the CPU thread parses, its replies (SYN-ACK
//! and ACK), the bounded TCP option scan, the HTTP response frame template, and host
//! versions of what the kernels do to frames (ICMP echo reply, HTTP reply headers), which
//! the tests compare with frames built independently and the end-to-end test with what the
//! GPU sent.
//!
//! Like the original, parsing assumes Ethernet without VLAN and a 20-byte IPv4 header;
//! unlike it, frames that break that assumption are rejected, never misread.

#![allow(dead_code)]

use cuda_kernels::InfoHttp;
use std::fmt;

/// Ethernet header bytes.
pub const ETH_HDR: usize = 14;
/// IPv4 header bytes (no options).
pub const IP_HDR: usize = 20;
/// Offset of the L4 header.
pub const L4: usize = ETH_HDR + IP_HDR;
/// Ethernet + IPv4 + TCP without options.
pub const TCP_HDRS: usize = L4 + 20;
/// IPv4 Ethertype.
pub const ETHER_TYPE_IPV4: u16 = 0x0800;
/// IP protocol numbers.
pub const PROTO_ICMP: u8 = 1;
/// TCP.
pub const PROTO_TCP: u8 = 6;
/// UDP.
pub const PROTO_UDP: u8 = 17;
/// DNS port (`DNS_POST` in the original).
pub const DNS_PORT: u16 = 53;

/// TCP flag bits (`enum tcp_flags`).
pub mod tcp_flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
}

/// TCP option kinds (`enum tcp_opt`).
pub mod tcp_opt {
    /// End of options.
    pub const END: u8 = 0;
    /// No operation (one byte).
    pub const NOP: u8 = 1;
    /// Maximum segment size.
    pub const MSS: u8 = 2;
    /// Window scale.
    pub const WND_SCALE: u8 = 3;
    /// SACK permitted.
    pub const SACK_PERMITTED: u8 = 4;
    /// SACK blocks.
    pub const SACK: u8 = 5;
    /// Timestamps.
    pub const TIMESTAMP: u8 = 8;
}

/// The sequence number of every SYN-ACK (as the original).
pub const SYN_ACK_SEQ: u32 = 1000;
/// Window of the CPU replies.
pub const CPU_REPLY_WINDOW: u16 = 60000;
/// Window of the HTTP responses.
pub const HTTP_WINDOW: u16 = 6000;
/// TTL of the HTTP responses.
pub const HTTP_TTL: u8 = 60;
/// TTL of the CPU replies.
pub const CPU_REPLY_TTL: u8 = 64;
/// TTL of the ICMP echo replies.
pub const ICMP_REPLY_TTL: u8 = 128;
/// The IPv4 "don't fragment" flag (`IPV4_HDR_DF_FLAG`).
pub const IPV4_DF: u16 = 1 << 14;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Why a frame is not an IPv4/TCP frame the CPU thread can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// Shorter than the headers it must hold.
    TooShort(usize),
    /// Not IPv4 (the Ethertype seen).
    NotIpv4(u16),
    /// IPv4 with options or not version 4 (the version/IHL byte seen).
    BadIpHeader(u8),
    /// Not TCP (the protocol seen).
    NotTcp(u8),
    /// TCP data offset below 5 words or past the frame (the offset byte seen).
    BadDataOffset(u8),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooShort(n) => write!(f, "frame of {n} bytes is too short"),
            FrameError::NotIpv4(t) => {
                write!(f, "Expected ether_type 0x{ETHER_TYPE_IPV4:x}, got 0x{t:x}")
            }
            FrameError::BadIpHeader(b) => write!(
                f,
                "IPv4 version/IHL byte 0x{b:02x} (only 20-byte IPv4 headers are handled)"
            ),
            FrameError::NotTcp(p) => write!(f, "Expected next_proto_id {PROTO_TCP}, got {p}"),
            FrameError::BadDataOffset(b) => write!(f, "TCP data offset byte 0x{b:02x} is invalid"),
        }
    }
}

/// The fields of an IPv4/TCP frame the CPU path uses (numbers in host order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpView {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Ethertype.
    pub ether_type: u16,
    /// Source address.
    pub src_ip: u32,
    /// Destination address.
    pub dst_ip: u32,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// The data-offset byte (high nibble: header length in 32-bit words).
    pub data_off: u8,
    /// Flags byte.
    pub flags: u8,
}

impl TcpView {
    /// TCP header length in bytes.
    pub fn header_len(&self) -> usize {
        4 * usize::from(self.data_off >> 4)
    }

    /// Whether all of `flags` are set.
    pub fn has(&self, flags: u8) -> bool {
        self.flags & flags == flags
    }
}

/// Parses an Ethernet/IPv4/TCP frame (`frame` may be a prefix of the frame on the wire;
/// the TCP header must be whole in it).
pub fn parse_tcp(frame: &[u8]) -> Result<TcpView, FrameError> {
    if frame.len() < L4 {
        return Err(FrameError::TooShort(frame.len()));
    }
    let ether_type = be16(frame, 12);
    if ether_type != ETHER_TYPE_IPV4 {
        return Err(FrameError::NotIpv4(ether_type));
    }
    if frame[14] != 0x45 {
        return Err(FrameError::BadIpHeader(frame[14]));
    }
    if frame[23] != PROTO_TCP {
        return Err(FrameError::NotTcp(frame[23]));
    }
    if frame.len() < TCP_HDRS {
        return Err(FrameError::TooShort(frame.len()));
    }
    let data_off = frame[L4 + 12];
    let hlen = 4 * usize::from(data_off >> 4);
    if hlen < 20 || L4 + hlen > frame.len() {
        return Err(FrameError::BadDataOffset(data_off));
    }
    let mac = |at: usize| -> [u8; 6] { frame[at..at + 6].try_into().expect("6 bytes") };
    Ok(TcpView {
        dst_mac: mac(0),
        src_mac: mac(6),
        ether_type,
        src_ip: be32(frame, 26),
        dst_ip: be32(frame, 30),
        src_port: be16(frame, L4),
        dst_port: be16(frame, L4 + 2),
        seq: be32(frame, L4 + 4),
        ack: be32(frame, L4 + 8),
        data_off,
        flags: frame[L4 + 13],
    })
}

/// The TSval of the frame's timestamp option, if it carries one. The scan covers the
/// option bytes of the TCP header only (bounded by the data offset, which [`parse_tcp`]
/// checked against the frame); every option is skipped by its length byte, and a length
/// below 2 or past the header ends the scan, so no input makes it loop or read past the
/// header. (The original scans `4 x` the whole data-offset byte, skips SACK by its kind
/// value and never advances on an unknown kind.)
pub fn tcp_timestamp(frame: &[u8], view: &TcpView) -> Option<u32> {
    let end = (L4 + view.header_len()).min(frame.len());
    let mut i = TCP_HDRS;
    while i < end {
        match frame[i] {
            tcp_opt::END => return None,
            tcp_opt::NOP => i += 1,
            kind => {
                let len = usize::from(*frame.get(i + 1)?);
                if len < 2 || i + len > end {
                    return None;
                }
                if kind == tcp_opt::TIMESTAMP && len == 10 {
                    return Some(be32(frame, i + 2));
                }
                i += len;
            }
        }
    }
    None
}

/// The 20 option bytes of a SYN-ACK: MSS 8192, SACK permitted, timestamps (`tsval`,
/// `tsecr`), NOP, window scale 7.
pub fn syn_ack_options(tsval: u32, tsecr: u32) -> [u8; 20] {
    let mut o = [0u8; 20];
    o[..4].copy_from_slice(&[tcp_opt::MSS, 4, 0x20, 0x00]);
    o[4..6].copy_from_slice(&[tcp_opt::SACK_PERMITTED, 2]);
    o[6..8].copy_from_slice(&[tcp_opt::TIMESTAMP, 10]);
    o[8..12].copy_from_slice(&tsval.to_be_bytes());
    o[12..16].copy_from_slice(&tsecr.to_be_bytes());
    o[16] = tcp_opt::NOP;
    o[17..20].copy_from_slice(&[tcp_opt::WND_SCALE, 3, 7]);
    o
}

/// The CPU thread's reply to `req`: a SYN-ACK (74 bytes, options) when `syn_reply`, else
/// an ACK (54 bytes). Checksums are left 0 for the send queue's L3/L4 offload.
///
/// As the original: addresses and ports swapped, DF set, TTL 64, window 60000; seq 1000
/// for a SYN-ACK, else the request's ack; ack = request seq + 1; flags ACK, plus the
/// request's SYN and FIN bits when the request carries no ACK.
pub fn build_cpu_reply(req: &TcpView, syn_reply: bool, tsval: u32, tsecr: u32) -> Vec<u8> {
    let opt_len = if syn_reply { 20 } else { 0 };
    let mut f = vec![0u8; TCP_HDRS + opt_len];
    f[0..6].copy_from_slice(&req.src_mac);
    f[6..12].copy_from_slice(&req.dst_mac);
    f[12..14].copy_from_slice(&req.ether_type.to_be_bytes());
    f[14] = 0x45;
    f[16..18].copy_from_slice(&((IP_HDR + 20 + opt_len) as u16).to_be_bytes());
    f[20..22].copy_from_slice(&IPV4_DF.to_be_bytes());
    f[22] = CPU_REPLY_TTL;
    f[23] = PROTO_TCP;
    f[26..30].copy_from_slice(&req.dst_ip.to_be_bytes());
    f[30..34].copy_from_slice(&req.src_ip.to_be_bytes());
    f[L4..L4 + 2].copy_from_slice(&req.dst_port.to_be_bytes());
    f[L4 + 2..L4 + 4].copy_from_slice(&req.src_port.to_be_bytes());
    let seq = if syn_reply { SYN_ACK_SEQ } else { req.ack };
    f[L4 + 4..L4 + 8].copy_from_slice(&seq.to_be_bytes());
    f[L4 + 8..L4 + 12].copy_from_slice(&req.seq.wrapping_add(1).to_be_bytes());
    f[L4 + 12] = if syn_reply { 0xa0 } else { 0x50 };
    let mut flags = tcp_flags::ACK;
    if req.flags & tcp_flags::ACK == 0 {
        flags |= req.flags & (tcp_flags::SYN | tcp_flags::FIN);
    }
    f[L4 + 13] = flags;
    f[L4 + 14..L4 + 16].copy_from_slice(&CPU_REPLY_WINDOW.to_be_bytes());
    if syn_reply {
        f[TCP_HDRS..].copy_from_slice(&syn_ack_options(tsval, tsecr));
    }
    f
}

/// The prebuilt HTTP response frame for `payload` (§11.1): zero MACs, addresses, ports,
/// sequence numbers and checksums (filled per send and by the offloads), total length
/// 40 + L, TTL 60, data offset 5, PSH|ACK, window 6000.
pub fn http_response_frame(payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; TCP_HDRS + payload.len()];
    f[12..14].copy_from_slice(&ETHER_TYPE_IPV4.to_be_bytes());
    f[14] = 0x45;
    f[16..18].copy_from_slice(&((IP_HDR + 20 + payload.len()) as u16).to_be_bytes());
    f[22] = HTTP_TTL;
    f[23] = PROTO_TCP;
    f[L4 + 12] = 0x50;
    f[L4 + 13] = tcp_flags::PSH | tcp_flags::ACK;
    f[L4 + 14..L4 + 16].copy_from_slice(&HTTP_WINDOW.to_be_bytes());
    f[TCP_HDRS..].copy_from_slice(payload);
    f
}

/// What the TCP kernel records for a GET in `frame` (host version of
/// `gpp_fill_info_http`, for the tests): raw network-order fields and the page.
pub fn info_http_of(frame: &[u8]) -> Option<InfoHttp> {
    let v = parse_tcp(frame).ok()?;
    let payload = &frame[L4 + v.header_len()..];
    if !payload.starts_with(b"GET /") {
        return None;
    }
    let raw32 = |at: usize| u32::from_ne_bytes(frame[at..at + 4].try_into().expect("4"));
    let raw16 = |at: usize| u16::from_ne_bytes([frame[at], frame[at + 1]]);
    let page = if payload[5..].starts_with(b"index.") {
        cuda_kernels::HttpPage::Index
    } else if payload[5..].starts_with(b"contacts.") {
        cuda_kernels::HttpPage::Contacts
    } else {
        cuda_kernels::HttpPage::NotFound
    };
    Some(InfoHttp {
        eth_src_addr_bytes: v.src_mac,
        eth_dst_addr_bytes: v.dst_mac,
        ip_src_addr: raw32(26),
        ip_dst_addr: raw32(30),
        ip_total_length: raw16(16),
        tcp_src_port: raw16(L4),
        tcp_dst_port: raw16(L4 + 2),
        tcp_dt_off: v.data_off,
        pad: 0,
        tcp_sent_seq: raw32(L4 + 4),
        tcp_recv_ack: raw32(L4 + 8),
        page: page as u32,
    })
}

/// Host version of the HTTP kernel's rewrite (`gpp_http_fill_reply`): the response
/// template `r` addressed back to the request described by `info`.
pub fn fill_http_reply(r: &mut [u8], info: &InfoHttp) {
    r[0..6].copy_from_slice(&info.eth_src_addr_bytes);
    r[6..12].copy_from_slice(&info.eth_dst_addr_bytes);
    r[24] = 0;
    r[25] = 0;
    r[26..30].copy_from_slice(&info.ip_dst_addr.to_ne_bytes());
    r[30..34].copy_from_slice(&info.ip_src_addr.to_ne_bytes());
    r[L4..L4 + 2].copy_from_slice(&info.tcp_dst_port.to_ne_bytes());
    r[L4 + 2..L4 + 4].copy_from_slice(&info.tcp_src_port.to_ne_bytes());
    r[L4 + 4..L4 + 8].copy_from_slice(&info.tcp_recv_ack.to_ne_bytes());
    let ip_len = u32::from(u16::from_be(info.ip_total_length));
    let hdrs = 20 + 4 * u32::from(info.tcp_dt_off >> 4);
    let payload = ip_len.saturating_sub(hdrs);
    let seq = u32::from_be(info.tcp_sent_seq).wrapping_add(payload);
    r[L4 + 8..L4 + 12].copy_from_slice(&seq.to_be_bytes());
    r[L4 + 16] = 0;
    r[L4 + 17] = 0;
}

/// The Internet checksum (RFC 1071) of `data`, as the big-endian value to store.
pub fn inet_checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Host version of the ICMP kernel: the echo reply to `request` as the GPU sends it (IPv4
/// checksum 0, left to the L3 offload), or `None` when the kernel does not answer
/// (malformed frame, or not an echo request).
pub fn icmp_echo_reply(request: &[u8]) -> Option<Vec<u8>> {
    if request.len() < L4 + 8
        || be16(request, 12) != ETHER_TYPE_IPV4
        || request[14] != 0x45
        || request[23] != PROTO_ICMP
    {
        return None;
    }
    let ip_len = usize::from(be16(request, 16));
    if ip_len < IP_HDR + 8 || ETH_HDR + ip_len > request.len() {
        return None;
    }
    if request[L4] != 8 || request[L4 + 1] != 0 {
        return None;
    }
    let mut f = request[..ETH_HDR + ip_len].to_vec();
    f.copy_within(0..6, 6);
    f[0..6].copy_from_slice(&request[6..12]);
    f[26..30].copy_from_slice(&request[30..34]);
    f[30..34].copy_from_slice(&request[26..30]);
    f[22] = ICMP_REPLY_TTL;
    f[24] = 0;
    f[25] = 0;
    f[L4] = 0;
    f[L4 + 2] = 0;
    f[L4 + 3] = 0;
    let c = inet_checksum(&f[L4..]);
    f[L4 + 2..L4 + 4].copy_from_slice(&c.to_be_bytes());
    Some(f)
}

/// Fills the IPv4 header checksum of `frame` (what the L3 offload does).
pub fn fill_ipv4_checksum(frame: &mut [u8]) {
    frame[24] = 0;
    frame[25] = 0;
    let c = inet_checksum(&frame[ETH_HDR..ETH_HDR + IP_HDR]);
    frame[24..26].copy_from_slice(&c.to_be_bytes());
}

/// Fills the TCP checksum of an IPv4/TCP `frame` (what the L4 offload does).
pub fn fill_tcp_checksum(frame: &mut [u8]) {
    let ip_len = usize::from(be16(frame, 16));
    let tcp_len = ip_len - IP_HDR;
    frame[L4 + 16] = 0;
    frame[L4 + 17] = 0;
    let mut pseudo = Vec::with_capacity(12 + tcp_len);
    pseudo.extend_from_slice(&frame[26..34]);
    pseudo.extend_from_slice(&[0, PROTO_TCP]);
    pseudo.extend_from_slice(&(tcp_len as u16).to_be_bytes());
    pseudo.extend_from_slice(&frame[L4..L4 + tcp_len]);
    let c = inet_checksum(&pseudo);
    frame[L4 + 16..L4 + 18].copy_from_slice(&c.to_be_bytes());
}

/// `a.b.c.d` of a host-order address.
pub fn dotted(ip: u32) -> String {
    std::net::Ipv4Addr::from(ip).to_string()
}
