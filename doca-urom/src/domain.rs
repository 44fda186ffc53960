//! `Domain`: joins workers of several processes through an out-of-band allgather.

use crate::error::{check, DocaError, Error, Result};
use crate::state;
use crate::worker::Worker;
use doca_common::context::{Ctx, CtxState};
use doca_common::ProgressEngine;
use doca_sys as sys;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The out-of-band collective (MPI, sockets, ...). `allgather` is blocking: every
/// participant contributes `send` (same length everywhere) and `recv` receives all
/// contributions in index order.
pub trait Oob: Send + Sync {
    /// Number of participants.
    fn size(&self) -> u32;
    /// This participant's index.
    fn index(&self) -> u32;
    /// All-gathers `send` into `recv` (`recv.len() == size * send.len()`).
    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> std::result::Result<(), DocaError>;
}

unsafe extern "C" fn oob_allgather(
    sbuf: *mut c_void,
    rbuf: *mut c_void,
    len: usize,
    info: *mut c_void,
    req: *mut *mut c_void,
) -> sys::doca_error_t {
    // SAFETY: info is the Box<Arc<dyn Oob>> owned by the Domain; buffers sized by the runtime.
    let oob = unsafe { &*(info as *const Arc<dyn Oob>) };
    let n = oob.size() as usize;
    // SAFETY: sbuf holds len bytes, rbuf n*len bytes (the OOB contract).
    let (s, r) = unsafe {
        (
            std::slice::from_raw_parts(sbuf as *const u8, len),
            std::slice::from_raw_parts_mut(rbuf as *mut u8, len * n),
        )
    };
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| oob.allgather(s, r)));
    // The gather completed synchronously: any non-null request means "done".
    // SAFETY: req is writable.
    unsafe { *req = std::ptr::dangling_mut::<c_void>() };
    match res {
        Ok(Ok(())) => sys::doca_error_t::DOCA_SUCCESS,
        Ok(Err(e)) => e.raw(),
        Err(_) => DocaError::UNEXPECTED.raw(),
    }
}

unsafe extern "C" fn oob_done(_req: *mut c_void) -> sys::doca_error_t {
    sys::doca_error_t::DOCA_SUCCESS
}

/// A started domain. Dropping it stops and destroys it.
pub struct Domain {
    raw: *mut sys::doca_urom_domain,
    _pe: ProgressEngine,
    _workers: Vec<Arc<Worker>>,
    _oob: Box<Arc<dyn Oob>>,
    _bufs: Vec<Vec<u8>>,
}

// SAFETY: the domain context is internally synchronised.
unsafe impl Send for Domain {}

/// A buffer exported to the domain: address range plus packed memory handle / key.
pub struct DomainBuffer {
    /// Start.
    pub addr: *mut c_void,
    /// Length.
    pub len: usize,
    /// Packed memory handle.
    pub memh: Vec<u8>,
    /// Packed remote key.
    pub mkey: Vec<u8>,
}

impl Domain {
    /// Creates and starts a domain over `members` (domain id, local worker), progressing
    /// `pe` (and the workers' PEs) until RUNNING.
    pub fn start(
        pe: &ProgressEngine,
        members: &[(u64, Arc<Worker>)],
        oob: Arc<dyn Oob>,
        buffers: Vec<DomainBuffer>,
    ) -> Result<Domain> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: out pointer.
        check("doca_urom_domain_create", unsafe {
            sys::doca_urom_domain_create(&mut raw)
        })?;
        let oob_box: Box<Arc<dyn Oob>> = Box::new(oob);
        let mut d = Domain {
            raw,
            _pe: pe.clone(),
            _workers: members.iter().map(|(_, w)| w.clone()).collect(),
            _oob: oob_box,
            _bufs: Vec::new(),
        };
        // SAFETY: live domain (owned by `d`), and `ctx` is used only while `d` lives.
        let ctx = unsafe { Ctx::from_raw(sys::doca_urom_domain_as_ctx(raw)) };
        // SAFETY: the domain keeps a clone of `pe` (`d._pe`) until it is destroyed.
        unsafe { ctx.connect(pe) }?;
        let mut coll = sys::doca_urom_domain_oob_coll {
            allgather: Some(oob_allgather),
            req_test: Some(oob_done),
            req_free: Some(oob_done),
            coll_info: &*d._oob as *const Arc<dyn Oob> as *mut c_void,
            n_oob_indexes: d._oob.size(),
            oob_index: d._oob.index(),
        };
        let mut ids: Vec<u64> = members.iter().map(|(i, _)| *i).collect();
        let mut ws: Vec<*mut sys::doca_urom_worker> =
            members.iter().map(|(_, w)| w.as_raw()).collect();
        // SAFETY: live domain (IDLE); `coll`, the id and worker arrays and the buffers are
        // valid for the calls.
        unsafe {
            check(
                "doca_urom_domain_set_oob",
                sys::doca_urom_domain_set_oob(raw, &mut coll),
            )?;
            check(
                "doca_urom_domain_set_workers",
                sys::doca_urom_domain_set_workers(raw, ids.as_mut_ptr(), ws.as_mut_ptr(), ws.len()),
            )?;
            if !buffers.is_empty() {
                check(
                    "doca_urom_domain_set_buffers_count",
                    sys::doca_urom_domain_set_buffers_count(raw, buffers.len()),
                )?;
                for mut b in buffers {
                    check(
                        "doca_urom_domain_add_buffer",
                        sys::doca_urom_domain_add_buffer(
                            raw,
                            b.addr,
                            b.len,
                            b.memh.as_mut_ptr() as *mut c_void,
                            b.memh.len(),
                            b.mkey.as_mut_ptr() as *mut c_void,
                            b.mkey.len(),
                        ),
                    )?;
                    d._bufs.push(b.memh);
                    d._bufs.push(b.mkey);
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
}

impl std::fmt::Debug for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: live domain; the Ctx is used only here.
        let ctx = unsafe { Ctx::from_raw(sys::doca_urom_domain_as_ctx(self.raw)) };
        f.debug_struct("Domain")
            .field("state", &ctx.state().ok())
            .field("workers", &self._workers.len())
            .field("oob_size", &self._oob.size())
            .field("oob_index", &self._oob.index())
            .field("buffers", &(self._bufs.len() / 2))
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
        unsafe { sys::doca_urom_domain_destroy(self.raw) };
    }
}
