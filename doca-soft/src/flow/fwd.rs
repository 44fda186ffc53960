//! `struct doca_flow_fwd` to the classifier's [`Fwd`], and the pipe graph: a forward to a
//! pipe must stay on its port and must not close a loop (a packet could never leave it), so
//! both are checked where a forward is set (pipe creation, miss update, entry add and
//! update) and refused with INVALID_VALUE.

use std::collections::HashSet;
use std::sync::Arc;

use super::cfg::HASH_MAP_ALGORITHMS;
use super::handles::Forward;
use super::rss::rss_cfg;
use super::state::State;
use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{Fwd, PipeKind};

/// The handle of the kernel target (`doca_flow_get_target(DOCA_FLOW_TARGET_KERNEL)`): a
/// static the runtime recognises.
pub(crate) static KERNEL_TARGET: u8 = 0;

impl State {
    /// Translates a C forward used by pipe `from_port`'s pipes (port handle).
    pub(crate) fn forward(
        &mut self,
        from_port: usize,
        f: &sys::doca_flow_fwd_v1,
    ) -> DocaResult<Forward> {
        let mut out = Forward::none();
        out.fwd = match f.type_ {
            sys::DOCA_FLOW_FWD_NONE => Fwd::None,
            sys::DOCA_FLOW_FWD_DROP => Fwd::Drop,
            sys::DOCA_FLOW_FWD_CHANGEABLE => {
                out.changeable = true;
                Fwd::None
            }
            sys::DOCA_FLOW_FWD_RSS => {
                // SAFETY: type RSS selects the rss view of the union (plain data).
                let r = unsafe { f.__bindgen_anon_1.__bindgen_anon_1 };
                match r.rss_type {
                    sys::DOCA_FLOW_RESOURCE_TYPE_NON_SHARED => {
                        let key = self.cfg()?.rss_key.clone();
                        // SAFETY: NON_SHARED selects the rss member.
                        let cfg = unsafe { r.__bindgen_anon_1.rss };
                        Fwd::RssCfg(Arc::new(rss_cfg(&cfg, key.as_deref())?))
                    }
                    sys::DOCA_FLOW_RESOURCE_TYPE_SHARED => {
                        // SAFETY: SHARED selects shared_rss_id.
                        let id = unsafe { r.__bindgen_anon_1.shared_rss_id };
                        Fwd::SharedRss(self.shared_rss(from_port, id)?)
                    }
                    t => {
                        sdk_err!("flow", "RSS forward with rss_type {t}");
                        return Err(DocaError::INVALID_VALUE);
                    }
                }
            }
            sys::DOCA_FLOW_FWD_PORT => {
                // SAFETY: type PORT selects port_id.
                let id = unsafe { f.__bindgen_anon_1.__bindgen_anon_2.port_id };
                Fwd::Port(self.link(id))
            }
            sys::DOCA_FLOW_FWD_PIPE | sys::DOCA_FLOW_FWD_HASH_PIPE => {
                let (next, algorithm) = if f.type_ == sys::DOCA_FLOW_FWD_PIPE {
                    // SAFETY: type PIPE selects next_pipe.
                    (
                        unsafe { f.__bindgen_anon_1.__bindgen_anon_3.next_pipe } as usize,
                        0,
                    )
                } else {
                    // SAFETY: type HASH_PIPE selects hash_pipe.
                    let hp = unsafe { f.__bindgen_anon_1.hash_pipe };
                    (hp.pipe as usize, hp.algorithm)
                };
                if next == 0 {
                    sdk_err!("flow", "forward to a NULL pipe");
                    return Err(DocaError::INVALID_VALUE);
                }
                let p = self.pipe_mut(next)?;
                if p.port != from_port {
                    sdk_err!("flow", "forward to pipe {:?} of another port", p.name);
                    return Err(DocaError::INVALID_VALUE);
                }
                if f.type_ == sys::DOCA_FLOW_FWD_HASH_PIPE {
                    if p.pipe.kind != PipeKind::Hash {
                        sdk_err!("flow", "hash-pipe forward to {:?}, not a HASH pipe", p.name);
                        return Err(DocaError::INVALID_VALUE);
                    }
                    if algorithm & !HASH_MAP_ALGORITHMS != 0 {
                        sdk_err!(
                            "flow",
                            "hash-pipe forward with algorithm {algorithm:#x}: bits beyond the enum"
                        );
                        return Err(DocaError::INVALID_VALUE);
                    }
                    if algorithm != 0 && algorithm != p.hash_algorithm {
                        sdk_err!(
                            "flow",
                            "hash-pipe forward with algorithm {algorithm:#x}, other than the pipe's"
                        );
                        return Err(DocaError::NOT_SUPPORTED);
                    }
                }
                out.to_pipe = Some(next);
                Fwd::Pipe(Arc::downgrade(&p.pipe))
            }
            sys::DOCA_FLOW_FWD_TARGET => {
                // SAFETY: type TARGET selects target.
                let t = unsafe { f.__bindgen_anon_1.__bindgen_anon_4.target };
                if !std::ptr::eq(t as *const u8, &KERNEL_TARGET) {
                    sdk_err!("flow", "forward to an unknown target");
                    return Err(DocaError::INVALID_VALUE);
                }
                Fwd::Kernel
            }
            sys::DOCA_FLOW_FWD_ORDERED_LIST_PIPE => {
                sdk_err!(
                    "flow",
                    "forwarding to an ordered-list pipe is not supported"
                );
                return Err(DocaError::NOT_SUPPORTED);
            }
            t => {
                sdk_err!("flow", "forward type {t} is out of range");
                return Err(DocaError::INVALID_VALUE);
            }
        };
        Ok(out)
    }

    /// Whether pipe `to` can reach pipe `from` through forwards (adding `from -> to`
    /// would close a loop).
    pub(crate) fn reaches(&self, to: usize, from: usize) -> bool {
        let mut seen = HashSet::new();
        let mut stack = vec![to];
        while let Some(p) = stack.pop() {
            if p == from {
                return true;
            }
            if !seen.insert(p) {
                continue;
            }
            if let Ok(ph) = self.pipe_mut(p) {
                stack.extend(ph.edges.keys().copied());
            }
        }
        false
    }

    /// INVALID_VALUE (logged) when forwarding from pipe `from` to `to` would close a loop.
    pub(crate) fn check_edge(&self, from: usize, to: Option<usize>) -> DocaResult<()> {
        let Some(to) = to else {
            return Ok(());
        };
        if self.reaches(to, from) {
            let name = |h| self.pipe_mut(h).map(|p| p.name.clone()).unwrap_or_default();
            sdk_err!(
                "flow",
                "forward from pipe {:?} to {:?} would close a loop",
                name(from),
                name(to)
            );
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }

    /// Records (`+1`) or forgets (`-1`) a forward `from -> to` in the graph.
    pub(crate) fn edge(&self, from: usize, to: Option<usize>, add: bool) {
        let (Some(to), Ok(p)) = (to, self.pipe_mut(from)) else {
            return;
        };
        let n = p.edges.entry(to).or_insert(0);
        if add {
            *n += 1;
        } else {
            *n = n.saturating_sub(1);
            if *n == 0 {
                p.edges.remove(&to);
            }
        }
    }
}
