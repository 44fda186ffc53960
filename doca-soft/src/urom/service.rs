//! `doca_urom_service`: the host's connection to the UROM daemon.
//!
//! `doca_ctx_start` connects, greets the daemon and fetches the plugin list and CPU set
//! before returning SUCCESS (RUNNING at once, as DOCA does). Afterwards the service's PE
//! progress handles daemon replies: worker spawn/teardown requests (posted by worker
//! contexts from any thread: all state is behind one mutex) and get-workers-by-gid tasks.

use crate::ctx::{Ctx, CtxOps, Transition, STATE_IDLE};
use crate::dev::dev_ref;
use crate::error::{to_c, DocaError, DocaResult};
use crate::sync::lock;
use crate::task::Task;
use crate::urom::link::Link;
use crate::urom::service_file;
use crate::urom::wire::{Msg, OVERHEAD};
use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `DOCA_UROM_PLUGIN_NAME_MAX_LEN`.
pub const PLUGIN_NAME_MAX_LEN: usize = 48;
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
pub type ReplySlot = Arc<Mutex<Option<DocaResult<Msg>>>>;

enum Waiter {
    Reply(ReplySlot),
    Gid(usize),
}

struct Cfg {
    max_msg: usize,
    max_workers: u32,
    addr: Option<SocketAddrV4>,
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
pub struct ServiceShared {
    cfg: Mutex<Cfg>,
    st: Mutex<St>,
    attached: AtomicUsize,
}

impl ServiceShared {
    /// Largest UROM message.
    pub fn max_msg(&self) -> usize {
        lock(&self.cfg).max_msg
    }

    /// The daemon's address (known after set_dev).
    pub fn addr(&self) -> Option<SocketAddrV4> {
        lock(&self.cfg).addr
    }

    /// The CPU set the daemon offers (empty before start).
    pub fn cpuset(&self) -> Vec<u64> {
        lock(&self.st).cpuset.clone()
    }

    /// A worker context now refers to this service.
    pub fn attach(&self) {
        self.attached.fetch_add(1, Ordering::AcqRel);
    }

    /// A worker context no longer refers to this service.
    pub fn detach(&self) {
        self.attached.fetch_sub(1, Ordering::AcqRel);
    }

    /// Sends a request built from a fresh cookie; its reply lands in the returned slot
    /// during a later progress of the service's PE.
    pub fn request(&self, build: impl FnOnce(u64) -> Msg) -> DocaResult<ReplySlot> {
        let mut st = lock(&self.st);
        st.next_req += 1;
        let req = st.next_req;
        let link = st.link.as_mut().ok_or(DocaError::BAD_STATE)?;
        link.send(&build(req))?;
        let slot: ReplySlot = Arc::new(Mutex::new(None));
        st.waiting.insert(req, Waiter::Reply(slot.clone()));
        Ok(slot)
    }

    /// Reserves room for one more worker (max_workers).
    pub fn reserve_worker(&self) -> DocaResult<()> {
        let max = lock(&self.cfg).max_workers;
        let mut st = lock(&self.st);
        if st.workers >= max {
            return Err(DocaError::FULL);
        }
        st.workers += 1;
        Ok(())
    }

    /// Returns a reservation.
    pub fn unreserve_worker(&self) {
        let mut st = lock(&self.st);
        st.workers = st.workers.saturating_sub(1);
    }

    fn connect(&self) -> DocaResult<()> {
        let (addr, max_msg) = {
            let c = lock(&self.cfg);
            (c.addr.ok_or(DocaError::BAD_STATE)?, c.max_msg)
        };
        let mut link = Link::connect(addr, max_msg + OVERHEAD + 64 * 1024)?;
        link.send(&Msg::Hello {
            max_msg: max_msg as u64,
        })?;
        let msgs = link
            .wait_for(Duration::from_secs(20), |m| {
                matches!(m, Msg::HelloOk { .. } | Msg::Error { .. })
            })
            .inspect_err(|e| {
                sdk_err!("urom_service", "no answer from the daemon at {addr}: {e:?}")
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
                Msg::Error { code, .. } => return Err(DocaError(code)),
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
        let mut done = Vec::new();
        {
            let mut st = lock(&self.st);
            let Some(link) = st.link.as_mut() else {
                return 0;
            };
            let msgs = link.poll();
            let failed = link.failed();
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
            if let Some(e) = failed {
                for (_, w) in st.waiting.drain() {
                    done.push((w, Err(e)));
                }
            }
        }
        let n = done.len() as u32;
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
            .ok_or(DocaError::BAD_STATE)?
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
    /// Shared state.
    pub shared: Arc<ServiceShared>,
}

impl UromService {
    /// The service's context.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }
}

/// `doca_urom_service_get_workers_by_gid_task_completion_cb_t`, as a task callback.
pub type GidTaskCb =
    Option<unsafe extern "C" fn(*mut GidTask, crate::types::DocaData, crate::types::DocaData)>;

/// The C `struct doca_urom_service_get_workers_by_gid_task`.
#[repr(C)]
pub struct GidTask {
    task: Task,
    gid: u32,
    busy: bool,
    ids: Vec<u64>,
}

unsafe fn free_gid_task(t: *mut Task) {
    // SAFETY: allocated by Box in allocate; freed once.
    drop(unsafe { Box::from_raw(t as *mut GidTask) });
}

/// # Safety
/// `p` null or a live service.
unsafe fn svc<'a>(p: *mut UromService) -> DocaResult<&'a UromService> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}

/// `doca_urom_service_create`.
///
/// # Safety
/// `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_create(out: *mut *mut UromService) -> u32 {
    if out.is_null() {
        return DocaError::INVALID_VALUE.0;
    }
    let shared = Arc::new(ServiceShared {
        cfg: Mutex::new(Cfg {
            max_msg: DEFAULT_MAX_MSG,
            max_workers: 1,
            addr: None,
        }),
        st: Mutex::new(St::default()),
        attached: AtomicUsize::new(0),
    });
    let s = Box::new(UromService {
        ctx: Ctx::new(shared.clone()),
        shared,
    });
    // SAFETY: checked non-null.
    unsafe { *out = Box::into_raw(s) };
    0
}

/// `doca_urom_service_destroy`: NOT_PERMITTED unless IDLE, IN_USE while workers refer to it.
///
/// # Safety
/// `p` null or a live service.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_destroy(p: *mut UromService) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { svc(p) }.and_then(|s| {
        if s.ctx.state() != STATE_IDLE {
            return Err(DocaError::NOT_PERMITTED);
        }
        if s.shared.attached.load(Ordering::Acquire) > 0 {
            return Err(DocaError::IN_USE);
        }
        s.ctx.detach_from_pe();
        Ok(())
    });
    if r.is_ok() {
        // SAFETY: created by Box::into_raw; not used after.
        drop(unsafe { Box::from_raw(p) });
    }
    to_c(r)
}

/// `doca_urom_service_set_max_comm_msg_size` (IDLE only; at least room for the headers).
///
/// # Safety
/// `p` null or a live service.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_set_max_comm_msg_size(
    p: *mut UromService,
    size: usize,
) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { svc(p) }.and_then(|s| {
        s.ctx.require_idle()?;
        if !(64..=(1 << 24)).contains(&size) {
            return Err(DocaError::INVALID_VALUE);
        }
        lock(&s.shared.cfg).max_msg = size;
        Ok(())
    }))
}

/// `doca_urom_service_set_max_workers` (power of two).
///
/// # Safety
/// `p` null or a live service.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_set_max_workers(p: *mut UromService, n: u32) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { svc(p) }.and_then(|s| {
        s.ctx.require_idle()?;
        if !n.is_power_of_two() {
            return Err(DocaError::INVALID_VALUE);
        }
        lock(&s.shared.cfg).max_workers = n;
        Ok(())
    }))
}

/// `doca_urom_service_set_dev`: finds the service for the device in DOCA_UROM_SERVICE_FILE.
///
/// # Safety
/// `p` null or a live service; `dev` null or a live device.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_set_dev(
    p: *mut UromService,
    dev: *mut crate::dev::Dev,
) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { svc(p) }.and_then(|s| {
        s.ctx.require_idle()?;
        // SAFETY: caller contract.
        let d = unsafe { dev_ref(dev) }?;
        let addr = service_file::lookup(&d.info().pci)?;
        lock(&s.shared.cfg).addr = Some(addr);
        Ok(())
    }))
}

/// Sets the daemon address directly (tests and tools that have no service file).
///
/// # Safety
/// `p` null or a live service.
pub unsafe fn set_service_addr(p: *mut UromService, addr: SocketAddrV4) -> DocaResult<()> {
    // SAFETY: caller contract.
    let s = unsafe { svc(p) }?;
    s.ctx.require_idle()?;
    lock(&s.shared.cfg).addr = Some(addr);
    Ok(())
}

/// `doca_urom_service_as_ctx`.
///
/// # Safety
/// `p` null or a live service.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_as_ctx(p: *mut UromService) -> *mut Ctx {
    // SAFETY: caller contract.
    unsafe { svc(p) }.map_or(std::ptr::null_mut(), |s| &*s.ctx as *const Ctx as *mut Ctx)
}

/// `doca_urom_service_get_plugins_list` (RUNNING only; NOT_FOUND when there are none).
///
/// # Safety
/// `p` null or live; out pointers null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_plugins_list(
    p: *mut UromService,
    plugins: *mut *const PluginInfo,
    count: *mut usize,
) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { svc(p) }.and_then(|s| {
        if plugins.is_null() || count.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        s.ctx.require_running()?;
        let st = lock(&s.shared.st);
        if st.plugins.is_empty() {
            return Err(DocaError::NOT_FOUND);
        }
        // SAFETY: checked non-null; the array lives in the service until it restarts.
        unsafe {
            *plugins = st.plugins.as_ptr();
            *count = st.plugins.len();
        }
        Ok(())
    }))
}

/// `doca_urom_service_get_cpuset` (started only): the daemon's CPUs (`ucs_cpu_set_t`).
///
/// # Safety
/// `p` null or live; `cpuset` null or 128 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_cpuset(
    p: *mut UromService,
    cpuset: *mut ucx_sys::sys::ucs_cpu_set_t,
) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { svc(p) }.and_then(|s| {
        if cpuset.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        s.ctx.require_running()?;
        let st = lock(&s.shared.st);
        let mut words = [0u64; 16];
        for (w, v) in words.iter_mut().zip(st.cpuset.iter()) {
            *w = *v;
        }
        // SAFETY: checked non-null.
        unsafe { (*cpuset).ucs_bits = words };
        Ok(())
    }))
}

/// `doca_urom_service_get_workers_by_gid_task_allocate`.
///
/// # Safety
/// `p` null or live; `task` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_allocate(
    p: *mut UromService,
    task: *mut *mut GidTask,
) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { svc(p) }.and_then(|s| {
        if task.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        let t = Box::new(GidTask {
            task: Task::new(&*s.ctx, free_gid_task),
            gid: 0,
            busy: false,
            ids: Vec::new(),
        });
        // SAFETY: checked non-null.
        unsafe { *task = Box::into_raw(t) };
        Ok(())
    }))
}

/// `doca_urom_service_get_workers_by_gid_task_allocate_init`.
///
/// # Safety
/// As allocate.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_allocate_init(
    p: *mut UromService,
    gid: u32,
    cb: GidTaskCb,
    task: *mut *mut GidTask,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { doca_urom_service_get_workers_by_gid_task_allocate(p, task) };
    if r == 0 {
        // SAFETY: allocate wrote a live task.
        unsafe {
            doca_urom_service_get_workers_by_gid_task_set_gid(*task, gid);
            doca_urom_service_get_workers_by_gid_task_set_cb(*task, cb);
        }
    }
    r
}

/// `doca_urom_service_get_workers_by_gid_task_release`: NOT_PERMITTED while in flight.
///
/// # Safety
/// `t` null or a live task.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_release(t: *mut GidTask) -> u32 {
    // SAFETY: caller contract.
    match unsafe { t.as_ref() } {
        None => DocaError::INVALID_VALUE.0,
        Some(x) if x.busy => DocaError::NOT_PERMITTED.0,
        Some(_) => {
            // SAFETY: allocated by Box; released once.
            unsafe { free_gid_task(t as *mut Task) };
            0
        }
    }
}

/// `doca_urom_service_get_workers_by_gid_task_set_gid`.
///
/// # Safety
/// `t` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_set_gid(
    t: *mut GidTask,
    gid: u32,
) {
    // SAFETY: caller contract.
    if let Some(t) = unsafe { t.as_mut() } {
        t.gid = gid;
    }
}

/// `doca_urom_service_get_workers_by_gid_task_set_cb`.
///
/// # Safety
/// `t` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_set_cb(
    t: *mut GidTask,
    cb: GidTaskCb,
) {
    // SAFETY: caller contract.
    if let Some(t) = unsafe { t.as_mut() } {
        // SAFETY: the typed callback differs from the generic one only in the pointee type
        // of its first argument (a GidTask starts with its Task).
        t.task
            .set_cb(unsafe { std::mem::transmute::<GidTaskCb, crate::task::TaskCompletionCb>(cb) });
    }
}

/// `doca_urom_service_get_workers_by_gid_task_as_task`.
///
/// # Safety
/// `t` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_as_task(
    t: *mut GidTask,
) -> *mut Task {
    t as *mut Task
}

/// `doca_urom_service_get_workers_by_gid_task_get_workers_count`.
///
/// # Safety
/// `t` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_get_workers_count(
    t: *mut GidTask,
) -> usize {
    // SAFETY: caller contract.
    unsafe { t.as_ref() }.map_or(0, |t| t.ids.len())
}

/// `doca_urom_service_get_workers_by_gid_task_get_worker_ids`.
///
/// # Safety
/// `t` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_get_worker_ids(
    t: *mut GidTask,
) -> *const u64 {
    // SAFETY: caller contract.
    unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.ids.as_ptr())
}

/// Borrows a service from a C pointer.
///
/// # Safety
/// `p` null or a live service.
pub unsafe fn service_ref<'a>(p: *mut UromService) -> DocaResult<&'a UromService> {
    // SAFETY: caller contract.
    unsafe { svc(p) }
}
