//! The engine's view of the memory-key registry: registrations it looked up, kept until
//! any registration goes away (the registry's generation moves).

use super::mkey::{self, Access, Region};
use std::collections::HashMap;
use std::sync::Arc;

/// The engine's cache of local registrations (dropped whenever one is deregistered).
#[derive(Default)]
pub(super) struct LocalKeys {
    generation: u64,
    map: HashMap<u32, Arc<Region>>,
}

impl LocalKeys {
    /// The registration of `key`.
    pub(super) fn get(&mut self, key: u32) -> Option<&Arc<Region>> {
        let g = mkey::generation();
        if g != self.generation {
            self.map.clear();
            self.generation = g;
        }
        match self.map.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.into_mut()),
            std::collections::hash_map::Entry::Vacant(e) => Some(e.insert(mkey::lookup(key)?)),
        }
    }

    /// The registration of `key` if it covers `[addr, addr + len)` with `need` rights.
    pub(super) fn check(
        &mut self,
        key: u32,
        addr: u64,
        len: u64,
        need: Access,
    ) -> Option<Arc<Region>> {
        let r = self.get(key)?;
        (r.covers(addr, len) && r.access.has(need)).then(|| r.clone())
    }
}
