//! `Service`: the host's connection to the UROM daemon (found through
//! `DOCA_UROM_SERVICE_FILE` and the device's PCI address).

use crate::error::{check, DocaError, Error, Result};
use crate::serial::Serial;
use crate::state;
use doca_common::context::{Ctx, CtxState};
use doca_common::{Device, ProgressEngine};
use doca_sys as sys;
use std::ffi::CStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A plugin the service offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginInfo {
    /// Id (a single bit; use as the worker plugin mask and the command plugin).
    pub id: u64,
    /// Version reported by the plugin.
    pub version: u64,
    /// Name (the `.so` file name without `.so`).
    pub name: String,
}

/// A CPU set (`doca_cpu_set_t`, 1024 CPUs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuSet(pub [u64; 16]);

impl CpuSet {
    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < 1024 && self.0[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    /// Adds `cpu`.
    pub fn insert(&mut self, cpu: usize) {
        if cpu < 1024 {
            self.0[cpu / 64] |= 1 << (cpu % 64);
        }
    }
}

/// Configures and starts a [`Service`].
pub struct ServiceBuilder {
    dev: Device,
    pe: Option<ProgressEngine>,
    max_workers: u32,
    max_msg: Option<usize>,
}

impl ServiceBuilder {
    /// Use this PE (default: a new one).
    pub fn pe(mut self, pe: ProgressEngine) -> Self {
        self.pe = Some(pe);
        self
    }

    /// Most workers at once (power of two; default 1).
    pub fn max_workers(mut self, n: u32) -> Self {
        self.max_workers = n;
        self
    }

    /// Largest UROM message (default 4096; must match the daemon's).
    pub fn max_msg_size(mut self, n: usize) -> Self {
        self.max_msg = Some(n);
        self
    }

    /// Creates the service and starts it (RUNNING on return).
    pub fn start(self) -> Result<Arc<Service>> {
        let pe = match self.pe {
            Some(p) => p,
            None => ProgressEngine::new()?,
        };
        let mut raw = std::ptr::null_mut();
        // SAFETY: out pointer.
        check("doca_urom_service_create", unsafe {
            sys::doca_urom_service_create(&mut raw)
        })?;
        let svc = Service {
            raw,
            pe,
            serial: Serial::default(),
            _dev: self.dev.clone(),
        };
        // SAFETY: the service keeps its engine (`svc.pe`) until it is destroyed.
        unsafe { svc.ctx().connect(&svc.pe) }?;
        // SAFETY: live service, IDLE.
        unsafe {
            check(
                "doca_urom_service_set_max_workers",
                sys::doca_urom_service_set_max_workers(raw, self.max_workers),
            )?;
            if let Some(m) = self.max_msg {
                check(
                    "doca_urom_service_set_max_comm_msg_size",
                    sys::doca_urom_service_set_max_comm_msg_size(raw, m),
                )?;
            }
            check(
                "doca_urom_service_set_dev",
                sys::doca_urom_service_set_dev(raw, self.dev.as_raw()),
            )?;
        }
        if !svc.ctx().start()? {
            // The soft runtime connects synchronously; another backend may finish through
            // progress.
            let running = svc.pe.progress_until(Duration::from_secs(30), || {
                state::of(svc.ctx()) != CtxState::Starting
            });
            if !running || state::of(svc.ctx()) != CtxState::Running {
                let code = if running {
                    DocaError::INITIALIZATION
                } else {
                    DocaError::TIME_OUT
                };
                return Err(Error::doca("service start", code));
            }
        }
        Ok(Arc::new(svc))
    }
}

/// A started UROM service. Dropping it stops and destroys it (workers hold an `Arc`).
///
/// `Send + Sync` with either backend, so that workers on their own threads can share it
/// (DOCA's own multi-worker sample does this: worker threads start and stop their workers
/// while the main thread progresses the service). Every call this crate makes on the
/// service, and every worker call that posts a request to it (set service, start, stop,
/// destroy), runs under the service's lock: DOCA does not promise that one service may be
/// used by two threads at once, so the safe API never does. The lock is re-entrant, so a
/// callback running inside [`progress`](Self::progress) may call the service again.
pub struct Service {
    raw: *mut sys::doca_urom_service,
    pe: ProgressEngine,
    serial: Serial,
    _dev: Device,
}

// SAFETY: the handle may be used from any thread (DOCA objects are not bound to the thread
// that created them); calls into it are serialized by `serial` (see the type's docs).
unsafe impl Send for Service {}
// SAFETY: every call on the service through `&self` runs under `serial`, as do the worker
// calls that post requests to it.
unsafe impl Sync for Service {}

type GidCb = Box<dyn FnOnce(std::result::Result<Vec<u64>, DocaError>) + Send>;

unsafe extern "C" fn gid_done(
    t: *mut sys::doca_urom_service_get_workers_by_gid_task,
    ud: sys::doca_data,
    _c: sys::doca_data,
) {
    // SAFETY: ud.ptr is the Box<GidCb> leaked at submission; the task is live here.
    let (cb, r) = unsafe {
        let cb = Box::from_raw(ud.ptr as *mut GidCb);
        let status =
            sys::doca_task_get_status(sys::doca_urom_service_get_workers_by_gid_task_as_task(t));
        let r = DocaError::result(status).map(|_| {
            let n = sys::doca_urom_service_get_workers_by_gid_task_get_workers_count(t);
            let p = sys::doca_urom_service_get_workers_by_gid_task_get_worker_ids(t);
            if n == 0 || p.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(p, n).to_vec()
            }
        });
        sys::doca_urom_service_get_workers_by_gid_task_release(t);
        (cb, r)
    };
    cb(r);
}

impl Service {
    /// A builder for a service reached through `dev`.
    pub fn builder(dev: &Device) -> ServiceBuilder {
        ServiceBuilder {
            dev: dev.clone(),
            pe: None,
            max_workers: 1,
            max_msg: None,
        }
    }

    pub(crate) fn ctx(&self) -> Ctx {
        // SAFETY: live service; the Ctx is used only while `self` is borrowed.
        unsafe { Ctx::from_raw(sys::doca_urom_service_as_ctx(self.raw)) }
    }

    /// The service's PE.
    pub fn pe(&self) -> &ProgressEngine {
        &self.pe
    }

    /// Progresses the service's PE once (serves worker spawn/teardown and gid queries).
    pub fn progress(&self) -> bool {
        self.serial.run(|| self.pe.progress())
    }

    /// Runs `f` under the service's lock: for calls on the service, and worker calls that
    /// post requests to it.
    pub(crate) fn serialized<R>(&self, f: impl FnOnce() -> R) -> R {
        self.serial.run(f)
    }

    /// The raw handle.
    pub fn as_raw(&self) -> *mut sys::doca_urom_service {
        self.raw
    }

    /// The daemon's plugins.
    pub fn plugins(&self) -> Result<Vec<PluginInfo>> {
        let mut p = std::ptr::null();
        let mut n = 0usize;
        check(
            "doca_urom_service_get_plugins_list",
            self.serial.run(|| {
                // SAFETY: live service; out pointers.
                unsafe { sys::doca_urom_service_get_plugins_list(self.raw, &mut p, &mut n) }
            }),
        )?;
        // SAFETY: the service owns an array of n entries.
        let list = unsafe { std::slice::from_raw_parts(p, n) };
        Ok(list
            .iter()
            .map(|i| PluginInfo {
                id: i.id,
                version: i.version,
                // SAFETY: names are NUL-terminated within 48 bytes.
                name: unsafe { CStr::from_ptr(i.plugin_name.as_ptr()) }
                    .to_string_lossy()
                    .into_owned(),
            })
            .collect())
    }

    /// The plugin called `name`. [`Error::NotFound`] when the daemon offers none by that
    /// name: the message names the plugin looked for and the ones offered.
    pub fn plugin(&self, name: &str) -> Result<PluginInfo> {
        let plugins = self.plugins()?;
        if let Some(p) = plugins.iter().find(|p| p.name == name) {
            return Ok(p.clone());
        }
        let offered: Vec<&str> = plugins.iter().map(|p| p.name.as_str()).collect();
        Err(Error::NotFound(format!(
            "the UROM service offers no plugin {name:?} (it offers {offered:?}); a plugin's \
             name is its file name in the daemon's UROM_PLUGIN_PATH without `.so`"
        )))
    }

    /// CPUs the service offers to workers.
    pub fn cpuset(&self) -> Result<CpuSet> {
        let mut s = sys::doca_cpu_set_t::default();
        check(
            "doca_urom_service_get_cpuset",
            self.serial.run(|| {
                // SAFETY: live service; out pointer.
                unsafe { sys::doca_urom_service_get_cpuset(self.raw, &mut s) }
            }),
        )?;
        Ok(CpuSet(s.ucs_bits))
    }

    /// Asks for the ids of workers in group `gid`; `cb` runs inside a progress of this
    /// service's PE.
    pub fn workers_by_gid_with(
        &self,
        gid: u32,
        cb: impl FnOnce(std::result::Result<Vec<u64>, DocaError>) + Send + 'static,
    ) -> Result<()> {
        self.serial
            .run(|| self.submit_gid_task(gid, Box::new(Box::new(cb))))
    }

    fn submit_gid_task(&self, gid: u32, cb: Box<GidCb>) -> Result<()> {
        let mut t = std::ptr::null_mut();
        // SAFETY: live service; out pointer.
        check(
            "doca_urom_service_get_workers_by_gid_task_allocate_init",
            unsafe {
                sys::doca_urom_service_get_workers_by_gid_task_allocate_init(
                    self.raw,
                    gid,
                    Some(gid_done),
                    &mut t,
                )
            },
        )?;
        let ud = sys::doca_data {
            ptr: Box::into_raw(cb) as *mut std::ffi::c_void,
        };
        // SAFETY: live task.
        let r = unsafe {
            let task = sys::doca_urom_service_get_workers_by_gid_task_as_task(t);
            sys::doca_task_set_user_data(task, ud);
            sys::doca_task_submit(task)
        };
        if r != doca_sys::doca_error_t::DOCA_SUCCESS {
            // SAFETY: not submitted: we still own the callback box and the task.
            unsafe {
                drop(Box::from_raw(ud.ptr as *mut GidCb));
                sys::doca_urom_service_get_workers_by_gid_task_release(t);
            }
        }
        check("doca_task_submit", r)
    }

    /// Ids of the workers in group `gid` (progresses the service's PE until answered).
    pub fn workers_by_gid(&self, gid: u32) -> Result<Vec<u64>> {
        let slot = Arc::new(Mutex::new(None));
        let s2 = slot.clone();
        self.workers_by_gid_with(gid, move |r| {
            *s2.lock().unwrap_or_else(|p| p.into_inner()) = Some(r)
        })?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(r) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
                return r.map_err(|code| Error::doca("get_workers_by_gid", code));
            }
            if Instant::now() > deadline {
                return Err(Error::doca("get_workers_by_gid", DocaError::TIME_OUT));
            }
            if !self.progress() {
                std::thread::yield_now();
            }
        }
    }
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("state", &self.ctx().state().ok())
            .field("device", &self._dev.info().pci_addr())
            .finish_non_exhaustive()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        // The service's stop is synchronous: IDLE on return, or it failed and destroy
        // reports IN_USE; either way Drop has nobody to tell.
        if state::of(self.ctx()) != CtxState::Idle {
            let _ = self.ctx().request_stop();
        }
        // SAFETY: live service, destroyed once; workers hold an Arc of it, so none is left.
        unsafe { sys::doca_urom_service_destroy(self.raw) };
    }
}
