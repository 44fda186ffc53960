//! L3/L4 checksum offload as a NIC does it on send: the IPv4 header checksum and the
//! UDP/TCP checksum (IPv4 and IPv6 without extension headers). Frames the parser does not
//! understand are sent unchanged.

const ETH_HDR: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;
const PROTO_ICMP: u8 = 1;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const PROTO_ICMPV6: u8 = 58;

/// Adds `data` as big-endian 16-bit words to a one's-complement accumulator.
fn sum_words(data: &[u8], mut acc: u64) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Adds `data` as big-endian 16-bit words to the one's-complement accumulator `acc`.
pub(crate) fn sum_be_words(data: &[u8], acc: u64) -> u64 {
    sum_words(data, acc)
}

/// Folds an accumulator into the (complemented) 16-bit checksum.
pub(crate) fn fold_sum(acc: u64) -> u16 {
    fold(acc)
}

/// Recomputes the checksums of the IP packet whose header starts at `off` in `frame`: the
/// IPv4 header checksum when `l3`, the UDP or TCP checksum when `l4` (a UDP checksum of
/// zero over IPv4, meaning "none", stays zero; ICMP and ICMPv6 checksums are recomputed
/// too). Returns false (frame unchanged) when there is no complete IP packet at `off`.
pub(crate) fn fix_ip_at(frame: &mut [u8], off: usize, l3: bool, l4: bool) -> bool {
    match frame.get(off).map(|b| b >> 4) {
        Some(4) => {
            let ihl = usize::from(frame[off] & 0x0f) * 4;
            let proto = frame.get(off + 9).copied().unwrap_or(0);
            let udp_csum = frame.get(off + ihl + 6..off + ihl + 8);
            let keep_zero = proto == PROTO_UDP && udp_csum == Some(&[0, 0]);
            if !ipv4(frame, off, l3, l4 && !keep_zero) {
                return false;
            }
            if l4 && proto == PROTO_ICMP {
                icmp_checksum(frame, off, ihl, false);
            }
            true
        }
        Some(6) => {
            if !ipv6(frame, off, l4) {
                return false;
            }
            if l4 && frame.get(off + 6) == Some(&PROTO_ICMPV6) {
                icmp_checksum(frame, off, 40, true);
            }
            true
        }
        _ => false,
    }
}

/// The ICMP (v4: over the message) or ICMPv6 (with the pseudo-header) checksum.
fn icmp_checksum(frame: &mut [u8], off: usize, hdr: usize, v6: bool) {
    let (start, end) = if v6 {
        let payload = usize::from(u16::from_be_bytes([frame[off + 4], frame[off + 5]]));
        (off + 40, off + 40 + payload)
    } else {
        let total = usize::from(u16::from_be_bytes([frame[off + 2], frame[off + 3]]));
        (off + hdr, off + total)
    };
    if end > frame.len() || end < start + 4 {
        return;
    }
    frame[start + 2] = 0;
    frame[start + 3] = 0;
    let mut acc = 0;
    if v6 {
        let mut pseudo = [0u8; 40];
        pseudo[..32].copy_from_slice(&frame[off + 8..off + 40]);
        pseudo[32..36].copy_from_slice(&((end - start) as u32).to_be_bytes());
        pseudo[39] = PROTO_ICMPV6;
        acc = sum_words(&pseudo, 0);
    }
    let c = fold(sum_words(&frame[start..end], acc));
    frame[start + 2..start + 4].copy_from_slice(&c.to_be_bytes());
}

/// The Internet checksum of `data`.
pub fn internet_checksum(data: &[u8]) -> u16 {
    fold(sum_words(data, 0))
}

/// Offset of the L3 header and its ethertype, skipping VLAN tags.
fn l3_start(frame: &[u8]) -> Option<(usize, u16)> {
    let mut off = 12;
    loop {
        let t = u16::from_be_bytes([*frame.get(off)?, *frame.get(off + 1)?]);
        if t == ETHERTYPE_VLAN || t == ETHERTYPE_QINQ {
            off += 4;
            continue;
        }
        return Some((off + 2, t));
    }
}

/// Computes the enabled checksums in place. Returns false (frame unchanged) when the frame
/// is not a parsable IPv4/IPv6 frame.
pub fn apply_offloads(frame: &mut [u8], l3: bool, l4: bool) -> bool {
    if frame.len() < ETH_HDR {
        return false;
    }
    match l3_start(frame) {
        Some((off, ETHERTYPE_IPV4)) => ipv4(frame, off, l3, l4),
        Some((off, ETHERTYPE_IPV6)) => ipv6(frame, off, l4),
        _ => false,
    }
}

fn ipv4(frame: &mut [u8], off: usize, l3: bool, l4: bool) -> bool {
    let Some(&vihl) = frame.get(off) else {
        return false;
    };
    let ihl = usize::from(vihl & 0x0f) * 4;
    if vihl >> 4 != 4 || ihl < 20 || frame.len() < off + ihl {
        return false;
    }
    let total = usize::from(u16::from_be_bytes([frame[off + 2], frame[off + 3]]));
    if total < ihl || frame.len() < off + total {
        return false;
    }
    if l3 {
        frame[off + 10] = 0;
        frame[off + 11] = 0;
        let c = internet_checksum(&frame[off..off + ihl]);
        frame[off + 10..off + 12].copy_from_slice(&c.to_be_bytes());
    }
    let frag = u16::from_be_bytes([frame[off + 6], frame[off + 7]]);
    if !l4 || frag & 0x3fff != 0 {
        return true;
    }
    let proto = frame[off + 9];
    let l4_len = total - ihl;
    let mut pseudo = [0u8; 12];
    pseudo[..8].copy_from_slice(&frame[off + 12..off + 20]);
    pseudo[9] = proto;
    pseudo[10..12].copy_from_slice(&(l4_len as u16).to_be_bytes());
    l4_checksum(frame, off + ihl, l4_len, proto, &pseudo);
    true
}

fn ipv6(frame: &mut [u8], off: usize, l4: bool) -> bool {
    if frame.len() < off + 40 || frame[off] >> 4 != 6 {
        return false;
    }
    let payload = usize::from(u16::from_be_bytes([frame[off + 4], frame[off + 5]]));
    if frame.len() < off + 40 + payload {
        return false;
    }
    if !l4 {
        return true;
    }
    let proto = frame[off + 6];
    let mut pseudo = [0u8; 40];
    pseudo[..32].copy_from_slice(&frame[off + 8..off + 40]);
    pseudo[32..36].copy_from_slice(&(payload as u32).to_be_bytes());
    pseudo[39] = proto;
    l4_checksum(frame, off + 40, payload, proto, &pseudo);
    true
}

fn l4_checksum(frame: &mut [u8], off: usize, len: usize, proto: u8, pseudo: &[u8]) {
    let field = match proto {
        PROTO_UDP if len >= 8 => off + 6,
        PROTO_TCP if len >= 20 => off + 16,
        _ => return,
    };
    frame[field] = 0;
    frame[field + 1] = 0;
    let acc = sum_words(&frame[off..off + len], sum_words(pseudo, 0));
    let mut c = fold(acc);
    if proto == PROTO_UDP && c == 0 {
        c = 0xffff;
    }
    frame[field..field + 2].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example_sums() {
        // The worked example of RFC 1071 section 3: words 0001 f203 f4f5 f6f7 sum to ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(internet_checksum(&data), !0xddf2);
    }

    #[test]
    fn non_ip_frames_are_left_alone() {
        let mut f = vec![0u8; 60];
        f[12] = 0x08;
        f[13] = 0x06; // ARP
        let before = f.clone();
        assert!(!apply_offloads(&mut f, true, true));
        assert_eq!(f, before);
        assert!(!apply_offloads(&mut [0u8; 5], true, true));
    }
}
