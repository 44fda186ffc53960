//! `Domain`: joins workers of several processes through an out-of-band allgather ([`Oob`]),
//! optionally exporting memory to them ([`DomainBuffer`]).

mod buffer;
mod oob;

pub use buffer::DomainBuffer;
pub use oob::Oob;

use crate::error::{check, DocaError, Error, Result};
use crate::state;
use crate::worker::Worker;
use doca_common::context::{Ctx, CtxState};
use doca_common::ProgressEngine;
use doca_sys as sys;
use oob::OobInfo;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A started domain. Dropping it stops and destroys it, then frees its buffers.
///
/// `Send` with the `soft` backend (whose contexts synchronise internally, and whose
/// [`Worker`]s are `Sync`); with `sdk` a domain stays on the thread that started it, like
/// the workers it holds.
pub struct Domain {
    raw: *mut sys::doca_urom_domain,
    _pe: ProgressEngine,
    _workers: Vec<Arc<Worker>>,
    // Boxed: the runtime holds its address (`coll_info`) while the domain lives.
    oob: Box<OobInfo>,
    // Owned: workers may write them remotely until the domain is destroyed (see Drop).
    buffers: Vec<DomainBuffer>,
}

#[cfg(doca_backend = "soft")]
// SAFETY: doca-soft's domain context locks its state internally, and every handle the domain
// holds is Send + Sync with that backend (workers included).
unsafe impl Send for Domain {}

impl Domain {
    /// Creates and starts a domain over `members` (domain id, local worker), progressing
    /// `pe` (and the workers' PEs) until RUNNING.
    ///
    /// `oob`'s size and index are read once, here: an empty collective or an index outside
    /// it is an [`Error::InvalidArgument`], and a collective whose answers change during the
    /// start makes the start fail (`DOCA_ERROR_INVALID_VALUE` from its allgather). The
    /// domain takes `buffers` and frees them after it is destroyed.
    pub fn start(
        pe: &ProgressEngine,
        members: &[(u64, Arc<Worker>)],
        oob: Arc<dyn Oob>,
        buffers: Vec<DomainBuffer>,
    ) -> Result<Domain> {
        let oob = Box::new(OobInfo::new(oob)?);
        let mut raw = std::ptr::null_mut();
        // SAFETY: out pointer.
        check("doca_urom_domain_create", unsafe {
            sys::doca_urom_domain_create(&mut raw)
        })?;
        let d = Domain {
            raw,
            _pe: pe.clone(),
            _workers: members.iter().map(|(_, w)| w.clone()).collect(),
            oob,
            buffers,
        };
        // SAFETY: live domain (owned by `d`), and `ctx` is used only while `d` lives.
        let ctx = unsafe { Ctx::from_raw(sys::doca_urom_domain_as_ctx(raw)) };
        // SAFETY: the domain keeps a clone of `pe` (`d._pe`) until it is destroyed.
        unsafe { ctx.connect(pe) }?;
        let mut coll = d.oob.coll();
        let mut ids: Vec<u64> = members.iter().map(|(i, _)| *i).collect();
        let mut ws: Vec<*mut sys::doca_urom_worker> =
            members.iter().map(|(_, w)| w.as_raw()).collect();
        // SAFETY: live domain (IDLE); `coll`, the id and worker arrays are valid for the
        // calls; the buffers' memory and keys are owned by `d` and outlive the domain.
        unsafe {
            check(
                "doca_urom_domain_set_oob",
                sys::doca_urom_domain_set_oob(raw, &mut coll),
            )?;
            check(
                "doca_urom_domain_set_workers",
                sys::doca_urom_domain_set_workers(raw, ids.as_mut_ptr(), ws.as_mut_ptr(), ws.len()),
            )?;
            if !d.buffers.is_empty() {
                check(
                    "doca_urom_domain_set_buffers_count",
                    sys::doca_urom_domain_set_buffers_count(raw, d.buffers.len()),
                )?;
                for b in &d.buffers {
                    check(
                        "doca_urom_domain_add_buffer",
                        sys::doca_urom_domain_add_buffer(
                            raw,
                            b.as_ptr() as *mut c_void,
                            b.len(),
                            b.memh().as_ptr() as *mut c_void,
                            b.memh().len(),
                            b.mkey().as_ptr() as *mut c_void,
                            b.mkey().len(),
                        ),
                    )?;
                }
            }
        }
        ctx.start()?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match state::of(ctx) {
                CtxState::Running => return Ok(d),
                CtxState::Idle => {
                    return Err(Error::doca("domain start", DocaError::INITIALIZATION))
                }
                _ => {}
            }
            if Instant::now() > deadline {
                return Err(Error::doca("domain start", DocaError::TIME_OUT));
            }
            let mut any = pe.progress();
            for (_, w) in members {
                any |= w.progress();
            }
            if !any {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> *mut sys::doca_urom_domain {
        self.raw
    }

    /// The exported buffers, in the order given to [`start`](Self::start).
    pub fn buffers(&self) -> &[DomainBuffer] {
        &self.buffers
    }

    /// Buffer `i` (to read what workers wrote).
    pub fn buffer(&self, i: usize) -> Option<&DomainBuffer> {
        self.buffers.get(i)
    }

    /// Buffer `i`, to write.
    pub fn buffer_mut(&mut self, i: usize) -> Option<&mut DomainBuffer> {
        self.buffers.get_mut(i)
    }
}

impl std::fmt::Debug for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: live domain; the Ctx is used only here.
        let ctx = unsafe { Ctx::from_raw(sys::doca_urom_domain_as_ctx(self.raw)) };
        f.debug_struct("Domain")
            .field("state", &ctx.state().ok())
            .field("workers", &self._workers.len())
            .field("oob_size", &self.oob.size())
            .field("oob_index", &self.oob.index())
            .field("buffers", &self.buffers.len())
            .finish()
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        // SAFETY: live domain; `ctx` is used only before the destroy below.
        let ctx = unsafe { Ctx::from_raw(sys::doca_urom_domain_as_ctx(self.raw)) };
        // The domain's stop is synchronous: IDLE on return, or it failed and destroy
        // reports IN_USE; either way Drop has nobody to tell.
        if state::of(ctx) != CtxState::Idle {
            let _ = ctx.request_stop();
        }
        // SAFETY: live domain, destroyed once.
        let rc = unsafe { sys::doca_urom_domain_destroy(self.raw) };
        if let Err(e) = check("doca_urom_domain_destroy", rc) {
            // The domain lives on in the runtime, so its workers may still write the
            // buffers: they are leaked rather than freed under them.
            std::mem::forget(std::mem::take(&mut self.buffers));
            doca_common::record_drop_error(e);
        }
        // The fields drop after this: the buffers only once the domain that exported them
        // is gone.
    }
}
