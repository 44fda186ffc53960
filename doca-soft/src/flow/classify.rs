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
        })
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
    /// Pipe name (for logs).
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
pub enum Verdict {
    /// Deliver to this queue id.
    Queue(u16),
    /// A DROP forward.
    Drop,
    /// Nothing matched.
    NoMatch,
}

/// Longest pipe chain followed before a packet is dropped (guards against loops).
pub const MAX_HOPS: usize = 16;

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
    pub fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether the pipe has no entries.
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
pub fn classify(root: &Pipe, pkt: &Parsed, len: usize) -> Verdict {
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
