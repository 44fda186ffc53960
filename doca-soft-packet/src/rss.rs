//! RSS: spread flows over a list of queues by a hash of the fields the RSS flags select,
//! over the outer headers or (for tunnelled frames) the inner ones, optionally symmetric
//! (both directions of a flow hash the same).

use super::parser::{Headers, Parsed, L3, L4};

/// `DOCA_FLOW_RSS_IPV4`.
pub const RSS_IPV4: u32 = 1 << 0;
/// `DOCA_FLOW_RSS_IPV6`.
pub const RSS_IPV6: u32 = 1 << 1;
/// `DOCA_FLOW_RSS_UDP`.
pub const RSS_UDP: u32 = 1 << 2;
/// `DOCA_FLOW_RSS_TCP`.
pub const RSS_TCP: u32 = 1 << 3;
/// `DOCA_FLOW_RSS_ESP`.
pub const RSS_ESP: u32 = 1 << 4;
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
/// `DOCA_FLOW_RSS_AUTO`: every field the frame has.
pub const RSS_AUTO: u32 = 1 << 30;

/// Every flag the hash knows.
pub const RSS_KNOWN: u32 = RSS_IPV4
    | RSS_IPV6
    | RSS_UDP
    | RSS_TCP
    | RSS_ESP
    | RSS_IPV4_SRC
    | RSS_IPV4_DST
    | RSS_IPV6_SRC
    | RSS_IPV6_DST
    | RSS_L4_SRC_UDP
    | RSS_L4_DST_UDP
    | RSS_L4_SRC_TCP
    | RSS_L4_DST_TCP
    | RSS_AUTO;

/// Initial hash state when no RSS key is configured.
pub const DEFAULT_SEED: u64 = 0xcbf2_9ce4_8422_2325;

/// A full RSS forward: target queues, outer and inner hash fields, symmetry, seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RssCfg {
    /// Target queue ids.
    pub queues: Box<[u16]>,
    /// Hash fields of the outer headers.
    pub outer: u32,
    /// Hash fields of the inner headers (tunnelled frames).
    pub inner: u32,
    /// Both directions of a flow hash the same (symmetric Toeplitz in DOCA).
    pub symmetric: bool,
    /// Initial hash state (from the configured RSS key).
    pub seed: u64,
}

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

    /// Mixes a source/destination pair, ordered when the hash is symmetric.
    fn pair(&mut self, a: Option<&[u8]>, b: Option<&[u8]>, symmetric: bool) {
        match (a, b) {
            (Some(a), Some(b)) if symmetric && a > b => {
                self.mix(b);
                self.mix(a);
            }
            (Some(a), Some(b)) => {
                self.mix(a);
                self.mix(b);
            }
            // One side only: symmetric hashing cannot order it; mix it as is.
            (a, b) => {
                if let Some(a) = a {
                    self.mix(a);
                }
                if let Some(b) = b {
                    self.mix(b);
                }
            }
        }
    }
}

/// The seed an RSS key gives (FNV of its bytes).
pub fn seed_of_key(key: &[u8]) -> u64 {
    let mut h = Fnv(DEFAULT_SEED);
    h.mix(key);
    h.0
}

fn hash_layer(h: &Headers, flags: u32, symmetric: bool, seed: u64) -> u64 {
    let flags = if flags & RSS_AUTO != 0 {
        RSS_IPV4 | RSS_IPV6 | RSS_UDP | RSS_TCP | RSS_ESP
    } else {
        flags
    };
    let mut f = Fnv(seed);
    match h.l3 {
        L3::V4(ip) => {
            let any = flags & RSS_IPV4 != 0;
            let (s, d) = (ip.src.to_be_bytes(), ip.dst.to_be_bytes());
            let src = (any || flags & RSS_IPV4_SRC != 0).then_some(&s[..]);
            let dst = (any || flags & RSS_IPV4_DST != 0).then_some(&d[..]);
            f.pair(src, dst, symmetric);
        }
        L3::V6(ip) => {
            let any = flags & RSS_IPV6 != 0;
            let src = (any || flags & RSS_IPV6_SRC != 0).then_some(&ip.src[..]);
            let dst = (any || flags & RSS_IPV6_DST != 0).then_some(&ip.dst[..]);
            f.pair(src, dst, symmetric);
        }
        L3::None => {}
    }
    let (src, dst, any, s_only, d_only) = match h.l4 {
        L4::Udp { src, dst } => (src, dst, RSS_UDP, RSS_L4_SRC_UDP, RSS_L4_DST_UDP),
        L4::Tcp { src, dst, .. } => (src, dst, RSS_TCP, RSS_L4_SRC_TCP, RSS_L4_DST_TCP),
        L4::Esp { spi, .. } => {
            if flags & RSS_ESP != 0 {
                f.mix(&spi.to_be_bytes());
            }
            return f.finish();
        }
        _ => return f.finish(),
    };
    let (s, d) = (src.to_be_bytes(), dst.to_be_bytes());
    let src = (flags & (any | s_only) != 0).then_some(&s[..]);
    let dst = (flags & (any | d_only) != 0).then_some(&d[..]);
    f.pair(src, dst, symmetric);
    f.finish()
}

/// Hash of the outer packet fields selected by `flags`; the same flow always hashes the
/// same.
pub fn hash(pkt: &Parsed, flags: u32) -> u64 {
    hash_layer(&pkt.outer, flags, false, DEFAULT_SEED)
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

impl RssCfg {
    /// The hash of `pkt` under this configuration: the inner headers with the inner flags
    /// when the frame has them and inner flags are set, else the outer headers.
    pub fn hash(&self, pkt: &Parsed) -> u64 {
        match (&pkt.inner, self.inner) {
            (Some(inner), f) if f != 0 => hash_layer(inner, f, self.symmetric, self.seed),
            _ => hash_layer(&pkt.outer, self.outer, self.symmetric, self.seed),
        }
    }

    /// The queue of `pkt`; `None` for an empty list. Without any hash flag every packet goes
    /// to the first queue.
    pub fn pick(&self, pkt: &Parsed) -> Option<u16> {
        match self.queues.len() {
            0 => None,
            1 => Some(self.queues[0]),
            _ if self.outer == 0 && self.inner == 0 => Some(self.queues[0]),
            n => Some(self.queues[(self.hash(pkt) % n as u64) as usize]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{udp4, vxlan4};
    use crate::parser::parse;

    fn cfg(outer: u32, inner: u32, symmetric: bool) -> RssCfg {
        RssCfg {
            queues: (0..8).collect(),
            outer,
            inner,
            symmetric,
            seed: DEFAULT_SEED,
        }
    }

    #[test]
    fn symmetric_hash_is_the_same_both_ways() {
        let a = parse(&udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000, 2000, b"")).unwrap();
        let b = parse(&udp4([10, 0, 0, 2], [10, 0, 0, 1], 2000, 1000, b"")).unwrap();
        let sym = cfg(RSS_IPV4 | RSS_UDP, 0, true);
        assert_eq!(sym.hash(&a), sym.hash(&b));
        let asym = cfg(RSS_IPV4 | RSS_UDP, 0, false);
        assert_ne!(asym.hash(&a), asym.hash(&b));
    }

    #[test]
    fn inner_flags_hash_the_inner_headers() {
        let inner = |sport| udp4([192, 168, 0, 1], [192, 168, 0, 2], sport, 53, b"");
        let t1 = parse(&vxlan4([1, 1, 1, 1], [2, 2, 2, 2], 9, &inner(1))).unwrap();
        let t2 = parse(&vxlan4([1, 1, 1, 1], [2, 2, 2, 2], 9, &inner(2))).unwrap();
        let outer_only = cfg(RSS_IPV4, 0, false);
        assert_eq!(outer_only.hash(&t1), outer_only.hash(&t2), "same outer");
        let by_inner = cfg(RSS_IPV4, RSS_IPV4 | RSS_UDP, false);
        assert_ne!(by_inner.hash(&t1), by_inner.hash(&t2), "inner ports differ");
        // A key changes the hash.
        let mut keyed = by_inner.clone();
        keyed.seed = seed_of_key(&[1, 2, 3]);
        assert_ne!(keyed.hash(&t1), by_inner.hash(&t1));
    }
}
