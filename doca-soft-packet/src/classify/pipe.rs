//! Pipes (BASIC, CONTROL, HASH): their tables of entries, insertion and removal, and the
//! lookup of one pipe.

use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, Weak};

use super::{
    identity_of, words_hash, Counter, Entry, Fwd, FxMap, Key, Matcher, Pattern, Rule, Shape,
    KEY_WORDS,
};

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

pub(super) struct PipeState {
    pub(super) fwd: Fwd,
    pub(super) miss: Fwd,
    table: Table,
    pub(super) len: usize,
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
    pub(super) l4_csum: AtomicBool,
    seq: AtomicU64,
    pub(super) port_id: AtomicU16,
}

impl std::fmt::Debug for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipe")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

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

    pub(super) fn read(&self) -> RwLockReadGuard<'_, PipeState> {
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
    pub(super) fn lookup<'a>(st: &'a PipeState, k: &Key) -> Option<&'a Arc<Rule>> {
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
