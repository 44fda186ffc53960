//! Classification tables: pipes (BASIC, CONTROL, HASH) of compiled entries, forwards (RSS,
//! pipe, port, drop, kernel), per-entry counters, aging timestamps and actions; and the
//! per-frame walk from a port's root pipe to a [`Verdict`]. Independent of the C structs:
//! `flow/` compiles `struct doca_flow_match` into [`Pattern`]s and [`Shape`]s over the
//! match [`Key`].
//!
//! Cost per frame: a pipe with entries builds the frame's [`Key`] once (the first time one
//! is needed); a BASIC or HASH pipe then costs one hash lookup of the words its template
//! compares, a CONTROL pipe a scan of its entries in priority order (each a few masked
//! word compares). Nothing on this path allocates: lookups build their search key in a
//! stack array.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, Weak};

use super::actions::{apply, Actions, Scratch};
use super::key::{off, props, Key, KEY_WORDS};
use super::parser::Parsed;
use super::rss::{self, RssCfg};

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
/// A header or metadata field that legacy [`FieldMatch`]es name (the classifier's test
/// surface; `flow/` compiles the C structs straight into [`Pattern`]s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// `parser_meta.outer_l3_type` (`doca_flow_l3_meta`: IPV4=1, IPV6=2).
    OuterL3Meta,
    /// `parser_meta.outer_l4_type` (`doca_flow_l4_meta`: TCP=1, UDP=2, ICMP=3, ESP=4).
    OuterL4Meta,
    /// `outer.eth.type` (host order).
    EthType,
    /// `outer.eth.src_mac` (48 bits, first byte most significant).
    SrcMac,
    /// `outer.eth.dst_mac`.
    DstMac,
    /// The outer L3 type (IP4=1, IP6=2), as the parser found it.
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
    /// The outer L4 type (TCP=1, UDP=2, ICMP=3, ICMP6=4), as the parser found it.
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
    /// VLAN tags of the outer header: 0, 1 or 2.
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

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
/// How a field's bytes sit in the key: big-endian header bytes or a native u32 enum.
#[derive(Clone, Copy)]
enum Enc {
    Be,
    Ne32,
}

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
impl Field {
    /// (offset in the key, bytes, encoding, props needed).
    fn place(self) -> (usize, usize, Enc, u32) {
        use off::hf;
        let o = off::OUTER;
        let b = |x| props::bit(props::OUTER, x);
        match self {
            Field::OuterL3Meta | Field::L3Type => (off::PM_OUTER_L3, 4, Enc::Ne32, 0),
            Field::OuterL4Meta => (off::PM_OUTER_L4, 4, Enc::Ne32, 0),
            Field::OuterL2Meta => (off::PM_OUTER_L2, 4, Enc::Ne32, 0),
            Field::OuterIpFragmented => (off::PM_OUTER_FRAG, 1, Enc::Be, 0),
            Field::EthType => (o + hf::ETH_TYPE, 2, Enc::Be, 0),
            Field::SrcMac => (o + hf::ETH_SRC, 6, Enc::Be, b(props::ETH)),
            Field::DstMac => (o + hf::ETH_DST, 6, Enc::Be, b(props::ETH)),
            Field::Ip4Src => (o + hf::IP, 4, Enc::Be, b(props::IP4)),
            Field::Ip4Dst => (o + hf::IP + 4, 4, Enc::Be, b(props::IP4)),
            Field::Ip4VersionIhl => (o + hf::IP + 8, 1, Enc::Be, b(props::IP4)),
            Field::Ip4DscpEcn => (o + hf::IP + 9, 1, Enc::Be, b(props::IP4)),
            Field::Ip4TotalLen => (o + hf::IP + 10, 2, Enc::Be, b(props::IP4)),
            Field::Ip4Id => (o + hf::IP + 12, 2, Enc::Be, b(props::IP4)),
            Field::Ip4FlagsFrag => (o + hf::IP + 14, 2, Enc::Be, b(props::IP4)),
            Field::Ip4Proto => (o + hf::IP + 16, 1, Enc::Be, b(props::IP4)),
            Field::Ip4Ttl => (o + hf::IP + 17, 1, Enc::Be, b(props::IP4)),
            Field::UdpSrc => (o + hf::L4, 2, Enc::Be, b(props::UDP)),
            Field::UdpDst => (o + hf::L4 + 2, 2, Enc::Be, b(props::UDP)),
            Field::TcpSrc => (o + hf::L4, 2, Enc::Be, b(props::TCP)),
            Field::TcpDst => (o + hf::L4 + 2, 2, Enc::Be, b(props::TCP)),
            Field::TcpFlags => (o + hf::L4 + 5, 1, Enc::Be, b(props::TCP)),
            Field::IcmpType => (o + hf::L4, 1, Enc::Be, b(props::ICMP)),
            Field::IcmpCode => (o + hf::L4 + 1, 1, Enc::Be, b(props::ICMP)),
            Field::L4Src => (o + hf::L4, 2, Enc::Be, b(props::PORTS)),
            Field::L4Dst => (o + hf::L4 + 2, 2, Enc::Be, b(props::PORTS)),
            // Compiled to props (see FieldMatch::add_to), never to bytes.
            Field::L4TypeExt => (0, 0, Enc::Be, 0),
        }
    }

    /// All-ones value of the field's width (a template value meaning "changeable").
    pub fn full_mask(self) -> u64 {
        match self.place() {
            (_, _, Enc::Ne32, _) => u64::from(u32::MAX),
            (_, 0, _, _) => u64::from(u32::MAX),
            (_, n, _, _) => (1u64 << (8 * n)) - 1,
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

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
/// `doca_flow_l2_meta` values for 0, 1 and 2 VLAN tags.
const L2_META_OF_COUNT: [u64; 3] = [0, 2, 1];

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
impl FieldMatch {
    /// Adds this comparison to a byte-level pattern under construction.
    fn add_to(&self, b: &mut PatternBuilder) {
        if self.mask == 0 {
            return;
        }
        if self.field == Field::L4TypeExt {
            let x = match self.value & self.mask {
                1 => props::TCP,
                2 => props::UDP,
                3 => props::ICMP,
                4 => props::ICMP6,
                _ => return,
            };
            b.need |= props::bit(props::OUTER, x);
            return;
        }
        let (at, len, enc, need) = self.field.place();
        let value = if self.field == Field::OuterL2Meta {
            L2_META_OF_COUNT
                .get(self.value as usize)
                .copied()
                .unwrap_or(3)
        } else {
            self.value
        };
        b.need |= need;
        match enc {
            Enc::Ne32 => {
                b.bytes(
                    at,
                    &(self.mask as u32).to_ne_bytes(),
                    &(value as u32).to_ne_bytes(),
                );
            }
            Enc::Be => {
                let m = self.mask.to_be_bytes();
                let v = value.to_be_bytes();
                b.bytes(at, &m[8 - len..], &v[8 - len..]);
            }
        }
    }
}

/// A compiled match: masked words of the [`Key`] and the props a frame must have.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// (word index, mask, value & mask).
    pub words: Box<[(u16, u64, u64)]>,
    /// [`props`] bits required.
    pub need: u32,
}

impl Pattern {
    #[inline]
    fn hit(&self, k: &Key) -> bool {
        k.props & self.need == self.need
            && self
                .words
                .iter()
                .all(|&(i, m, v)| k.word(usize::from(i)) & m == v)
    }

    /// Whether the pattern reads the L4 checksum flags of the parser metadata.
    pub fn reads_l4_checksums(&self) -> bool {
        reads_l4_csum(self.words.iter().map(|&(i, m, _)| (i, m)))
    }

    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    /// The pattern of legacy field matches.
    pub fn of_fields(matches: &[FieldMatch]) -> Pattern {
        let mut b = PatternBuilder::default();
        for m in matches {
            m.add_to(&mut b);
        }
        b.pattern()
    }
}

fn reads_l4_csum(mut words: impl Iterator<Item = (u16, u64)>) -> bool {
    let probe = |at: usize| {
        let (w, byte) = (at / 8, at % 8);
        let mut m = [0u8; 8];
        m[byte] = 0xff;
        (w as u16, u64::from_ne_bytes(m))
    };
    let (wo, mo) = probe(off::PM_OUTER_L4_CSUM_OK);
    let (wi, mi) = probe(off::PM_INNER_L4_CSUM_OK);
    words.any(|(i, m)| (i == wo && m & mo != 0) || (i == wi && m & mi != 0))
}

/// Builds a [`Pattern`] (or a [`Shape`] and its values) byte by byte.
#[derive(Clone)]
pub struct PatternBuilder {
    mask: [u8; off::INNER + off::hf::SIZE],
    value: [u8; off::INNER + off::hf::SIZE],
    /// [`props`] bits required.
    pub need: u32,
}

impl std::fmt::Debug for PatternBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternBuilder")
            .field("pattern", &self.pattern())
            .finish()
    }
}

impl Default for PatternBuilder {
    fn default() -> Self {
        PatternBuilder {
            mask: [0; off::INNER + off::hf::SIZE],
            value: [0; off::INNER + off::hf::SIZE],
            need: 0,
        }
    }
}

impl PatternBuilder {
    /// Compares `mask` bits of the key bytes at `at` with `value`.
    pub fn bytes(&mut self, at: usize, mask: &[u8], value: &[u8]) {
        for (i, (m, v)) in mask.iter().zip(value).enumerate() {
            self.mask[at + i] |= m;
            self.value[at + i] = (self.value[at + i] & !m) | (v & m);
        }
    }

    fn word(b: &[u8], i: usize) -> u64 {
        let s = &b[i * 8..i * 8 + 8];
        u64::from_ne_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
    }

    /// The pattern built.
    pub fn pattern(&self) -> Pattern {
        let words = (0..KEY_WORDS)
            .filter_map(|i| {
                let m = Self::word(&self.mask, i);
                (m != 0).then(|| (i as u16, m, Self::word(&self.value, i) & m))
            })
            .collect();
        Pattern {
            words,
            need: self.need,
        }
    }

    /// The shape of the bytes compared (for BASIC and HASH pipes).
    pub fn shape(&self) -> Shape {
        let p = self.pattern();
        Shape {
            idx: p.words.iter().map(|w| w.0).collect(),
            mask: p.words.iter().map(|w| w.1).collect(),
            need: p.need,
        }
    }

    /// The values of `shape`'s words (masked).
    pub fn values(&self, shape: &Shape) -> Box<[u64]> {
        shape
            .idx
            .iter()
            .zip(shape.mask.iter())
            .map(|(&i, &m)| Self::word(&self.value, usize::from(i)) & m)
            .collect()
    }
}

/// The words a BASIC or HASH pipe compares (the same for all its entries) and the props
/// frames must have.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// Key word indexes.
    pub idx: Box<[u16]>,
    /// Their masks.
    pub mask: Box<[u64]>,
    /// [`props`] bits required.
    pub need: u32,
}

impl Shape {
    /// The masked words of `k` into `out`; returns how many.
    #[inline]
    fn extract(&self, k: &Key, out: &mut [u64; KEY_WORDS]) -> usize {
        for (n, (&i, &m)) in self.idx.iter().zip(self.mask.iter()).enumerate() {
            out[n] = k.word(usize::from(i)) & m;
        }
        self.idx.len()
    }

    fn reads_l4_checksums(&self) -> bool {
        reads_l4_csum(self.idx.iter().copied().zip(self.mask.iter().copied()))
    }
}

/// The hash a HASH pipe computes over masked key words (also `doca_flow_pipe_calc_hash`).
pub fn words_hash(words: &[u64]) -> u32 {
    let mut h = FxHasher::default();
    for w in words {
        h.write_u64(*w);
    }
    let x = h.finish();
    (x ^ (x >> 32)) as u32
}

/// The IDENTITY map of a HASH pipe: the masked bytes of the key as one big-endian number.
fn identity_of(shape: &Shape, k: &Key) -> u64 {
    let mut acc = 0u64;
    for (&i, &m) in shape.idx.iter().zip(shape.mask.iter()) {
        let w = k.word(usize::from(i)).to_ne_bytes();
        let mb = m.to_ne_bytes();
        for (b, mb) in w.iter().zip(mb.iter()) {
            if *mb != 0 {
                acc = (acc << 8) | u64::from(b & mb);
            }
        }
    }
    acc
}

/// A fast, non-cryptographic hasher for the exact-match tables (keys are packet fields, no
/// adversary controls the table size).
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Where frames are sent by a port forward: the port's transmit side.
pub trait Egress: Send + Sync {
    /// Sends one frame; false when it could not be sent.
    fn send_frame(&self, frame: &[u8]) -> bool;
}

/// A forward target port by id, bound to a started port (or to none) by `flow/`.
#[derive(Default)]
pub struct PortLink {
    target: RwLock<Option<Arc<dyn Egress>>>,
}

impl std::fmt::Debug for PortLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortLink").finish_non_exhaustive()
    }
}

impl PortLink {
    /// Binds (or unbinds) the port.
    pub fn set(&self, target: Option<Arc<dyn Egress>>) {
        *self.target.write().unwrap_or_else(|p| p.into_inner()) = target;
    }

    fn get(&self) -> Option<Arc<dyn Egress>> {
        self.target
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// An RSS configuration shared by id (a shared RSS resource), reconfigurable at any time.
#[derive(Debug, Default)]
pub struct SharedRss {
    cfg: RwLock<Option<Arc<RssCfg>>>,
}

impl SharedRss {
    /// Sets the configuration.
    pub fn set(&self, cfg: Option<Arc<RssCfg>>) {
        *self.cfg.write().unwrap_or_else(|p| p.into_inner()) = cfg;
    }

    fn get(&self) -> Option<Arc<RssCfg>> {
        self.cfg.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Where a matching packet goes.
#[derive(Clone, Debug, Default)]
pub enum Fwd {
    /// No forward given (for an entry: use the pipe's forward).
    #[default]
    None,
    /// Drop.
    Drop,
    /// RSS over `queues` with hash `flags` (`DOCA_FLOW_RSS_*`, outer headers).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    Rss {
        /// Target queue ids.
        queues: Vec<u16>,
        /// Hash fields.
        flags: u32,
    },
    /// RSS with the full configuration (inner fields, symmetry, key).
    RssCfg(Arc<RssCfg>),
    /// RSS by a shared resource's configuration (dropped while it has none).
    SharedRss(Arc<SharedRss>),
    /// Continue in another pipe (dropped if that pipe is gone).
    Pipe(Weak<Pipe>),
    /// Send out of a port (dropped while no port has that id).
    Port(Arc<PortLink>),
    /// To the kernel: not delivered to any queue (counted as no-match).
    Kernel,
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

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
/// One entry of a pipe, as the classifier's test surface builds it.
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

/// How a compiled entry is found in its pipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Matcher {
    /// Compared on its own (CONTROL entries; BASIC entries of the test surface).
    Pattern(Pattern),
    /// The values of the pipe's [`Shape`] (BASIC entries).
    Exact(Box<[u64]>),
    /// A slot of a HASH pipe.
    Index(u32),
}

/// A compiled entry.
#[derive(Debug)]
pub struct Rule {
    /// How it is found.
    pub matcher: Matcher,
    /// CONTROL pipes: lower number wins.
    pub priority: u32,
    /// Forward on match (`Fwd::None`: the pipe's).
    pub fwd: Fwd,
    /// Rewrites applied on match.
    pub actions: Option<Arc<Actions>>,
    /// Counter (shared between entries for a shared counter).
    pub counter: Option<Arc<Counter>>,
    /// Last hit (ns) of an aging entry; `None` for entries that do not age.
    pub last_hit: Option<AtomicU64>,
    legacy: Option<Arc<Entry>>,
    seq: u64,
}

impl Rule {
    /// A compiled entry.
    pub fn new(
        matcher: Matcher,
        priority: u32,
        fwd: Fwd,
        actions: Option<Arc<Actions>>,
        counter: Option<Arc<Counter>>,
        ages: bool,
    ) -> Rule {
        Rule {
            matcher,
            priority,
            fwd,
            actions: actions.filter(|a| !a.is_empty()),
            counter,
            last_hit: ages.then(|| AtomicU64::new(realtime_ns())),
            legacy: None,
            seq: 0,
        }
    }

    fn count(&self, len: usize, now: u64) {
        if let Some(c) = &self.counter {
            c.add(len);
        }
        if let Some(e) = &self.legacy {
            if let Some(c) = &e.counter {
                c.add(len);
            }
        }
        if let Some(t) = &self.last_hit {
            t.store(now, Ordering::Relaxed);
        }
    }
}

/// CLOCK_REALTIME in nanoseconds (the clock frame timestamps use).
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Pipe kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipeKind {
    /// Entries give values for the pipe's match template; first hit wins.
    Basic,
    /// Entries carry their own match, mask and priority.
    Control,
    /// Entries sit at indexes; a hash of the template's fields picks one.
    Hash,
    /// A Flow port's entry point: its root pipe, default-miss policy and counter.
    PortRoot,
}

enum Table {
    Basic {
        shape: Option<Shape>,
        exact: FxMap<Box<[u64]>, Vec<Arc<Rule>>>,
        linear: Vec<Arc<Rule>>,
    },
    Control(Vec<Arc<Rule>>),
    Hash {
        shape: Shape,
        identity: bool,
        slots: Vec<Option<Arc<Rule>>>,
    },
    Root {
        root: Option<Weak<Pipe>>,
    },
}

struct PipeState {
    fwd: Fwd,
    miss: Fwd,
    table: Table,
    len: usize,
}

/// A pipe: entries plus forward and miss behaviour.
pub struct Pipe {
    /// Pipe name (shown by `Debug`).
    pub name: String,
    /// The kind.
    pub kind: PipeKind,
    /// Counts misses (when the pipe has a miss counter).
    pub miss_counter: Option<Counter>,
    state: RwLock<PipeState>,
    l4_csum: AtomicBool,
    seq: AtomicU64,
    port_id: AtomicU16,
}

impl std::fmt::Debug for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipe")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// Outcome of classification.
#[derive(Clone)]
pub enum Verdict {
    /// Deliver to this queue id.
    Queue(u16),
    /// Send out of a port.
    Port(Arc<dyn Egress>),
    /// A DROP forward.
    Drop,
    /// Nothing matched (or a forward to the kernel).
    NoMatch,
}

impl std::fmt::Debug for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Queue(q) => write!(f, "Queue({q})"),
            Verdict::Port(_) => f.write_str("Port"),
            Verdict::Drop => f.write_str("Drop"),
            Verdict::NoMatch => f.write_str("NoMatch"),
        }
    }
}

impl PartialEq for Verdict {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Verdict::Queue(a), Verdict::Queue(b)) => a == b,
            (Verdict::Port(a), Verdict::Port(b)) => Arc::ptr_eq(a, b),
            (Verdict::Drop, Verdict::Drop) | (Verdict::NoMatch, Verdict::NoMatch) => true,
            _ => false,
        }
    }
}

/// Longest pipe chain followed before a packet is dropped (a guard: `flow/` refuses loops).
pub(crate) const MAX_HOPS: usize = 16;

/// Error of [`Pipe::insert`]: a HASH slot is taken or out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertError {
    /// The index is beyond the pipe's entries.
    OutOfRange,
    /// The slot holds an entry.
    Taken,
}

impl Pipe {
    fn with(name: &str, kind: PipeKind, fwd: Fwd, miss: Fwd, miss_counter: bool, t: Table) -> Pipe {
        Pipe {
            name: name.to_string(),
            kind,
            miss_counter: miss_counter.then(Counter::default),
            state: RwLock::new(PipeState {
                fwd,
                miss,
                table: t,
                len: 0,
            }),
            l4_csum: AtomicBool::new(false),
            seq: AtomicU64::new(0),
            port_id: AtomicU16::new(0),
        }
    }

    /// A pipe with no entries (test surface: BASIC entries are scanned in order).
    pub fn new(name: &str, kind: PipeKind, fwd: Fwd, miss: Fwd, miss_counter: bool) -> Pipe {
        let t = match kind {
            PipeKind::Basic => Table::Basic {
                shape: None,
                exact: FxMap::default(),
                linear: Vec::new(),
            },
            PipeKind::Hash => Table::Hash {
                shape: Shape::default(),
                identity: false,
                slots: Vec::new(),
            },
            PipeKind::Control => Table::Control(Vec::new()),
            PipeKind::PortRoot => Table::Root { root: None },
        };
        Pipe::with(name, kind, fwd, miss, miss_counter, t)
    }

    /// A BASIC pipe whose entries all compare `shape`'s words (looked up by hash).
    pub fn basic(name: &str, shape: Shape, fwd: Fwd, miss: Fwd, miss_counter: bool) -> Pipe {
        let l4 = shape.reads_l4_checksums();
        let t = Table::Basic {
            shape: Some(shape),
            exact: FxMap::default(),
            linear: Vec::new(),
        };
        let p = Pipe::with(name, PipeKind::Basic, fwd, miss, miss_counter, t);
        p.l4_csum.store(l4, Ordering::Relaxed);
        p
    }

    /// A HASH pipe of `slots` entries indexed by the hash (or, with `identity`, the value)
    /// of `shape`'s words.
    pub fn hash(
        name: &str,
        shape: Shape,
        slots: u32,
        identity: bool,
        fwd: Fwd,
        miss: Fwd,
        miss_counter: bool,
    ) -> Pipe {
        let l4 = shape.reads_l4_checksums();
        let t = Table::Hash {
            shape,
            identity,
            slots: vec![None; slots as usize],
        };
        let p = Pipe::with(name, PipeKind::Hash, fwd, miss, miss_counter, t);
        p.l4_csum.store(l4, Ordering::Relaxed);
        p
    }

    /// A Flow port's entry point for port id `port_id`: no root pipe yet, default miss to
    /// the kernel (no-match).
    pub fn port_root(port_id: u16) -> Pipe {
        let p = Pipe::new("port-root", PipeKind::PortRoot, Fwd::None, Fwd::None, true);
        p.port_id.store(port_id, Ordering::Relaxed);
        p
    }

    fn read(&self) -> RwLockReadGuard<'_, PipeState> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, PipeState> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Port root: sets (or clears) the root pipe.
    pub fn set_root(&self, root: Option<&Arc<Pipe>>) {
        if let Table::Root { root: r } = &mut self.write().table {
            *r = root.map(Arc::downgrade);
        }
    }

    /// Port root: the root pipe, if any.
    pub fn root(&self) -> Option<Arc<Pipe>> {
        match &self.read().table {
            Table::Root { root } => root.as_ref().and_then(Weak::upgrade),
            _ => None,
        }
    }

    /// The pipe's forward.
    pub fn fwd(&self) -> Fwd {
        self.read().fwd.clone()
    }

    /// The pipe's miss forward (port root: the default miss, `Fwd::None` = kernel).
    pub fn miss(&self) -> Fwd {
        self.read().miss.clone()
    }

    /// Replaces the miss forward.
    pub fn set_miss(&self, miss: Fwd) {
        self.write().miss = miss;
    }

    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    /// Adds a test-surface entry, visible to the next classified packet.
    pub fn add(&self, e: Entry) -> Arc<Entry> {
        let e = Arc::new(e);
        let mut r = Rule::new(
            Matcher::Pattern(Pattern::of_fields(&e.matches)),
            e.priority,
            e.fwd.clone(),
            None,
            None,
            false,
        );
        r.legacy = Some(e.clone());
        // Test-surface entries always fit (no HASH slot).
        let _ = self.insert(r);
        e
    }

    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    /// Removes a test-surface entry; `false` if it is not in this pipe.
    pub fn remove(&self, e: &Arc<Entry>) -> bool {
        let found = self.find(|r| r.legacy.as_ref().is_some_and(|l| Arc::ptr_eq(l, e)));
        found.is_some_and(|r| self.remove_rule(&r))
    }

    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    fn find(&self, f: impl Fn(&Rule) -> bool) -> Option<Arc<Rule>> {
        let st = self.read();
        let hit = |v: &Vec<Arc<Rule>>| v.iter().find(|r| f(r)).cloned();
        match &st.table {
            Table::Basic { exact, linear, .. } => {
                hit(linear).or_else(|| exact.values().find_map(&hit))
            }
            Table::Control(v) => hit(v),
            Table::Hash { slots, .. } => slots.iter().flatten().find(|r| f(r)).cloned(),
            Table::Root { .. } => None,
        }
    }

    /// Adds a compiled entry, visible to the next classified packet.
    pub fn insert(&self, mut r: Rule) -> Result<Arc<Rule>, InsertError> {
        r.seq = self.seq.fetch_add(1, Ordering::Relaxed);
        if let Matcher::Pattern(p) = &r.matcher {
            if p.reads_l4_checksums() {
                self.l4_csum.store(true, Ordering::Relaxed);
            }
        }
        let r = Arc::new(r);
        let mut st = self.write();
        match (&mut st.table, &r.matcher) {
            (Table::Basic { exact, .. }, Matcher::Exact(k)) => {
                exact.entry(k.clone()).or_default().push(r.clone());
            }
            (Table::Basic { linear, .. }, _) => linear.push(r.clone()),
            (Table::Control(v), _) => {
                let at = v.partition_point(|x| x.priority <= r.priority);
                v.insert(at, r.clone());
            }
            (Table::Hash { slots, .. }, Matcher::Index(i)) => {
                let slot = slots.get_mut(*i as usize).ok_or(InsertError::OutOfRange)?;
                if slot.is_some() {
                    return Err(InsertError::Taken);
                }
                *slot = Some(r.clone());
            }
            (Table::Hash { .. }, _) | (Table::Root { .. }, _) => {
                return Err(InsertError::OutOfRange)
            }
        }
        st.len += 1;
        Ok(r)
    }

    /// Removes a compiled entry; `false` if it is not in this pipe.
    pub fn remove_rule(&self, r: &Arc<Rule>) -> bool {
        let mut st = self.write();
        let removed = match (&mut st.table, &r.matcher) {
            (Table::Basic { exact, .. }, Matcher::Exact(k)) => match exact.get_mut(k) {
                Some(v) => {
                    let before = v.len();
                    v.retain(|x| !Arc::ptr_eq(x, r));
                    let gone = v.len() != before;
                    if v.is_empty() {
                        exact.remove(k);
                    }
                    gone
                }
                None => false,
            },
            (Table::Basic { linear: v, .. }, _) | (Table::Control(v), _) => {
                let before = v.len();
                v.retain(|x| !Arc::ptr_eq(x, r));
                v.len() != before
            }
            (Table::Hash { slots, .. }, Matcher::Index(i)) => match slots.get_mut(*i as usize) {
                Some(s) if s.as_ref().is_some_and(|x| Arc::ptr_eq(x, r)) => {
                    *s = None;
                    true
                }
                _ => false,
            },
            _ => false,
        };
        if removed {
            st.len -= 1;
        }
        removed
    }

    /// Replaces an entry by another at the same place (an entry update).
    pub fn replace_rule(&self, old: &Arc<Rule>, mut new: Rule) -> Option<Arc<Rule>> {
        new.seq = old.seq;
        let new = Arc::new(new);
        let mut st = self.write();
        let slot: Option<&mut Arc<Rule>> = match &mut st.table {
            Table::Basic { exact, linear, .. } => match &old.matcher {
                Matcher::Exact(k) => exact
                    .get_mut(k)
                    .and_then(|v| v.iter_mut().find(|x| Arc::ptr_eq(x, old))),
                _ => linear.iter_mut().find(|x| Arc::ptr_eq(x, old)),
            },
            Table::Control(v) => v.iter_mut().find(|x| Arc::ptr_eq(x, old)),
            Table::Hash { slots, .. } => slots.iter_mut().flatten().find(|x| Arc::ptr_eq(x, old)),
            Table::Root { .. } => None,
        };
        let slot = slot?;
        *slot = new.clone();
        Some(new)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.read().len
    }

    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    /// Whether the pipe has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry that takes a frame with key `k`: BASIC = first hit in insertion order,
    /// CONTROL = hit with the lowest priority number (insertion order breaks ties), HASH =
    /// the slot the hash picks.
    fn lookup<'a>(st: &'a PipeState, k: &Key) -> Option<&'a Arc<Rule>> {
        match &st.table {
            Table::Basic {
                shape,
                exact,
                linear,
            } => {
                let mut best: Option<&Arc<Rule>> = None;
                if let Some(s) = shape {
                    if !exact.is_empty() && k.props & s.need == s.need {
                        let mut buf = [0u64; KEY_WORDS];
                        let n = s.extract(k, &mut buf);
                        best = exact.get(&buf[..n]).and_then(|v| v.first());
                    }
                }
                for r in linear {
                    if best.is_some_and(|b| b.seq < r.seq) {
                        break;
                    }
                    if let Matcher::Pattern(p) = &r.matcher {
                        if p.hit(k) {
                            return Some(r);
                        }
                    }
                }
                best
            }
            Table::Control(v) => v.iter().find(|r| match &r.matcher {
                Matcher::Pattern(p) => p.hit(k),
                _ => false,
            }),
            Table::Hash {
                shape,
                identity,
                slots,
            } => {
                if slots.is_empty() || k.props & shape.need != shape.need {
                    return None;
                }
                let i = if *identity {
                    identity_of(shape, k)
                } else {
                    let mut buf = [0u64; KEY_WORDS];
                    let n = shape.extract(k, &mut buf);
                    u64::from(words_hash(&buf[..n]))
                };
                slots[(i % slots.len() as u64) as usize].as_ref()
            }
            Table::Root { .. } => None,
        }
    }
}

/// The frame being classified: the original or the scratch copy actions rewrote.
fn current<'a>(frame: &'a [u8], pkt: &'a Parsed, sc: &'a Scratch) -> (&'a [u8], &'a Parsed) {
    match (&sc.parsed, sc.active) {
        (Some(p), true) => (&sc.buf, p),
        _ => (frame, pkt),
    }
}

/// Classifies `frame` (parsed as `pkt`) starting at `root`, at time `now` (ns). Actions
/// that rewrite the frame leave the rewritten copy in `sc` (`sc.active`): that is the
/// frame to deliver.
pub fn classify(root: &Pipe, frame: &[u8], pkt: &Parsed, sc: &mut Scratch, now: u64) -> Verdict {
    sc.reset();
    if root.kind != PipeKind::PortRoot {
        return walk(root, 0, frame, pkt, sc, now);
    }
    let port_id = root.port_id.load(Ordering::Relaxed);
    let v = match root.root() {
        Some(user) => walk(&user, port_id, frame, pkt, sc, now),
        None => Verdict::NoMatch,
    };
    if v != Verdict::NoMatch {
        return v;
    }
    let (f, _) = current(frame, pkt, sc);
    if let Some(c) = &root.miss_counter {
        c.add(f.len());
    }
    match root.miss() {
        Fwd::Drop => Verdict::Drop,
        _ => Verdict::NoMatch,
    }
}

fn walk(
    start: &Pipe,
    port_id: u16,
    frame: &[u8],
    pkt: &Parsed,
    sc: &mut Scratch,
    now: u64,
) -> Verdict {
    let mut key: Option<Key> = None;
    let mut next: Option<Arc<Pipe>> = None;
    for _ in 0..MAX_HOPS {
        let pipe: &Pipe = next.as_deref().unwrap_or(start);
        let st = pipe.read();
        let hop = {
            let rule = if st.len == 0 {
                None
            } else {
                let (f, p) = current(frame, pkt, sc);
                let k = key.get_or_insert_with(|| Key::new(p, f, port_id));
                if pipe.l4_csum.load(Ordering::Relaxed) {
                    k.ensure_l4_checksums(p, f);
                }
                Pipe::lookup(&st, k)
            };
            let (f, _) = current(frame, pkt, sc);
            let len = f.len();
            let fwd = match rule {
                Some(r) => {
                    r.count(len, now);
                    if let Some(acts) = &r.actions {
                        let k = key.as_mut().expect("a hit implies a key");
                        if apply(acts, frame, pkt, sc, k).is_err() {
                            return Verdict::Drop;
                        }
                    }
                    match &r.fwd {
                        Fwd::None => &st.fwd,
                        f => f,
                    }
                }
                None => {
                    if let Some(c) = &pipe.miss_counter {
                        c.add(len);
                    }
                    &st.miss
                }
            };
            match fwd {
                Fwd::None | Fwd::Kernel => return Verdict::NoMatch,
                Fwd::Drop => return Verdict::Drop,
                Fwd::Rss { queues, flags } => {
                    let (_, p) = current(frame, pkt, sc);
                    return rss::pick(p, *flags, queues).map_or(Verdict::Drop, Verdict::Queue);
                }
                Fwd::RssCfg(cfg) => {
                    let (_, p) = current(frame, pkt, sc);
                    return cfg.pick(p).map_or(Verdict::Drop, Verdict::Queue);
                }
                Fwd::SharedRss(s) => {
                    let (_, p) = current(frame, pkt, sc);
                    return s
                        .get()
                        .and_then(|cfg| cfg.pick(p))
                        .map_or(Verdict::Drop, Verdict::Queue);
                }
                Fwd::Port(link) => return link.get().map_or(Verdict::Drop, Verdict::Port),
                Fwd::Pipe(w) => match w.upgrade() {
                    Some(p) => p,
                    None => return Verdict::Drop,
                },
            }
        };
        drop(st);
        next = Some(hop);
    }
    Verdict::Drop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{icmp4_echo, tcp4, udp4};
    use crate::parser::parse;

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
        let mut sc = Scratch::default();
        classify(root, f, &parse(f).unwrap(), &mut sc, 0)
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
        assert_eq!(run(&p, &tcp), Verdict::Drop, "UDP port does not match TCP");
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
    fn exact_basic_and_hash_tables() {
        // A BASIC pipe over the UDP destination port: entries found by hash.
        let mut b = PatternBuilder::default();
        b.bytes(off::OUTER + off::hf::L4 + 2, &[0xff, 0xff], &[0, 0]);
        b.need = props::bit(props::OUTER, props::UDP);
        let shape = b.shape();
        let p = Pipe::basic("exact", shape.clone(), rss(&[1]), Fwd::Drop, false);
        let mut rules = Vec::new();
        for (port, q) in [(53u16, 5u16), (80, 6)] {
            let mut v = b.clone();
            v.bytes(
                off::OUTER + off::hf::L4 + 2,
                &[0xff, 0xff],
                &port.to_be_bytes(),
            );
            let r = Rule::new(
                Matcher::Exact(v.values(&shape)),
                0,
                rss(&[q]),
                None,
                Some(Arc::new(Counter::default())),
                false,
            );
            rules.push(p.insert(r).unwrap());
        }
        let f = |port| udp4([1, 1, 1, 1], [2, 2, 2, 2], 7, port, b"");
        assert_eq!(run(&p, &f(53)), Verdict::Queue(5));
        assert_eq!(run(&p, &f(80)), Verdict::Queue(6));
        assert_eq!(run(&p, &f(81)), Verdict::Drop);
        assert_eq!(rules[0].counter.as_ref().unwrap().get().0, 1);
        assert!(p.remove_rule(&rules[0]));
        assert_eq!(run(&p, &f(53)), Verdict::Drop);
        assert_eq!(p.len(), 1);

        // A HASH pipe with IDENTITY over the destination port: port % 4 picks the slot.
        let h = Pipe::hash("hash", shape, 4, true, Fwd::None, Fwd::Drop, false);
        for i in 0..4u32 {
            let r = Rule::new(
                Matcher::Index(i),
                0,
                rss(&[10 + i as u16]),
                None,
                None,
                false,
            );
            h.insert(r).unwrap();
        }
        let taken = Rule::new(Matcher::Index(1), 0, Fwd::Drop, None, None, false);
        assert_eq!(h.insert(taken).unwrap_err(), InsertError::Taken);
        let beyond = Rule::new(Matcher::Index(4), 0, Fwd::Drop, None, None, false);
        assert_eq!(h.insert(beyond).unwrap_err(), InsertError::OutOfRange);
        for port in [100u16, 101, 102, 103, 104] {
            assert_eq!(run(&h, &f(port)), Verdict::Queue(10 + port % 4));
        }
    }

    #[test]
    fn port_root_applies_the_default_miss() {
        let user = Arc::new(Pipe::new(
            "u",
            PipeKind::Control,
            Fwd::None,
            Fwd::None,
            false,
        ));
        user.add(entry(vec![eq(Field::OuterL4Meta, 2)], 0, rss(&[2])));
        let root = Pipe::port_root(3);
        let udp = udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"");
        let tcp = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, 2, b"");
        assert_eq!(run(&root, &udp), Verdict::NoMatch, "no root pipe yet");
        root.set_root(Some(&user));
        assert_eq!(run(&root, &udp), Verdict::Queue(2));
        assert_eq!(run(&root, &tcp), Verdict::NoMatch);
        root.set_miss(Fwd::Drop);
        assert_eq!(run(&root, &tcp), Verdict::Drop);
        assert_eq!(root.miss_counter.as_ref().unwrap().get().0, 3);
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
