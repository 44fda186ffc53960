//! `doca_urom.h`: the UROM host API (service, worker contexts with command tasks,
//! get-workers-by-gid tasks, domains). The engine behind it is `crate::urom::host`.

use std::ffi::{c_char, c_void};

use crate::buf::Buf;
use crate::capi::toolkit::{
    call, call_ptr, call_value, handle, handle_mut, new_handle, str_arg, take_handle, write_out,
};
use crate::ctx::Ctx;
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::task::Task;
use ucx_sys::sys::ucs_cpu_set_t;

pub use crate::urom::host::domain::{AllgatherCb, OobColl, ReqCb, UromDomain};
pub use crate::urom::host::service::{GidTask, GidTaskCb, PluginInfo, UromService};
pub use crate::urom::host::worker::{CmdTask, CmdTaskCb, UromWorker};

/// `DOCA_UROM_WORKER_ID_ANY`: the service chooses the worker id.
pub const DOCA_UROM_WORKER_ID_ANY: u64 = crate::urom::host::worker::WORKER_ID_ANY;
/// `DOCA_UROM_PLUGIN_NAME_MAX_LEN`: longest plugin name, terminating NUL included.
pub const DOCA_UROM_PLUGIN_NAME_MAX_LEN: usize = crate::urom::host::service::PLUGIN_NAME_MAX_LEN;

// ---------------------------------------------------------------------------------------
// Service

/// `doca_urom_service_create`: a new service, IDLE.
///
/// # Safety
/// `service` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_create(service: *mut *mut UromService) -> u32 {
    call("doca_urom_service_create", || {
        // SAFETY: `service` is null or writable (C API contract).
        unsafe { new_handle(service, UromService::new()) }
    })
}

/// `doca_urom_service_destroy`: NOT_PERMITTED unless IDLE, IN_USE while workers refer to
/// it.
///
/// # Safety
/// `service` null or a live service, not used after success.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_destroy(service: *mut UromService) -> u32 {
    call("doca_urom_service_destroy", || {
        // SAFETY: null or a live service (C API contract).
        unsafe { handle(service) }?.prepare_destroy()?;
        // SAFETY: made by doca_urom_service_create; the caller drops it now.
        drop(unsafe { take_handle(service) }?);
        Ok(())
    })
}

/// `doca_urom_service_set_max_comm_msg_size` (IDLE only; 64 bytes to 16 MiB).
///
/// # Safety
/// `service` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_set_max_comm_msg_size(
    service: *mut UromService,
    msg_size: usize,
) -> u32 {
    call("doca_urom_service_set_max_comm_msg_size", || {
        // SAFETY: null or a live service (C API contract).
        unsafe { handle(service) }?.set_max_comm_msg_size(msg_size)
    })
}

/// `doca_urom_service_set_max_workers` (IDLE only; a power of two).
///
/// # Safety
/// `service` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_set_max_workers(
    service: *mut UromService,
    max_workers: u32,
) -> u32 {
    call("doca_urom_service_set_max_workers", || {
        // SAFETY: null or a live service (C API contract).
        unsafe { handle(service) }?.set_max_workers(max_workers)
    })
}

/// `doca_urom_service_set_dev`: the daemon serving `dev`, from `DOCA_UROM_SERVICE_FILE`.
///
/// # Safety
/// `service` null or live; `dev` null or an open device.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_set_dev(
    service: *mut UromService,
    dev: *mut Dev,
) -> u32 {
    call("doca_urom_service_set_dev", || {
        // SAFETY: null or live handles (C API contract).
        let (s, d) = unsafe { (handle(service)?, handle(dev)?) };
        s.set_dev(d)
    })
}

/// `doca_urom_service_as_ctx`.
///
/// # Safety
/// `service` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_as_ctx(service: *mut UromService) -> *mut Ctx {
    call_ptr("doca_urom_service_as_ctx", || {
        // SAFETY: null or a live service (C API contract).
        Ok(unsafe { handle(service) }?.ctx_ptr())
    })
}

/// `doca_urom_service_get_plugins_list` (RUNNING only; NOT_FOUND when there are none). The
/// array belongs to the service.
///
/// # Safety
/// `service` null or live; `plugins` and `plugins_count` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_plugins_list(
    service: *mut UromService,
    plugins: *mut *const PluginInfo,
    plugins_count: *mut usize,
) -> u32 {
    call("doca_urom_service_get_plugins_list", || {
        // SAFETY: null or a live service (C API contract).
        let s = unsafe { handle(service) }?;
        if plugins.is_null() || plugins_count.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        let (list, n) = s.plugins()?;
        // SAFETY: both checked non-null; writable (C API contract).
        unsafe {
            write_out(plugins, list)?;
            write_out(plugins_count, n)
        }
    })
}

/// `doca_urom_service_get_cpuset` (started only): the daemon's CPUs.
///
/// # Safety
/// `service` null or live; `cpuset` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_cpuset(
    service: *mut UromService,
    cpuset: *mut ucs_cpu_set_t,
) -> u32 {
    call("doca_urom_service_get_cpuset", || {
        // SAFETY: null or a live service (C API contract).
        let s = unsafe { handle(service) }?;
        if cpuset.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        let ucs_bits = s.cpuset()?;
        // SAFETY: non-null; writable (C API contract).
        unsafe { write_out(cpuset, ucs_cpu_set_t { ucs_bits }) }
    })
}

/// `doca_urom_service_get_workers_by_gid_task_allocate`.
///
/// # Safety
/// `service` null or live; `task` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_allocate(
    service: *mut UromService,
    task: *mut *mut GidTask,
) -> u32 {
    call("doca_urom_service_get_workers_by_gid_task_allocate", || {
        // SAFETY: null or a live service; `task` null or writable (C API contract).
        unsafe {
            let s = handle(service)?;
            new_handle(task, GidTask::new(s))
        }
    })
}

/// `doca_urom_service_get_workers_by_gid_task_allocate_init`: allocate, then set the gid
/// and the callback.
///
/// # Safety
/// As `doca_urom_service_get_workers_by_gid_task_allocate`.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_allocate_init(
    service: *mut UromService,
    gid: u32,
    cb: GidTaskCb,
    task: *mut *mut GidTask,
) -> u32 {
    call(
        "doca_urom_service_get_workers_by_gid_task_allocate_init",
        || {
            // SAFETY: null or a live service (C API contract).
            let mut t = GidTask::new(unsafe { handle(service) }?);
            t.set_gid(gid);
            t.set_cb(cb);
            // SAFETY: `task` null or writable (C API contract).
            unsafe { new_handle(task, t) }
        },
    )
}

/// `doca_urom_service_get_workers_by_gid_task_release`: NOT_PERMITTED while submitted.
///
/// # Safety
/// `task` null or a live task, not used after success.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_release(
    task: *mut GidTask,
) -> u32 {
    call("doca_urom_service_get_workers_by_gid_task_release", || {
        // SAFETY: null or a live task (C API contract).
        unsafe { handle(task) }?.check_release()?;
        // SAFETY: allocated by this API; the caller drops it now.
        drop(unsafe { take_handle(task) }?);
        Ok(())
    })
}

/// `doca_urom_service_get_workers_by_gid_task_set_gid` (ignored for NULL).
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_set_gid(
    task: *mut GidTask,
    gid: u32,
) {
    call_value(
        "doca_urom_service_get_workers_by_gid_task_set_gid",
        (),
        || {
            // SAFETY: null or a live task, not borrowed elsewhere (C API contract).
            if let Ok(t) = unsafe { handle_mut(task) } {
                t.set_gid(gid);
            }
        },
    )
}

/// `doca_urom_service_get_workers_by_gid_task_set_cb` (ignored for NULL).
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_set_cb(
    task: *mut GidTask,
    cb: GidTaskCb,
) {
    call_value(
        "doca_urom_service_get_workers_by_gid_task_set_cb",
        (),
        || {
            // SAFETY: null or a live task, not borrowed elsewhere (C API contract).
            if let Ok(t) = unsafe { handle_mut(task) } {
                t.set_cb(cb);
            }
        },
    )
}

/// `doca_urom_service_get_workers_by_gid_task_as_task` (a gid task starts with its task).
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_as_task(
    task: *mut GidTask,
) -> *mut Task {
    task as *mut Task
}

/// `doca_urom_service_get_workers_by_gid_task_get_workers_count` (0 for NULL).
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_get_workers_count(
    task: *mut GidTask,
) -> usize {
    call_value(
        "doca_urom_service_get_workers_by_gid_task_get_workers_count",
        0,
        // SAFETY: null or a live task (C API contract).
        || unsafe { handle(task) }.map_or(0, |t| t.worker_ids().len()),
    )
}

/// `doca_urom_service_get_workers_by_gid_task_get_worker_ids` (NULL for NULL); the array
/// belongs to the task.
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_service_get_workers_by_gid_task_get_worker_ids(
    task: *mut GidTask,
) -> *const u64 {
    call_value(
        "doca_urom_service_get_workers_by_gid_task_get_worker_ids",
        std::ptr::null(),
        // SAFETY: null or a live task (C API contract).
        || unsafe { handle(task) }.map_or(std::ptr::null(), |t| t.worker_ids().as_ptr()),
    )
}

// ---------------------------------------------------------------------------------------
// Worker

/// `doca_urom_worker_create`: a new worker context, IDLE.
///
/// # Safety
/// `worker` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_create(worker: *mut *mut UromWorker) -> u32 {
    call("doca_urom_worker_create", || {
        // SAFETY: `worker` is null or writable (C API contract).
        unsafe { new_handle(worker, UromWorker::new()) }
    })
}

/// `doca_urom_worker_destroy`: IN_USE unless IDLE.
///
/// # Safety
/// `worker` null or live, not used after success.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_destroy(worker: *mut UromWorker) -> u32 {
    call("doca_urom_worker_destroy", || {
        // SAFETY: null or a live worker (C API contract).
        unsafe { handle(worker) }?.prepare_destroy()?;
        // SAFETY: made by doca_urom_worker_create; the caller drops it now.
        drop(unsafe { take_handle(worker) }?);
        Ok(())
    })
}

/// Applies `f` to the worker behind a C handle (the setters).
///
/// # Safety
/// `worker` null or live.
unsafe fn with_worker(
    func: &'static str,
    worker: *mut UromWorker,
    f: impl FnOnce(&UromWorker) -> DocaResult<()>,
) -> u32 {
    call(func, || {
        // SAFETY: null or a live worker (caller contract).
        f(unsafe { handle(worker) }?)
    })
}

/// `doca_urom_worker_set_service`.
///
/// # Safety
/// Both null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_set_service(
    worker: *mut UromWorker,
    service: *mut UromService,
) -> u32 {
    // SAFETY: null or live handles (C API contract).
    unsafe {
        with_worker("doca_urom_worker_set_service", worker, |w| {
            w.set_service(handle(service)?)
        })
    }
}

/// `doca_urom_worker_set_id` (`DOCA_UROM_WORKER_ID_ANY` lets the service choose).
///
/// # Safety
/// `worker` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_set_id(worker: *mut UromWorker, worker_id: u64) -> u32 {
    // SAFETY: null or a live worker (C API contract).
    unsafe { with_worker("doca_urom_worker_set_id", worker, |w| w.set_id(worker_id)) }
}

/// `doca_urom_worker_set_plugins` (bit mask of plugin ids, non-zero).
///
/// # Safety
/// `worker` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_set_plugins(
    worker: *mut UromWorker,
    plugins: u64,
) -> u32 {
    // SAFETY: null or a live worker (C API contract).
    unsafe {
        with_worker("doca_urom_worker_set_plugins", worker, |w| {
            w.set_plugins(plugins)
        })
    }
}

/// `doca_urom_worker_set_cpuset` (by value; not empty, within the service's).
///
/// # Safety
/// `worker` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_set_cpuset(
    worker: *mut UromWorker,
    cpuset: ucs_cpu_set_t,
) -> u32 {
    // SAFETY: null or a live worker (C API contract).
    unsafe {
        with_worker("doca_urom_worker_set_cpuset", worker, |w| {
            w.set_cpuset(cpuset.ucs_bits)
        })
    }
}

/// `doca_urom_worker_set_gid`.
///
/// # Safety
/// `worker` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_set_gid(worker: *mut UromWorker, gid: u32) -> u32 {
    // SAFETY: null or a live worker (C API contract).
    unsafe { with_worker("doca_urom_worker_set_gid", worker, |w| w.set_gid(gid)) }
}

/// `doca_urom_worker_set_max_inflight_tasks` (a power of two).
///
/// # Safety
/// `worker` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_set_max_inflight_tasks(
    worker: *mut UromWorker,
    max_tasks: u32,
) -> u32 {
    // SAFETY: null or a live worker (C API contract).
    unsafe {
        with_worker("doca_urom_worker_set_max_inflight_tasks", worker, |w| {
            w.set_max_inflight_tasks(max_tasks)
        })
    }
}

/// `doca_urom_worker_set_env`: `NAME=value` entries without spaces, applied when the
/// worker process is spawned.
///
/// # Safety
/// `worker` null or live; `env` null (with `count` 0) or `count` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_set_env(
    worker: *mut UromWorker,
    env: *const *const c_char,
    count: usize,
) -> u32 {
    call("doca_urom_worker_set_env", || {
        let mut entries = Vec::with_capacity(count);
        if count > 0 {
            if env.is_null() {
                return Err(DocaError::INVALID_VALUE);
            }
            for i in 0..count {
                // SAFETY: `env` holds `count` entries, each null or a string (C API
                // contract).
                entries.push(unsafe { str_arg(*env.add(i)) }?.to_owned());
            }
        }
        // SAFETY: null or a live worker (C API contract).
        unsafe { handle(worker) }?.set_env(entries)
    })
}

/// `doca_urom_worker_get_id`: the id set, or the one the service chose for ANY.
///
/// # Safety
/// `worker` null or live; `worker_id` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_get_id(
    worker: *mut UromWorker,
    worker_id: *mut u64,
) -> u32 {
    call("doca_urom_worker_get_id", || {
        // SAFETY: null or live/writable (C API contract).
        unsafe { write_out(worker_id, handle(worker)?.id()) }
    })
}

/// `doca_urom_worker_get_gid`.
///
/// # Safety
/// `worker` null or live; `worker_gid` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_get_gid(
    worker: *mut UromWorker,
    worker_gid: *mut u32,
) -> u32 {
    call("doca_urom_worker_get_gid", || {
        // SAFETY: null or live/writable (C API contract).
        unsafe { write_out(worker_gid, handle(worker)?.gid()) }
    })
}

/// `doca_urom_worker_as_ctx`.
///
/// # Safety
/// `worker` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_as_ctx(worker: *mut UromWorker) -> *mut Ctx {
    call_ptr("doca_urom_worker_as_ctx", || {
        // SAFETY: null or a live worker (C API contract).
        Ok(unsafe { handle(worker) }?.ctx_ptr())
    })
}

/// `doca_urom_worker_cmd_task_allocate`: the payload's capacity is the message size less
/// the command header.
///
/// # Safety
/// `worker` null or live; `task` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_allocate(
    worker: *mut UromWorker,
    task: *mut *mut CmdTask,
) -> u32 {
    call("doca_urom_worker_cmd_task_allocate", || {
        // SAFETY: null or a live worker (C API contract).
        let w = unsafe { handle(worker) }?;
        if task.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: non-null and writable (C API contract).
        unsafe { write_out(task, w.allocate_task()) }
    })
}

/// `doca_urom_worker_cmd_task_allocate_init`: allocate, then set the plugin.
///
/// # Safety
/// As `doca_urom_worker_cmd_task_allocate`.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_allocate_init(
    worker: *mut UromWorker,
    plugin: u64,
    task: *mut *mut CmdTask,
) -> u32 {
    call("doca_urom_worker_cmd_task_allocate_init", || {
        // SAFETY: null or a live worker (C API contract).
        let w = unsafe { handle(worker) }?;
        if task.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        let t = w.allocate_task();
        // SAFETY: a live task just allocated, borrowed nowhere else.
        unsafe { (*t).set_plugin(plugin) };
        // SAFETY: non-null and writable (C API contract).
        unsafe { write_out(task, t) }
    })
}

/// `doca_urom_worker_cmd_task_release`: NOT_PERMITTED while submitted.
///
/// # Safety
/// `task` null or live, not used after success.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_release(task: *mut CmdTask) -> u32 {
    call("doca_urom_worker_cmd_task_release", || {
        // SAFETY: null-checked; a live task of this API (C API contract).
        unsafe {
            handle(task)?;
            CmdTask::release(task)
        }
    })
}

/// `doca_urom_worker_cmd_task_set_plugin` (ignored for NULL).
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_set_plugin(task: *mut CmdTask, plugin: u64) {
    call_value("doca_urom_worker_cmd_task_set_plugin", (), || {
        // SAFETY: null or a live task, not borrowed elsewhere (C API contract).
        if let Ok(t) = unsafe { handle_mut(task) } {
            t.set_plugin(plugin);
        }
    })
}

/// `doca_urom_worker_cmd_task_set_cb` (ignored for NULL).
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_set_cb(task: *mut CmdTask, cb: CmdTaskCb) {
    call_value("doca_urom_worker_cmd_task_set_cb", (), || {
        // SAFETY: null or a live task, not borrowed elsewhere (C API contract).
        if let Ok(t) = unsafe { handle_mut(task) } {
            t.set_cb(cb);
        }
    })
}

/// `doca_urom_worker_cmd_task_get_payload`: the buffer to pack the command into (its data
/// length is the capacity until set).
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_get_payload(task: *mut CmdTask) -> *mut Buf {
    call_ptr("doca_urom_worker_cmd_task_get_payload", || {
        // SAFETY: null or a live task, not borrowed elsewhere (C API contract).
        Ok(unsafe { handle_mut(task) }?.payload())
    })
}

/// `doca_urom_worker_cmd_task_get_response`: the notification body after completion.
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_get_response(task: *mut CmdTask) -> *mut Buf {
    call_ptr("doca_urom_worker_cmd_task_get_response", || {
        // SAFETY: null or a live task, not borrowed elsewhere (C API contract).
        Ok(unsafe { handle_mut(task) }?.response())
    })
}

/// `doca_urom_worker_cmd_task_get_user_data`: a 32-byte scratch area.
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_get_user_data(
    task: *mut CmdTask,
) -> *mut c_void {
    call_ptr("doca_urom_worker_cmd_task_get_user_data", || {
        // SAFETY: null or a live task, not borrowed elsewhere (C API contract).
        Ok(unsafe { handle_mut(task) }?.user_data() as *mut c_void)
    })
}

/// `doca_urom_worker_cmd_task_as_task` (a command task starts with its task).
///
/// # Safety
/// `task` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_worker_cmd_task_as_task(task: *mut CmdTask) -> *mut Task {
    task as *mut Task
}

// ---------------------------------------------------------------------------------------
// Domain

/// `doca_urom_domain_create`: a new domain, IDLE.
///
/// # Safety
/// `domain` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_domain_create(domain: *mut *mut UromDomain) -> u32 {
    call("doca_urom_domain_create", || {
        // SAFETY: `domain` is null or writable (C API contract).
        unsafe { new_handle(domain, UromDomain::new()) }
    })
}

/// `doca_urom_domain_destroy`: NOT_PERMITTED unless IDLE.
///
/// # Safety
/// `domain` null or live, not used after success.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_domain_destroy(domain: *mut UromDomain) -> u32 {
    call("doca_urom_domain_destroy", || {
        // SAFETY: null or a live domain (C API contract).
        unsafe { handle(domain) }?.prepare_destroy()?;
        // SAFETY: made by doca_urom_domain_create; the caller drops it now.
        drop(unsafe { take_handle(domain) }?);
        Ok(())
    })
}

/// `doca_urom_domain_set_buffers_count`.
///
/// # Safety
/// `domain` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_domain_set_buffers_count(
    domain: *mut UromDomain,
    buffers_cnt: usize,
) -> u32 {
    call("doca_urom_domain_set_buffers_count", || {
        // SAFETY: null or a live domain (C API contract).
        unsafe { handle(domain) }?.set_buffers_count(buffers_cnt)
    })
}

/// Largest packed memory handle or key taken (UCX's are a few hundred bytes).
const MAX_BLOB: usize = 1 << 20;

/// Copies a packed blob (`len` bytes at `p`; NULL only with length 0). INVALID_VALUE for a
/// length no packed handle has (more than [`MAX_BLOB`]: it is checked before the memory is
/// touched, so `SIZE_MAX` is refused, not read).
///
/// # Safety
/// A non-null `p` is readable for `len` bytes.
unsafe fn blob(p: *const c_void, len: usize) -> DocaResult<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() || len > MAX_BLOB {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: non-null and readable for `len` bytes (caller contract).
    Ok(unsafe { std::slice::from_raw_parts(p as *const u8, len) }.to_vec())
}

/// `doca_urom_domain_add_buffer`: BAD_STATE before `set_buffers_count`, FULL once that
/// many were added, INVALID_VALUE for a buffer that wraps around the address space or a
/// handle/key length over 1 MiB. The packed memory handle and key are copied.
///
/// # Safety
/// `domain` null or live; `memh` and `mkey` readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_domain_add_buffer(
    domain: *mut UromDomain,
    buffer: *mut c_void,
    buf_len: usize,
    memh: *mut c_void,
    memh_len: usize,
    mkey: *mut c_void,
    mkey_len: usize,
) -> u32 {
    call("doca_urom_domain_add_buffer", || {
        // SAFETY: null or a live domain; blobs readable for their lengths (C API contract).
        let (d, memh, mkey) = unsafe {
            (
                handle(domain)?,
                blob(memh, memh_len)?,
                blob(mkey, mkey_len)?,
            )
        };
        d.add_buffer(buffer as u64, buf_len as u64, memh, mkey)
    })
}

/// `doca_urom_domain_set_oob` (copied; allgather and test mandatory).
///
/// # Safety
/// `domain` null or live; `oob` null or a valid struct.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_domain_set_oob(
    domain: *mut UromDomain,
    oob: *mut OobColl,
) -> u32 {
    call("doca_urom_domain_set_oob", || {
        // SAFETY: null or valid pointers (C API contract).
        let o = *unsafe { handle(oob) }?;
        // SAFETY: null or a live domain (C API contract).
        unsafe { handle(domain) }?.set_oob(o)
    })
}

/// `doca_urom_domain_set_workers`: domain ids (the plugins' `dest`) and the local worker
/// contexts.
///
/// # Safety
/// `domain` null or live; both arrays valid for `workers_cnt` entries of live workers.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_domain_set_workers(
    domain: *mut UromDomain,
    domain_worker_ids: *mut u64,
    workers: *mut *mut UromWorker,
    workers_cnt: usize,
) -> u32 {
    call("doca_urom_domain_set_workers", || {
        if workers_cnt == 0 || domain_worker_ids.is_null() || workers.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut members = Vec::with_capacity(workers_cnt);
        for i in 0..workers_cnt {
            // SAFETY: both arrays hold `workers_cnt` entries; each worker is null or live
            // (C API contract).
            members.push(unsafe { (*domain_worker_ids.add(i), handle(*workers.add(i))?) });
        }
        // SAFETY: null or a live domain (C API contract).
        unsafe { handle(domain) }?.set_workers(members)
    })
}

/// `doca_urom_domain_as_ctx`.
///
/// # Safety
/// `domain` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_urom_domain_as_ctx(domain: *mut UromDomain) -> *mut Ctx {
    call_ptr("doca_urom_domain_as_ctx", || {
        // SAFETY: null or a live domain (C API contract).
        Ok(unsafe { handle(domain) }?.ctx_ptr())
    })
}
