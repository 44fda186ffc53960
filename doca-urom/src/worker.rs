//! `Worker`: one UROM worker process (plugins selected by id), and typed command
//! submission: callback form ([`Worker::submit`]) and blocking form ([`Worker::command`]).

use crate::error::{check, DocaError, Error, Result};
use crate::service::{CpuSet, Service};
use crate::state;
use doca_common::context::{Ctx, CtxState};
use doca_common::{ProgressEngine, ProgressWaiter};
use doca_sys as sys;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex};
use std::task::Waker;
use std::time::{Duration, Instant};

/// `DOCA_UROM_WORKER_ID_ANY`.
pub const WORKER_ID_ANY: u64 = u64::MAX;

/// Environment variable: how long (microseconds) the blocking [`Worker::command`] polls
/// without sleeping after submitting (default [`DEFAULT_SPIN_US`]; 0 = sleep 100 us at once
/// whenever a progress call finds nothing). The soft runtime's worker processes read the
/// same variable for their own idle policy.
pub const SPIN_ENV: &str = "DOCA_SOFT_UROM_SPIN_US";
/// How long [`Worker::command`] and [`Worker::command_future`] wait for a notification.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// Default busy-poll window of [`Worker::command`], microseconds.
pub const DEFAULT_SPIN_US: u64 = 100;

/// The busy-poll window of [`SPIN_ENV`] (read once; unparsable values mean the default).
fn host_spin() -> Duration {
    static SPIN: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *SPIN.get_or_init(|| {
        let us = std::env::var(SPIN_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(DEFAULT_SPIN_US);
        Duration::from_micros(us.min(1_000_000))
    })
}

/// A plugin's answer to a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The status the plugin reported (or the transport error).
    pub status: std::result::Result<(), DocaError>,
    /// The plugin notification body.
    pub data: Vec<u8>,
}

impl Notification {
    /// A borrowed view of it.
    pub fn as_ref(&self) -> NotificationRef<'_> {
        NotificationRef {
            status: self.status,
            data: &self.data,
        }
    }
}

/// A plugin's answer, borrowed from the command task (valid during the callback only):
/// what [`Worker::submit_ref`] hands its callback without copying the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotificationRef<'a> {
    /// The status the plugin reported (or the transport error).
    pub status: std::result::Result<(), DocaError>,
    /// The plugin notification body.
    pub data: &'a [u8],
}

impl NotificationRef<'_> {
    /// An owned copy.
    pub fn to_owned(&self) -> Notification {
        Notification {
            status: self.status,
            data: self.data.to_vec(),
        }
    }
}

/// Configures and starts a [`Worker`].
pub struct WorkerBuilder {
    service: Arc<Service>,
    pe: Option<ProgressEngine>,
    id: u64,
    gid: Option<u32>,
    plugins: u64,
    max_tasks: u32,
    env: Vec<String>,
    cpuset: Option<CpuSet>,
}

impl WorkerBuilder {
    /// The worker's PE (default: a new one).
    pub fn pe(mut self, pe: ProgressEngine) -> Self {
        self.pe = Some(pe);
        self
    }
    /// Worker id (default ANY; an existing id connects to the same worker process).
    pub fn id(mut self, id: u64) -> Self {
        self.id = id;
        self
    }
    /// Group id.
    pub fn gid(mut self, gid: u32) -> Self {
        self.gid = Some(gid);
        self
    }
    /// Plugin id mask.
    pub fn plugins(mut self, mask: u64) -> Self {
        self.plugins = mask;
        self
    }
    /// Most commands in flight (power of two; default 16).
    pub fn max_inflight_tasks(mut self, n: u32) -> Self {
        self.max_tasks = n;
        self
    }
    /// `NAME=value` environment for the worker process.
    pub fn env<S: Into<String>>(mut self, env: impl IntoIterator<Item = S>) -> Self {
        self.env = env.into_iter().map(Into::into).collect();
        self
    }
    /// CPUs for the worker process.
    pub fn cpuset(mut self, set: CpuSet) -> Self {
        self.cpuset = Some(set);
        self
    }

    /// Creates the worker and starts it (IN_PROGRESS), without waiting.
    pub fn start_pending(self) -> Result<Arc<Worker>> {
        let pe = match self.pe {
            Some(p) => p,
            None => ProgressEngine::new()?,
        };
        let mut raw = std::ptr::null_mut();
        // SAFETY: out pointer.
        check("doca_urom_worker_create", unsafe {
            sys::doca_urom_worker_create(&mut raw)
        })?;
        let w = Worker {
            raw,
            service: self.service.clone(),
            pe,
        };
        let env: Vec<CString> = self
            .env
            .iter()
            .map(|e| {
                CString::new(e.as_str())
                    .map_err(|_| Error::doca("doca_urom_worker_set_env", DocaError::INVALID_VALUE))
            })
            .collect::<Result<_>>()?;
        // The C API takes `char *const *` (it copies the strings; nothing writes them).
        let env_ptrs: Vec<*mut std::ffi::c_char> =
            env.iter().map(|c| c.as_ptr().cast_mut()).collect();
        // SAFETY: live worker, IDLE; pointers valid for the calls.
        unsafe {
            check(
                "doca_urom_worker_set_service",
                self.service
                    .serialized(|| sys::doca_urom_worker_set_service(raw, self.service.as_raw())),
            )?;
            // The worker keeps its engine (`w.pe`) until it is destroyed.
            w.ctx().connect(&w.pe)?;
            check(
                "doca_urom_worker_set_id",
                sys::doca_urom_worker_set_id(raw, self.id),
            )?;
            if let Some(g) = self.gid {
                check(
                    "doca_urom_worker_set_gid",
                    sys::doca_urom_worker_set_gid(raw, g),
                )?;
            }
            if !env_ptrs.is_empty() {
                check(
                    "doca_urom_worker_set_env",
                    sys::doca_urom_worker_set_env(raw, env_ptrs.as_ptr(), env_ptrs.len()),
                )?;
            }
            check(
                "doca_urom_worker_set_max_inflight_tasks",
                sys::doca_urom_worker_set_max_inflight_tasks(raw, self.max_tasks),
            )?;
            check(
                "doca_urom_worker_set_plugins",
                sys::doca_urom_worker_set_plugins(raw, self.plugins),
            )?;
            if let Some(c) = self.cpuset {
                check(
                    "doca_urom_worker_set_cpuset",
                    sys::doca_urom_worker_set_cpuset(raw, sys::doca_cpu_set_t { ucs_bits: c.0 }),
                )?;
            }
        }
        // A worker starts asynchronously (the service spawns it): RUNNING at once is fine
        // too, wait_running returns immediately then. The start posts a spawn request to
        // the service: under its lock.
        w.service.serialized(|| w.ctx().start())?;
        Ok(Arc::new(w))
    }

    /// Creates and starts the worker, progressing its PE and the service's PE until it is
    /// RUNNING.
    pub fn start(self) -> Result<Arc<Worker>> {
        let w = self.start_pending()?;
        w.wait_running(Duration::from_secs(30))?;
        Ok(w)
    }
}

/// A UROM worker. Dropping it stops it (progressing until IDLE, bounded) and destroys it.
///
/// `Send` with either backend. `Sync` only with `soft`, whose worker context locks its
/// state internally, so that one worker can take commands from several threads; DOCA does
/// not promise that of its worker, so with `sdk` a worker is driven by one thread at a time
/// (as in DOCA's samples: each thread creates and drives its own worker).
#[cfg_attr(
    doca_backend = "sdk",
    doc = r#"
With `sdk`, sharing a worker between threads does not compile:

```compile_fail
fn share(w: std::sync::Arc<doca_urom::Worker>) {
    std::thread::spawn(move || w.progress());
}
```
"#
)]
#[cfg_attr(
    not(doca_backend = "sdk"),
    doc = r#"
With `soft`, a worker can be shared between threads:

```
fn share(w: std::sync::Arc<doca_urom::Worker>) {
    std::thread::spawn(move || w.progress());
}
```
"#
)]
pub struct Worker {
    raw: *mut sys::doca_urom_worker,
    service: Arc<Service>,
    pe: ProgressEngine,
}

// SAFETY: a worker handle may be used from any thread (DOCA objects are not bound to the
// thread that created them), one thread at a time unless the type is also Sync; the calls
// that reach the service run under its lock.
unsafe impl Send for Worker {}
#[cfg(doca_backend = "soft")]
// SAFETY: doca-soft's worker context locks its state internally (task allocation, submission
// and completion may happen on different threads), and the engine serializes progress.
unsafe impl Sync for Worker {}

/// The command callback lives in the task's 32-byte user-data area: a monomorphized
/// `shim` pointer, then the closure itself when it fits in the remaining bytes (the usual
/// small closures: no allocation per command), else a pointer to it, boxed.
const USER_AREA: usize = 32;
const SHIM_LEN: usize = std::mem::size_of::<Shim>();
const INLINE_CB: usize = USER_AREA - SHIM_LEN;

/// Takes the closure out of `store` and runs it with `n`, or only drops it (`None`).
type Shim = unsafe fn(store: *mut u8, n: Option<NotificationRef<'_>>);

unsafe fn shim_inline<F: FnOnce(NotificationRef<'_>)>(
    store: *mut u8,
    n: Option<NotificationRef<'_>>,
) {
    // SAFETY: `store` holds an F written by `stash` and is read once.
    let f = unsafe { std::ptr::read_unaligned(store as *const F) };
    if let Some(n) = n {
        f(n);
    }
}

unsafe fn shim_boxed<F: FnOnce(NotificationRef<'_>)>(
    store: *mut u8,
    n: Option<NotificationRef<'_>>,
) {
    // SAFETY: `store` holds a Box<F> pointer written by `stash`, taken back once.
    let f = unsafe { Box::from_raw(std::ptr::read_unaligned(store as *const *mut F)) };
    if let Some(n) = n {
        f(n);
    }
}

/// Writes `f` (and its shim) into the user-data area `area`.
///
/// # Safety
/// `area` is writable for [`USER_AREA`] bytes; what was there is not live.
unsafe fn stash<F: FnOnce(NotificationRef<'_>)>(area: *mut u8, f: F) {
    // SAFETY: caller contract; unaligned writes, as the area has no particular alignment.
    unsafe {
        let store = area.add(SHIM_LEN);
        if std::mem::size_of::<F>() <= INLINE_CB {
            std::ptr::write_unaligned(area as *mut Shim, shim_inline::<F> as Shim);
            std::ptr::write_unaligned(store as *mut F, f);
        } else {
            std::ptr::write_unaligned(area as *mut Shim, shim_boxed::<F> as Shim);
            std::ptr::write_unaligned(store as *mut *mut F, Box::into_raw(Box::new(f)));
        }
    }
}

/// Takes the callback out of `area` and runs it with `n` (or drops it).
///
/// # Safety
/// `area` holds a callback written by [`stash`], not taken yet.
unsafe fn unstash(area: *mut u8, n: Option<NotificationRef<'_>>) {
    // SAFETY: caller contract.
    unsafe {
        let shim = std::ptr::read_unaligned(area as *const Shim);
        shim(area.add(SHIM_LEN), n);
    }
}

unsafe extern "C" fn cmd_done(
    t: *mut sys::doca_urom_worker_cmd_task,
    _ud: sys::doca_data,
    _c: sys::doca_data,
) {
    // SAFETY: the user-data area holds the callback stashed at submission; the task is live
    // in its callback, its response is read in place and the task released after the
    // callback (which therefore sees the body without a copy).
    unsafe {
        let status = DocaError::result(sys::doca_task_get_status(
            sys::doca_urom_worker_cmd_task_as_task(t),
        ));
        let resp = sys::doca_urom_worker_cmd_task_get_response(t);
        let mut p: *mut c_void = std::ptr::null_mut();
        let mut len = 0usize;
        sys::doca_buf_get_data(resp, &mut p);
        sys::doca_buf_get_data_len(resp, &mut len);
        let data: &[u8] = if p.is_null() || len == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(p as *const u8, len)
        };
        let area = sys::doca_urom_worker_cmd_task_get_user_data(t) as *mut u8;
        unstash(area, Some(NotificationRef { status, data }));
        sys::doca_urom_worker_cmd_task_release(t);
    }
}

impl Worker {
    /// A builder for a worker of `service`.
    pub fn builder(service: &Arc<Service>) -> WorkerBuilder {
        WorkerBuilder {
            service: service.clone(),
            pe: None,
            id: WORKER_ID_ANY,
            gid: None,
            plugins: 0,
            max_tasks: 16,
            env: Vec::new(),
            cpuset: None,
        }
    }

    pub(crate) fn ctx(&self) -> Ctx {
        // SAFETY: live worker; the Ctx is used only while `self` is borrowed.
        unsafe { Ctx::from_raw(sys::doca_urom_worker_as_ctx(self.raw)) }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> *mut sys::doca_urom_worker {
        self.raw
    }

    /// The worker's PE.
    pub fn pe(&self) -> &ProgressEngine {
        &self.pe
    }

    /// The service.
    pub fn service(&self) -> &Arc<Service> {
        &self.service
    }

    /// Whether it is RUNNING.
    pub fn is_running(&self) -> bool {
        state::of(self.ctx()) == CtxState::Running
    }

    /// Progresses the worker's PE once; `true` if something completed.
    pub fn progress(&self) -> bool {
        self.pe.progress()
    }

    /// Progresses this worker's and the service's PEs until RUNNING (error if the start
    /// failed or `timeout` passed).
    pub fn wait_running(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            match state::of(self.ctx()) {
                CtxState::Running => return Ok(()),
                CtxState::Idle => {
                    return Err(Error::doca("worker start", DocaError::INITIALIZATION))
                }
                _ => {}
            }
            if Instant::now() > deadline {
                return Err(Error::doca("worker start", DocaError::TIME_OUT));
            }
            let a = self.pe.progress();
            let b = self.service.progress();
            if !a && !b {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// The worker id (the generated one when started with ANY).
    pub fn id(&self) -> Result<u64> {
        let mut id = 0;
        // SAFETY: live worker; out pointer.
        check("doca_urom_worker_get_id", unsafe {
            sys::doca_urom_worker_get_id(self.raw, &mut id)
        })?;
        Ok(id)
    }

    /// The group id.
    pub fn gid(&self) -> Result<u32> {
        let mut g = 0;
        // SAFETY: live worker; out pointer.
        check("doca_urom_worker_get_gid", unsafe {
            sys::doca_urom_worker_get_gid(self.raw, &mut g)
        })?;
        Ok(g)
    }

    /// Sends `payload` to plugin `plugin`; `cb` runs with its notification inside a later
    /// progress of this worker's PE.
    pub fn submit(
        &self,
        plugin: u64,
        payload: &[u8],
        cb: impl FnOnce(Notification) + Send + 'static,
    ) -> Result<()> {
        self.submit_ref(plugin, payload, move |n| cb(n.to_owned()))
    }

    /// [`Worker::submit`] with the notification borrowed: the body is read in place and a
    /// callback of up to 24 bytes is kept in the task itself, so a steady stream of such
    /// commands allocates nothing (the runtime reuses released tasks).
    pub fn submit_ref(
        &self,
        plugin: u64,
        payload: &[u8],
        cb: impl FnOnce(NotificationRef<'_>) + Send + 'static,
    ) -> Result<()> {
        let mut t = std::ptr::null_mut();
        // SAFETY: live worker; out pointer.
        check("doca_urom_worker_cmd_task_allocate_init", unsafe {
            sys::doca_urom_worker_cmd_task_allocate_init(self.raw, plugin, &mut t)
        })?;
        // SAFETY: live task; the payload buffer holds `cap` bytes; the user area holds 32.
        let r = unsafe {
            let buf = sys::doca_urom_worker_cmd_task_get_payload(t);
            let mut p: *mut c_void = std::ptr::null_mut();
            let mut cap = 0usize;
            sys::doca_buf_get_data(buf, &mut p);
            sys::doca_buf_get_data_len(buf, &mut cap);
            if payload.len() > cap {
                drop(cb);
                DocaError::INVALID_VALUE.raw()
            } else {
                std::ptr::copy_nonoverlapping(payload.as_ptr(), p as *mut u8, payload.len());
                sys::doca_buf_set_data(buf, p, payload.len());
                let area = sys::doca_urom_worker_cmd_task_get_user_data(t) as *mut u8;
                stash(area, cb);
                sys::doca_urom_worker_cmd_task_set_cb(t, Some(cmd_done));
                let r = sys::doca_task_submit(sys::doca_urom_worker_cmd_task_as_task(t));
                if r != sys::doca_error_t::DOCA_SUCCESS {
                    // Not submitted: the callback is still ours to drop.
                    unstash(area, None);
                }
                r
            }
        };
        if r != sys::doca_error_t::DOCA_SUCCESS {
            // SAFETY: not submitted: the task is still ours.
            unsafe { sys::doca_urom_worker_cmd_task_release(t) };
        }
        check("doca_task_submit", r)
    }

    /// Sends `payload` and progresses this worker's PE until the notification arrives.
    pub fn command(&self, plugin: u64, payload: &[u8]) -> Result<Notification> {
        let slot = Arc::new(Mutex::new(None));
        let s2 = slot.clone();
        self.submit(plugin, payload, move |n| {
            *s2.lock().unwrap_or_else(|p| p.into_inner()) = Some(n)
        })?;
        let start = Instant::now();
        let (deadline, spin) = (start + COMMAND_TIMEOUT, host_spin());
        loop {
            if let Some(n) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
                return Ok(n);
            }
            let now = Instant::now();
            if now > deadline {
                return Err(Error::doca("Worker::command", DocaError::TIME_OUT));
            }
            // Busy-poll for the spin window (a quick answer is not delayed by a sleep),
            // then sleep between progress calls that find nothing.
            if !self.progress() && now - start >= spin {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    /// Future form of [`Worker::command`], for async code under any executor: each poll
    /// progresses this worker's engine; while the notification is outstanding the future
    /// sleeps until the engine has work (its notification handle, where the runtime has
    /// one: the software runtime's worker context makes it readable when the worker
    /// connection has data, and when the liveness watch must ping or give up) or, without
    /// one, re-polls with a bounded backoff (50 us doubling to 1 ms: see
    /// [`ProgressWaiter`]); it never spins. The command's callback wakes it too, so another
    /// thread progressing the same engine completes it at once. Like the blocking form, it
    /// gives up with `DOCA_ERROR_TIME_OUT` after 30 seconds without the notification.
    pub fn command_future(&self, plugin: u64, payload: &[u8]) -> CommandFuture<'_> {
        let slot = Arc::new(Mutex::new(FutureSlot::default()));
        let s2 = slot.clone();
        let submitted = self.submit(plugin, payload, move |n| {
            let waker = {
                let mut s = s2.lock().unwrap_or_else(|p| p.into_inner());
                s.done = Some(n);
                s.waker.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        });
        CommandFuture {
            _worker: self,
            slot,
            error: submitted.err(),
            waiter: ProgressWaiter::with_deadline(&self.pe, Instant::now() + COMMAND_TIMEOUT),
        }
    }

    /// Stops the worker and progresses until IDLE (also progresses the service's PE).
    pub fn stop(&self) -> Result<()> {
        match state::of(self.ctx()) {
            CtxState::Idle => return Ok(()),
            CtxState::Stopping => {}
            // The stop posts a teardown request to the service: under its lock.
            _ => self.service.serialized(|| self.ctx().request_stop())?,
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while state::of(self.ctx()) != CtxState::Idle {
            if Instant::now() > deadline {
                return Err(Error::doca("worker stop", DocaError::TIME_OUT));
            }
            let a = self.pe.progress();
            let b = self.service.progress();
            if !a && !b {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("id", &self.id().ok())
            .field("gid", &self.gid().ok())
            .field("state", &self.ctx().state().ok())
            .finish_non_exhaustive()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.stop();
        let raw = self.raw;
        // SAFETY: live worker, IDLE (or the stop failed and destroy reports IN_USE); the
        // destroy detaches it from the service, under the service's lock.
        self.service
            .serialized(|| unsafe { sys::doca_urom_worker_destroy(raw) });
    }
}

/// The notification a [`CommandFuture`] waits for, and who to wake when it arrives.
#[derive(Default)]
struct FutureSlot {
    done: Option<Notification>,
    waker: Option<Waker>,
}

/// The future of [`Worker::command_future`].
pub struct CommandFuture<'a> {
    // Borrowed for the future's life: the worker outlives the command it runs.
    _worker: &'a Worker,
    slot: Arc<Mutex<FutureSlot>>,
    error: Option<Error>,
    waiter: ProgressWaiter,
}

impl CommandFuture<'_> {
    /// The notification if it arrived; else remembers `waker` for the command's callback.
    fn take_or_register(&self, waker: &Waker) -> Option<Notification> {
        let mut s = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let n = s.done.take();
        if n.is_none() && !s.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            s.waker = Some(waker.clone());
        }
        n
    }
}

impl std::future::Future for CommandFuture<'_> {
    type Output = Result<Notification>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        use std::task::Poll;
        if let Some(e) = self.error.take() {
            return Poll::Ready(Err(e));
        }
        loop {
            self.waiter.progress();
            if let Some(n) = self.take_or_register(cx.waker()) {
                return Poll::Ready(Ok(n));
            }
            if self.waiter.expired() {
                return Poll::Ready(Err(Error::doca(
                    "Worker::command_future",
                    DocaError::TIME_OUT,
                )));
            }
            if self.waiter.park(cx.waker()) {
                return Poll::Pending;
            }
        }
    }
}
