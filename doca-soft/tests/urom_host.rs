//! The host library (service, worker, command and gid tasks) through its C API, against a
//! daemon started by the test with the C echo plugin.

mod urom_support;

use doca_soft::capi::doca_buf::{doca_buf_get_data, doca_buf_get_data_len, doca_buf_set_data};
use doca_soft::capi::doca_ctx::{
    doca_ctx_get_state, doca_ctx_start, doca_ctx_stop, Ctx, STATE_IDLE, STATE_RUNNING,
    STATE_STARTING,
};
use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_pe::{
    doca_pe_connect_ctx, doca_pe_create, doca_pe_destroy, doca_pe_progress, doca_task_get_status,
    doca_task_submit, Pe, Task,
};
use doca_soft::capi::doca_types::DocaData;
use doca_soft::capi::doca_urom::*;
use doca_soft::testing::urom::{
    set_service_addr, set_service_liveness, worker_on_ucx, worker_ucx_transports, Transport,
    DEFAULT_MAX_MSG, UCX_WATCH_ENV,
};
use std::ffi::c_void;
use std::time::{Duration, Instant};
use urom_support::*;

const IN_PROGRESS: u32 = 26;

fn state(ctx: *mut Ctx) -> u32 {
    let mut s = 99;
    // SAFETY: ctx is live.
    assert_eq!(unsafe { doca_ctx_get_state(ctx, &mut s) }, 0);
    s
}

/// Progresses `pes` until `done()`; returns the sum of progress results.
fn progress_until(pes: &[*mut Pe], mut done: impl FnMut() -> bool) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut sum = 0u32;
    while !done() {
        assert!(Instant::now() < deadline, "timed out progressing");
        for pe in pes {
            // SAFETY: live PE.
            sum += u32::from(unsafe { doca_pe_progress(*pe) });
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    sum
}

struct Svc {
    pe: *mut Pe,
    svc: *mut UromService,
}

fn start_service(d: &Daemon) -> Svc {
    start_service_bounded(d, None)
}

/// [`start_service`] with a liveness bound for the service and its workers.
fn start_service_bounded(d: &Daemon, liveness: Option<Duration>) -> Svc {
    let mut pe = std::ptr::null_mut();
    let mut svc = std::ptr::null_mut();
    // SAFETY: out pointers are valid; objects are used as the API says.
    unsafe {
        assert_eq!(doca_pe_create(&mut pe), 0);
        assert_eq!(doca_urom_service_create(&mut svc), 0);
        if let Some(l) = liveness {
            set_service_liveness(svc, l).unwrap();
        }
        assert_eq!(doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)), 0);
        assert_eq!(
            doca_urom_service_set_max_workers(svc, 3),
            DocaError::INVALID_VALUE.0,
            "power of two"
        );
        assert_eq!(doca_urom_service_set_max_workers(svc, 4), 0);
        set_service_addr(svc, d.addr).unwrap();
        let ctx = doca_urom_service_as_ctx(svc);
        assert_eq!(doca_ctx_start(ctx), 0, "service start is synchronous");
        assert_eq!(state(ctx), STATE_RUNNING);
        assert_eq!(
            doca_urom_service_set_max_workers(svc, 8),
            DocaError::BAD_STATE.0
        );
    }
    Svc { pe, svc }
}

/// A new progress engine.
fn new_pe() -> *mut Pe {
    let mut pe = std::ptr::null_mut();
    // SAFETY: out pointer.
    assert_eq!(unsafe { doca_pe_create(&mut pe) }, 0);
    pe
}

fn echo_plugin(s: &Svc) -> PluginInfo {
    let mut list: *const PluginInfo = std::ptr::null();
    let mut n = 0usize;
    // SAFETY: live service; the list is owned by the service.
    unsafe {
        assert_eq!(
            doca_urom_service_get_plugins_list(s.svc, &mut list, &mut n),
            0
        );
        let l = std::slice::from_raw_parts(list, n);
        let p = l
            .iter()
            .find(|p| p.plugin_name.starts_with(b"worker_echo_c\0"))
            .expect("echo plugin listed");
        *p
    }
}

fn start_worker(s: &Svc, pe: *mut Pe, id: u64, gid: u32, plugin: u64) -> *mut UromWorker {
    start_worker_env(s, pe, id, gid, plugin, true)
}

/// `with_env`: the environment only applies when the process is spawned; asking for it on
/// an existing worker id fails the start.
fn start_worker_env(
    s: &Svc,
    pe: *mut Pe,
    id: u64,
    gid: u32,
    plugin: u64,
    with_env: bool,
) -> *mut UromWorker {
    let mut w = std::ptr::null_mut();
    // SAFETY: as the API says.
    unsafe {
        assert_eq!(doca_urom_worker_create(&mut w), 0);
        assert_eq!(doca_urom_worker_set_service(w, s.svc), 0);
        let ctx = doca_urom_worker_as_ctx(w);
        assert_eq!(doca_pe_connect_ctx(pe, ctx), 0);
        assert_eq!(doca_urom_worker_set_id(w, id), 0);
        assert_eq!(doca_urom_worker_set_gid(w, gid), 0);
        assert_eq!(
            doca_urom_worker_set_max_inflight_tasks(w, 3),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_urom_worker_set_max_inflight_tasks(w, 4), 0);
        let bad = [c"HAS SPACE=1".as_ptr()];
        assert_eq!(
            doca_urom_worker_set_env(w, bad.as_ptr(), 1),
            DocaError::INVALID_VALUE.0
        );
        let env = [c"UCX_LOG_LEVEL=error".as_ptr()];
        if with_env {
            assert_eq!(doca_urom_worker_set_env(w, env.as_ptr(), 1), 0);
        }
        assert_eq!(
            doca_urom_worker_set_plugins(w, 0),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_urom_worker_set_plugins(w, plugin), 0);
        assert_eq!(doca_ctx_start(ctx), IN_PROGRESS);
        assert_eq!(state(ctx), STATE_STARTING);
        assert_eq!(doca_urom_worker_set_gid(w, 9), DocaError::BAD_STATE.0);
        let sum = progress_until(&[s.pe, pe], || state(ctx) == STATE_RUNNING);
        assert!(
            sum > 0,
            "RUNNING is reached inside a progress call that reports progress"
        );
    }
    w
}

#[repr(C)]
struct Cookie {
    done: bool,
    status: u32,
    response: Vec<u8>,
}

unsafe extern "C" fn on_cmd(task: *mut CmdTask, ud: DocaData, _ctx_ud: DocaData) {
    // SAFETY: the test passes a pointer to a live Cookie; the task is live in its callback.
    unsafe {
        let c = &mut *(ud.ptr as *mut Cookie);
        c.status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
        let resp = doca_urom_worker_cmd_task_get_response(task);
        let mut data: *mut c_void = std::ptr::null_mut();
        let mut len = 0usize;
        assert_eq!(doca_buf_get_data(resp, &mut data), 0);
        assert_eq!(doca_buf_get_data_len(resp, &mut len), 0);
        c.response = std::slice::from_raw_parts(data as *const u8, len).to_vec();
        // The 32-byte user area carries what the submitter put there.
        let user = doca_urom_worker_cmd_task_get_user_data(task) as *const u64;
        assert_eq!(*user, 0xfeed);
        c.done = true;
        assert_eq!(doca_urom_worker_cmd_task_release(task), 0);
    }
}

fn submit_echo(w: *mut UromWorker, plugin: u64, kind: u64, data: u64, cookie: &mut Cookie) -> u32 {
    let mut t = std::ptr::null_mut();
    // SAFETY: as the API says.
    unsafe {
        assert_eq!(
            doca_urom_worker_cmd_task_allocate_init(w, plugin, &mut t),
            0
        );
        let payload = doca_urom_worker_cmd_task_get_payload(t);
        let mut p: *mut c_void = std::ptr::null_mut();
        let mut cap = 0usize;
        assert_eq!(doca_buf_get_data(payload, &mut p), 0);
        assert_eq!(doca_buf_get_data_len(payload, &mut cap), 0);
        assert_eq!(
            cap,
            DEFAULT_MAX_MSG - 24,
            "payload capacity = message size - command header"
        );
        let body = [kind.to_le_bytes(), data.to_le_bytes()].concat();
        std::ptr::copy_nonoverlapping(body.as_ptr(), p as *mut u8, 16);
        assert_eq!(doca_buf_set_data(payload, p, 16), 0);
        *(doca_urom_worker_cmd_task_get_user_data(t) as *mut u64) = 0xfeed;
        doca_urom_worker_cmd_task_set_cb(t, Some(on_cmd));
        let task = doca_urom_worker_cmd_task_as_task(t);
        doca_soft::capi::doca_pe::doca_task_set_user_data(
            task,
            DocaData {
                ptr: cookie as *mut Cookie as *mut c_void,
            },
        );
        let r = doca_task_submit(task);
        if r != 0 {
            doca_urom_worker_cmd_task_release(t);
        }
        r
    }
}

static GID_IDS: std::sync::Mutex<Vec<(u32, Vec<u64>)>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" fn on_gid(task: *mut GidTask, ud: DocaData, _c: DocaData) {
    // SAFETY: the task is live in its callback.
    unsafe {
        let n = doca_urom_service_get_workers_by_gid_task_get_workers_count(task);
        let ids = std::slice::from_raw_parts(
            doca_urom_service_get_workers_by_gid_task_get_worker_ids(task),
            n,
        )
        .to_vec();
        assert_eq!(
            doca_task_get_status(doca_urom_service_get_workers_by_gid_task_as_task(task)),
            0
        );
        GID_IDS.lock().unwrap().push((ud.u64 as u32, ids));
        assert_eq!(doca_urom_service_get_workers_by_gid_task_release(task), 0);
    }
}

fn stop_worker(s: &Svc, pe: *mut Pe, w: *mut UromWorker) {
    // SAFETY: as the API says.
    unsafe {
        let ctx = doca_urom_worker_as_ctx(w);
        let r = doca_ctx_stop(ctx);
        assert!(r == 0 || r == IN_PROGRESS);
        let sum = progress_until(&[s.pe, pe], || state(ctx) == STATE_IDLE);
        assert!(sum > 0);
        assert_eq!(doca_urom_worker_destroy(w), 0);
    }
}

fn stop_service(s: Svc) {
    // SAFETY: as the API says.
    unsafe {
        assert_eq!(doca_ctx_stop(doca_urom_service_as_ctx(s.svc)), 0);
        assert_eq!(doca_urom_service_destroy(s.svc), 0);
        assert_eq!(doca_pe_destroy(s.pe), 0);
    }
}

#[test]
fn service_worker_commands_and_gid_query() {
    let (_dir, d) = echo_daemon();
    let s = start_service(&d);
    let plugin = echo_plugin(&s);
    assert_eq!(plugin.version, 1);
    let mut cpus = ucx_sys::sys::ucs_cpu_set_t::default();
    // SAFETY: live service.
    assert_eq!(unsafe { doca_urom_service_get_cpuset(s.svc, &mut cpus) }, 0);
    assert!(cpus.ucs_bits.iter().any(|w| *w != 0));

    let pe = new_pe();
    let w1 = start_worker(&s, pe, 4, 0, plugin.id);
    // SAFETY: live worker.
    assert_eq!(
        unsafe { worker_on_ucx(w1) },
        Ok(true),
        "after the attach, commands travel over a UCX endpoint made from the worker's address"
    );
    let w2 = start_worker(&s, pe, DOCA_UROM_WORKER_ID_ANY, 1, plugin.id);
    let mut id2 = 0;
    // SAFETY: live worker.
    assert_eq!(unsafe { doca_urom_worker_get_id(w2, &mut id2) }, 0);
    assert_ne!(
        id2, DOCA_UROM_WORKER_ID_ANY,
        "ANY resolves to a generated id"
    );

    let mut c = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    assert_eq!(submit_echo(w1, plugin.id, 0, 0xdead_beef, &mut c), 0);
    progress_until(&[s.pe, pe], || c.done);
    assert_eq!(c.status, 0);
    assert_eq!(
        c.response,
        [0u64.to_le_bytes(), 0xdead_beefu64.to_le_bytes()].concat()
    );

    // A command the plugin rejects: its status reaches the task.
    let mut c = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    assert_eq!(submit_echo(w1, plugin.id, 7, 0, &mut c), 0);
    progress_until(&[s.pe, pe], || c.done);
    assert_eq!(c.status, DocaError::NOT_SUPPORTED.0);

    // get-workers-by-gid for both groups.
    for gid in [0u32, 1] {
        let mut t = std::ptr::null_mut();
        // SAFETY: as the API says.
        unsafe {
            assert_eq!(
                doca_urom_service_get_workers_by_gid_task_allocate_init(
                    s.svc,
                    gid,
                    Some(on_gid),
                    &mut t
                ),
                0
            );
            let task = doca_urom_service_get_workers_by_gid_task_as_task(t);
            doca_soft::capi::doca_pe::doca_task_set_user_data(task, DocaData { u64: gid as u64 });
            assert_eq!(doca_task_submit(task), 0);
        }
    }
    progress_until(&[s.pe], || GID_IDS.lock().unwrap().len() == 2);
    let mut got = GID_IDS.lock().unwrap().clone();
    got.sort();
    assert_eq!(got, vec![(0, vec![4]), (1, vec![id2])]);

    // CPU sets: a subset of the service's is accepted, CPU 1023 (not offered) is refused.
    // SAFETY: as the API says.
    unsafe {
        let mut w3 = std::ptr::null_mut();
        assert_eq!(doca_urom_worker_create(&mut w3), 0);
        assert_eq!(doca_urom_worker_set_service(w3, s.svc), 0);
        assert_eq!(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w3)), 0);
        assert_eq!(doca_urom_worker_set_plugins(w3, plugin.id), 0);
        let mut bad = ucx_sys::sys::ucs_cpu_set_t::default();
        bad.ucs_bits[15] = 1 << 63;
        assert_eq!(doca_urom_worker_set_cpuset(w3, bad), 0);
        assert_eq!(
            doca_ctx_start(doca_urom_worker_as_ctx(w3)),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_urom_worker_set_cpuset(w3, cpus), 0);
        assert_eq!(doca_ctx_start(doca_urom_worker_as_ctx(w3)), IN_PROGRESS);
        progress_until(&[s.pe, pe], || {
            state(doca_urom_worker_as_ctx(w3)) == STATE_RUNNING
        });
        stop_worker(&s, pe, w3);
    }
    stop_worker(&s, pe, w1);
    stop_worker(&s, pe, w2);
    // SAFETY: no contexts left on this PE.
    assert_eq!(unsafe { doca_pe_destroy(pe) }, 0);
    stop_service(s);
}

#[test]
fn killed_worker_fails_inflight_tasks_and_new_workers_start() {
    let (_dir, d) = echo_daemon();
    let s = start_service(&d);
    let plugin = echo_plugin(&s);
    let pe = new_pe();
    let w = start_worker(&s, pe, 1, 0, plugin.id);
    let mut held = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    assert_eq!(
        submit_echo(w, plugin.id, 1, 0, &mut held),
        0,
        "HOLD stays in flight"
    );
    let pids = d.worker_pids();
    assert_eq!(pids.len(), 1);
    let killed = Instant::now();
    // SAFETY: killing the worker process spawned for this test.
    unsafe { libc::kill(pids[0], libc::SIGKILL) };
    progress_until(&[s.pe, pe], || held.done);
    let waited = killed.elapsed();
    assert_eq!(held.status, DocaError::CONNECTION_RESET.0);
    assert!(
        waited < Duration::from_secs(1),
        "error seen within 1 s (took {waited:?})"
    );
    // The context moved to IDLE by itself, as a DOCA context does on a fatal error.
    // SAFETY: live worker.
    let ctx = unsafe { doca_urom_worker_as_ctx(w) };
    progress_until(&[s.pe, pe], || state(ctx) == STATE_IDLE);
    let mut late = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    assert_eq!(
        submit_echo(w, plugin.id, 0, 1, &mut late),
        DocaError::BAD_STATE.0
    );
    // SAFETY: an IDLE worker can be destroyed without a stop.
    assert_eq!(unsafe { doca_urom_worker_destroy(w) }, 0);

    // The daemon serves a new worker with the same id.
    let w = start_worker(&s, pe, 1, 0, plugin.id);
    let mut c = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    assert_eq!(submit_echo(w, plugin.id, 0, 5, &mut c), 0);
    progress_until(&[s.pe, pe], || c.done);
    assert_eq!(c.status, 0);
    stop_worker(&s, pe, w);
    // SAFETY: no contexts left.
    assert_eq!(unsafe { doca_pe_destroy(pe) }, 0);
    stop_service(s);
}

#[test]
fn api_rejects_bad_arguments_and_states() {
    // SAFETY: exercising the C API with null and wrong-state arguments.
    unsafe {
        assert_eq!(
            doca_urom_service_create(std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_urom_worker_create(std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_urom_service_set_max_workers(std::ptr::null_mut(), 4),
            DocaError::INVALID_VALUE.0
        );
        let mut svc = std::ptr::null_mut();
        assert_eq!(doca_urom_service_create(&mut svc), 0);
        let mut list: *const PluginInfo = std::ptr::null();
        let mut n = 0;
        assert_eq!(
            doca_urom_service_get_plugins_list(svc, &mut list, &mut n),
            DocaError::BAD_STATE.0
        );
        assert_eq!(
            doca_urom_service_set_max_comm_msg_size(svc, 8),
            DocaError::INVALID_VALUE.0
        );
        let mut w = std::ptr::null_mut();
        assert_eq!(doca_urom_worker_create(&mut w), 0);
        assert_eq!(doca_urom_worker_set_service(w, svc), 0);
        assert_eq!(
            doca_urom_service_destroy(svc),
            DocaError::IN_USE.0,
            "a worker refers to it"
        );
        let mut pe = std::ptr::null_mut();
        assert_eq!(doca_pe_create(&mut pe), 0);
        assert_eq!(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w)), 0);
        assert_eq!(doca_urom_worker_set_plugins(w, 1), 0);
        // A CPU set outside the service's is refused at start (the service is not even
        // started here, so it offers none).
        let mut cpus = ucx_sys::sys::ucs_cpu_set_t::default();
        cpus.ucs_bits[15] = 1 << 63;
        assert_eq!(doca_urom_worker_set_cpuset(w, cpus), 0);
        // Service not started (no daemon address): the worker cannot start.
        assert_ne!(doca_ctx_start(doca_urom_worker_as_ctx(w)), 0);
        assert_eq!(state(doca_urom_worker_as_ctx(w)), STATE_IDLE);
        let mut t: *mut CmdTask = std::ptr::null_mut();
        assert_eq!(doca_urom_worker_cmd_task_allocate(w, &mut t), 0);
        assert_eq!(
            doca_task_submit(t as *mut Task),
            DocaError::BAD_STATE.0,
            "worker not running"
        );
        assert_eq!(doca_urom_worker_cmd_task_release(t), 0);
        assert_eq!(doca_urom_worker_destroy(w), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
        assert_eq!(doca_urom_service_destroy(svc), 0);
    }
}

unsafe extern "C" fn solo_allgather(
    sbuf: *mut c_void,
    rbuf: *mut c_void,
    len: usize,
    _info: *mut c_void,
    req: *mut *mut c_void,
) -> u32 {
    // SAFETY: one participant: rbuf has room for len bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(sbuf as *const u8, rbuf as *mut u8, len);
        *req = std::ptr::dangling_mut::<c_void>();
    }
    0
}

unsafe extern "C" fn solo_test(_req: *mut c_void) -> u32 {
    0
}

unsafe extern "C" fn solo_free(_req: *mut c_void) -> u32 {
    0
}

#[test]
fn domain_exchanges_addresses_and_plugins_look_them_up() {
    let (_dir, d) = echo_daemon();
    let s = start_service(&d);
    let plugin = echo_plugin(&s);
    let mut pe = std::ptr::null_mut();
    // SAFETY: as the API says.
    unsafe {
        assert_eq!(doca_pe_create(&mut pe), 0);
        let mut ws = [
            start_worker(&s, pe, 20, 0, plugin.id),
            start_worker(&s, pe, 21, 0, plugin.id),
        ];
        let mut dom = std::ptr::null_mut();
        assert_eq!(doca_urom_domain_create(&mut dom), 0);
        let ctx = doca_urom_domain_as_ctx(dom);
        assert_eq!(doca_pe_connect_ctx(pe, ctx), 0);
        let mut oob = OobColl {
            allgather: Some(solo_allgather),
            req_test: Some(solo_test),
            req_free: Some(solo_free),
            coll_info: std::ptr::null_mut(),
            n_oob_indexes: 1,
            oob_index: 0,
        };
        assert_eq!(doca_urom_domain_set_oob(dom, &mut oob), 0);
        let mut ids = [100u64, 101];
        assert_eq!(
            doca_urom_domain_set_workers(dom, ids.as_mut_ptr(), ws.as_mut_ptr(), 2),
            0
        );
        let mut mem = [0u8; 64];
        let p = mem.as_mut_ptr() as *mut c_void;
        let mut key = [7u8; 4];
        let k = key.as_mut_ptr() as *mut c_void;
        assert_eq!(
            doca_urom_domain_add_buffer(dom, p, 64, k, 4, k, 4),
            DocaError::BAD_STATE.0,
            "count first"
        );
        assert_eq!(doca_urom_domain_set_buffers_count(dom, 1), 0);
        assert_eq!(doca_urom_domain_add_buffer(dom, p, 64, k, 4, k, 4), 0);
        assert_eq!(
            doca_urom_domain_add_buffer(dom, p, 64, k, 4, k, 4),
            DocaError::FULL.0
        );
        assert_eq!(doca_ctx_start(ctx), IN_PROGRESS);
        assert_eq!(state(ctx), STATE_STARTING);
        let sum = progress_until(&[s.pe, pe], || state(ctx) == STATE_RUNNING);
        assert!(sum > 0);
        // Worker 20's plugin finds member 101's address through the runtime lookups.
        let mut c = Cookie {
            done: false,
            status: 99,
            response: vec![],
        };
        assert_eq!(submit_echo(ws[0], plugin.id, 2, 101, &mut c), 0);
        progress_until(&[s.pe, pe], || c.done);
        assert_eq!(c.status, 0);
        let mut want = [0u8; 8];
        want[..7].copy_from_slice(b"echo-c\0");
        assert_eq!(&c.response[8..16], &want);
        let mut c = Cookie {
            done: false,
            status: 99,
            response: vec![],
        };
        assert_eq!(submit_echo(ws[0], plugin.id, 2, 555, &mut c), 0);
        progress_until(&[s.pe, pe], || c.done);
        assert_eq!(c.status, DocaError::NOT_FOUND.0, "unknown domain id");
        assert_eq!(doca_urom_domain_destroy(dom), DocaError::NOT_PERMITTED.0);
        assert_eq!(doca_ctx_stop(ctx), 0);
        assert_eq!(doca_urom_domain_destroy(dom), 0);
        for w in ws {
            stop_worker(&s, pe, w);
        }
        assert_eq!(doca_pe_destroy(pe), 0);
    }
    stop_service(s);
}

#[test]
fn two_hosts_share_one_worker_process_and_get_their_own_notifications() {
    let (_dir, d) = echo_daemon();
    let (s1, s2) = (start_service(&d), start_service(&d));
    let plugin = echo_plugin(&s1);
    let (mut pe1, mut pe2) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: out pointers.
    unsafe {
        assert_eq!(doca_pe_create(&mut pe1), 0);
        assert_eq!(doca_pe_create(&mut pe2), 0);
    }
    let w1 = start_worker(&s1, pe1, 30, 0, plugin.id);
    let w2 = start_worker_env(&s2, pe2, 30, 0, plugin.id, false);
    assert_eq!(
        d.worker_pids().len(),
        1,
        "the same worker id is one process"
    );
    let mut c1 = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    let mut c2 = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    assert_eq!(submit_echo(w1, plugin.id, 0, 111, &mut c1), 0);
    assert_eq!(submit_echo(w2, plugin.id, 0, 222, &mut c2), 0);
    progress_until(&[s1.pe, s2.pe, pe1, pe2], || c1.done && c2.done);
    assert_eq!(
        &c1.response[8..16],
        &111u64.to_le_bytes(),
        "host 1 gets its own answer"
    );
    assert_eq!(
        &c2.response[8..16],
        &222u64.to_le_bytes(),
        "host 2 gets its own answer"
    );
    stop_worker(&s1, pe1, w1);
    assert_eq!(d.worker_pids().len(), 1, "still used by host 2");
    let mut c3 = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    assert_eq!(submit_echo(w2, plugin.id, 0, 333, &mut c3), 0);
    progress_until(&[s2.pe, pe2], || c3.done);
    assert_eq!(c3.status, 0);
    stop_worker(&s2, pe2, w2);
    // SAFETY: no contexts left.
    unsafe {
        assert_eq!(doca_pe_destroy(pe1), 0);
        assert_eq!(doca_pe_destroy(pe2), 0);
    }
    stop_service(s1);
    stop_service(s2);
}

#[test]
fn two_contexts_of_one_host_on_one_worker_id_are_counted() {
    let (_dir, d) = echo_daemon();
    let s = start_service(&d);
    let plugin = echo_plugin(&s);
    let pe = new_pe();
    let a = start_worker(&s, pe, 40, 0, plugin.id);
    let b = start_worker_env(&s, pe, 40, 0, plugin.id, false);
    assert_eq!(d.worker_pids().len(), 1);
    stop_worker(&s, pe, a);
    assert_eq!(
        d.worker_pids().len(),
        1,
        "the other context still uses the process"
    );
    let mut c = Cookie {
        done: false,
        status: 99,
        response: vec![],
    };
    assert_eq!(submit_echo(b, plugin.id, 0, 4, &mut c), 0);
    progress_until(&[s.pe, pe], || c.done);
    assert_eq!(c.status, 0);
    stop_worker(&s, pe, b);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !d.worker_pids().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(d.worker_pids().is_empty(), "released by its last user");
    // SAFETY: no contexts left.
    assert_eq!(unsafe { doca_pe_destroy(pe) }, 0);
    stop_service(s);
}

fn cookie() -> Cookie {
    Cookie {
        done: false,
        status: 99,
        response: vec![],
    }
}

/// Sends `sig` to process `pid` (one the test's daemon started).
fn signal(pid: i32, sig: i32) {
    // SAFETY: plain kill(2) of a process this test's daemon spawned (or the daemon).
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

const BOUND: Duration = Duration::from_millis(1000);
/// What a bounded wait may take beyond the bound on a loaded 2-core machine.
const SLACK: Duration = Duration::from_secs(4);

#[test]
fn a_stopped_worker_fails_inflight_commands_with_time_out_within_the_bound() {
    let (_dir, d) = echo_daemon();
    let s = start_service_bounded(&d, Some(BOUND));
    let plugin = echo_plugin(&s);
    let pe = new_pe();
    let w = start_worker(&s, pe, 1, 0, plugin.id);
    // SAFETY: live worker.
    let ctx = unsafe { doca_urom_worker_as_ctx(w) };
    // A command the plugin holds on a live worker is not cut short: the bound is on the
    // worker's liveness, not on how long a command may take.
    let mut held = cookie();
    assert_eq!(submit_echo(w, plugin.id, 1, 0, &mut held), 0);
    let t = Instant::now() + BOUND * 3;
    progress_until(&[s.pe, pe], || Instant::now() > t);
    assert!(!held.done, "a held command on a live worker waits");
    assert_eq!(state(ctx), STATE_RUNNING);
    // The worker stops answering: the command fails with TIME_OUT within the bound.
    let pid = d.worker_pids()[0];
    signal(pid, libc::SIGSTOP);
    let stopped = Instant::now();
    progress_until(&[s.pe, pe], || held.done);
    let took = stopped.elapsed();
    assert_eq!(held.status, DocaError::TIME_OUT.0);
    assert!(
        took >= BOUND / 2 && took < BOUND + SLACK,
        "failed after {took:?}"
    );
    progress_until(&[s.pe, pe], || state(ctx) == STATE_IDLE);
    signal(pid, libc::SIGCONT);
    // SAFETY: IDLE worker, then no contexts left on this PE.
    unsafe {
        assert_eq!(doca_urom_worker_destroy(w), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
    }
    stop_service(s);
}

#[test]
fn a_stopped_daemon_fails_gid_queries_and_worker_starts_with_time_out() {
    let (_dir, d) = echo_daemon();
    let s1 = start_service_bounded(&d, Some(BOUND));
    let s2 = start_service_bounded(&d, Some(BOUND));
    let plugin = echo_plugin(&s2);
    signal(d.pid(), libc::SIGSTOP);
    // A gid query.
    let mut t = std::ptr::null_mut();
    let started = Instant::now();
    // SAFETY: as the API says.
    unsafe {
        assert_eq!(
            doca_urom_service_get_workers_by_gid_task_allocate_init(
                s1.svc,
                0,
                Some(on_gid_status),
                &mut t
            ),
            0
        );
        assert_eq!(
            doca_task_submit(doca_urom_service_get_workers_by_gid_task_as_task(t)),
            0
        );
    }
    progress_until(&[s1.pe], || GID_STATUS.lock().unwrap().is_some());
    let took = started.elapsed();
    assert_eq!(*GID_STATUS.lock().unwrap(), Some(DocaError::TIME_OUT.0));
    assert!(took < BOUND + SLACK, "failed after {took:?}");
    // SAFETY: live service.
    let sctx = unsafe { doca_urom_service_as_ctx(s1.svc) };
    progress_until(&[s1.pe], || state(sctx) == STATE_IDLE);
    // A worker start.
    let mut pe = std::ptr::null_mut();
    let mut w = std::ptr::null_mut();
    let started = Instant::now();
    // SAFETY: as the API says.
    unsafe {
        assert_eq!(doca_pe_create(&mut pe), 0);
        assert_eq!(doca_urom_worker_create(&mut w), 0);
        assert_eq!(doca_urom_worker_set_service(w, s2.svc), 0);
        assert_eq!(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w)), 0);
        assert_eq!(doca_urom_worker_set_plugins(w, plugin.id), 0);
        assert_eq!(doca_ctx_start(doca_urom_worker_as_ctx(w)), IN_PROGRESS);
    }
    // SAFETY: live worker.
    let wctx = unsafe { doca_urom_worker_as_ctx(w) };
    progress_until(&[s2.pe, pe], || state(wctx) == STATE_IDLE);
    let took = started.elapsed();
    assert!(took < BOUND + SLACK, "the start failed after {took:?}");
    // The spawn request waited on the second service's link: that service gave up on the
    // daemon too.
    // SAFETY: live service.
    let sctx2 = unsafe { doca_urom_service_as_ctx(s2.svc) };
    assert_eq!(state(sctx2), STATE_IDLE);
    signal(d.pid(), libc::SIGCONT);
    // SAFETY: IDLE contexts.
    unsafe {
        assert_eq!(doca_urom_worker_destroy(w), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
        for s in [s1, s2] {
            assert_eq!(doca_urom_service_destroy(s.svc), 0);
            assert_eq!(doca_pe_destroy(s.pe), 0);
        }
    }
}

static GID_STATUS: std::sync::Mutex<Option<u32>> = std::sync::Mutex::new(None);

unsafe extern "C" fn on_gid_status(task: *mut GidTask, _ud: DocaData, _c: DocaData) {
    // SAFETY: the task is live in its callback.
    unsafe {
        let st = doca_task_get_status(doca_urom_service_get_workers_by_gid_task_as_task(task));
        *GID_STATUS.lock().unwrap() = Some(st);
        assert_eq!(doca_urom_service_get_workers_by_gid_task_release(task), 0);
    }
}

#[test]
fn a_killed_daemon_fails_commands_at_once_and_contexts_go_idle() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let mut d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    let s = start_service(&d);
    let plugin = echo_plugin(&s);
    let pe = new_pe();
    let w = start_worker(&s, pe, 1, 0, plugin.id);
    let mut held = cookie();
    assert_eq!(submit_echo(w, plugin.id, 1, 0, &mut held), 0);
    let killed = Instant::now();
    signal(d.pid(), libc::SIGKILL);
    let _ = d.child_mut().wait();
    // The daemon's workers die with it; the held command fails, both contexts go IDLE.
    // SAFETY: live contexts.
    let (wctx, sctx) = unsafe { (doca_urom_worker_as_ctx(w), doca_urom_service_as_ctx(s.svc)) };
    progress_until(&[s.pe, pe], || {
        held.done && state(wctx) == STATE_IDLE && state(sctx) == STATE_IDLE
    });
    assert_eq!(held.status, DocaError::CONNECTION_RESET.0);
    assert!(
        killed.elapsed() < SLACK,
        "seen after {:?}",
        killed.elapsed()
    );
    // SAFETY: IDLE contexts.
    unsafe {
        assert_eq!(doca_urom_worker_destroy(w), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
        assert_eq!(doca_urom_service_destroy(s.svc), 0);
        assert_eq!(doca_pe_destroy(s.pe), 0);
    }
}

#[test]
fn add_buffer_refuses_impossible_lengths_without_unwinding() {
    let mut dom = std::ptr::null_mut();
    let mut key = [7u8; 8];
    let k = key.as_mut_ptr() as *mut c_void;
    let mut mem = [0u8; 64];
    let p = mem.as_mut_ptr() as *mut c_void;
    // SAFETY: exercising the C API with lengths no buffer has.
    unsafe {
        assert_eq!(doca_urom_domain_create(&mut dom), 0);
        assert_eq!(doca_urom_domain_set_buffers_count(dom, 4), 0);
        for (memh_len, mkey_len) in [
            (usize::MAX, 4),
            (4, usize::MAX),
            (isize::MAX as usize + 1, 4),
            (1 << 40, 4),
        ] {
            assert_eq!(
                doca_urom_domain_add_buffer(dom, p, 64, k, memh_len, k, mkey_len),
                DocaError::INVALID_VALUE.0,
                "memh_len {memh_len}, mkey_len {mkey_len}"
            );
        }
        assert_eq!(
            doca_urom_domain_add_buffer(dom, p, usize::MAX, k, 4, k, 4),
            DocaError::INVALID_VALUE.0,
            "a buffer that wraps around the address space"
        );
        assert_eq!(doca_urom_domain_add_buffer(dom, p, 64, k, 4, k, 4), 0);
        assert_eq!(doca_urom_domain_destroy(dom), 0);
    }
}

#[test]
fn the_cpuset_option_is_what_hosts_see_and_worker_cpus_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(dir.path().to_str().unwrap(), &["--cpuset", "0-7,1000"]);
    let s = start_service(&d);
    let plugin = echo_plugin(&s);
    let mut cpus = ucx_sys::sys::ucs_cpu_set_t::default();
    // SAFETY: live service.
    assert_eq!(unsafe { doca_urom_service_get_cpuset(s.svc, &mut cpus) }, 0);
    assert_eq!(cpus.ucs_bits[0], 0xff, "CPUs 0-7, as the option says");
    assert_eq!(cpus.ucs_bits[15], 1 << 40, "and CPU 1000");
    assert!(cpus.ucs_bits[1..15].iter().all(|w| *w == 0));
    // CPU 1000 is offered but does not exist: the start fails (the daemon refuses it).
    let mut pe = std::ptr::null_mut();
    let mut w = std::ptr::null_mut();
    let mut want = ucx_sys::sys::ucs_cpu_set_t::default();
    want.ucs_bits[15] = 1 << 40;
    // SAFETY: as the API says.
    unsafe {
        assert_eq!(doca_pe_create(&mut pe), 0);
        assert_eq!(doca_urom_worker_create(&mut w), 0);
        assert_eq!(doca_urom_worker_set_service(w, s.svc), 0);
        assert_eq!(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w)), 0);
        assert_eq!(doca_urom_worker_set_plugins(w, plugin.id), 0);
        assert_eq!(doca_urom_worker_set_cpuset(w, want), 0);
        assert_eq!(doca_ctx_start(doca_urom_worker_as_ctx(w)), IN_PROGRESS);
    }
    // SAFETY: live worker.
    let ctx = unsafe { doca_urom_worker_as_ctx(w) };
    let mut was_running = false;
    progress_until(&[s.pe, pe], || {
        was_running |= state(ctx) == STATE_RUNNING;
        state(ctx) == STATE_IDLE
    });
    assert!(!was_running, "never RUNNING");
    assert!(d.worker_pids().is_empty(), "no worker process");
    // SAFETY: IDLE contexts.
    unsafe {
        assert_eq!(doca_urom_worker_destroy(w), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
    }
    stop_service(s);
}

#[test]
fn host_worker_endpoints_of_one_machine_go_over_shared_memory_unless_watching_is_asked() {
    // The host and its worker run on one machine, so their UCX endpoint is made without
    // UCX's peer failure detection and UCX puts it on shared memory (UCX_TLS tcp,sm by
    // default, or shm alone); a worker whose environment asks for watched endpoints
    // (DOCA_SOFT_UROM_UCX_WATCH=always) declines the host's offer and both ends stay on
    // TCP. Either way commands round trip, and a killed worker is noticed at once through
    // the TCP connection, long before the liveness bound (60 s here).
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let shm = |t: &[Transport]| t.iter().any(|t| t.name == "sysv" || t.name == "posix");
    let cases: [(&[(&str, &str)], bool); 3] = [
        (&[], true),
        (&[("UCX_TLS", "shm")], true),
        (&[(UCX_WATCH_ENV, "always")], false),
    ];
    for (env, want_shm) in cases {
        let d = Daemon::start_with(None, dir.path().to_str().unwrap(), &[], env);
        let s = start_service_bounded(&d, Some(Duration::from_secs(60)));
        let plugin = echo_plugin(&s);
        let mut pe = std::ptr::null_mut();
        // SAFETY: out pointer.
        assert_eq!(unsafe { doca_pe_create(&mut pe) }, 0);
        let w = start_worker(&s, pe, 3, 0, plugin.id);
        // SAFETY: live worker.
        let t = unsafe { worker_ucx_transports(w) }
            .unwrap()
            .unwrap_or_else(|| panic!("{env:?}: the worker connection moved to UCX"));
        assert!(!t.is_empty(), "{env:?}");
        if want_shm {
            assert!(shm(&t), "{env:?}: shared memory: {t:?}");
            assert!(t.iter().all(|t| !t.is_tcp()), "{env:?}: no TCP lane: {t:?}");
        } else {
            assert!(t.iter().any(Transport::is_tcp), "{env:?}: TCP: {t:?}");
            assert!(!shm(&t), "{env:?}: no shared memory: {t:?}");
        }
        for i in 0..20u64 {
            let mut c = cookie();
            assert_eq!(submit_echo(w, plugin.id, 0, 0x5000 + i, &mut c), 0);
            progress_until(&[s.pe, pe], || c.done);
            assert_eq!(c.status, 0, "{env:?}");
            assert_eq!(&c.response[8..16], &(0x5000 + i).to_le_bytes());
        }
        let mut held = cookie();
        assert_eq!(submit_echo(w, plugin.id, 1, 0, &mut held), 0, "HOLD");
        let pids = d.worker_pids();
        assert_eq!(pids.len(), 1);
        let killed = Instant::now();
        signal(pids[0], libc::SIGKILL);
        progress_until(&[s.pe, pe], || held.done);
        let waited = killed.elapsed();
        assert_eq!(held.status, DocaError::CONNECTION_RESET.0, "{env:?}");
        assert!(
            waited < Duration::from_secs(1),
            "{env:?}: the kill is seen within 1 s (took {waited:?})"
        );
        // SAFETY: live worker.
        let ctx = unsafe { doca_urom_worker_as_ctx(w) };
        progress_until(&[s.pe, pe], || state(ctx) == STATE_IDLE);
        // SAFETY: an IDLE worker can be destroyed without a stop.
        assert_eq!(unsafe { doca_urom_worker_destroy(w) }, 0);
        // SAFETY: no contexts left.
        assert_eq!(unsafe { doca_pe_destroy(pe) }, 0);
        stop_service(s);
    }
}
