//! The host side of UROM commands allocates nothing in steady state: progress calls with
//! nothing to do, and command round trips (allocate, submit, progress, completion callback,
//! release) once warmed up. Counted by a global allocator that counts the allocations of
//! the test's own thread (the only thread that drives the host library here).

mod urom_support;

use doca_soft::capi::doca_buf::{doca_buf_get_data, doca_buf_set_data};
use doca_soft::capi::doca_ctx::{
    doca_ctx_get_state, doca_ctx_start, doca_ctx_stop, Ctx, STATE_IDLE, STATE_RUNNING,
};
use doca_soft::capi::doca_pe::{
    doca_pe_connect_ctx, doca_pe_create, doca_pe_destroy, doca_pe_progress, doca_task_get_status,
    doca_task_submit, Pe,
};
use doca_soft::capi::doca_types::DocaData;
use doca_soft::capi::doca_urom::*;
use doca_soft::testing::urom::set_service_addr;
use doca_test_support::alloc::{count_this_thread as allocs_in, CountingAlloc};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use urom_support::*;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const IN_PROGRESS: u32 = 26;

fn state(ctx: *mut Ctx) -> u32 {
    let mut s = 99;
    // SAFETY: live ctx.
    assert_eq!(unsafe { doca_ctx_get_state(ctx, &mut s) }, 0);
    s
}

fn progress_until(pes: &[*mut Pe], mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out progressing");
        for pe in pes {
            // SAFETY: live PE.
            unsafe { doca_pe_progress(*pe) };
        }
    }
}

static COMPLETED: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

/// Completion callback that allocates nothing: checks the echo, counts, releases.
unsafe extern "C" fn on_echo(task: *mut CmdTask, ud: DocaData, _c: DocaData) {
    // SAFETY: the task is live in its callback; `ud` carries the echoed value.
    unsafe {
        let ok = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task)) == 0 && {
            let resp = doca_urom_worker_cmd_task_get_response(task);
            let mut p: *mut c_void = std::ptr::null_mut();
            doca_buf_get_data(resp, &mut p);
            let data = std::slice::from_raw_parts(p as *const u8, 16);
            data[8..16] == ud.u64.to_le_bytes()
        };
        if ok {
            COMPLETED.fetch_add(1, Ordering::Relaxed);
        } else {
            FAILED.fetch_add(1, Ordering::Relaxed);
        }
        assert_eq!(doca_urom_worker_cmd_task_release(task), 0);
    }
}

/// One ECHO command through the C API, progressed (without sleeping) until answered.
fn echo(w: *mut UromWorker, pe: *mut Pe, plugin: u64, data: u64) {
    let want = COMPLETED.load(Ordering::Relaxed) + 1;
    // SAFETY: as the API says.
    unsafe {
        let mut t = std::ptr::null_mut();
        assert_eq!(
            doca_urom_worker_cmd_task_allocate_init(w, plugin, &mut t),
            0
        );
        let payload = doca_urom_worker_cmd_task_get_payload(t);
        let mut p: *mut c_void = std::ptr::null_mut();
        doca_buf_get_data(payload, &mut p);
        let body = p as *mut u8;
        std::ptr::write_bytes(body, 0, 8);
        std::ptr::copy_nonoverlapping(data.to_le_bytes().as_ptr(), body.add(8), 8);
        assert_eq!(doca_buf_set_data(payload, p, 16), 0);
        doca_urom_worker_cmd_task_set_cb(t, Some(on_echo));
        let task = doca_urom_worker_cmd_task_as_task(t);
        doca_soft::capi::doca_pe::doca_task_set_user_data(task, DocaData { u64: data });
        assert_eq!(doca_task_submit(task), 0);
    }
    progress_until(&[pe], || {
        COMPLETED.load(Ordering::Relaxed) + FAILED.load(Ordering::Relaxed) >= want
    });
}

#[test]
fn steady_progress_and_commands_allocate_nothing() {
    let (_dir, d) = echo_daemon();
    let (mut spe, mut pe) = (std::ptr::null_mut(), std::ptr::null_mut());
    let (mut svc, mut w) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: objects are used as the API says.
    let plugin = unsafe {
        assert_eq!(doca_pe_create(&mut spe), 0);
        assert_eq!(doca_pe_create(&mut pe), 0);
        assert_eq!(doca_urom_service_create(&mut svc), 0);
        assert_eq!(doca_pe_connect_ctx(spe, doca_urom_service_as_ctx(svc)), 0);
        set_service_addr(svc, d.addr).unwrap();
        assert_eq!(doca_ctx_start(doca_urom_service_as_ctx(svc)), 0);
        let mut list: *const PluginInfo = std::ptr::null();
        let mut n = 0usize;
        assert_eq!(
            doca_urom_service_get_plugins_list(svc, &mut list, &mut n),
            0
        );
        let plugin = std::slice::from_raw_parts(list, n)
            .iter()
            .find(|p| p.plugin_name.starts_with(b"worker_echo_c\0"))
            .expect("echo plugin listed")
            .id;
        assert_eq!(doca_urom_worker_create(&mut w), 0);
        assert_eq!(doca_urom_worker_set_service(w, svc), 0);
        let ctx = doca_urom_worker_as_ctx(w);
        assert_eq!(doca_pe_connect_ctx(pe, ctx), 0);
        assert_eq!(doca_urom_worker_set_max_inflight_tasks(w, 4), 0);
        assert_eq!(doca_urom_worker_set_plugins(w, plugin), 0);
        assert_eq!(doca_ctx_start(ctx), IN_PROGRESS);
        progress_until(&[spe, pe], || state(ctx) == STATE_RUNNING);
        plugin
    };

    // The counter sees this thread's allocations.
    assert_eq!(
        allocs_in(|| drop(std::hint::black_box(Vec::<u8>::with_capacity(8)))),
        1
    );
    // Warm-up: connection buffers, the task pool and the in-flight map reach their sizes.
    for i in 0..200 {
        echo(w, pe, plugin, i);
    }
    let idle = allocs_in(|| {
        for _ in 0..10_000 {
            // SAFETY: live PE.
            unsafe { doca_pe_progress(pe) };
        }
    });
    assert_eq!(
        idle, 0,
        "progress with nothing to do allocated {idle} times"
    );
    let commands = 1_000;
    let busy = allocs_in(|| {
        for i in 0..commands {
            echo(w, pe, plugin, 1_000 + i);
        }
    });
    assert_eq!(
        FAILED.load(Ordering::Relaxed),
        0,
        "every echo came back intact"
    );
    assert_eq!(COMPLETED.load(Ordering::Relaxed), 200 + commands);
    assert_eq!(busy, 0, "{commands} commands allocated {busy} times");

    // SAFETY: as the API says.
    unsafe {
        let ctx = doca_urom_worker_as_ctx(w);
        let r = doca_ctx_stop(ctx);
        assert!(r == 0 || r == IN_PROGRESS);
        progress_until(&[spe, pe], || state(ctx) == STATE_IDLE);
        assert_eq!(doca_urom_worker_destroy(w), 0);
        assert_eq!(doca_ctx_stop(doca_urom_service_as_ctx(svc)), 0);
        assert_eq!(doca_urom_service_destroy(svc), 0);
        assert_eq!(doca_pe_destroy(spe), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
    }
}
