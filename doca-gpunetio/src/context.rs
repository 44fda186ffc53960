//! The state machine every DOCA context shares (`doca_ctx`), wrapped for the safe types:
//! start, stop, and the bounded drain that `Drop` uses.

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

/// A borrowed `doca_ctx` of some context object (used by the queue and Flow types).
#[derive(Clone, Copy)]
pub(crate) struct Ctx(pub(crate) *mut sys::doca_ctx);

impl Ctx {
    pub(crate) fn state(self) -> Result<CtxState> {
        let mut s = sys::doca_ctx_states::DOCA_CTX_STATE_IDLE;
        // SAFETY: the owning object keeps the context alive; `s` is a valid out-pointer.
        check("doca_ctx_get_state", unsafe {
            sys::doca_ctx_get_state(self.0, &mut s)
        })?;
        CtxState::from_raw(s)
    }

    /// Starts; `Ok(true)` when RUNNING at once, `Ok(false)` when the start continues
    /// through progress (IN_PROGRESS).
    pub(crate) fn start(self) -> Result<bool> {
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

    /// Stops and, when the stop is asynchronous, progresses `pe` until IDLE or `timeout`.
    pub(crate) fn stop_and_drain(
        self,
        pe: Option<&ProgressEngine>,
        timeout: Duration,
    ) -> Result<()> {
        match self.state()? {
            CtxState::Idle => return Ok(()),
            CtxState::Stopping => {}
            CtxState::Running | CtxState::Starting => {
                // SAFETY: the context is live.
                let rc = unsafe { sys::doca_ctx_stop(self.0) };
                match DocaError::result(rc) {
                    Ok(()) | Err(DocaError::IN_PROGRESS) => {}
                    Err(code) => {
                        return Err(Error::Doca {
                            op: "doca_ctx_stop",
                            code,
                        })
                    }
                }
            }
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
