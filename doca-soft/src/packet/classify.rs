//! Classification tables: pipes (BASIC and CONTROL) of masked field matches, entries with
//! priorities, forwards (RSS, pipe, drop), per-entry counters. Independent of the C structs:
//! the C API translates `struct doca_flow_match` into [`FieldMatch`] lists.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};

use super::parser::{Parsed, L3, L4};
use super::rss;

/// A header or metadata field that pipes can match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// `parser_meta.outer_l3_type` (`doca_flow_l3_meta`: IPV4=1, IPV6=2).
    OuterL3Meta,
    /// `parser_meta.outer_l4_type` (`doca_flow_l4_meta`: TCP=1, UDP=2, ICMP=3).
    OuterL4Meta,
    /// `outer.eth.type` (host order).
    EthType,
    /// `outer.eth.src_mac` (48 bits, first byte most significant).
    SrcMac,
    /// `outer.eth.dst_mac`.
    DstMac,
    /// `outer.l3_type` (`doca_flow_l3_type`: IP4=1, IP6=2).
    L3Type,
    /// `outer.ip4.src_ip` (host order).
    Ip4Src,
    /// `outer.ip4.dst_ip`.
    Ip4Dst,
    /// `outer.ip4.next_proto`.
    Ip4Proto,
    /// `outer.ip4.ttl`.
    Ip4Ttl,
    /// `outer.ip4.dscp_ecn`.
    Ip4DscpEcn,
    /// `outer.l4_type_ext` (`doca_flow_l4_type_ext`: TCP=1, UDP=2, ICMP=3, ICMP6=4).
    L4TypeExt,
    /// `outer.udp.l4_port.src_port`.
    UdpSrc,
    /// `outer.udp.l4_port.dst_port`.
    UdpDst,
    /// `outer.tcp.l4_port.src_port`.
    TcpSrc,
    /// `outer.tcp.l4_port.dst_port`.
    TcpDst,
    /// `outer.tcp.flags`.
    TcpFlags,
    /// `parser_meta.outer_l2_type` (`doca_flow_l2_meta`: NO_VLAN=0, SINGLE=1, MULTI=2).
    OuterL2Meta,
    /// `parser_meta.outer_ip_fragmented` (0/1).
    OuterIpFragmented,
    /// `outer.ip4.version_ihl`.
    Ip4VersionIhl,
    /// `outer.ip4.total_len`.
    Ip4TotalLen,
    /// `outer.ip4.identification`.
    Ip4Id,
    /// `outer.ip4.flags_fragment_offset`.
    Ip4FlagsFrag,
    /// `outer.icmp.type`.
    IcmpType,
    /// `outer.icmp.code`.
    IcmpCode,
    /// `outer.transport.src_port` (UDP or TCP).
    L4Src,
    /// `outer.transport.dst_port` (UDP or TCP).
    L4Dst,
}

/// `doca_flow_l3_meta` / `doca_flow_l3_type` values.
const L3_IP4: u64 = 1;
const L3_IP6: u64 = 2;

impl Field {
    /// The field's value in `pkt`, or `None` when the packet has no such header.
    pub fn value(self, pkt: &Parsed) -> Option<u64> {
        let mac = |m: [u8; 6]| m.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
        let ip4 = match pkt.l3 {
            L3::V4(ip) => Some(ip),
            _ => None,
        };
        Some(match self {
            Field::OuterL3Meta | Field::L3Type => match pkt.l3 {
                L3::V4(_) => L3_IP4,
                L3::V6(_) => L3_IP6,
                L3::None => 0,
            },
            Field::OuterL4Meta => match pkt.l4 {
                L4::Tcp { .. } => 1,
                L4::Udp { .. } => 2,
                L4::Icmp { .. } => 3,
                L4::None => 0,
            },
            Field::L4TypeExt => match pkt.l4 {
                L4::Tcp { .. } => 1,
                L4::Udp { .. } => 2,
                L4::Icmp { v6: false, .. } => 3,
                L4::Icmp { v6: true, .. } => 4,
                L4::None => 0,
            },
            Field::OuterL2Meta => u64::from(pkt.vlan_count),
            Field::OuterIpFragmented => u64::from(pkt.ip_fragmented),
            Field::Ip4VersionIhl => u64::from(ip4?.version_ihl),
            Field::Ip4TotalLen => u64::from(ip4?.total_len),
            Field::Ip4Id => u64::from(ip4?.identification),
            Field::Ip4FlagsFrag => u64::from(ip4?.flags_fragment_offset),
            Field::IcmpType | Field::IcmpCode => match pkt.l4 {
                L4::Icmp { kind, code, .. } => {
                    u64::from(if self == Field::IcmpType { kind } else { code })
                }
                _ => return None,
            },
            Field::EthType => u64::from(pkt.eth_type),
            Field::SrcMac => mac(pkt.src_mac),
            Field::DstMac => mac(pkt.dst_mac),
            Field::Ip4Src => u64::from(ip4?.src),
            Field::Ip4Dst => u64::from(ip4?.dst),
            Field::Ip4Proto => u64::from(ip4?.next_proto),
            Field::Ip4Ttl => u64::from(ip4?.ttl),
            Field::Ip4DscpEcn => u64::from(ip4?.dscp_ecn),
            Field::UdpSrc | Field::UdpDst => match pkt.l4 {
                L4::Udp { src, dst } => u64::from(if self == Field::UdpSrc { src } else { dst }),
                _ => return None,
            },
            Field::TcpSrc | Field::TcpDst | Field::TcpFlags => match pkt.l4 {
                L4::Tcp {
                    src, dst, flags, ..
                } => u64::from(match self {
                    Field::TcpSrc => src,
                    Field::TcpDst => dst,
                    _ => u16::from(flags),
                }),
                _ => return None,
            },
            Field::L4Src | Field::L4Dst => match pkt.l4 {
                L4::Udp { src, dst } | L4::Tcp { src, dst, .. } => {
                    u64::from(if self == Field::L4Src { src } else { dst })
                }
                _ => return None,
            },
        })
    }

    /// All-ones value of the field's width (a template value meaning "changeable").
    pub fn full_mask(self) -> u64 {
        match self {
            Field::OuterL3Meta | Field::OuterL4Meta | Field::L3Type | Field::L4TypeExt => {
                u64::from(u32::MAX)
            }
            Field::SrcMac | Field::DstMac => (1 << 48) - 1,
            Field::Ip4Src | Field::Ip4Dst => u64::from(u32::MAX),
            Field::OuterL2Meta => u64::from(u32::MAX),
            Field::OuterIpFragmented
            | Field::Ip4VersionIhl
            | Field::IcmpType
            | Field::IcmpCode
            | Field::Ip4Proto
            | Field::Ip4Ttl
            | Field::Ip4DscpEcn
            | Field::TcpFlags => 0xff,
            Field::Ip4TotalLen | Field::Ip4Id | Field::Ip4FlagsFrag => 0xffff,
            Field::EthType | Field::UdpSrc | Field::UdpDst | Field::TcpSrc | Field::TcpDst => {
                0xffff
            }
            Field::L4Src | Field::L4Dst => 0xffff,
        }
    }
}

/// One masked comparison: `packet_value & mask == value & mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldMatch {
    /// Which field.
    pub field: Field,
    /// Expected value.
    pub value: u64,
    /// Bits compared.
    pub mask: u64,
}

impl FieldMatch {
    fn hit(&self, pkt: &Parsed) -> bool {
        match self.field.value(pkt) {
            Some(v) => v & self.mask == self.value & self.mask,
            None => self.mask == 0,
        }
    }
}

/// Where a matching packet goes.
#[derive(Clone, Debug, Default)]
pub enum Fwd {
    /// No forward given (for a BASIC entry: use the pipe's forward).
    #[default]
    None,
    /// Drop.
    Drop,
    /// RSS over `queues` with hash `flags` (`DOCA_FLOW_RSS_*`).
    Rss {
        /// Target queue ids.
        queues: Vec<u16>,
        /// Hash fields.
        flags: u32,
    },
    /// Continue in another pipe (dropped if that pipe is gone).
    Pipe(Weak<Pipe>),
}

/// Packet and byte counts of an entry.
#[derive(Debug, Default)]
pub struct Counter {
    packets: AtomicU64,
    bytes: AtomicU64,
}

impl Counter {
    fn add(&self, len: usize) {
        self.packets.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(len as u64, Ordering::Relaxed);
    }
    /// (packets, bytes).
    pub fn get(&self) -> (u64, u64) {
        (
            self.packets.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// One entry of a pipe.
#[derive(Debug)]
pub struct Entry {
    /// All of these must hold.
    pub matches: Vec<FieldMatch>,
    /// CONTROL pipes: lower number wins.
    pub priority: u32,
    /// Forward on match.
    pub fwd: Fwd,
    /// Present when the entry counts hits.
    pub counter: Option<Counter>,
}

impl Entry {
    fn hit(&self, pkt: &Parsed) -> bool {
        self.matches.iter().all(|m| m.hit(pkt))
    }
}

/// Pipe kinds implemented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipeKind {
    /// Entries give values for the pipe's match template; first hit wins.
    Basic,
    /// Entries carry their own match, mask and priority.
    Control,
}

/// A pipe: entries plus forward and miss behaviour.
#[derive(Debug)]
pub struct Pipe {
    /// Pipe name (shown by `Debug`).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub name: String,
    /// BASIC or CONTROL.
    pub kind: PipeKind,
    /// Forward for entries that carry none (BASIC).
    pub fwd: Fwd,
    /// Forward when no entry matches (`Fwd::None`: the packet is a no-match drop).
    pub miss: Fwd,
    /// Counts misses (when the pipe has a miss counter).
    pub miss_counter: Option<Counter>,
    entries: RwLock<Vec<Arc<Entry>>>,
}

/// Outcome of classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Deliver to this queue id.
    Queue(u16),
    /// A DROP forward.
    Drop,
    /// Nothing matched.
    NoMatch,
}

/// Longest pipe chain followed before a packet is dropped (guards against loops).
pub(crate) const MAX_HOPS: usize = 16;

impl Pipe {
    /// A pipe with no entries.
    pub fn new(name: &str, kind: PipeKind, fwd: Fwd, miss: Fwd, miss_counter: bool) -> Pipe {
        Pipe {
            name: name.to_string(),
            kind,
            fwd,
            miss,
            miss_counter: miss_counter.then(Counter::default),
            entries: RwLock::new(Vec::new()),
        }
    }

    /// Adds an entry, visible to the next classified packet.
    pub fn add(&self, e: Entry) -> Arc<Entry> {
        let e = Arc::new(e);
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(e.clone());
        e
    }

    /// Removes an entry; `false` if it is not in this pipe.
    pub fn remove(&self, e: &Arc<Entry>) -> bool {
        let mut v = self.entries.write().unwrap_or_else(|p| p.into_inner());
        let before = v.len();
        v.retain(|x| !Arc::ptr_eq(x, e));
        v.len() != before
    }

    /// Number of entries.
    #[cfg(any(test, feature = "testing"))]
    pub fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether the pipe has no entries.
    #[cfg(any(test, feature = "testing"))]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry that takes `pkt`: BASIC = first hit in insertion order, CONTROL = hit with
    /// the lowest priority number (insertion order breaks ties).
    fn lookup(&self, pkt: &Parsed) -> Option<Arc<Entry>> {
        let v = self.entries.read().unwrap_or_else(|p| p.into_inner());
        let mut best: Option<&Arc<Entry>> = None;
        for e in v.iter().filter(|e| e.hit(pkt)) {
            if self.kind == PipeKind::Basic {
                return Some(e.clone());
            }
            if best.is_none_or(|b| e.priority < b.priority) {
                best = Some(e);
            }
        }
        best.cloned()
    }
}

/// Classifies `pkt` (frame length `len`) starting at `root`.
pub(crate) fn classify(root: &Pipe, pkt: &Parsed, len: usize) -> Verdict {
    let mut next: Option<Arc<Pipe>> = None;
    for _ in 0..MAX_HOPS {
        let pipe: &Pipe = next.as_deref().unwrap_or(root);
        let entry = pipe.lookup(pkt);
        let fwd = match &entry {
            Some(e) => {
                if let Some(c) = &e.counter {
                    c.add(len);
                }
                match &e.fwd {
                    Fwd::None => &pipe.fwd,
                    f => f,
                }
            }
            None => {
                if let Some(c) = &pipe.miss_counter {
                    c.add(len);
                }
                &pipe.miss
            }
        };
        let hop = match fwd {
            Fwd::None => return Verdict::NoMatch,
            Fwd::Drop => return Verdict::Drop,
            Fwd::Rss { queues, flags } => {
                return rss::pick(pkt, *flags, queues).map_or(Verdict::Drop, Verdict::Queue)
            }
            Fwd::Pipe(w) => match w.upgrade() {
                Some(p) => p,
                None => return Verdict::Drop,
            },
        };
        next = Some(hop);
    }
    Verdict::Drop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::parser::parse;
    use crate::testing::frames::{icmp4_echo, tcp4, udp4};

    fn eq(field: Field, value: u64) -> FieldMatch {
        FieldMatch {
            field,
            value,
            mask: field.full_mask(),
        }
    }

    fn entry(matches: Vec<FieldMatch>, priority: u32, fwd: Fwd) -> Entry {
        Entry {
            matches,
            priority,
            fwd,
            counter: Some(Counter::default()),
        }
    }

    fn rss(q: &[u16]) -> Fwd {
        Fwd::Rss {
            queues: q.to_vec(),
            flags: rss::RSS_IPV4 | rss::RSS_UDP | rss::RSS_TCP,
        }
    }

    fn run(root: &Pipe, f: &[u8]) -> Verdict {
        classify(root, &parse(f).unwrap(), f.len())
    }

    #[test]
    fn basic_hits_and_misses() {
        let p = Pipe::new("udp", PipeKind::Basic, rss(&[3]), Fwd::Drop, true);
        let e = p.add(entry(vec![eq(Field::UdpDst, 53)], 0, Fwd::None));
        let dns = udp4([1, 1, 1, 1], [2, 2, 2, 2], 999, 53, b"q");
        let other = udp4([1, 1, 1, 1], [2, 2, 2, 2], 999, 54, b"q");
        let tcp = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 999, 53, 2, b"");
        assert_eq!(run(&p, &dns), Verdict::Queue(3));
        assert_eq!(run(&p, &other), Verdict::Drop);
        assert_eq!(run(&p, &tcp), Verdict::Drop);
        assert_eq!(e.counter.as_ref().unwrap().get(), (1, dns.len() as u64));
        assert_eq!(p.miss_counter.as_ref().unwrap().get().0, 2);
        // Without a miss forward a miss is a no-match.
        let q = Pipe::new("q", PipeKind::Basic, rss(&[0]), Fwd::None, false);
        assert_eq!(run(&q, &dns), Verdict::NoMatch);
        // Removed entries stop matching.
        assert!(p.remove(&e));
        assert!(!p.remove(&e));
        assert_eq!(run(&p, &dns), Verdict::Drop);
    }

    #[test]
    fn control_priorities_and_masks() {
        let root = Pipe::new("root", PipeKind::Control, Fwd::None, Fwd::None, false);
        let tcp_any = root.add(entry(vec![eq(Field::OuterL4Meta, 1)], 3, rss(&[4])));
        let syn = FieldMatch {
            field: Field::TcpFlags,
            value: 0x02,
            mask: 0x07,
        };
        let ctl = root.add(entry(vec![eq(Field::OuterL4Meta, 1), syn], 1, rss(&[12])));
        let udp = root.add(entry(vec![eq(Field::OuterL4Meta, 2)], 0, rss(&[0])));
        let data = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 80, 0x18, b"GET");
        let syn_pkt = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 80, 0x02, b"");
        let synack = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 80, 0x12, b"");
        assert_eq!(run(&root, &data), Verdict::Queue(4));
        assert_eq!(run(&root, &syn_pkt), Verdict::Queue(12));
        assert_eq!(
            run(&root, &synack),
            Verdict::Queue(12),
            "ACK bit is masked out"
        );
        assert_eq!(
            run(&root, &udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"")),
            Verdict::Queue(0)
        );
        assert_eq!(
            run(&root, &icmp4_echo([1, 1, 1, 1], [2, 2, 2, 2], b"")),
            Verdict::NoMatch
        );
        assert_eq!(tcp_any.counter.as_ref().unwrap().get().0, 1);
        assert_eq!(ctl.counter.as_ref().unwrap().get().0, 2);
        assert_eq!(udp.counter.as_ref().unwrap().get().0, 1);
        // Equal priorities: the earlier entry wins.
        let tie = Pipe::new("tie", PipeKind::Control, Fwd::None, Fwd::None, false);
        tie.add(entry(vec![eq(Field::Ip4Proto, 17)], 5, rss(&[7])));
        tie.add(entry(vec![eq(Field::OuterL3Meta, 1)], 5, rss(&[8])));
        assert_eq!(
            run(&tie, &udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"")),
            Verdict::Queue(7)
        );
    }

    #[test]
    fn forward_to_pipe_chains_and_dangling_pipes() {
        let udp = Arc::new(Pipe::new(
            "udp",
            PipeKind::Basic,
            rss(&[9]),
            Fwd::Drop,
            false,
        ));
        udp.add(entry(vec![eq(Field::UdpDst, 4791)], 0, Fwd::None));
        let root = Pipe::new("root", PipeKind::Control, Fwd::None, Fwd::None, false);
        root.add(entry(
            vec![
                eq(Field::EthType, 0x0800),
                eq(Field::L3Type, 1),
                eq(Field::Ip4Proto, 17),
            ],
            0,
            Fwd::Pipe(Arc::downgrade(&udp)),
        ));
        root.add(entry(vec![eq(Field::OuterL4Meta, 3)], 1, Fwd::Drop));
        let hit = udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 4791, b"");
        assert_eq!(run(&root, &hit), Verdict::Queue(9));
        assert_eq!(
            run(&root, &udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 5, b"")),
            Verdict::Drop
        );
        assert_eq!(
            run(&root, &icmp4_echo([1, 1, 1, 1], [2, 2, 2, 2], b"")),
            Verdict::Drop
        );
        drop(udp);
        assert_eq!(run(&root, &hit), Verdict::Drop, "pipe destroyed");
        // A loop is cut after MAX_HOPS.
        let a = Arc::new(Pipe::new("a", PipeKind::Basic, Fwd::None, Fwd::None, false));
        a.add(entry(vec![], 0, Fwd::Pipe(Arc::downgrade(&a))));
        assert_eq!(run(&a, &hit), Verdict::Drop);
    }

    #[test]
    fn rss_spreads_flows_and_is_stable() {
        let queues = [0u16, 1, 2, 3];
        let p = Pipe::new("rss", PipeKind::Basic, rss(&queues), Fwd::Drop, false);
        p.add(entry(vec![eq(Field::OuterL4Meta, 2)], 0, Fwd::None));
        let mut per_queue = [0usize; 4];
        for flow in 0..256u16 {
            let f = udp4(
                [10, 0, (flow >> 8) as u8, flow as u8],
                [10, 1, 0, 1],
                1000 + flow,
                53,
                b"x",
            );
            let Verdict::Queue(q) = run(&p, &f) else {
                panic!("not delivered")
            };
            per_queue[usize::from(q)] += 1;
            // Same 5-tuple, same queue, whatever the payload.
            let g = udp4(
                [10, 0, (flow >> 8) as u8, flow as u8],
                [10, 1, 0, 1],
                1000 + flow,
                53,
                b"other",
            );
            assert_eq!(run(&p, &g), Verdict::Queue(q));
        }
        assert!(per_queue.iter().all(|&n| n > 0), "spread {per_queue:?}");
        // Without hash flags everything goes to the first queue.
        let first = Pipe::new(
            "f",
            PipeKind::Basic,
            Fwd::Rss {
                queues: queues.to_vec(),
                flags: 0,
            },
            Fwd::Drop,
            false,
        );
        first.add(entry(vec![], 0, Fwd::None));
        for flow in 0..16u16 {
            let f = udp4([1, 2, 3, 4], [5, 6, 7, 8], flow, 9, b"");
            assert_eq!(run(&first, &f), Verdict::Queue(0));
        }
    }
}
