//! DOCA Flow completions through the C API: the entry callback gets (entry, queue,
//! status, op, usr_ctx) for ADD, UPD, DEL and AGED from `doca_flow_entries_process` /
//! `doca_flow_aging_handle`, per queue and up to `max_processed_entries`; entry status goes
//! IN_PROCESS -> SUCCESS; callbacks may call back into Flow; pipe events (congestion,
//! resize, destroyed) reach the pipe callback with the pipe's user context.

mod flow_util;
mod support;

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Mutex;

use doca_soft::capi::doca_flow::*;
use doca_soft::testing::frames::udp4;
use flow_util::*;

static Q0: [u16; 1] = [0];

/// (entry, queue, status, op, ctx) of one entry callback.
type EntryEvent = (usize, u16, u32, u32, usize);

/// Every entry callback.
static ENTRY_EVENTS: Mutex<Vec<EntryEvent>> = Mutex::new(Vec::new());
/// (pipe, status, op, ctx) of every pipe callback.
static PIPE_EVENTS: Mutex<Vec<(usize, u32, u32, usize)>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_entry(
    e: *mut doca_flow_pipe_entry,
    q: u16,
    status: u32,
    op: u32,
    ctx: *mut c_void,
) {
    ENTRY_EVENTS
        .lock()
        .unwrap()
        .push((e as usize, q, status, op, ctx as usize));
    // Like the flow_aging sample: an aged entry is removed from inside the callback.
    if op == DOCA_FLOW_ENTRY_OP_AGED {
        assert_eq!(
            doca_flow_pipe_remove_entry(q, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, e),
            OK
        );
    }
}

unsafe extern "C" fn on_pipe(p: *mut doca_flow_pipe, status: u32, op: u32, ctx: *mut c_void) {
    PIPE_EVENTS
        .lock()
        .unwrap()
        .push((p as usize, status, op, ctx as usize));
}

fn take_entries() -> Vec<EntryEvent> {
    std::mem::take(&mut *ENTRY_EVENTS.lock().unwrap())
}

fn take_pipes() -> Vec<(usize, u32, u32, usize)> {
    std::mem::take(&mut *PIPE_EVENTS.lock().unwrap())
}

fn init_with_callbacks(queues: u16) {
    take_entries();
    take_pipes();
    init_with(queues, |cfg| unsafe {
        // SAFETY: a live config; the callbacks are 'static functions.
        assert_eq!(doca_flow_cfg_set_cb_entry_process(cfg, Some(on_entry)), OK);
        assert_eq!(doca_flow_cfg_set_cb_pipe_process(cfg, Some(on_pipe)), OK);
    });
}

fn udp_pipe(
    rig: &Rig,
    name: &std::ffi::CStr,
    monitor: Option<&doca_flow_monitor_v1>,
    ctx: usize,
) -> *mut doca_flow_pipe {
    let mut t = doca_flow_match_v1::default();
    m::udp(&mut t.outer).l4_port.dst_port = u16::MAX;
    let c = pipe_cfg(rig.port, name, DOCA_FLOW_PIPE_BASIC, true);
    // SAFETY: live config; structs copied.
    unsafe {
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(c, &t, null()), OK);
        if let Some(m) = monitor {
            assert_eq!(doca_flow_pipe_cfg_set_monitor_v1(c, m), OK);
        }
        assert_eq!(doca_flow_pipe_cfg_set_user_ctx(c, ctx as *mut c_void), OK);
        assert_eq!(doca_flow_pipe_cfg_set_nr_entries(c, 4), OK);
        assert_eq!(doca_flow_pipe_cfg_set_congestion_level_threshold(c, 50), OK);
        assert_eq!(doca_flow_pipe_cfg_set_is_resizable(c, true), OK);
    }
    create(c, Some(&rss(&Q0, 0)), Some(&kind(DOCA_FLOW_FWD_DROP)))
}

fn port_match(p: u16) -> doca_flow_match_v1 {
    let mut e = doca_flow_match_v1::default();
    m::udp(&mut e.outer).l4_port.dst_port = p.to_be();
    e
}

/// ADD, UPD and DEL complete on the queue they were issued on, in order, with status
/// SUCCESS and the entry's context; `max_processed_entries` bounds a pass; the status goes
/// from IN_PROCESS to SUCCESS.
#[test]
fn entry_operations_complete_through_the_callback() {
    let _g = serial();
    init_with_callbacks(2);
    let rig = Rig::started(&[0]);
    let pipe = udp_pipe(&rig, c"udp", None, 0x77);
    let (rc, a) = basic_entry(
        0,
        pipe,
        Some(&port_match(1)),
        None,
        None,
        0xa as *mut c_void,
    );
    assert_eq!(rc, OK);
    let (rc, b) = basic_entry(
        1,
        pipe,
        Some(&port_match(2)),
        None,
        None,
        0xb as *mut c_void,
    );
    assert_eq!(rc, OK);
    let (rc, c) = basic_entry(
        0,
        pipe,
        Some(&port_match(3)),
        None,
        None,
        0xc as *mut c_void,
    );
    assert_eq!(rc, OK);
    assert_eq!(
        doca_flow_pipe_entry_get_status(a),
        DOCA_FLOW_ENTRY_STATUS_IN_PROCESS
    );
    // Entries match before they are processed.
    rig.send(&[udp4([1, 1, 1, 1], [2, 2, 2, 2], 9, 1, b"early")]);
    assert_eq!(rig.got(0).len(), 1);
    // One of queue 0's two completions.
    assert_eq!(doca_flow_entries_process(rig.port, 0, 1000, 1), OK);
    let add = DOCA_FLOW_ENTRY_OP_ADD;
    let ok = DOCA_FLOW_ENTRY_STATUS_SUCCESS;
    assert_eq!(take_entries(), vec![(a as usize, 0, ok, add, 0xa)]);
    assert_eq!(doca_flow_pipe_entry_get_status(a), ok);
    assert_eq!(
        doca_flow_pipe_entry_get_status(c),
        DOCA_FLOW_ENTRY_STATUS_IN_PROCESS
    );
    rig.process(0);
    assert_eq!(take_entries(), vec![(c as usize, 0, ok, add, 0xc)]);
    rig.process(1);
    assert_eq!(take_entries(), vec![(b as usize, 1, ok, add, 0xb)]);
    rig.process(1);
    assert!(take_entries().is_empty(), "nothing left");
    // The congestion threshold (50% of 4 entries) was crossed: one pipe event.
    let pipes = take_pipes();
    assert_eq!(
        pipes,
        vec![(
            pipe as usize,
            DOCA_FLOW_PIPE_STATUS_SUCCESS,
            DOCA_FLOW_PIPE_OP_CONGESTION_REACHED,
            0x77
        )]
    );
    // Update (a new forward: drop) and remove, each on its queue.
    let drop_fwd = kind(DOCA_FLOW_FWD_DROP);
    // SAFETY: live pipe and entry; valid forward.
    let rc = unsafe {
        doca_flow_pipe_basic_update_entry_v1(1, pipe, 0, null(), null(), &drop_fwd, 0, a)
    };
    assert_eq!(rc, OK);
    assert_eq!(doca_flow_pipe_remove_entry(0, 0, c), OK);
    rig.send(&[
        udp4([1, 1, 1, 1], [2, 2, 2, 2], 9, 1, b"dropped now"),
        udp4([1, 1, 1, 1], [2, 2, 2, 2], 9, 3, b"removed"),
    ]);
    assert_eq!(rig.got(0).len(), 1);
    rig.process(1);
    rig.process(0);
    assert_eq!(
        take_entries(),
        vec![
            (a as usize, 1, ok, DOCA_FLOW_ENTRY_OP_UPD, 0xa),
            (c as usize, 0, ok, DOCA_FLOW_ENTRY_OP_DEL, 0xc),
        ]
    );
    // The removed entry is gone.
    assert_eq!(doca_flow_pipe_remove_entry(0, 0, c), NOT_FOUND);
    assert_eq!(
        doca_flow_pipe_entry_get_status(c),
        DOCA_FLOW_ENTRY_STATUS_ERROR
    );
    // Bad queue, flags and handles.
    assert_eq!(doca_flow_entries_process(rig.port, 2, 0, 0), INVALID);
    assert_eq!(
        basic_entry(2, pipe, Some(&port_match(9)), None, None, null_mut()).0,
        INVALID
    );
    let mut e = null_mut();
    // SAFETY: both flags at once are refused before anything is added.
    let both = DOCA_FLOW_ENTRY_FLAGS_NO_WAIT | DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH;
    let rc = unsafe {
        doca_flow_pipe_basic_add_entry_v1(
            0,
            pipe,
            null(),
            0,
            null(),
            null(),
            null(),
            both,
            null_mut(),
            &mut e,
        )
    };
    assert_eq!(rc, INVALID);
    // Destroying the pipe reports DESTROYED with its context.
    doca_flow_pipe_destroy(pipe);
    assert_eq!(
        take_pipes(),
        vec![(
            pipe as usize,
            DOCA_FLOW_PIPE_STATUS_SUCCESS,
            DOCA_FLOW_PIPE_OP_DESTROYED,
            0x77
        )]
    );
    rig.finish();
}

/// Aging: an entry idle for its period is reported once as AGED (from
/// doca_flow_aging_handle on its queue); the callback removes it, and the DEL completes.
#[test]
fn idle_entries_age() {
    let _g = serial();
    init_with_callbacks(1);
    let rig = Rig::started(&[0]);
    let pipe = udp_pipe(&rig, c"aging", Some(&counting(1)), 0);
    let (_, idle) = basic_entry(
        0,
        pipe,
        Some(&port_match(1)),
        None,
        None,
        0x11 as *mut c_void,
    );
    let (_, busy) = basic_entry(
        0,
        pipe,
        Some(&port_match(2)),
        None,
        None,
        0x2 as *mut c_void,
    );
    rig.process(0);
    take_entries();
    assert_eq!(
        doca_flow_aging_handle(rig.port, 0, 0, 0),
        -1,
        "nothing aged yet"
    );
    for _ in 0..6 {
        std::thread::sleep(std::time::Duration::from_millis(250));
        rig.send(&[udp4([1, 1, 1, 1], [2, 2, 2, 2], 9, 2, b"keep alive")]);
    }
    assert_eq!(doca_flow_aging_handle(rig.port, 0, 0, 0), 1);
    let ev = take_entries();
    assert_eq!(
        ev,
        vec![(
            idle as usize,
            0,
            DOCA_FLOW_ENTRY_STATUS_SUCCESS,
            DOCA_FLOW_ENTRY_OP_AGED,
            0x11
        )]
    );
    assert_eq!(
        doca_flow_aging_handle(rig.port, 0, 0, 0),
        -1,
        "reported once"
    );
    rig.process(0);
    assert_eq!(
        take_entries(),
        vec![(
            idle as usize,
            0,
            DOCA_FLOW_ENTRY_STATUS_SUCCESS,
            DOCA_FLOW_ENTRY_OP_DEL,
            0x11
        )]
    );
    assert_eq!(query(busy).1, 6);
    assert_eq!(doca_flow_aging_handle(null_mut(), 0, 0, 0), -1);
    rig.finish();
}

static NEW_CTX: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static NR_ENTRIES: Mutex<Vec<u32>> = Mutex::new(Vec::new());

unsafe extern "C" fn nr_changed(ctx: *mut c_void, n: u32) -> u32 {
    assert_eq!(ctx as usize, 0x55);
    NR_ENTRIES.lock().unwrap().push(n);
    0
}

unsafe extern "C" fn relocate(
    ctx: *mut c_void,
    _q: u16,
    entry_ctx: *mut c_void,
    new: *mut *mut c_void,
) -> u32 {
    assert_eq!(ctx as usize, 0x55);
    NEW_CTX.lock().unwrap().push(entry_ctx as usize);
    // SAFETY: the runtime passes valid storage.
    unsafe { *new = (entry_ctx as usize + 0x100) as *mut c_void };
    0
}

/// Resize: the new capacity and each entry's relocation reach their callbacks from the
/// next entries_process, which reports RESIZED; relocated contexts are used afterwards.
#[test]
fn resize_relocates_entries() {
    let _g = serial();
    init_with_callbacks(1);
    let rig = Rig::started(&[0]);
    let pipe = udp_pipe(&rig, c"resizable", None, 0x55);
    let (_, a) = basic_entry(
        0,
        pipe,
        Some(&port_match(1)),
        None,
        None,
        0x11 as *mut c_void,
    );
    rig.process(0);
    take_entries();
    take_pipes();
    let rc = doca_flow_pipe_resize(pipe, 80, Some(nr_changed), Some(relocate));
    assert_eq!(rc, OK);
    rig.process(0);
    assert_eq!(*NR_ENTRIES.lock().unwrap(), vec![8], "double the 4 entries");
    assert_eq!(*NEW_CTX.lock().unwrap(), vec![0x11]);
    assert_eq!(
        take_pipes(),
        vec![(
            pipe as usize,
            DOCA_FLOW_PIPE_STATUS_SUCCESS,
            DOCA_FLOW_PIPE_OP_RESIZED,
            0x55
        )]
    );
    assert_eq!(doca_flow_pipe_remove_entry(0, 0, a), OK);
    rig.process(0);
    let ev = take_entries();
    assert_eq!(ev[0].4, 0x111, "the relocated context");
    // A pipe that is not resizable refuses.
    let fixed = create(
        pipe_cfg(rig.port, c"fixed", DOCA_FLOW_PIPE_BASIC, false),
        Some(&kind(DOCA_FLOW_FWD_DROP)),
        None,
    );
    assert_eq!(
        doca_flow_pipe_resize(fixed, 50, None, None),
        doca_soft::capi::doca_error::DocaError::NOT_PERMITTED.0
    );
    rig.finish();
}
