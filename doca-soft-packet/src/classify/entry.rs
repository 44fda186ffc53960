//! Entries: compiled rules with their counters, aging timestamps and actions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{Actions, FieldMatch, Fwd, Pattern};

/// Packet and byte counts of an entry.
#[derive(Debug, Default)]
pub struct Counter {
    packets: AtomicU64,
    bytes: AtomicU64,
}

impl Counter {
    pub(super) fn add(&self, len: usize) {
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
    /// The values of the pipe's `Shape` (BASIC entries).
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
    pub(super) legacy: Option<Arc<Entry>>,
    pub(super) seq: u64,
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

    pub(super) fn count(&self, len: usize, now: u64) {
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
