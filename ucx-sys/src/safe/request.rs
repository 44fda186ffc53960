//! [`Request`]: an operation UCX has not finished yet (a `ucs_status_ptr_t` that is a
//! request), and waiting for it.

use super::worker::{NotSend, WorkerInner};
use crate::result::{Error, Result, Status};
use crate::sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What posting a non-blocking operation gave.
pub(crate) enum Posted {
    /// Completed at once.
    Done,
    /// In flight.
    Pending(Request),
}

/// Decodes the `ucs_status_ptr_t` that operation `op` returned.
pub(crate) fn posted(
    op: &'static str,
    p: *mut c_void,
    worker: &Arc<WorkerInner>,
) -> Result<Posted> {
    match Status::of_ptr(p) {
        Status::OK => Ok(Posted::Done),
        Status::INPROGRESS => Ok(Posted::Pending(Request {
            raw: p,
            worker: worker.clone(),
            _not_send: PhantomData,
        })),
        s => Err(Error::new(op, s)),
    }
}

/// A request in flight, freed (`ucp_request_free`) on drop. Dropping a request that is
/// still in flight lets it finish on its own: the memory it works on must outlive it (the
/// owners in this crate take care of that).
pub struct Request {
    raw: *mut c_void,
    worker: Arc<WorkerInner>,
    _not_send: NotSend,
}

impl Request {
    /// `UCS_INPROGRESS` while running, then the final status (`ucp_request_check_status`).
    pub fn status(&self) -> Status {
        // SAFETY: live request, not freed before drop.
        Status(unsafe { sys::ucp_request_check_status(self.raw) })
    }

    /// Whether the request finished.
    pub fn is_done(&self) -> bool {
        self.status() != Status::INPROGRESS
    }

    /// Asks UCX to cancel it (`ucp_request_cancel`): it completes with `UCS_ERR_CANCELED`
    /// at a later progress unless it finished first.
    pub fn cancel(&self) {
        // SAFETY: live request of this worker.
        unsafe { sys::ucp_request_cancel(self.worker.raw, self.raw) };
    }

    /// Progresses the request's worker once.
    pub(crate) fn worker_progress(&self) {
        self.worker.progress();
    }

    /// Progresses the worker until the request finishes or `timeout` passes; returns the
    /// final status, or `UCS_ERR_TIMED_OUT` naming `op` (the request is still in flight).
    pub fn wait(&self, op: &'static str, timeout: Duration) -> Result<Status> {
        let deadline = Instant::now() + timeout;
        loop {
            let s = self.status();
            if s != Status::INPROGRESS {
                return Ok(s);
            }
            if Instant::now() >= deadline {
                return Err(Error::new(op, Status::ERR_TIMED_OUT));
            }
            self.worker.progress();
        }
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        // SAFETY: live request, freed once (UCX releases an unfinished one when it ends).
        unsafe { sys::ucp_request_free(self.raw) };
    }
}
