//! The pools of shared resources (counters, RSS configurations) of one scope: the process in
//! SYSTEM mode, a port in PORT mode. The calls that reach them are in `resources`.

use std::sync::Arc;

use super::cfg::{RESOURCE_KINDS, RESOURCE_NAMES, RES_COUNTER, RES_RSS};
use super::rss::rss_cfg;
use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{Counter, SharedRss};

/// One kind's ids.
#[derive(Default)]
pub(crate) struct Kind {
    /// Ids handed out (PORT mode `get`); all usable in SYSTEM mode.
    pub(crate) taken: Vec<bool>,
    /// What is bound to each id (the object given to `bind`).
    pub(crate) bound: Vec<Option<usize>>,
    pub(crate) counters: Vec<Option<Arc<Counter>>>,
    pub(crate) rss: Vec<Arc<SharedRss>>,
    pub(crate) configured: Vec<bool>,
}

/// The shared resources of one scope (the process in SYSTEM mode, a port in PORT mode).
#[derive(Default)]
pub(crate) struct Pools {
    pub(crate) kinds: Vec<Kind>,
}

/// The index of a resource type; INVALID_VALUE when out of range.
pub(crate) fn kind_index(t: u32) -> DocaResult<usize> {
    let i = t as usize;
    if i >= RESOURCE_KINDS {
        sdk_err!("flow", "shared resource type {t} is out of range");
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(i)
}

/// NOT_SUPPORTED (one log line) for the kinds the runtime does not have.
pub(crate) fn supported(i: usize) -> DocaResult<()> {
    if i == RES_COUNTER || i == RES_RSS {
        return Ok(());
    }
    sdk_err!(
        "flow",
        "shared {} resources are not supported",
        RESOURCE_NAMES[i]
    );
    Err(DocaError::NOT_SUPPORTED)
}

impl Pools {
    /// Pools of the given sizes per kind.
    pub(crate) fn new(sizes: [u32; RESOURCE_KINDS]) -> Pools {
        Pools {
            kinds: sizes
                .iter()
                .map(|&n| {
                    let n = n as usize;
                    Kind {
                        taken: vec![false; n],
                        bound: vec![None; n],
                        counters: vec![None; n],
                        rss: (0..n).map(|_| Arc::new(SharedRss::default())).collect(),
                        configured: vec![false; n],
                    }
                })
                .collect(),
        }
    }

    pub(crate) fn kind(&mut self, i: usize, id: u32) -> DocaResult<&mut Kind> {
        match self.kinds.get_mut(i) {
            Some(k) if (id as usize) < k.taken.len() => Ok(k),
            _ => {
                sdk_err!(
                    "flow",
                    "shared {} id {id} is beyond the pool",
                    RESOURCE_NAMES[i]
                );
                Err(DocaError::INVALID_VALUE)
            }
        }
    }

    /// `set_cfg`: counters need no configuration (a NULL cfg is fine); RSS takes
    /// `rss_cfg`.
    pub(crate) fn set_cfg(
        &mut self,
        i: usize,
        id: u32,
        cfg: Option<&sys::doca_flow_shared_resource_cfg_v1>,
        key: Option<&[u8]>,
    ) -> DocaResult<()> {
        supported(i)?;
        let k = self.kind(i, id)?;
        let at = id as usize;
        if i == RES_COUNTER {
            k.counters[at].get_or_insert_with(|| Arc::new(Counter::default()));
        } else {
            let Some(c) = cfg else {
                sdk_err!("flow", "shared RSS {id}: no configuration");
                return Err(DocaError::INVALID_VALUE);
            };
            // SAFETY: the union holds plain data; the RSS kind selects rss_cfg.
            let r = unsafe { c.__bindgen_anon_1.rss_cfg };
            k.rss[at].set(Some(Arc::new(rss_cfg(&r, key)?)));
        }
        k.configured[at] = true;
        Ok(())
    }

    pub(crate) fn bind(&mut self, i: usize, ids: &[u32], obj: usize) -> DocaResult<()> {
        supported(i)?;
        for &id in ids {
            self.kind(i, id)?;
        }
        for &id in ids {
            let k = self.kind(i, id)?;
            let at = id as usize;
            if i == RES_COUNTER {
                k.counters[at].get_or_insert_with(|| Arc::new(Counter::default()));
            }
            k.bound[at] = Some(obj);
        }
        Ok(())
    }

    pub(crate) fn query(&mut self, i: usize, ids: &[u32]) -> DocaResult<Vec<(u64, u64)>> {
        if i != RES_COUNTER {
            sdk_err!(
                "flow",
                "querying shared {} resources is not supported",
                RESOURCE_NAMES[i]
            );
            return Err(DocaError::NOT_SUPPORTED);
        }
        ids.iter()
            .map(|&id| {
                let k = self.kind(i, id)?;
                Ok(k.counters[id as usize].as_ref().map_or((0, 0), |c| c.get()))
            })
            .collect()
    }

    /// The counter of id `id`, created when first used.
    pub(crate) fn counter(&mut self, id: u32) -> DocaResult<Arc<Counter>> {
        let k = self.kind(RES_COUNTER, id)?;
        Ok(k.counters[id as usize]
            .get_or_insert_with(|| Arc::new(Counter::default()))
            .clone())
    }

    /// The RSS slot of id `id`.
    pub(crate) fn rss(&mut self, id: u32) -> DocaResult<Arc<SharedRss>> {
        let k = self.kind(RES_RSS, id)?;
        Ok(k.rss[id as usize].clone())
    }

    /// Unbinds every id bound to `obj`; returns (kind, id) of each.
    pub(crate) fn unbind(&mut self, obj: usize) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for (i, k) in self.kinds.iter_mut().enumerate() {
            for (id, b) in k.bound.iter_mut().enumerate() {
                if *b == Some(obj) {
                    *b = None;
                    out.push((i as u32, id as u32));
                }
            }
        }
        out
    }
}
