//! `doca_urom_service`: the host's connection to the UROM daemon.
//!
//! `doca_ctx_start` connects (TCP), greets the daemon and fetches the plugin list and CPU
//! set before returning SUCCESS (RUNNING at once, as DOCA does). Afterwards the service's PE
//! progress handles daemon replies: worker spawn/teardown requests (posted by worker
//! contexts from any thread: all state is behind one mutex) and get-workers-by-gid tasks.
//!
//! Every request is bounded by the liveness watch of the link (`link.rs`): a daemon that
//! stops answering fails what waits with TIME_OUT after the bound (`DOCA_SOFT_UROM_LIVENESS_MS`,
//! default 10 s). When the daemon goes away (or is given up on), what waits fails and the
//! service moves to IDLE inside that progress call, as a DOCA context does on a fatal error.

use super::link::{liveness_from_env, Link};
use super::service_file;
use super::wake::WakeSet;
use crate::ctx::notify::Wakeup;
use crate::ctx::{Ctx, CtxOps, Transition, STATE_IDLE, STATE_RUNNING};
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::sync::lock;
use crate::task::{Task, TaskCompletionCb};
use crate::types::DocaData;
use crate::urom::wire::{Msg, OVERHEAD};
use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `DOCA_UROM_PLUGIN_NAME_MAX_LEN`.
pub(crate) const PLUGIN_NAME_MAX_LEN: usize = 48;
/// Default `max_comm_msg_size`.
pub const DEFAULT_MAX_MSG: usize = 4096;

/// `struct doca_urom_service_plugin_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PluginInfo {
    /// Plugin id (bit).
    pub id: u64,
    /// Plugin version.
    pub version: u64,
    /// NUL-terminated name.
    pub plugin_name: [u8; PLUGIN_NAME_MAX_LEN],
}
const _: () = assert!(std::mem::size_of::<PluginInfo>() == 64);

/// Where a daemon reply goes.
pub(crate) type ReplySlot = Arc<Mutex<Option<DocaResult<Msg>>>>;

enum Waiter {
    Reply(ReplySlot),
    Gid(usize),
}

struct Cfg {
    max_msg: usize,
    max_workers: u32,
    addr: Option<SocketAddrV4>,
    liveness: Duration,
}

#[derive(Default)]
struct St {
    link: Option<Link>,
    plugins: Vec<PluginInfo>,
    cpuset: Vec<u64>,
    waiting: HashMap<u64, Waiter>,
    next_req: u64,
    workers: u32,
}

/// Shared service state (the context's operations).
pub(crate) struct ServiceShared {
    cfg: Mutex<Cfg>,
    st: Mutex<St>,
    attached: AtomicUsize,
    // What the engine sleeps on for this context (see `arm_wakeup`).
    wake: WakeSet,
}

impl ServiceShared {
    /// Largest UROM message.
    pub(crate) fn max_msg(&self) -> usize {
        lock(&self.cfg).max_msg
    }

    /// The daemon's address (known after set_dev).
    pub(crate) fn addr(&self) -> Option<SocketAddrV4> {
        lock(&self.cfg).addr
    }

    /// How long a peer (the daemon, a worker) may stay silent while a request waits.
    pub(crate) fn liveness(&self) -> Duration {
        lock(&self.cfg).liveness
    }

    /// The CPU set the daemon offers (empty before start).
    pub(crate) fn cpuset(&self) -> Vec<u64> {
        lock(&self.st).cpuset.clone()
    }

    /// A worker context now refers to this service.
    pub(crate) fn attach(&self) {
        self.attached.fetch_add(1, Ordering::AcqRel);
    }

    /// A worker context no longer refers to this service.
    pub(crate) fn detach(&self) {
        self.attached.fetch_sub(1, Ordering::AcqRel);
    }

    /// Sends a request built from a fresh cookie; its reply lands in the returned slot
    /// during a later progress of the service's PE.
    pub(crate) fn request(&self, build: impl FnOnce(u64) -> Msg) -> DocaResult<ReplySlot> {
        let mut st = lock(&self.st);
        st.next_req += 1;
        let req = st.next_req;
        let link = st.link.as_mut().ok_or(DocaError::NOT_CONNECTED)?;
        link.send(&build(req))?;
        let slot: ReplySlot = Arc::new(Mutex::new(None));
        st.waiting.insert(req, Waiter::Reply(slot.clone()));
        Ok(slot)
    }

    /// Reserves room for one more worker (max_workers).
    pub(crate) fn reserve_worker(&self) -> DocaResult<()> {
        let max = lock(&self.cfg).max_workers;
        let mut st = lock(&self.st);
        if st.workers >= max {
            return Err(DocaError::FULL);
        }
        st.workers += 1;
        Ok(())
    }

    /// Returns a reservation.
    pub(crate) fn unreserve_worker(&self) {
        let mut st = lock(&self.st);
        st.workers = st.workers.saturating_sub(1);
    }

    fn connect(&self) -> DocaResult<()> {
        let (addr, max_msg, liveness) = {
            let c = lock(&self.cfg);
            (c.addr.ok_or(DocaError::BAD_STATE)?, c.max_msg, c.liveness)
        };
        let mut link = Link::connect(addr, max_msg + OVERHEAD + 64 * 1024, false)?;
        link.send(&Msg::Hello {
            max_msg: max_msg as u64,
        })?;
        let msgs = link
            .wait_for(liveness, |m| {
                matches!(m, Msg::HelloOk { .. } | Msg::Error { .. })
            })
            .inspect_err(|e| {
                sdk_err!("urom_service", "no answer from the UROM daemon at {addr}: {e:?} (is it running there? see DOCA_UROM_SERVICE_FILE)")
            })?;
        let mut st = lock(&self.st);
        for m in msgs {
            match m {
                Msg::HelloOk {
                    plugins, cpuset, ..
                } => {
                    st.plugins = plugins
                        .into_iter()
                        .map(|p| {
                            let mut name = [0u8; PLUGIN_NAME_MAX_LEN];
                            let n = p.name.len().min(PLUGIN_NAME_MAX_LEN - 1);
                            name[..n].copy_from_slice(&p.name.as_bytes()[..n]);
                            PluginInfo {
                                id: p.id,
                                version: p.version,
                                plugin_name: name,
                            }
                        })
                        .collect();
                    st.cpuset = cpuset;
                }
                Msg::Error { code, .. } => {
                    sdk_err!(
                        "urom_service",
                        "the UROM daemon at {addr} refused this host: {:?} (a message size of {max_msg} bytes larger than its -m?)",
                        DocaError(code)
                    );
                    return Err(DocaError(code));
                }
                _ => {}
            }
        }
        st.link = Some(link);
        st.waiting.clear();
        st.workers = 0;
        Ok(())
    }
}

fn complete_gid(ctx: &Ctx, task: usize, r: DocaResult<Vec<u64>>) {
    let t = task as *mut GidTask;
    // SAFETY: the task was submitted to this service and stays alive until completed.
    let status = unsafe {
        (*t).busy = false;
        match r {
            Ok(ids) => {
                (*t).ids = ids;
                Ok(())
            }
            Err(e) => {
                (*t).ids.clear();
                Err(e)
            }
        }
    };
    ctx.complete_task(t as *mut Task, status);
}

impl CtxOps for ServiceShared {
    fn kind(&self) -> &'static str {
        "urom_service"
    }

    /// The daemon connection's descriptors, and the liveness watch's next look while a
    /// request waits for the daemon.
    fn arm_wakeup(&self, _ctx: &Ctx) -> Wakeup {
        let liveness = self.liveness();
        let mut st = lock(&self.st);
        let outstanding = !st.waiting.is_empty();
        match st.link.as_mut() {
            None => Wakeup::Quiet,
            Some(link) => link.arm_wakeup(outstanding, liveness, &self.wake),
        }
    }

    fn start(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        self.connect()?;
        Ok(Transition::Done)
    }

    fn stop(&self, ctx: &Ctx) -> DocaResult<Transition> {
        let waiting = {
            let mut st = lock(&self.st);
            st.link = None;
            std::mem::take(&mut st.waiting)
        };
        for (_, w) in waiting {
            match w {
                Waiter::Reply(s) => *lock(&s) = Some(Err(DocaError::SHUTDOWN)),
                Waiter::Gid(t) => complete_gid(ctx, t, Err(DocaError::SHUTDOWN)),
            }
        }
        Ok(Transition::Done)
    }

    fn progress(&self, ctx: &Ctx) -> u32 {
        let liveness = self.liveness();
        let mut done = Vec::new();
        let failed = {
            let mut st = lock(&self.st);
            let Some(link) = st.link.as_mut() else {
                return 0;
            };
            let msgs = link.poll();
            for m in msgs {
                let req = match &m {
                    Msg::Spawned { req, .. }
                    | Msg::Destroyed { req, .. }
                    | Msg::GidList { req, .. }
                    | Msg::Error { req, .. } => *req,
                    _ => continue,
                };
                if let Some(w) = st.waiting.remove(&req) {
                    done.push((w, Ok(m)));
                }
            }
            let outstanding = !st.waiting.is_empty();
            let link = st.link.as_mut().expect("checked above");
            let failed = link.watch(outstanding, liveness);
            if let Some(e) = failed {
                for (_, w) in st.waiting.drain() {
                    done.push((w, Err(e)));
                }
                st.link = None;
            }
            failed
        };
        let mut n = done.len() as u32;
        for (w, r) in done {
            match w {
                Waiter::Reply(s) => *lock(&s) = Some(r),
                Waiter::Gid(t) => {
                    let ids = r.and_then(|m| match m {
                        Msg::GidList { ids, .. } => Ok(ids),
                        Msg::Error { code, .. } => Err(DocaError(code)),
                        _ => Err(DocaError::UNEXPECTED),
                    });
                    complete_gid(ctx, t, ids);
                }
            }
        }
        if let Some(e) = failed {
            if ctx.state() == STATE_RUNNING {
                sdk_err!(
                    "urom_service",
                    "lost the UROM daemon at {:?} ({e:?}): the service is IDLE",
                    self.addr()
                );
                ctx.set_state(STATE_IDLE);
                n += 1;
            }
        }
        n
    }

    fn submit(&self, _ctx: &Ctx, task: *mut Task) -> DocaResult<()> {
        let t = task as *mut GidTask;
        // SAFETY: every task of a service context is a GidTask (only those are allocated
        // against it); it is live while submitted.
        let gid = unsafe {
            if (*t).busy {
                return Err(DocaError::IN_USE);
            }
            (*t).gid
        };
        let mut st = lock(&self.st);
        st.next_req += 1;
        let req = st.next_req;
        st.link
            .as_mut()
            .ok_or(DocaError::NOT_CONNECTED)?
            .send(&Msg::GidQuery { req, gid })?;
        st.waiting.insert(req, Waiter::Gid(t as usize));
        // SAFETY: as above.
        unsafe { (*t).busy = true };
        Ok(())
    }
}

/// The C `struct doca_urom_service`.
pub struct UromService {
    ctx: Box<Ctx>,
    pub(crate) shared: Arc<ServiceShared>,
}

impl UromService {
    /// A new service (IDLE, default message size, one worker).
    pub(crate) fn new() -> UromService {
        let shared = Arc::new(ServiceShared {
            cfg: Mutex::new(Cfg {
                max_msg: DEFAULT_MAX_MSG,
                max_workers: 1,
                addr: None,
                liveness: liveness_from_env(),
            }),
            st: Mutex::new(St::default()),
            attached: AtomicUsize::new(0),
            wake: WakeSet::default(),
        });
        UromService {
            ctx: Ctx::new(shared.clone()),
            shared,
        }
    }

    /// The service's context, as the C API hands it out.
    pub(crate) fn ctx_ptr(&self) -> *mut Ctx {
        self.ctx.handle()
    }

    /// Whether it may be destroyed now: NOT_PERMITTED unless IDLE, IN_USE while workers
    /// refer to it. When it may, it leaves its progress engine.
    pub(crate) fn prepare_destroy(&self) -> DocaResult<()> {
        self.ctx.idle_or(DocaError::NOT_PERMITTED)?;
        if self.shared.attached.load(Ordering::Acquire) > 0 {
            return Err(DocaError::IN_USE);
        }
        self.ctx.detach_from_pe();
        Ok(())
    }

    /// The largest UROM message (IDLE only; room for the headers, at most 16 MiB).
    pub(crate) fn set_max_comm_msg_size(&self, size: usize) -> DocaResult<()> {
        self.ctx.require_idle()?;
        if !(64..=(1 << 24)).contains(&size) {
            return Err(DocaError::INVALID_VALUE);
        }
        lock(&self.shared.cfg).max_msg = size;
        Ok(())
    }

    /// How many workers it may run at once (IDLE only; a power of two).
    pub(crate) fn set_max_workers(&self, n: u32) -> DocaResult<()> {
        self.ctx.require_idle()?;
        if !n.is_power_of_two() {
            return Err(DocaError::INVALID_VALUE);
        }
        lock(&self.shared.cfg).max_workers = n;
        Ok(())
    }

    /// Finds the daemon serving `dev` in `DOCA_UROM_SERVICE_FILE` (IDLE only).
    pub(crate) fn set_dev(&self, dev: &Dev) -> DocaResult<()> {
        self.ctx.require_idle()?;
        let addr = service_file::lookup(&dev.info().pci)?;
        lock(&self.shared.cfg).addr = Some(addr);
        Ok(())
    }

    /// Sets the daemon address directly (IDLE only; tests and tools without a service
    /// file).
    #[cfg(feature = "testing")]
    pub(crate) fn set_addr(&self, addr: SocketAddrV4) -> DocaResult<()> {
        self.ctx.require_idle()?;
        lock(&self.shared.cfg).addr = Some(addr);
        Ok(())
    }

    /// Sets the liveness bound of this service and its workers (IDLE only; what
    /// `DOCA_SOFT_UROM_LIVENESS_MS` sets for a whole process).
    #[cfg(feature = "testing")]
    pub(crate) fn set_liveness(&self, bound: Duration) -> DocaResult<()> {
        self.ctx.require_idle()?;
        lock(&self.shared.cfg).liveness = bound;
        Ok(())
    }

    /// The daemon's plugins (RUNNING only; NOT_FOUND when there are none): the array lives
    /// in the service until it restarts.
    pub(crate) fn plugins(&self) -> DocaResult<(*const PluginInfo, usize)> {
        self.ctx.require_running()?;
        let st = lock(&self.shared.st);
        if st.plugins.is_empty() {
            return Err(DocaError::NOT_FOUND);
        }
        Ok((st.plugins.as_ptr(), st.plugins.len()))
    }

    /// The daemon's CPUs as the 16 words of a `ucs_cpu_set_t` (RUNNING only).
    pub(crate) fn cpuset(&self) -> DocaResult<[u64; 16]> {
        self.ctx.require_running()?;
        let st = lock(&self.shared.st);
        let mut words = [0u64; 16];
        for (w, v) in words.iter_mut().zip(st.cpuset.iter()) {
            *w = *v;
        }
        Ok(words)
    }
}

/// `doca_urom_service_get_workers_by_gid_task_completion_cb_t`, as a task callback.
pub type GidTaskCb = Option<unsafe extern "C" fn(*mut GidTask, DocaData, DocaData)>;

/// The C `struct doca_urom_service_get_workers_by_gid_task`.
#[repr(C)]
pub struct GidTask {
    task: Task,
    gid: u32,
    busy: bool,
    ids: Vec<u64>,
}

unsafe fn free_gid_task(t: *mut Task) {
    // SAFETY: allocated by Box (the C API's new_handle); freed once.
    drop(unsafe { Box::from_raw(t as *mut GidTask) });
}

impl GidTask {
    /// A task of `service` (gid 0, no callback).
    pub(crate) fn new(service: &UromService) -> GidTask {
        GidTask {
            task: Task::new(&*service.ctx, free_gid_task),
            gid: 0,
            busy: false,
            ids: Vec::new(),
        }
    }

    /// The group whose workers to list.
    pub(crate) fn set_gid(&mut self, gid: u32) {
        self.gid = gid;
    }

    /// The completion callback.
    pub(crate) fn set_cb(&mut self, cb: GidTaskCb) {
        // SAFETY: the typed callback differs from the generic one only in the pointee type
        // of its first argument (a GidTask starts with its Task).
        self.task
            .set_cb(unsafe { std::mem::transmute::<GidTaskCb, TaskCompletionCb>(cb) });
    }

    /// NOT_PERMITTED while submitted (a task in flight cannot be released).
    pub(crate) fn check_release(&self) -> DocaResult<()> {
        if self.busy {
            Err(DocaError::NOT_PERMITTED)
        } else {
            Ok(())
        }
    }

    /// The worker ids of the last completion.
    pub(crate) fn worker_ids(&self) -> &[u64] {
        &self.ids
    }
}
