//! Frame builders for tests and bench generators: Ethernet + IPv4 frames around UDP, TCP
//! and ICMP echo headers, with a valid IPv4 header checksum.

use crate::checksum::internet_checksum;

/// An Ethernet + IPv4 + UDP frame with `payload` (checksums left zero; UDP allows it).
pub fn udp4(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    ip4(src, dst, 17, &l4_udp(sport, dport, payload))
}

/// An Ethernet + IPv4 + TCP frame with the given flag byte and payload.
pub fn tcp4(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    flags: u8,
    payload: &[u8],
) -> Vec<u8> {
    let mut t = Vec::with_capacity(20 + payload.len());
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&1u32.to_be_bytes());
    t.extend_from_slice(&0u32.to_be_bytes());
    t.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    t.extend_from_slice(payload);
    ip4(src, dst, 6, &t)
}

/// An Ethernet + IPv4 + ICMP echo request.
pub fn icmp4_echo(src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut t = vec![8, 0, 0, 0, 0, 1, 0, 1];
    t.extend_from_slice(payload);
    ip4(src, dst, 1, &t)
}

fn l4_udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = Vec::with_capacity(8 + payload.len());
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

/// Ethernet (dst 02:00:00:00:00:02, src 02:00:00:00:00:01) + IPv4 around an L4 header.
pub fn ip4(src: [u8; 4], dst: [u8; 4], proto: u8, l4: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(34 + l4.len());
    f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let total = (20 + l4.len()) as u16;
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&total.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    let csum = internet_checksum(&f[14..34]);
    f[24..26].copy_from_slice(&csum.to_be_bytes());
    f.extend_from_slice(l4);
    f
}

/// An Ethernet + IPv6 + UDP frame (hop limit 64, UDP checksum left zero).
pub fn udp6(src: [u8; 16], dst: [u8; 16], sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let l4 = l4_udp(sport, dport, payload);
    let mut f = Vec::with_capacity(54 + l4.len());
    f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd]);
    f.extend_from_slice(&[0x60, 0, 0, 0]);
    f.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    f.extend_from_slice(&[17, 64]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&l4);
    f
}

/// VXLAN (UDP 49152 -> 4789, VNI `vni`) between `src` and `dst`, carrying the Ethernet
/// frame `inner`.
pub fn vxlan4(src: [u8; 4], dst: [u8; 4], vni: u32, inner: &[u8]) -> Vec<u8> {
    let mut v = vec![0x08, 0, 0, 0];
    v.extend_from_slice(&(vni << 8).to_be_bytes());
    v.extend_from_slice(inner);
    udp4(src, dst, 49152, 4789, &v)
}

/// GTP-U (UDP 2152 -> 2152, a G-PDU of tunnel `teid`) carrying the IP packet `inner`.
pub fn gtpu4(src: [u8; 4], dst: [u8; 4], teid: u32, inner: &[u8]) -> Vec<u8> {
    let mut g = vec![0x30, 0xff];
    g.extend_from_slice(&(inner.len() as u16).to_be_bytes());
    g.extend_from_slice(&teid.to_be_bytes());
    g.extend_from_slice(inner);
    udp4(src, dst, 2152, 2152, &g)
}

/// GRE (with the key word when `key` is given) of protocol type `protocol` carrying
/// `inner` (an Ethernet frame for 0x6558, an IP packet for 0x0800/0x86dd).
pub fn gre4(src: [u8; 4], dst: [u8; 4], key: Option<u32>, protocol: u16, inner: &[u8]) -> Vec<u8> {
    let flags: u16 = if key.is_some() { 0x2000 } else { 0 };
    let mut g = flags.to_be_bytes().to_vec();
    g.extend_from_slice(&protocol.to_be_bytes());
    if let Some(k) = key {
        g.extend_from_slice(&k.to_be_bytes());
    }
    g.extend_from_slice(inner);
    ip4(src, dst, 47, &g)
}
