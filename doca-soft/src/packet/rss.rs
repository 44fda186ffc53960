//! RSS: spread flows over a list of queues by a hash of the fields the RSS flags select.

use super::parser::{Parsed, L3, L4};

/// `DOCA_FLOW_RSS_IPV4`.
pub const RSS_IPV4: u32 = 1 << 0;
/// `DOCA_FLOW_RSS_IPV6`.
pub const RSS_IPV6: u32 = 1 << 1;
/// `DOCA_FLOW_RSS_UDP`.
pub const RSS_UDP: u32 = 1 << 2;
/// `DOCA_FLOW_RSS_TCP`.
pub const RSS_TCP: u32 = 1 << 3;
/// `DOCA_FLOW_RSS_IPV4_SRC`.
pub const RSS_IPV4_SRC: u32 = 1 << 5;
/// `DOCA_FLOW_RSS_IPV4_DST`.
pub const RSS_IPV4_DST: u32 = 1 << 6;
/// `DOCA_FLOW_RSS_IPV6_SRC`.
pub const RSS_IPV6_SRC: u32 = 1 << 7;
/// `DOCA_FLOW_RSS_IPV6_DST`.
pub const RSS_IPV6_DST: u32 = 1 << 8;
/// `DOCA_FLOW_RSS_UDP_SRC`.
pub const RSS_L4_SRC_UDP: u32 = 1 << 9;
/// `DOCA_FLOW_RSS_UDP_DST`.
pub const RSS_L4_DST_UDP: u32 = 1 << 10;
/// `DOCA_FLOW_RSS_TCP_SRC`.
pub const RSS_L4_SRC_TCP: u32 = 1 << 11;
/// `DOCA_FLOW_RSS_TCP_DST`.
pub const RSS_L4_DST_TCP: u32 = 1 << 12;

struct Fnv(u64);

impl Fnv {
    /// Final avalanche (murmur3 fmix64): FNV alone leaves the low bits, which pick the
    /// queue, depending on few input bits.
    fn finish(self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }

    fn mix(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Hash of the packet fields selected by `flags`; the same flow always hashes the same.
pub fn hash(pkt: &Parsed, flags: u32) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    match pkt.l3 {
        L3::V4(ip) => {
            let any = flags & RSS_IPV4 != 0;
            if any || flags & RSS_IPV4_SRC != 0 {
                h.mix(&ip.src.to_be_bytes());
            }
            if any || flags & RSS_IPV4_DST != 0 {
                h.mix(&ip.dst.to_be_bytes());
            }
        }
        L3::V6(ip) => {
            let any = flags & RSS_IPV6 != 0;
            if any || flags & RSS_IPV6_SRC != 0 {
                h.mix(&ip.src);
            }
            if any || flags & RSS_IPV6_DST != 0 {
                h.mix(&ip.dst);
            }
        }
        L3::None => {}
    }
    let (src, dst, any, s_only, d_only) = match pkt.l4 {
        L4::Udp { src, dst } => (src, dst, RSS_UDP, RSS_L4_SRC_UDP, RSS_L4_DST_UDP),
        L4::Tcp { src, dst, .. } => (src, dst, RSS_TCP, RSS_L4_SRC_TCP, RSS_L4_DST_TCP),
        _ => return h.finish(),
    };
    if flags & (any | s_only) != 0 {
        h.mix(&src.to_be_bytes());
    }
    if flags & (any | d_only) != 0 {
        h.mix(&dst.to_be_bytes());
    }
    h.finish()
}

/// The queue of `pkt` among `queues`; `None` for an empty list. Without hash flags every
/// packet goes to the first queue.
pub fn pick(pkt: &Parsed, flags: u32, queues: &[u16]) -> Option<u16> {
    match queues.len() {
        0 => None,
        1 => Some(queues[0]),
        _ if flags == 0 => Some(queues[0]),
        n => Some(queues[(hash(pkt, flags) % n as u64) as usize]),
    }
}
