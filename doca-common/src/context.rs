//! The state machine every DOCA context shares (`doca_ctx`), wrapped for the safe types:
//! connecting to a progress engine, start, stop, and the bounded drain that `Drop` uses.
//! Queues (doca-gpunetio) and UROM services, workers and domains (doca-urom) all go through
//! [`Ctx`].

use crate::error::{check, DocaError, Error, Result};
use crate::pe::ProgressEngine;
use doca_sys as sys;
use std::time::{Duration, Instant};

/// How long `Drop` waits for a context to reach IDLE before giving up (and recording it).
pub const DROP_STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// `enum doca_ctx_states`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtxState {
    /// Configurable, not running.
    Idle,
    /// Start requested; progress the PE to finish it.
    Starting,
    /// Running.
    Running,
    /// Stop requested; progress the PE to finish it.
    Stopping,
}

impl CtxState {
    fn from_raw(s: sys::doca_ctx_states) -> Result<Self> {
        Ok(match s {
            sys::doca_ctx_states::DOCA_CTX_STATE_IDLE => CtxState::Idle,
            sys::doca_ctx_states::DOCA_CTX_STATE_STARTING => CtxState::Starting,
            sys::doca_ctx_states::DOCA_CTX_STATE_RUNNING => CtxState::Running,
            sys::doca_ctx_states::DOCA_CTX_STATE_STOPPING => CtxState::Stopping,
            other => {
                return Err(Error::InvalidArgument(format!(
                    "unknown context state {}",
                    other.0
                )))
            }
        })
    }
}

/// A borrowed `doca_ctx` of some context object (a queue, a UROM service, worker or
/// domain): the calls every context shares.
///
/// A `Ctx` is a plain pointer; the object it came from owns the context. Build one with
/// [`Ctx::from_raw`] from the object's `*_as_ctx`/`*_as_doca_ctx` call and use it while that
/// object lives.
#[derive(Clone, Copy, Debug)]
pub struct Ctx(*mut sys::doca_ctx);

impl Ctx {
    /// Wraps the context of a live object.
    ///
    /// # Safety
    /// `raw` is the context of a live object, and stays live for as long as this `Ctx` and
    /// its copies are used.
    pub unsafe fn from_raw(raw: *mut sys::doca_ctx) -> Ctx {
        Ctx(raw)
    }

    /// The raw context.
    pub fn as_raw(self) -> *mut sys::doca_ctx {
        self.0
    }

    /// Connects the context to `pe`, which then serves its state changes, tasks and events
    /// (`doca_pe_connect_ctx`; the context must be IDLE).
    ///
    /// # Safety
    /// `pe` outlives the context: its owner keeps a clone of the engine until the context
    /// is destroyed.
    pub unsafe fn connect(self, pe: &ProgressEngine) -> Result<()> {
        // SAFETY: the engine is live while `pe` is; the context per `from_raw`'s contract.
        check("doca_pe_connect_ctx", unsafe {
            sys::doca_pe_connect_ctx(pe.as_raw(), self.0)
        })
    }

    /// The state (`doca_ctx_get_state`).
    pub fn state(self) -> Result<CtxState> {
        let mut s = sys::doca_ctx_states::DOCA_CTX_STATE_IDLE;
        // SAFETY: the owning object keeps the context alive; `s` is a valid out-pointer.
        check("doca_ctx_get_state", unsafe {
            sys::doca_ctx_get_state(self.0, &mut s)
        })?;
        CtxState::from_raw(s)
    }

    /// Starts; `Ok(true)` when RUNNING at once, `Ok(false)` when the start continues
    /// through progress (IN_PROGRESS).
    pub fn start(self) -> Result<bool> {
        // SAFETY: the context is live.
        let rc = unsafe { sys::doca_ctx_start(self.0) };
        match DocaError::result(rc) {
            Ok(()) => Ok(true),
            Err(DocaError::IN_PROGRESS) => Ok(false),
            Err(code) => Err(Error::Doca {
                op: "doca_ctx_start",
                code,
            }),
        }
    }

    /// Requests a stop; `Ok(())` also when the stop continues through progress
    /// (IN_PROGRESS).
    pub fn request_stop(self) -> Result<()> {
        // SAFETY: the context is live.
        let rc = unsafe { sys::doca_ctx_stop(self.0) };
        match DocaError::result(rc) {
            Ok(()) | Err(DocaError::IN_PROGRESS) => Ok(()),
            Err(code) => Err(Error::Doca {
                op: "doca_ctx_stop",
                code,
            }),
        }
    }

    /// Stops and, when the stop is asynchronous, progresses `pe` until IDLE or `timeout`.
    pub fn stop_and_drain(self, pe: Option<&ProgressEngine>, timeout: Duration) -> Result<()> {
        match self.state()? {
            CtxState::Idle => return Ok(()),
            CtxState::Stopping => {}
            CtxState::Running | CtxState::Starting => self.request_stop()?,
        }
        let end = Instant::now() + timeout;
        while self.state()? != CtxState::Idle {
            if Instant::now() >= end {
                return Err(Error::Timeout {
                    op: "doca_ctx_stop (waiting for IDLE)",
                    ms: timeout.as_millis() as u64,
                });
            }
            match pe {
                Some(pe) if pe.progress() => {}
                _ => std::thread::sleep(Duration::from_micros(100)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UROM service is a context that needs nothing to be created.
    struct Service(*mut sys::doca_urom_service);

    impl Service {
        fn new() -> Service {
            let mut raw = std::ptr::null_mut();
            // SAFETY: valid out-pointer.
            check("doca_urom_service_create", unsafe {
                sys::doca_urom_service_create(&mut raw)
            })
            .unwrap();
            Service(raw)
        }

        fn ctx(&self) -> Ctx {
            // SAFETY: the service lives as long as `self`, and the Ctx is used within that.
            unsafe { Ctx::from_raw(sys::doca_urom_service_as_ctx(self.0)) }
        }
    }

    impl Drop for Service {
        fn drop(&mut self) {
            // SAFETY: created above, destroyed once.
            unsafe { sys::doca_urom_service_destroy(self.0) };
        }
    }

    #[test]
    fn idle_context_connects_drains_at_once_and_names_a_failed_start() {
        let pe = ProgressEngine::new().unwrap();
        let svc = Service::new();
        let ctx = svc.ctx();
        assert_eq!(ctx.state().unwrap(), CtxState::Idle);
        // SAFETY: `pe` outlives `svc` (dropped after it: declared first).
        unsafe { ctx.connect(&pe) }.unwrap();
        // Stopping an IDLE context has nothing to wait for.
        ctx.stop_and_drain(Some(&pe), Duration::from_millis(10))
            .unwrap();
        // No device was set: the start is refused, and the error says by which call.
        let e = ctx.start().unwrap_err();
        assert_eq!(e.op(), Some("doca_ctx_start"), "{e}");
        assert!(e.doca_code().is_some(), "{e}");
        assert_eq!(ctx.state().unwrap(), CtxState::Idle);
    }
}
