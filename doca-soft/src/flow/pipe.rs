//! `struct doca_flow_pipe`: a pipe's compiled table (in the classifier), its template,
//! actions and monitor, its forwards in the pipe graph, its entries, and the pipe-level
//! operations (create, destroy, miss update, resize, hash, dump).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use super::cfg::{template_of, PipeCfg};
use super::handles::{Forward, PipeEvent, PipeHandle, Resize};
use super::matching::{MatchBytes, Template};
use super::state::{Callback, State};
use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{words_hash, Fwd, Pipe, PipeKind};

/// `doca_flow_pipe_hash_map_algorithm` bits the runtime implements.
const HASH_MAP_HASH: u32 = 1 << 0;
const HASH_MAP_IDENTITY: u32 = 1 << 2;

fn not_supported(what: &str) -> DocaError {
    sdk_err!("flow", "{what} is not supported");
    DocaError::NOT_SUPPORTED
}

impl State {
    /// `doca_flow_pipe_create`: BASIC, CONTROL and HASH pipes of the default domain. A
    /// CONTROL pipe takes no forwards; a port has one root pipe; forwards stay on the port
    /// and close no loop.
    pub(crate) fn create_pipe(
        &mut self,
        c: &PipeCfg,
        fwd: Option<&sys::doca_flow_fwd_v1>,
        fwd_miss: Option<&sys::doca_flow_fwd_v1>,
    ) -> DocaResult<*mut PipeHandle> {
        let fp = self.port_mut(c.port)?;
        let kind = match c.kind {
            sys::DOCA_FLOW_PIPE_BASIC => PipeKind::Basic,
            sys::DOCA_FLOW_PIPE_CONTROL => PipeKind::Control,
            sys::DOCA_FLOW_PIPE_HASH => PipeKind::Hash,
            sys::DOCA_FLOW_PIPE_LPM => return Err(not_supported("the LPM pipe type")),
            sys::DOCA_FLOW_PIPE_CT => return Err(not_supported("the CT pipe type")),
            sys::DOCA_FLOW_PIPE_ACL => return Err(not_supported("the ACL pipe type")),
            _ => return Err(not_supported("the ordered-list pipe type")),
        };
        match c.domain.unwrap_or(sys::DOCA_FLOW_PIPE_DOMAIN_DEFAULT) {
            sys::DOCA_FLOW_PIPE_DOMAIN_DEFAULT => {}
            sys::DOCA_FLOW_PIPE_DOMAIN_EGRESS => return Err(not_supported("the egress domain")),
            _ => return Err(not_supported("the secure domains")),
        }
        if kind == PipeKind::Control && (fwd.is_some() || fwd_miss.is_some()) {
            sdk_err!("flow", "a CONTROL pipe takes no forward or miss forward");
            return Err(DocaError::INVALID_VALUE);
        }
        if kind == PipeKind::Control && !c.actions.is_empty() {
            sdk_err!("flow", "a CONTROL pipe's entries carry their own actions");
            return Err(DocaError::INVALID_VALUE);
        }
        if c.is_root && fp.root.is_some() {
            sdk_err!("flow", "port {} already has a root pipe", fp.port_id);
            return Err(DocaError::ALREADY_EXIST);
        }
        if c.hash_algorithm != 0 && kind != PipeKind::Hash {
            sdk_err!("flow", "a hash map algorithm is for HASH pipes only");
            return Err(DocaError::INVALID_VALUE);
        }
        let template = if kind == PipeKind::Control {
            Template::default()
        } else {
            template_of(c)?
        };
        let f = match fwd {
            Some(f) => self.forward(c.port, f)?,
            None => Forward::none(),
        };
        let miss = match fwd_miss {
            Some(f) => self.forward(c.port, f)?,
            None => Forward::none(),
        };
        if miss.changeable {
            sdk_err!("flow", "a miss forward cannot be CHANGEABLE");
            return Err(DocaError::INVALID_VALUE);
        }
        // No loop is possible yet: the new pipe has no way in.
        let name = if c.name.is_empty() { "pipe" } else { &c.name };
        let pipe = match kind {
            PipeKind::Hash => {
                let algorithm = if c.hash_algorithm == 0 {
                    HASH_MAP_HASH
                } else {
                    c.hash_algorithm
                };
                if algorithm != HASH_MAP_HASH && algorithm != HASH_MAP_IDENTITY {
                    return Err(not_supported(&format!(
                        "hash map algorithm {algorithm:#x} (only HASH and IDENTITY)"
                    )));
                }
                if c.nr_entries == 0 {
                    sdk_err!("flow", "a HASH pipe needs entries (set_nr_entries)");
                    return Err(DocaError::INVALID_VALUE);
                }
                Pipe::hash(
                    name,
                    template.shape.clone(),
                    c.nr_entries,
                    algorithm == HASH_MAP_IDENTITY,
                    f.fwd.clone(),
                    miss.fwd.clone(),
                    c.miss_counter,
                )
            }
            PipeKind::Basic => Pipe::basic(
                name,
                template.shape.clone(),
                f.fwd.clone(),
                miss.fwd.clone(),
                c.miss_counter,
            ),
            _ => Pipe::new(
                name,
                PipeKind::Control,
                Fwd::None,
                Fwd::None,
                c.miss_counter,
            ),
        };
        let pipe = Arc::new(pipe);
        if c.is_root {
            fp.entry_point.set_root(Some(&pipe));
        }
        let hash_algorithm = if kind == PipeKind::Hash {
            c.hash_algorithm.max(HASH_MAP_HASH)
        } else {
            0
        };
        let h = Box::into_raw(Box::new(PipeHandle {
            port: c.port,
            pipe,
            kind: c.kind,
            name: name.to_owned(),
            label: c.label.clone(),
            template,
            actions: c.actions.clone(),
            monitor: c.monitor,
            fwd_changeable: f.changeable,
            edges: HashMap::new(),
            miss_to: miss.to_pipe,
            is_root: c.is_root,
            nr_entries: c.nr_entries,
            congestion: c.congestion,
            congested: false,
            resizable: c.is_resizable,
            resize: None,
            excluded_queue: c.excluded_queue,
            user_ctx: c.user_ctx,
            hash_algorithm,
            entries: Vec::new(),
        })) as usize;
        if c.is_root {
            fp.root = Some(h);
        }
        fp.pipes.push(h);
        self.pipes.insert(h);
        self.edge(h, f.to_pipe, true);
        self.edge(h, miss.to_pipe, true);
        Ok(h as *mut PipeHandle)
    }

    /// `doca_flow_pipe_destroy`: removes the pipe and its entries (unknown pipes are
    /// ignored, with a log line). Returns the callbacks to run (DESTROYED, unbinds).
    pub(crate) fn destroy_pipe(&mut self, h: usize) -> Vec<Callback> {
        let mut cbs = Vec::new();
        let Ok(ph) = self.pipe_mut(h) else {
            sdk_err!("flow", "doca_flow_pipe_destroy: not a live pipe");
            return cbs;
        };
        for e in ph.entries.clone() {
            self.free_entry(e);
        }
        let (port, is_root, user_ctx) = (ph.port, ph.is_root, ph.user_ctx);
        if let Ok(fp) = self.port_mut(port) {
            fp.pipes.retain(|p| *p != h);
            fp.pipe_events.retain(|e| e.pipe != h);
            if is_root {
                fp.entry_point.set_root(None);
                fp.root = None;
            }
            // Forget the forwards of other pipes into this one.
            for &p in &fp.pipes {
                if let Ok(other) = self.pipe_mut(p) {
                    other.edges.remove(&h);
                }
            }
        }
        if let Some(cb) = self.cfg.as_ref().and_then(|c| c.cb_pipe) {
            cbs.push(Callback::Pipe {
                cb,
                pipe: h,
                status: sys::DOCA_FLOW_PIPE_STATUS_SUCCESS,
                op: sys::DOCA_FLOW_PIPE_OP_DESTROYED,
                ctx: user_ctx,
            });
        }
        cbs.extend(self.unbind_all(h as *mut c_void));
        self.pipes.remove(&h);
        // SAFETY: h was a registered live box; unregistered now and freed once (the
        // DESTROYED callback gets the handle only as an identifier).
        drop(unsafe { Box::from_raw(h as *mut PipeHandle) });
        cbs
    }

    /// `doca_flow_pipe_update_miss`: a new miss forward (same checks as at creation).
    pub(crate) fn update_miss(&mut self, h: usize, f: &sys::doca_flow_fwd_v1) -> DocaResult<()> {
        let port = self.pipe_mut(h)?.port;
        if self.pipe_mut(h)?.pipe.kind == PipeKind::Control {
            sdk_err!("flow", "a CONTROL pipe has no miss forward");
            return Err(DocaError::INVALID_VALUE);
        }
        let miss = self.forward(port, f)?;
        if miss.changeable {
            return Err(DocaError::INVALID_VALUE);
        }
        self.check_edge(h, miss.to_pipe)?;
        let ph = self.pipe_mut(h)?;
        let old = std::mem::replace(&mut ph.miss_to, miss.to_pipe);
        ph.pipe.set_miss(miss.fwd);
        self.edge(h, old, false);
        self.edge(h, miss.to_pipe, true);
        Ok(())
    }

    /// `doca_flow_pipe_resize`: NOT_PERMITTED unless the pipe is resizable. The new
    /// capacity is announced and every entry relocated from the next
    /// `doca_flow_entries_process`, which then reports RESIZED.
    pub(crate) fn resize_pipe(
        &mut self,
        h: usize,
        new_congestion: u8,
        resize: Resize,
    ) -> DocaResult<()> {
        let ph = self.pipe_mut(h)?;
        if !ph.resizable {
            sdk_err!("flow", "pipe {:?} is not resizable", ph.name);
            return Err(DocaError::NOT_PERMITTED);
        }
        if new_congestion == 0 || new_congestion > 100 {
            return Err(DocaError::INVALID_VALUE);
        }
        // Room for the entries at the new congestion level, at least double.
        let len = ph.pipe.len() as u64;
        let need = (len * 100).div_ceil(u64::from(new_congestion));
        let new_nr = need
            .max(u64::from(ph.nr_entries) * 2)
            .min(u64::from(u32::MAX)) as u32;
        ph.congestion = new_congestion;
        ph.resize = Some(Resize {
            new_nr_entries: new_nr,
            ..resize
        });
        Ok(())
    }

    /// A pipe event for the port's queue (congestion), when the threshold is crossed.
    pub(crate) fn check_congestion(&mut self, h: usize) {
        let Ok(ph) = self.pipe_mut(h) else {
            return;
        };
        if ph.congestion == 0 || ph.nr_entries == 0 {
            return;
        }
        let full =
            ph.pipe.len() as u64 * 100 >= u64::from(ph.congestion) * u64::from(ph.nr_entries);
        if full && !ph.congested {
            ph.congested = true;
            if let Ok(fp) = self.port_mut(ph.port) {
                fp.pipe_events.push_back(PipeEvent {
                    pipe: h,
                    op: sys::DOCA_FLOW_PIPE_OP_CONGESTION_REACHED,
                });
            }
        } else if !full {
            ph.congested = false;
        }
    }

    /// `doca_flow_pipe_calc_hash`: the hash the pipe computes for `m`'s values of its
    /// template.
    pub(crate) fn calc_hash(&self, h: usize, m: &MatchBytes) -> DocaResult<u32> {
        let ph = self.pipe_mut(h)?;
        if ph.kind == sys::DOCA_FLOW_PIPE_CONTROL {
            sdk_err!("flow", "a CONTROL pipe has no match template to hash");
            return Err(DocaError::INVALID_VALUE);
        }
        let values = ph.template.entry_values(Some(m))?;
        Ok(words_hash(&values))
    }

    /// `doca_flow_pipe_dump`: a description of the pipe.
    pub(crate) fn describe_pipe(&self, h: usize) -> DocaResult<String> {
        let ph = self.pipe_mut(h)?;
        let kind = [
            "basic",
            "control",
            "lpm",
            "ct",
            "acl",
            "ordered_list",
            "hash",
        ]
        .get(ph.kind as usize)
        .copied()
        .unwrap_or("?");
        let fwd = |f: Fwd| match f {
            Fwd::None => "none".to_owned(),
            Fwd::Drop => "drop".to_owned(),
            Fwd::Rss { queues, .. } => format!("rss {queues:?}"),
            Fwd::RssCfg(c) => format!("rss {:?}", c.queues),
            Fwd::SharedRss(_) => "shared rss".to_owned(),
            Fwd::Pipe(p) => match p.upgrade() {
                Some(p) => format!("pipe {}", p.name),
                None => "pipe (destroyed)".to_owned(),
            },
            Fwd::Port(_) => "port".to_owned(),
            Fwd::Kernel => "kernel".to_owned(),
        };
        Ok(format!(
            "pipe {:?} label {:?}: type {kind}{}, {} entries (capacity {}), {} match words, {} actions, fwd {}, miss {}\n",
            ph.name,
            ph.label,
            if ph.is_root { ", root" } else { "" },
            ph.pipe.len(),
            ph.nr_entries,
            ph.template.shape.idx.len(),
            ph.actions.len(),
            if ph.fwd_changeable {
                "changeable".to_owned()
            } else {
                fwd(ph.pipe.fwd())
            },
            fwd(ph.pipe.miss()),
        ))
    }
}
