//! `doca_urom_worker` (host side): one worker process, driven through its own connection.
//!
//! Start (IN_PROGRESS, STARTING): asks the daemon (through the service) to spawn or reuse
//! the worker id, then, inside this context's progress, connects to the worker process,
//! attaches with the token the daemon gave, and moves the connection to a UCX endpoint made
//! from the worker's address (shared memory on one machine); RUNNING is reached inside a
//! progress call that reports it. Commands are sent as `urom_worker_cmd` frames whose
//! `urom_context` is the task's cookie; notifications complete the task with the plugin's
//! status and body.
//!
//! Failures: if the worker process dies, every in-flight task completes with
//! CONNECTION_RESET at the next progress and the context moves to IDLE in that progress call
//! (as a DOCA context does on a fatal error; submissions then fail with BAD_STATE). A worker
//! that stops answering (SIGSTOP, a hung machine) is given up on the same way, with
//! TIME_OUT, once it was silent for the liveness bound while something waited for it
//! (`link.rs`; the start and the attach are bounded alike). Stop (IN_PROGRESS) asks the
//! daemon to release the worker and reaches IDLE inside a later progress (needs the
//! service's PE to be progressed too).

use super::buf::{data_bytes, fill, task_buf};
use super::link::Link;
use super::service::{ReplySlot, ServiceShared, UromService, DEFAULT_MAX_MSG};
use super::wake::WakeSet;
use crate::buf::Buf;
use crate::ctx::notify::Wakeup;
use crate::ctx::{Ctx, CtxOps, Transition, STATE_IDLE, STATE_RUNNING};
use crate::error::{DocaError, DocaResult};
use crate::sync::lock;
use crate::task::{Task, TaskCompletionCb};
use crate::types::DocaData;
use crate::urom::wire::command::{push_cmd, NotifyHeader, CMD_HEADER_LEN, NOTIFY_HEADER_LEN};
use crate::urom::wire::{Msg, SpawnReq, KIND_NOTIFY, OVERHEAD};
use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::{Arc, Mutex, Weak};

/// `DOCA_UROM_WORKER_ID_ANY`.
pub(crate) const WORKER_ID_ANY: u64 = u64::MAX;
/// Size of the task user-data area.
pub(crate) const TASK_USER_DATA_LEN: usize = 32;
/// Most released command tasks a worker keeps for reuse: allocate/release pairs of a
/// steady command stream then allocate nothing.
const TASK_POOL_MAX: usize = 256;

#[derive(Clone)]
struct Cfg {
    service: Option<Arc<ServiceShared>>,
    id: u64,
    plugins: u64,
    cpuset: Vec<u64>,
    gid: u32,
    max_tasks: u32,
    env: Vec<String>,
}

enum Phase {
    Idle,
    Spawning(ReplySlot),
    Attaching,
    Running,
    Stopping(Option<ReplySlot>),
}

struct St {
    phase: Phase,
    link: Option<Link>,
    // Why the worker was lost (the context went IDLE because of it).
    failure: Option<DocaError>,
    // Domain requests sent and not acknowledged yet.
    domain_pending: usize,
    worker_id: u64,
    dest_id: u64,
    addrs: Vec<(u64, Vec<u8>)>,
    inflight: HashMap<u64, usize>,
    next_cookie: u64,
    domain_acks: Vec<u64>,
    reserved: bool,
    // Tasks answered by the last poll, completed once the lock is dropped (kept here so
    // its capacity is reused).
    done: Vec<(usize, DocaResult<()>)>,
    // The service's liveness bound, read at start (a progress call then takes no lock but
    // this state's).
    liveness: std::time::Duration,
    // The configured most tasks in flight, read at start.
    max_tasks: usize,
}

/// Shared worker state (the context's operations).
pub(crate) struct WorkerShared {
    cfg: Mutex<Cfg>,
    st: Mutex<St>,
    // Released command tasks (raw `CmdTask` pointers), reused by allocate.
    pool: Mutex<Vec<usize>>,
    // What the engine sleeps on for this context (see `arm_wakeup`).
    wake: WakeSet,
}

impl Drop for WorkerShared {
    fn drop(&mut self) {
        for t in lock(&self.pool).drain(..) {
            // SAFETY: pooled tasks are Box-allocated CmdTasks nobody else holds.
            drop(unsafe { Box::from_raw(t as *mut CmdTask) });
        }
    }
}

/// Matches a notification to its in-flight task (by cookie), fills the task's response and
/// returns the task with its result; None for a notification nobody waits for.
fn take_notify(inflight: &mut HashMap<u64, usize>, n: &[u8]) -> Option<(usize, DocaResult<()>)> {
    let (h, body) = NotifyHeader::parse(n)?;
    let t = inflight.remove(&h.urom_context)?;
    let len = h.len as usize;
    let r = if body.len() != len {
        Err(DocaError::UNEXPECTED)
    } else if h.status != 0 {
        Err(DocaError(h.status))
    } else {
        Ok(())
    };
    let ct = t as *mut CmdTask;
    // SAFETY: the task is live while in flight; it just left the in-flight map, so only
    // this call touches it until it is completed.
    unsafe {
        (*ct).busy = false;
        fill(&mut (*ct).response, &body[..body.len().min(len)]);
    }
    Some((t, r))
}

impl WorkerShared {
    /// Plugin addresses reported by the worker process (after start).
    pub(crate) fn addrs(&self) -> Vec<(u64, Vec<u8>)> {
        lock(&self.st).addrs.clone()
    }

    /// Sends a domain request on the worker connection; its acknowledgement is awaited
    /// (and the worker watched) until [`WorkerShared::take_domain_ack`] takes it.
    pub(crate) fn send_domain(&self, m: &Msg) -> DocaResult<()> {
        let mut st = lock(&self.st);
        if let Some(e) = st.failure {
            return Err(e);
        }
        st.link.as_mut().ok_or(DocaError::NOT_CONNECTED)?.send(m)?;
        st.domain_pending += 1;
        Ok(())
    }

    /// Whether the worker acknowledged domain request `req` (consumes the ack).
    pub(crate) fn take_domain_ack(&self, req: u64) -> bool {
        let mut st = lock(&self.st);
        let before = st.domain_acks.len();
        st.domain_acks.retain(|r| *r != req);
        let took = st.domain_acks.len() != before;
        if took {
            st.domain_pending = st.domain_pending.saturating_sub(1);
        }
        took
    }

    /// Whether the worker is attached and running.
    pub(crate) fn is_running(&self) -> bool {
        matches!(lock(&self.st).phase, Phase::Running)
    }

    /// Whether the commands travel over UCX (the connection moved after the attach).
    #[cfg(feature = "testing")]
    pub(crate) fn on_ucx(&self) -> bool {
        lock(&self.st).link.as_ref().is_some_and(Link::is_upgraded)
    }

    /// The transports of the UCX endpoint the commands travel on (`None`: not on UCX).
    #[cfg(feature = "testing")]
    pub(crate) fn ucx_transports(&self) -> Option<Vec<crate::urom::transport::Transport>> {
        lock(&self.st).link.as_ref().and_then(Link::transports)
    }

    /// Whether the worker connection broke (or the worker was given up on).
    pub(crate) fn link_failed(&self) -> Option<DocaError> {
        let st = lock(&self.st);
        st.failure
            .or_else(|| st.link.as_ref().and_then(Link::failed))
    }

    fn max_msg(&self) -> usize {
        lock(&self.cfg)
            .service
            .as_ref()
            .map_or(DEFAULT_MAX_MSG, |s| s.max_msg())
    }

    fn fail_inflight(&self, ctx: &Ctx, e: DocaError) -> u32 {
        let tasks: Vec<usize> = lock(&self.st).inflight.drain().map(|(_, t)| t).collect();
        for t in &tasks {
            let t = *t as *mut CmdTask;
            // SAFETY: in-flight tasks are live until completed.
            unsafe {
                (*t).busy = false;
                fill(&mut (*t).response, &[]);
            }
            ctx.complete_task(t as *mut Task, Err(e));
        }
        tasks.len() as u32
    }

    /// One progress of a RUNNING worker, `g` the state's guard taken by `progress` (one
    /// lock per call when nothing arrived).
    fn progress_running(&self, ctx: &Ctx, mut g: std::sync::MutexGuard<'_, St>) -> u32 {
        let (mut done, failed) = {
            let st = &mut *g;
            let Some(link) = st.link.as_mut() else {
                return 0;
            };
            let done = &mut st.done;
            let (inflight, acks) = (&mut st.inflight, &mut st.domain_acks);
            link.poll_frames(|kind, payload| {
                if kind == KIND_NOTIFY {
                    if let Some(d) = take_notify(inflight, payload) {
                        done.push(d);
                    }
                } else if let Ok(Msg::DomainOk { req }) = Msg::decode(kind, payload) {
                    acks.push(req);
                }
            });
            let outstanding = !st.inflight.is_empty() || st.domain_pending > st.domain_acks.len();
            let failed = link.watch(outstanding, st.liveness);
            if st.done.is_empty() && failed.is_none() {
                return 0;
            }
            (std::mem::take(&mut st.done), failed)
        };
        drop(g);
        // Callbacks run without the lock: they may submit the next command.
        let mut n = done.len() as u32;
        for (t, r) in done.drain(..) {
            ctx.complete_task(t as *mut Task, r);
        }
        lock(&self.st).done = done;
        if let Some(e) = failed {
            n += self.fail_inflight(ctx, e);
            n += self.lose(ctx, e);
        }
        n
    }

    /// The worker is gone (or given up on): the context moves to IDLE now, its use of the
    /// worker is released at the daemon (without waiting), and its reservation returned.
    fn lose(&self, ctx: &Ctx, e: DocaError) -> u32 {
        let svc = lock(&self.cfg).service.clone();
        let id = {
            let mut st = lock(&self.st);
            st.link = None;
            st.failure = Some(e);
            st.phase = Phase::Idle;
            if std::mem::take(&mut st.reserved) {
                if let Some(s) = &svc {
                    s.unreserve_worker();
                }
            }
            st.worker_id
        };
        sdk_err!(
            "urom_worker",
            "lost worker {id} ({e:?}): the worker context is IDLE; in-flight commands failed"
        );
        if let Some(s) = svc {
            // Nobody waits for the answer: the daemon drops this host's use of the worker.
            let _ = s.request(|req| Msg::Destroy { req, worker_id: id });
        }
        ctx.set_state(STATE_IDLE);
        1
    }

    /// Puts a released task in the pool; false when the pool is full.
    fn recycle(&self, t: *mut CmdTask) -> bool {
        let mut p = lock(&self.pool);
        if p.len() >= TASK_POOL_MAX {
            return false;
        }
        p.push(t as usize);
        true
    }

    fn finish_start(&self, ctx: &Ctx, r: DocaResult<()>) -> u32 {
        match r {
            Ok(()) => {
                lock(&self.st).phase = Phase::Running;
                ctx.set_state(STATE_RUNNING);
            }
            Err(e) => {
                sdk_err!("urom_worker", "worker start failed: {e:?}");
                let svc = lock(&self.cfg).service.clone();
                let mut st = lock(&self.st);
                st.phase = Phase::Idle;
                st.link = None;
                if std::mem::take(&mut st.reserved) {
                    if let Some(s) = svc {
                        s.unreserve_worker();
                    }
                }
                drop(st);
                ctx.set_state(STATE_IDLE);
            }
        }
        1
    }
}

impl CtxOps for WorkerShared {
    fn kind(&self) -> &'static str {
        "urom_worker"
    }

    fn needs_pe(&self) -> bool {
        true
    }

    /// Running or attaching: the worker connection's descriptors, and the liveness watch's
    /// next look while a command or a domain request waits. Spawning or stopping: the
    /// daemon's reply arrives through the service's engine, so look again shortly.
    fn arm_wakeup(&self, _ctx: &Ctx) -> Wakeup {
        let mut st = lock(&self.st);
        let st = &mut *st;
        let liveness = st.liveness;
        let outstanding = match st.phase {
            Phase::Idle => return Wakeup::Quiet,
            Phase::Spawning(_) | Phase::Stopping(_) => return self.wake.recheck(),
            Phase::Attaching => true,
            Phase::Running => !st.inflight.is_empty() || st.domain_pending > st.domain_acks.len(),
        };
        match st.link.as_mut() {
            None => Wakeup::Ready,
            Some(link) => link.arm_wakeup(outstanding, liveness, &self.wake),
        }
    }

    fn start(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        let cfg = lock(&self.cfg).clone();
        let svc = cfg.service.ok_or(DocaError::BAD_STATE)?;
        {
            let mut st = lock(&self.st);
            st.failure = None;
            st.domain_pending = 0;
            st.domain_acks.clear();
            st.liveness = svc.liveness();
            st.max_tasks = cfg.max_tasks as usize;
        }
        if cfg.plugins == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        if svc.addr().is_none() {
            return Err(DocaError::BAD_STATE);
        }
        // A worker's CPUs must be a subset of the service's.
        let offered = svc.cpuset();
        if cfg
            .cpuset
            .iter()
            .enumerate()
            .any(|(i, w)| w & !offered.get(i).copied().unwrap_or(0) != 0)
        {
            sdk_err!(
                "urom_worker",
                "the worker CPU set names CPUs the service does not offer (doca_urom_service_get_cpuset)"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        svc.reserve_worker()?;
        let spawn = SpawnReq {
            req: 0,
            worker_id: cfg.id,
            gid: cfg.gid,
            plugins: cfg.plugins,
            cpuset: cfg.cpuset.clone(),
            env: cfg.env.clone(),
        };
        let slot = match svc.request(|req| Msg::Spawn(SpawnReq { req, ..spawn })) {
            Ok(s) => s,
            Err(e) => {
                svc.unreserve_worker();
                return Err(e);
            }
        };
        let mut st = lock(&self.st);
        st.reserved = true;
        st.phase = Phase::Spawning(slot);
        Ok(Transition::Pending)
    }

    fn stop(&self, ctx: &Ctx) -> DocaResult<Transition> {
        let svc = lock(&self.cfg).service.clone();
        let id = lock(&self.st).worker_id;
        self.fail_inflight(ctx, DocaError::SHUTDOWN);
        let slot = svc
            .as_ref()
            .and_then(|s| s.request(|req| Msg::Destroy { req, worker_id: id }).ok());
        let mut st = lock(&self.st);
        st.link = None;
        st.phase = Phase::Stopping(slot);
        Ok(Transition::Pending)
    }

    fn progress(&self, ctx: &Ctx) -> u32 {
        let phase = {
            let st = lock(&self.st);
            match &st.phase {
                Phase::Idle => return 0,
                Phase::Spawning(s) => Some(lock(s).take()),
                Phase::Attaching => None,
                Phase::Running => return self.progress_running(ctx, st),
                Phase::Stopping(slot) => {
                    let done = slot.as_ref().is_none_or(|s| lock(s).is_some());
                    if !done {
                        return 0;
                    }
                    None
                }
            }
        };
        let stopping = matches!(lock(&self.st).phase, Phase::Stopping(_));
        if stopping {
            let svc = lock(&self.cfg).service.clone();
            let mut st = lock(&self.st);
            st.phase = Phase::Idle;
            if std::mem::take(&mut st.reserved) {
                if let Some(s) = svc {
                    s.unreserve_worker();
                }
            }
            drop(st);
            ctx.set_state(STATE_IDLE);
            return 1;
        }
        match phase {
            Some(None) => 0,
            Some(Some(reply)) => {
                let r = reply.and_then(|m| match m {
                    Msg::Spawned {
                        worker_id,
                        port,
                        token,
                        ..
                    } => Ok((worker_id, port, token)),
                    Msg::Error { code, .. } => Err(DocaError(code)),
                    _ => Err(DocaError::UNEXPECTED),
                });
                let (worker_id, port, token) = match r {
                    Ok(v) => v,
                    Err(e) => return self.finish_start(ctx, Err(e)),
                };
                let cfg = lock(&self.cfg).clone();
                let svc = cfg.service.expect("set before start");
                let ip = *svc.addr().expect("checked at start").ip();
                let link = Link::connect(
                    SocketAddrV4::new(ip, port),
                    svc.max_msg() + OVERHEAD + 64 * 1024,
                    true,
                )
                .and_then(|mut l| {
                    let ucx_addr = l.ucx_address().unwrap_or_default();
                    let unwatched = l.may_go_unwatched();
                    l.send(&Msg::Attach {
                        worker_id,
                        token,
                        ucx_addr,
                        unwatched,
                    })
                    .map(|_| l)
                });
                match link {
                    Ok(l) => {
                        let mut st = lock(&self.st);
                        st.worker_id = worker_id;
                        st.link = Some(l);
                        st.phase = Phase::Attaching;
                        0
                    }
                    Err(e) => self.finish_start(ctx, Err(e)),
                }
            }
            None => {
                // Attaching.
                let (msgs, failed) = {
                    let mut st = lock(&self.st);
                    let liveness = st.liveness;
                    let link = st.link.as_mut().expect("attaching has a link");
                    let m = link.poll();
                    let failed = if m.is_empty() {
                        link.watch(true, liveness)
                    } else {
                        link.failed()
                    };
                    (m, failed)
                };
                for m in msgs {
                    match m {
                        Msg::Attached {
                            dest_id,
                            addrs,
                            ucx_addr,
                            unwatched,
                        } => {
                            let mut st = lock(&self.st);
                            st.dest_id = dest_id;
                            st.addrs = addrs;
                            if !ucx_addr.is_empty() {
                                let link = st.link.as_mut().expect("attaching has a link");
                                if let Err(e) = link.upgrade(&ucx_addr, unwatched) {
                                    drop(st);
                                    return self.finish_start(ctx, Err(e));
                                }
                            }
                            drop(st);
                            return self.finish_start(ctx, Ok(()));
                        }
                        Msg::Error { code, .. } => {
                            return self.finish_start(ctx, Err(DocaError(code)))
                        }
                        _ => {}
                    }
                }
                match failed {
                    Some(e) => self.finish_start(ctx, Err(e)),
                    None => 0,
                }
            }
        }
    }

    fn submit(&self, _ctx: &Ctx, task: *mut Task) -> DocaResult<()> {
        let t = task as *mut CmdTask;
        let mut st = lock(&self.st);
        if st.inflight.len() >= st.max_tasks {
            return Err(DocaError::AGAIN);
        }
        // SAFETY: every task of a worker context is a CmdTask; live while submitted.
        let (plugin, payload) = unsafe {
            if (*t).busy {
                return Err(DocaError::IN_USE);
            }
            ((*t).plugin, data_bytes(&(*t).payload))
        };
        st.next_cookie += 1;
        let cookie = st.next_cookie;
        let link = st.link.as_mut().ok_or(DocaError::NOT_CONNECTED)?;
        if link.failed().is_some() {
            return Err(DocaError::NOT_CONNECTED);
        }

        // The frame is built in place in a reused send buffer (no allocation per command).
        link.send_with(|f| push_cmd(f, plugin, cookie, payload))?;
        st.inflight.insert(cookie, t as usize);
        // SAFETY: as above.
        unsafe { (*t).busy = true };
        Ok(())
    }
}

/// The C `struct doca_urom_worker` (host side).
pub struct UromWorker {
    ctx: Box<Ctx>,
    pub(crate) shared: Arc<WorkerShared>,
}

impl UromWorker {
    /// A new worker context (IDLE, id ANY, one task in flight at most).
    pub(crate) fn new() -> UromWorker {
        let shared = Arc::new(WorkerShared {
            cfg: Mutex::new(Cfg {
                service: None,
                id: WORKER_ID_ANY,
                plugins: 0,
                cpuset: Vec::new(),
                gid: 0,
                max_tasks: 1,
                env: Vec::new(),
            }),
            st: Mutex::new(St {
                phase: Phase::Idle,
                link: None,
                failure: None,
                domain_pending: 0,
                worker_id: WORKER_ID_ANY,
                dest_id: 0,
                addrs: Vec::new(),
                inflight: HashMap::new(),
                next_cookie: 0,
                domain_acks: Vec::new(),
                reserved: false,
                done: Vec::new(),
                liveness: super::link::DEFAULT_LIVENESS,
                max_tasks: 1,
            }),
            pool: Mutex::new(Vec::new()),
            wake: WakeSet::default(),
        });
        UromWorker {
            ctx: Ctx::new(shared.clone()),
            shared,
        }
    }

    /// The worker's context, as the C API hands it out.
    pub(crate) fn ctx_ptr(&self) -> *mut Ctx {
        self.ctx.handle()
    }

    /// Whether it may be destroyed now: IN_USE unless IDLE. When it may, it leaves its
    /// progress engine and its service.
    pub(crate) fn prepare_destroy(&self) -> DocaResult<()> {
        self.ctx.idle_or(DocaError::IN_USE)?;
        self.ctx.detach_from_pe();
        if let Some(s) = lock(&self.shared.cfg).service.take() {
            s.detach();
        }
        Ok(())
    }

    /// Changes the configuration (IDLE only).
    fn configure(&self, f: impl FnOnce(&mut Cfg) -> DocaResult<()>) -> DocaResult<()> {
        self.ctx.require_idle()?;
        f(&mut lock(&self.shared.cfg))
    }

    /// The service that spawns the worker process.
    pub(crate) fn set_service(&self, service: &UromService) -> DocaResult<()> {
        let svc = service.shared.clone();
        self.configure(|c| {
            svc.attach();
            if let Some(old) = c.service.replace(svc) {
                old.detach();
            }
            Ok(())
        })
    }

    /// The worker id (ANY lets the service choose).
    pub(crate) fn set_id(&self, id: u64) -> DocaResult<()> {
        self.configure(|c| {
            c.id = id;
            Ok(())
        })
    }

    /// The plugins the worker runs (bit mask of plugin ids, non-zero).
    pub(crate) fn set_plugins(&self, plugins: u64) -> DocaResult<()> {
        self.configure(|c| {
            if plugins == 0 {
                return Err(DocaError::INVALID_VALUE);
            }
            c.plugins = plugins;
            Ok(())
        })
    }

    /// The CPUs of the worker process (16 words of a `ucs_cpu_set_t`, not all zero).
    pub(crate) fn set_cpuset(&self, words: [u64; 16]) -> DocaResult<()> {
        self.configure(|c| {
            if words.iter().all(|w| *w == 0) {
                return Err(DocaError::INVALID_VALUE);
            }
            c.cpuset = words.to_vec();
            Ok(())
        })
    }

    /// The worker's group.
    pub(crate) fn set_gid(&self, gid: u32) -> DocaResult<()> {
        self.configure(|c| {
            c.gid = gid;
            Ok(())
        })
    }

    /// How many commands may be in flight (a power of two).
    pub(crate) fn set_max_inflight_tasks(&self, n: u32) -> DocaResult<()> {
        self.configure(|c| {
            if !n.is_power_of_two() {
                return Err(DocaError::INVALID_VALUE);
            }
            c.max_tasks = n;
            Ok(())
        })
    }

    /// Environment of the worker process: `NAME=value` entries without spaces.
    pub(crate) fn set_env(&self, env: Vec<String>) -> DocaResult<()> {
        if env
            .iter()
            .any(|e| crate::urom::daemon::valid_env(e).is_none())
        {
            return Err(DocaError::INVALID_VALUE);
        }
        self.configure(|c| {
            c.env = env;
            Ok(())
        })
    }

    /// The worker id: the one generated by the service after an ANY start, else the one
    /// set.
    pub(crate) fn id(&self) -> u64 {
        match lock(&self.shared.st).worker_id {
            WORKER_ID_ANY => lock(&self.shared.cfg).id,
            v => v,
        }
    }

    /// The worker's group.
    pub(crate) fn gid(&self) -> u32 {
        lock(&self.shared.cfg).gid
    }

    /// A command task (reused from the pool when one of the right size is there); its
    /// payload capacity is the message size less the command header.
    pub(crate) fn allocate_task(&self) -> *mut CmdTask {
        let max = self.shared.max_msg();
        let (plen, rlen) = (max - CMD_HEADER_LEN, max - NOTIFY_HEADER_LEN);
        let reused = lock(&self.shared.pool).pop().map(|p| p as *mut CmdTask);
        match reused {
            // SAFETY: pooled tasks are released CmdTasks nobody else holds.
            Some(t) if unsafe { fits(&*t, plen, rlen) } => {
                // SAFETY: as above; every field is reset to a freshly allocated task's value.
                let c = unsafe { &mut *t };
                c.task = Task::new(&*self.ctx, free_cmd_task);
                c.plugin = 0;
                c.user = [0; TASK_USER_DATA_LEN];
                c.busy = false;
                c.payload = task_buf(&mut c.payload_mem);
                c.response = task_buf(&mut c.response_mem);
                t
            }
            stale => {
                if let Some(s) = stale {
                    // SAFETY: a pooled task of another message size: ours to free.
                    drop(unsafe { Box::from_raw(s) });
                }
                let mut pm = vec![0u8; plen].into_boxed_slice();
                let mut rm = vec![0u8; rlen].into_boxed_slice();
                Box::into_raw(Box::new(CmdTask {
                    task: Task::new(&*self.ctx, free_cmd_task),
                    plugin: 0,
                    user: [0; TASK_USER_DATA_LEN],
                    busy: false,
                    payload: task_buf(&mut pm),
                    response: task_buf(&mut rm),
                    payload_mem: pm,
                    response_mem: rm,
                    owner: Arc::downgrade(&self.shared),
                }))
            }
        }
    }
}

/// `doca_urom_worker_cmd_task_completion_cb_t` as a task callback.
pub type CmdTaskCb = Option<unsafe extern "C" fn(*mut CmdTask, DocaData, DocaData)>;

/// The C `struct doca_urom_worker_cmd_task`.
#[repr(C)]
pub struct CmdTask {
    task: Task,
    plugin: u64,
    user: [u8; TASK_USER_DATA_LEN],
    busy: bool,
    payload: Buf,
    response: Buf,
    // Backing memory of the two bufs (boxed slices never move).
    payload_mem: Box<[u8]>,
    response_mem: Box<[u8]>,
    // The worker whose pool takes the task back on release.
    owner: Weak<WorkerShared>,
}

/// Whether a pooled task's buffers have the sizes a new task would get.
fn fits(t: &CmdTask, plen: usize, rlen: usize) -> bool {
    t.payload_mem.len() == plen && t.response_mem.len() == rlen
}

unsafe fn free_cmd_task(t: *mut Task) {
    let ct = t as *mut CmdTask;
    // SAFETY: a live CmdTask being released (once); `owner` is read before it can move.
    if let Some(owner) = unsafe { (*ct).owner.upgrade() } {
        if owner.recycle(ct) {
            return;
        }
    }
    // SAFETY: allocated by Box in allocate_task; freed once.
    drop(unsafe { Box::from_raw(ct) });
}

impl CmdTask {
    /// The plugin the command goes to.
    pub(crate) fn set_plugin(&mut self, plugin: u64) {
        self.plugin = plugin;
    }

    /// The completion callback.
    pub(crate) fn set_cb(&mut self, cb: CmdTaskCb) {
        // SAFETY: same ABI; only the first argument's pointee type differs (a CmdTask
        // starts with its Task).
        self.task
            .set_cb(unsafe { std::mem::transmute::<CmdTaskCb, TaskCompletionCb>(cb) });
    }

    /// The buffer the command is packed into.
    pub(crate) fn payload(&mut self) -> *mut Buf {
        &mut self.payload
    }

    /// The buffer holding the notification body after completion.
    pub(crate) fn response(&mut self) -> *mut Buf {
        &mut self.response
    }

    /// The caller's scratch area ([`TASK_USER_DATA_LEN`] bytes).
    pub(crate) fn user_data(&mut self) -> *mut u8 {
        self.user.as_mut_ptr()
    }

    /// Releases a task (back to its worker's pool, or freed): NOT_PERMITTED while in
    /// flight.
    ///
    /// # Safety
    /// `t` is a live task from [`UromWorker::allocate_task`], not used after success.
    pub(crate) unsafe fn release(t: *mut CmdTask) -> DocaResult<()> {
        // SAFETY: caller contract.
        if unsafe { (*t).busy } {
            return Err(DocaError::NOT_PERMITTED);
        }
        // SAFETY: live, idle task released once.
        unsafe { free_cmd_task(t as *mut Task) };
        Ok(())
    }
}
