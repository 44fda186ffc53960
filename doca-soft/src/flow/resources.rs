//! Shared resources: counters and RSS configurations addressed by id, in SYSTEM mode from
//! global pools (`doca_flow_cfg_set_nr_shared_resource`), in PORT mode from each port's
//! pools (`doca_flow_port_cfg_set_nr_resources`, ids handed out by
//! `doca_flow_port_shared_resource_get`). Meters, PSP, encap, decap and IPsec SA resources
//! are NOT_SUPPORTED.

use std::ffi::c_void;
use std::sync::Arc;

use super::cfg::RESOURCE_NAMES;
use super::pools::{kind_index, supported, Pools};
use super::state::{Callback, State};
use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{Counter, SharedRss};

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
