//! What an RX and a TX queue keep alike behind their context: the settings collected while
//! IDLE, the run while started, and the counters of the last run (kept after stop).

use std::sync::{Arc, Mutex, MutexGuard};

use crate::ctx::{Ctx, STATE_RUNNING};
use crate::dev::{Dev, DevInfo};
use crate::error::{DocaError, DocaResult};
use crate::sync::lock;

/// A queue's state: settings `C`, run `R` (while started), counter snapshot `S`.
pub(crate) struct QueueState<C, R, S> {
    /// The device's description.
    pub(crate) info: Arc<DevInfo>,
    /// Settings collected while IDLE.
    pub(crate) cfg: Mutex<C>,
    /// The started queue (None while IDLE or stopped).
    pub(crate) run: Mutex<Option<R>>,
    /// Counters of the last run, kept after stop.
    pub(crate) last_counters: Mutex<S>,
}

impl<C, R, S: Copy + Default> QueueState<C, R, S> {
    /// The state of a new IDLE queue on `dev` with settings `cfg`.
    pub(crate) fn new(dev: &Dev, cfg: C) -> Arc<Self> {
        Arc::new(QueueState {
            info: dev.info().clone(),
            cfg: Mutex::new(cfg),
            run: Mutex::new(None),
            last_counters: Mutex::new(S::default()),
        })
    }

    /// The settings, for a setter: BAD_STATE unless `ctx` is IDLE.
    pub(crate) fn idle_cfg(&self, ctx: &Ctx) -> DocaResult<MutexGuard<'_, C>> {
        ctx.require_idle()?;
        Ok(lock(&self.cfg))
    }

    /// `f` of the run: BAD_STATE unless `ctx` is RUNNING.
    pub(crate) fn running<T>(&self, ctx: &Ctx, f: impl FnOnce(&R) -> T) -> DocaResult<T> {
        if ctx.state() != STATE_RUNNING {
            return Err(DocaError::BAD_STATE);
        }
        lock(&self.run).as_ref().map(f).ok_or(DocaError::BAD_STATE)
    }

    /// The counters in any state: `live` of the run while started, else the last run's
    /// (zeros before the first start).
    pub(crate) fn counters(&self, live: impl FnOnce(&R) -> S) -> S {
        let now = lock(&self.run).as_ref().map(live);
        now.unwrap_or_else(|| *lock(&self.last_counters))
    }
}
