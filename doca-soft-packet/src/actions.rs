//! Header-rewriting actions, compiled: byte writes (or additions) into the outer or inner
//! headers, VLAN pop and push, and writes into the frame's programmable metadata (which
//! lives in the match key, not in the frame). Applying them to a frame fixes the IPv4
//! header checksum and the L4 checksums of every layer they touched, as a NIC does.

use super::checksum::fix_ip_at;
use super::key::Key;
use super::parser::{parse, Headers, Parsed};

/// Which header of a layer a [`ByteOp`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hdr {
    /// The Ethernet header (MAC addresses: offsets 0..12).
    Eth,
    /// The Ethernet type after the VLAN tags (2 bytes).
    EthType,
    /// The TCI of VLAN tag 0 or 1 (2 bytes).
    Vlan(u8),
    /// The L3 header.
    L3,
    /// The L4 header.
    L4,
}

/// One masked write into a header: `bytes[off..off+len] = (old & !mask) | (value & mask)`,
/// or with `add`, the big-endian integer there plus `value` (wrapping, under `mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteOp {
    /// The inner layer instead of the outer one.
    pub inner: bool,
    /// Which header.
    pub hdr: Hdr,
    /// Offset in the header.
    pub off: u8,
    /// Bytes written (at most 16).
    pub len: u8,
    /// Bits written.
    pub mask: [u8; 16],
    /// The value (or addend).
    pub value: [u8; 16],
    /// Add instead of write.
    pub add: bool,
    /// [`super::key::props`] bits the frame must have for the write to apply (the header
    /// it was written for); frames without them are left alone.
    pub need: u32,
}

/// A compiled set of actions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Actions {
    /// Remove the outermost VLAN tag.
    pub pop_vlan: bool,
    /// Header writes.
    pub ops: Vec<ByteOp>,
    /// Push a VLAN tag: the tag protocol id and the TCI, big-endian.
    pub push_vlan: Option<[u8; 4]>,
    /// Metadata writes: (key word, mask, value).
    pub meta: Vec<(u16, u64, u64)>,
    /// Metadata additions: (byte offset of a big-endian 32-bit word, addend).
    pub meta_add: Vec<(u16, u32)>,
}

impl Actions {
    /// Whether the actions change the frame's bytes.
    pub fn touches_frame(&self) -> bool {
        self.pop_vlan || self.push_vlan.is_some() || !self.ops.is_empty()
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        !self.touches_frame() && self.meta.is_empty() && self.meta_add.is_empty()
    }
}

/// A lane's working copy of a frame that actions rewrote, and its parse.
#[derive(Debug, Default)]
pub struct Scratch {
    /// The rewritten frame.
    pub buf: Vec<u8>,
    /// Its parse (valid while `active`).
    pub parsed: Option<Parsed>,
    /// Whether `buf` holds the frame being classified.
    pub active: bool,
}

impl Scratch {
    /// Forgets the previous frame (keeps the buffer's memory).
    pub fn reset(&mut self) {
        self.active = false;
    }
}

/// Error: the rewritten frame no longer parses (it is dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unparsable;

fn layer_of(p: &Parsed, inner: bool) -> Option<&Headers> {
    if inner {
        p.inner.as_ref()
    } else {
        Some(&p.outer)
    }
}

fn header_start(h: &Headers, hdr: Hdr) -> Option<usize> {
    let l2 = usize::from(h.l2_off);
    match hdr {
        Hdr::Eth => h.has_eth.then_some(l2),
        Hdr::EthType => {
            if !h.has_eth {
                None
            } else {
                Some(l2 + 12 + 4 * usize::from(h.vlan_count))
            }
        }
        Hdr::Vlan(i) => (h.has_eth && i < h.vlan_count).then_some(l2 + 14 + 4 * usize::from(i)),
        Hdr::L3 => (h.l3_off != 0).then_some(usize::from(h.l3_off)),
        Hdr::L4 => (h.l4_off != 0).then_some(usize::from(h.l4_off)),
    }
}

/// Whether bytes `off..off + len` of an IPv4 (`version` 4) or IPv6 header overlap the
/// fields the TCP/UDP (and ICMPv6) pseudo-header carries: IPv4 protocol and addresses,
/// IPv6 payload length, next header and addresses.
fn in_pseudo_header(version: u8, off: usize, len: usize) -> bool {
    let ranges: &[(usize, usize)] = match version {
        4 => &[(9, 10), (12, 20)],
        6 => &[(4, 7), (8, 40)],
        _ => return true,
    };
    ranges.iter().any(|&(lo, hi)| off < hi && lo < off + len)
}

fn write(buf: &mut [u8], at: usize, op: &ByteOp) -> bool {
    let len = usize::from(op.len);
    let Some(dst) = buf.get_mut(at..at + len) else {
        return false;
    };
    if op.add {
        let mut old = 0u128;
        let mut add = 0u128;
        let mut mask = 0u128;
        for ((&d, &v), &m) in dst.iter().zip(&op.value).zip(&op.mask) {
            old = (old << 8) | u128::from(d);
            add = (add << 8) | u128::from(v);
            mask = (mask << 8) | u128::from(m);
        }
        let new = (old & !mask) | (old.wrapping_add(add) & mask);
        for i in (0..len).rev() {
            dst[len - 1 - i] = (new >> (8 * i)) as u8;
        }
    } else {
        for ((d, &v), &m) in dst.iter_mut().zip(&op.value).zip(&op.mask) {
            *d = (*d & !m) | (v & m);
        }
    }
    true
}

/// Applies `acts` to the frame being classified: `frame`/`pkt` the first time, the scratch
/// copy after an earlier pipe rewrote it. Updates `key` (metadata, and every header field
/// after a rewrite). Err when the rewritten frame does not parse any more.
pub(crate) fn apply(
    acts: &Actions,
    frame: &[u8],
    pkt: &Parsed,
    sc: &mut Scratch,
    key: &mut Key,
) -> Result<(), Unparsable> {
    for &(w, mask, value) in &acts.meta {
        key.set_word(usize::from(w), mask, value);
    }
    for &(at, add) in &acts.meta_add {
        key.add_be32(usize::from(at), add);
    }
    if !acts.touches_frame() {
        return Ok(());
    }
    if !sc.active {
        sc.buf.clear();
        sc.buf.extend_from_slice(frame);
        sc.parsed = Some(*pkt);
        sc.active = true;
    }
    let mut p = sc.parsed.ok_or(Unparsable)?;
    if acts.pop_vlan && p.outer.has_eth && p.outer.vlan_count > 0 {
        let at = usize::from(p.outer.l2_off) + 12;
        sc.buf.drain(at..at + 4);
        p = parse(&sc.buf).map_err(|_| Unparsable)?;
    }
    // Which layers' checksums need fixing: [outer, inner] x [L3 header, L4].
    let mut touched = [[false; 2]; 2];
    for op in &acts.ops {
        if key.props & op.need != op.need {
            continue;
        }
        let Some(h) = layer_of(&p, op.inner) else {
            continue;
        };
        let Some(at) = header_start(h, op.hdr) else {
            continue;
        };
        if write(&mut sc.buf, at + usize::from(op.off), op) {
            let layer = usize::from(op.inner);
            match op.hdr {
                // The L4 checksum covers the pseudo-header: fix it too when the write
                // reached into it (a DSCP or TTL rewrite leaves it as it was).
                Hdr::L3 => {
                    touched[layer][0] = true;
                    let version = sc.buf.get(at).map_or(0, |b| b >> 4);
                    if in_pseudo_header(version, usize::from(op.off), usize::from(op.len)) {
                        touched[layer][1] = true;
                    }
                }
                Hdr::L4 => touched[layer][1] = true,
                _ => {}
            }
        }
    }
    if touched[1][0] || touched[1][1] {
        if let Some(inner) = &p.inner {
            fix_ip_at(
                &mut sc.buf,
                usize::from(inner.l3_off),
                touched[1][0],
                touched[1][1],
            );
        }
        // The outer UDP (or TCP) checksum covers the inner bytes.
        touched[0][1] = true;
    }
    if touched[0][0] || touched[0][1] {
        fix_ip_at(
            &mut sc.buf,
            usize::from(p.outer.l3_off),
            touched[0][0],
            touched[0][1],
        );
    }
    if let Some(tag) = acts.push_vlan {
        if p.outer.has_eth {
            let at = usize::from(p.outer.l2_off) + 12;
            sc.buf.splice(at..at, tag);
        }
    }
    let p = parse(&sc.buf).map_err(|_| Unparsable)?;
    sc.parsed = Some(p);
    key.refill(&p, &sc.buf);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::internet_checksum;
    use crate::frames::{tcp4, udp4};
    use crate::key::props;

    fn op(hdr: Hdr, off: u8, value: &[u8], need: u32) -> ByteOp {
        let mut v = [0u8; 16];
        let mut m = [0u8; 16];
        v[..value.len()].copy_from_slice(value);
        m[..value.len()].fill(0xff);
        ByteOp {
            inner: false,
            hdr,
            off,
            len: value.len() as u8,
            mask: m,
            value: v,
            add: false,
            need,
        }
    }

    fn tcp_sum_ok(f: &[u8]) -> bool {
        let mut pseudo = [0u8; 12];
        pseudo[..8].copy_from_slice(&f[26..34]);
        pseudo[9] = 6;
        pseudo[10..12].copy_from_slice(&((f.len() - 34) as u16).to_be_bytes());
        let acc =
            crate::checksum::sum_be_words(&f[34..], crate::checksum::sum_be_words(&pseudo, 0));
        crate::checksum::fold_sum(acc) == 0
    }

    #[test]
    fn rewrites_fields_and_fixes_checksums() {
        let mut f = tcp4([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 0x18, b"payload");
        crate::checksum::apply_offloads(&mut f, true, true);
        let pkt = parse(&f).unwrap();
        let mut key = Key::new(&pkt, &f, 0);
        let ip4 = props::bit(props::OUTER, props::IP4);
        let tcp = props::bit(props::OUTER, props::TCP);
        let mut ttl_dec = op(Hdr::L3, 8, &[0xff], ip4);
        ttl_dec.add = true;
        let acts = Actions {
            ops: vec![
                op(Hdr::Eth, 0, &[0xaa; 6], 0),
                op(Hdr::L3, 16, &[192, 168, 9, 9], ip4),
                op(Hdr::L4, 2, &8080u16.to_be_bytes(), tcp),
                ttl_dec,
            ],
            ..Default::default()
        };
        let mut sc = Scratch::default();
        apply(&acts, &f, &pkt, &mut sc, &mut key).unwrap();
        let g = &sc.buf;
        assert_eq!(&g[..6], &[0xaa; 6]);
        assert_eq!(&g[30..34], &[192, 168, 9, 9]);
        assert_eq!(&g[36..38], &8080u16.to_be_bytes());
        assert_eq!(g[22], 63, "TTL 64 + 0xff wraps to 63");
        assert_eq!(internet_checksum(&g[14..34]), 0, "IPv4 header checksum");
        assert!(tcp_sum_ok(g), "TCP checksum");
        assert_eq!(&key.bytes()[116..120], &[192, 168, 9, 9], "key follows");
        // The original is untouched.
        assert_eq!(&f[30..34], &[10, 0, 0, 2]);
    }

    #[test]
    fn rewrites_outside_the_pseudo_header_leave_l4_checksums_alone() {
        // ICMP and UDP frames whose L4 checksum bytes are deliberately not the right sum:
        // a DSCP or TTL rewrite fixes the IPv4 header checksum and nothing else.
        let ip4 = props::bit(props::OUTER, props::IP4);
        for proto_frame in [
            crate::frames::icmp4_echo([10, 0, 0, 1], [10, 0, 0, 2], b"ping"),
            udp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, b"x"),
        ] {
            let mut f = proto_frame;
            f[36] = 0x12; // ICMP checksum high byte / UDP destination port high byte
            f[41] = 0x34; // UDP checksum low byte / ICMP sequence low byte
            let pkt = parse(&f).unwrap();
            let mut key = Key::new(&pkt, &f, 0);
            let acts = Actions {
                ops: vec![op(Hdr::L3, 1, &[0x10], ip4), op(Hdr::L3, 8, &[9], ip4)],
                ..Default::default()
            };
            let mut sc = Scratch::default();
            apply(&acts, &f, &pkt, &mut sc, &mut key).unwrap();
            let g = &sc.buf;
            assert_eq!((g[15], g[22]), (0x10, 9));
            assert_eq!(internet_checksum(&g[14..34]), 0, "IPv4 header checksum");
            assert_eq!(&g[34..], &f[34..], "L4 bytes untouched");
        }
        // An address is in the pseudo-header: the UDP checksum follows it.
        for (version, off, len, covered) in [
            (4, 12, 4, true),
            (4, 16, 4, true),
            (4, 9, 1, true),
            (4, 1, 1, false),
            (4, 8, 1, false),
            (4, 10, 2, false),
            (6, 0, 4, false),
            (6, 7, 1, false),
            (6, 4, 2, true),
            (6, 24, 16, true),
        ] {
            assert_eq!(
                in_pseudo_header(version, off, len),
                covered,
                "v{version} {off}+{len}"
            );
        }
    }

    #[test]
    fn vlan_push_and_pop_and_ops_for_absent_headers() {
        let f = udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"x");
        let pkt = parse(&f).unwrap();
        let mut key = Key::new(&pkt, &f, 0);
        let push = Actions {
            push_vlan: Some([0x81, 0x00, 0x00, 0x2a]),
            // A TCP write does not apply to a UDP frame.
            ops: vec![op(
                Hdr::L4,
                13,
                &[0x02],
                props::bit(props::OUTER, props::TCP),
            )],
            ..Default::default()
        };
        let mut sc = Scratch::default();
        apply(&push, &f, &pkt, &mut sc, &mut key).unwrap();
        assert_eq!(sc.buf.len(), f.len() + 4);
        assert_eq!(&sc.buf[12..16], &[0x81, 0x00, 0x00, 0x2a]);
        assert_eq!(&sc.buf[16..], &f[12..], "rest unchanged");
        let p2 = sc.parsed.unwrap();
        assert_eq!(p2.outer.vlan_count, 1);
        let pop = Actions {
            pop_vlan: true,
            ..Default::default()
        };
        let tagged = sc.buf.clone();
        let mut sc2 = Scratch::default();
        apply(&pop, &tagged, &p2, &mut sc2, &mut key).unwrap();
        assert_eq!(sc2.buf, f);
    }
}
