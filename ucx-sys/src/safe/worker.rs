//! [`Worker`]: a UCP worker (`ucp_worker_h`), the progress engine of a context.

use super::context::{Context, ContextInner};
use crate::result::{Result, Status};
use crate::sys;
use std::marker::PhantomData;
use std::os::fd::RawFd;
use std::sync::Arc;

/// How threads may use a worker (`ucs_thread_mode_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadMode {
    /// Only the thread that created it.
    Single,
    /// Any thread, one at a time.
    Serialized,
    /// Any threads at once (UCX locks inside).
    Multi,
}

impl ThreadMode {
    fn raw(self) -> sys::ucs_thread_mode_t {
        match self {
            ThreadMode::Single => sys::ucs_thread_mode_t_UCS_THREAD_MODE_SINGLE,
            ThreadMode::Serialized => sys::ucs_thread_mode_t_UCS_THREAD_MODE_SERIALIZED,
            ThreadMode::Multi => sys::ucs_thread_mode_t_UCS_THREAD_MODE_MULTI,
        }
    }
}

/// Owns the `ucp_worker_h`; destroyed when the worker and everything made on it (listeners,
/// endpoints, requests) are gone.
pub(crate) struct WorkerInner {
    pub(crate) raw: sys::ucp_worker_h,
    efd: Option<RawFd>,
    _ctx: Arc<ContextInner>,
}

// SAFETY: only the Drop below touches the worker through this type, and it runs once, after
// every handle that could call into the worker is gone. The handles themselves are neither
// Send nor Sync (see `NotSend`): how threads share a worker is the owner's decision.
unsafe impl Send for WorkerInner {}
// SAFETY: as above.
unsafe impl Sync for WorkerInner {}

impl WorkerInner {
    /// Progresses the worker once; returns how many events it handled.
    pub(crate) fn progress(&self) -> u32 {
        // SAFETY: live worker; callers are the single user of the worker's object graph.
        unsafe { sys::ucp_worker_progress(self.raw) }
    }
}

impl Drop for WorkerInner {
    fn drop(&mut self) {
        // SAFETY: live worker, destroyed once; nothing refers to it any more.
        unsafe { sys::ucp_worker_destroy(self.raw) };
    }
}

/// Marker keeping a handle on its thread: UCX workers (other than [`ThreadMode::Multi`])
/// must not be used by two threads at once, and every handle can reach its worker.
pub(crate) type NotSend = PhantomData<*const ()>;

/// A UCP worker.
///
/// Neither `Send` nor `Sync`, like the [`Listener`](crate::Listener)s,
/// [`Endpoint`](crate::Endpoint)s and requests made on it: a worker created
/// [`ThreadMode::Serialized`] may move to another thread together with everything made on
/// it, which its owner asserts by an `unsafe impl Send` on the struct holding them all.
pub struct Worker {
    pub(crate) inner: Arc<WorkerInner>,
    _not_send: NotSend,
}

impl Worker {
    /// Creates a worker of `ctx`.
    pub fn new(ctx: &Context, mode: ThreadMode) -> Result<Worker> {
        let params = sys::ucp_worker_params_t {
            field_mask: sys::ucp_worker_params_field_UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64,
            thread_mode: mode.raw(),
            ..Default::default()
        };
        let mut raw: sys::ucp_worker_h = std::ptr::null_mut();
        // SAFETY: live context; params valid for the call; raw is an out pointer.
        let s = unsafe { sys::ucp_worker_create(ctx.inner.raw, &params, &mut raw) };
        Status(s).check("ucp_worker_create")?;
        let mut efd: RawFd = -1;
        let efd = if ctx.features().contains(crate::Features::WAKEUP) {
            // SAFETY: live worker of a WAKEUP context; efd is an out pointer.
            let s = unsafe { sys::ucp_worker_get_efd(raw, &mut efd) };
            (s == sys::ucs_status_t_UCS_OK && efd >= 0).then_some(efd)
        } else {
            None
        };
        Ok(Worker {
            inner: Arc::new(WorkerInner {
                raw,
                efd,
                _ctx: ctx.inner.clone(),
            }),
            _not_send: PhantomData,
        })
    }

    /// Progresses once (`ucp_worker_progress`); returns how many events were handled.
    pub fn progress(&self) -> u32 {
        self.inner.progress()
    }

    /// Progresses until nothing is left to do; returns whether anything was.
    pub fn progress_all(&self) -> bool {
        let mut busy = false;
        while self.progress() != 0 {
            busy = true;
        }
        busy
    }

    /// The event descriptor (readable when the worker has work after [`Worker::arm`]); only
    /// for contexts with [`Features::WAKEUP`](crate::Features::WAKEUP).
    pub fn event_fd(&self) -> Option<RawFd> {
        self.inner.efd
    }

    /// Arms the event descriptor before sleeping on it: `Ok(true)` armed, `Ok(false)` when
    /// work is pending (progress again instead of sleeping).
    pub fn arm(&self) -> Result<bool> {
        // SAFETY: live worker.
        match Status(unsafe { sys::ucp_worker_arm(self.inner.raw) }) {
            Status::OK => Ok(true),
            Status::ERR_BUSY => Ok(false),
            s => s.check("ucp_worker_arm").map(|_| false),
        }
    }

    /// Sleeps until the worker has work or `timeout_ms` passes (arms first; returns at once
    /// when work is pending). Without an event descriptor it just sleeps `timeout_ms`.
    pub fn wait(&self, timeout_ms: i32) {
        let Some(fd) = self.event_fd() else {
            std::thread::sleep(std::time::Duration::from_millis(timeout_ms.max(0) as u64));
            return;
        };
        if !matches!(self.arm(), Ok(true)) {
            return;
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    }

    /// The worker's address (`ucp_worker_get_address`), for peers that connect by address.
    pub fn address(&self) -> Result<Vec<u8>> {
        let mut a: *mut sys::ucp_address_t = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live worker; out pointers.
        let s = unsafe { sys::ucp_worker_get_address(self.inner.raw, &mut a, &mut len) };
        Status(s).check("ucp_worker_get_address")?;
        // SAFETY: UCX handed us `len` bytes at `a` until released just below.
        let v = unsafe { std::slice::from_raw_parts(a as *const u8, len) }.to_vec();
        // SAFETY: `a` came from ucp_worker_get_address of this worker; released once.
        unsafe { sys::ucp_worker_release_address(self.inner.raw, a) };
        Ok(v)
    }

    /// The raw handle (valid while this worker lives).
    pub fn as_raw(&self) -> sys::ucp_worker_h {
        self.inner.raw
    }
}
