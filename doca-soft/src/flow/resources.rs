//! Shared resources: counters and RSS configurations addressed by id, in SYSTEM mode from
//! global pools (`doca_flow_cfg_set_nr_shared_resource`), in PORT mode from each port's
//! pools (`doca_flow_port_cfg_set_nr_resources`, ids handed out by
//! `doca_flow_port_shared_resource_get`). Meters, PSP, encap, decap and IPsec SA resources
//! are NOT_SUPPORTED.

use std::ffi::c_void;
use std::sync::Arc;

use super::cfg::{RESOURCE_KINDS, RESOURCE_NAMES, RES_COUNTER, RES_RSS};
use super::fwd::rss_cfg;
use super::state::{Callback, State};
use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{Counter, SharedRss};

/// One kind's ids.
#[derive(Default)]
struct Kind {
    /// Ids handed out (PORT mode `get`); all usable in SYSTEM mode.
    taken: Vec<bool>,
    /// What is bound to each id (the object given to `bind`).
    bound: Vec<Option<usize>>,
    counters: Vec<Option<Arc<Counter>>>,
    rss: Vec<Arc<SharedRss>>,
    configured: Vec<bool>,
}

/// The shared resources of one scope (the process in SYSTEM mode, a port in PORT mode).
#[derive(Default)]
pub(crate) struct Pools {
    kinds: Vec<Kind>,
}

fn kind_index(t: u32) -> DocaResult<usize> {
    let i = t as usize;
    if i >= RESOURCE_KINDS {
        sdk_err!("flow", "shared resource type {t} is out of range");
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(i)
}

fn supported(i: usize) -> DocaResult<()> {
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

    fn kind(&mut self, i: usize, id: u32) -> DocaResult<&mut Kind> {
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
    fn set_cfg(
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

    fn bind(&mut self, i: usize, ids: &[u32], obj: usize) -> DocaResult<()> {
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

    fn query(&mut self, i: usize, ids: &[u32]) -> DocaResult<Vec<(u64, u64)>> {
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
    fn counter(&mut self, id: u32) -> DocaResult<Arc<Counter>> {
        let k = self.kind(RES_COUNTER, id)?;
        Ok(k.counters[id as usize]
            .get_or_insert_with(|| Arc::new(Counter::default()))
            .clone())
    }

    /// The RSS slot of id `id`.
    fn rss(&mut self, id: u32) -> DocaResult<Arc<SharedRss>> {
        let k = self.kind(RES_RSS, id)?;
        Ok(k.rss[id as usize].clone())
    }

    /// Unbinds every id bound to `obj`; returns (kind, id) of each.
    fn unbind(&mut self, obj: usize) -> Vec<(u32, u32)> {
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

impl State {
    fn require_system_mode(&self, what: &str) -> DocaResult<()> {
        if self.cfg()?.port_mode {
            sdk_err!(
                "flow",
                "{what}: the resource mode is PORT; use the port's call"
            );
            return Err(DocaError::BAD_STATE);
        }
        Ok(())
    }

    fn pools_of(&mut self, port: usize) -> DocaResult<&mut Pools> {
        if self.cfg()?.port_mode {
            Ok(&mut self.port_mut(port)?.pools)
        } else {
            Ok(&mut self.shared)
        }
    }

    /// The shared counter `id` an entry of port `port` counts into.
    pub(crate) fn shared_counter(&mut self, port: usize, id: u32) -> DocaResult<Arc<Counter>> {
        self.pools_of(port)?.counter(id)
    }

    /// The shared RSS `id` a forward of port `port` uses.
    pub(crate) fn shared_rss(&mut self, port: usize, id: u32) -> DocaResult<Arc<SharedRss>> {
        self.pools_of(port)?.rss(id)
    }

    /// `doca_flow_shared_resource_set_cfg` (SYSTEM mode).
    pub(crate) fn set_shared_cfg(
        &mut self,
        t: u32,
        id: u32,
        cfg: Option<&sys::doca_flow_shared_resource_cfg_v1>,
    ) -> DocaResult<()> {
        self.require_system_mode("doca_flow_shared_resource_set_cfg")?;
        let i = kind_index(t)?;
        let key = self.cfg()?.rss_key.clone();
        self.shared.set_cfg(i, id, cfg, key.as_deref())
    }

    /// `doca_flow_port_shared_resource_set_cfg` (PORT mode).
    pub(crate) fn set_port_shared_cfg(
        &mut self,
        port: usize,
        t: u32,
        id: u32,
        cfg: Option<&sys::doca_flow_shared_resource_cfg_v1>,
    ) -> DocaResult<()> {
        let i = kind_index(t)?;
        let key = self.cfg()?.rss_key.clone();
        if !self.cfg()?.port_mode {
            sdk_err!(
                "flow",
                "doca_flow_port_shared_resource_set_cfg: the resource mode is SYSTEM"
            );
            return Err(DocaError::BAD_STATE);
        }
        let fp = self.port_mut(port)?;
        supported(i)?;
        if !fp.pools.kind(i, id)?.taken[id as usize] {
            sdk_err!(
                "flow",
                "shared {} id {id} was not taken with doca_flow_port_shared_resource_get",
                RESOURCE_NAMES[i]
            );
            return Err(DocaError::NOT_FOUND);
        }
        fp.pools.set_cfg(i, id, cfg, key.as_deref())
    }

    /// `doca_flow_shared_resources_bind`: `obj` is NULL (global), a port or a pipe.
    pub(crate) fn bind_shared(&mut self, t: u32, ids: &[u32], obj: usize) -> DocaResult<()> {
        let i = kind_index(t)?;
        if obj != 0 && !self.ports.contains(&obj) && !self.pipes.contains(&obj) {
            sdk_err!(
                "flow",
                "shared resources bound to an object that is neither a port nor a pipe"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        let port = if self.ports.contains(&obj) {
            obj
        } else if self.pipes.contains(&obj) {
            self.pipe_mut(obj)?.port
        } else {
            0
        };
        if self.cfg()?.port_mode {
            if port == 0 {
                sdk_err!("flow", "PORT resource mode: bind to a port or a pipe");
                return Err(DocaError::INVALID_VALUE);
            }
            self.port_mut(port)?.pools.bind(i, ids, obj)
        } else {
            self.shared.bind(i, ids, obj)
        }
    }

    /// `doca_flow_shared_resources_query` (SYSTEM mode): counters as (packets, bytes).
    pub(crate) fn query_shared(&mut self, t: u32, ids: &[u32]) -> DocaResult<Vec<(u64, u64)>> {
        self.require_system_mode("doca_flow_shared_resources_query")?;
        let i = kind_index(t)?;
        self.shared.query(i, ids)
    }

    /// `doca_flow_port_shared_resources_query` (PORT mode).
    pub(crate) fn query_port_shared(
        &mut self,
        port: usize,
        t: u32,
        ids: &[u32],
    ) -> DocaResult<Vec<(u64, u64)>> {
        let i = kind_index(t)?;
        if !self.cfg()?.port_mode {
            sdk_err!(
                "flow",
                "doca_flow_port_shared_resources_query: the resource mode is SYSTEM"
            );
            return Err(DocaError::BAD_STATE);
        }
        self.port_mut(port)?.pools.query(i, ids)
    }

    /// `doca_flow_port_shared_resource_get` (PORT mode): a free id, EMPTY when none.
    pub(crate) fn take_port_shared(&mut self, port: usize, t: u32) -> DocaResult<u32> {
        let i = kind_index(t)?;
        if !self.cfg()?.port_mode {
            sdk_err!(
                "flow",
                "doca_flow_port_shared_resource_get: the resource mode is SYSTEM"
            );
            return Err(DocaError::BAD_STATE);
        }
        let fp = self.port_mut(port)?;
        supported(i)?;
        let k = fp.pools.kinds.get_mut(i).ok_or(DocaError::EMPTY)?;
        let id = k.taken.iter().position(|t| !t).ok_or(DocaError::EMPTY)?;
        k.taken[id] = true;
        Ok(id as u32)
    }

    /// `doca_flow_port_shared_resource_put` (PORT mode).
    pub(crate) fn put_port_shared(&mut self, port: usize, t: u32, id: u32) -> DocaResult<()> {
        let i = kind_index(t)?;
        if !self.cfg()?.port_mode {
            return Err(DocaError::BAD_STATE);
        }
        let fp = self.port_mut(port)?;
        let k = fp.pools.kind(i, id)?;
        let at = id as usize;
        if !k.taken[at] {
            return Err(DocaError::NOT_FOUND);
        }
        k.taken[at] = false;
        k.configured[at] = false;
        k.counters[at] = None;
        k.rss[at].set(None);
        k.bound[at] = None;
        Ok(())
    }

    /// Unbinds what is bound to `obj` (a port or pipe going away); the unbind callbacks.
    pub(crate) fn unbind_all(&mut self, obj: *mut c_void) -> Vec<Callback> {
        let cb = self.cfg.as_ref().and_then(|c| c.cb_unbind);
        let mut gone = self.shared.unbind(obj as usize);
        for &p in &self.ports {
            if let Ok(fp) = self.port_mut(p) {
                gone.extend(fp.pools.unbind(obj as usize));
            }
        }
        match cb {
            Some(cb) => gone
                .into_iter()
                .map(|(kind, id)| Callback::Unbind { cb, kind, id, obj })
                .collect(),
            None => Vec::new(),
        }
    }
}
