//! Regressions of the reliability issue: one device, one Flow port (a second
//! `doca_flow_port_start` on a device that has one is refused, and a stop never takes
//! another port's steering with it); out-of-range match enums and pipe loops are refused at
//! the call that sets them.

mod flow_util;
mod support;

use std::ptr::{null, null_mut};
use std::sync::Arc;

use doca_soft::capi::doca_dev::{doca_dev_close, Dev};
use doca_soft::capi::doca_flow::*;
use doca_soft::testing::frames::udp4;
use doca_soft::testing::{Fwd, Pipe, PipeKind};
use flow_util::*;
use support::unique;

static Q0: [u16; 1] = [0];

/// A second handle on the same wire side (another `doca_dev_open` of the same device).
fn same_device(name: &str) -> *mut Dev {
    wire_dev(name, 1)
}

/// Before the fix, a second port on the device shared the first's root and stopping it
/// cleared the steering: every frame then dropped as no-match.
#[test]
fn a_second_flow_port_on_a_device_is_refused_and_steering_survives() {
    let _g = serial();
    init(1);
    let name = unique("rl");
    let tx_dev = wire_dev(&name, 0);
    let dev_a = wire_dev(&name, 1);
    let dev_b = same_device(&name);
    let (rc, port_a) = try_start_port(dev_a, 0);
    assert_eq!(rc, OK);
    // SAFETY: live device handles.
    let (tx, rx) = unsafe {
        (
            doca_soft::testing::port_of(tx_dev).unwrap(),
            doca_soft::testing::port_of(dev_a).unwrap(),
        )
    };
    let sink = Arc::new(support::RecordingSink::new(2048, usize::MAX));
    rx.register_rx_queue(0, sink.clone()).unwrap();
    let root = create(
        pipe_cfg(port_a, c"root", DOCA_FLOW_PIPE_CONTROL, true),
        None,
        None,
    );
    let mut udp = doca_flow_match_v1::default();
    udp.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
    assert_eq!(
        control_entry(root, 0, &udp, None, None, None, &rss(&Q0, 0), null_mut()).0,
        OK
    );
    assert_eq!(doca_flow_entries_process(port_a, 0, 0, 0), OK);

    // Same device through a second handle, other port id: refused, with a reason.
    let ((rc, port_b), log) = logged(|| try_start_port(dev_b, 1));
    assert_eq!(rc, ALREADY_EXIST);
    assert!(port_b.is_null());
    assert!(
        log.iter().any(|l| l.contains("already has Flow port 0")),
        "{log:?}"
    );
    // Same handle again: refused too.
    assert_eq!(try_start_port(dev_a, 2).0, ALREADY_EXIST);
    // SAFETY: a refused start left no user on the second handle.
    assert_eq!(unsafe { doca_soft::testing::dev_users(dev_b) }, 0);
    // SAFETY: closing the unused handle.
    assert_eq!(unsafe { doca_dev_close(dev_b) }, OK);

    let f = udp4([1, 1, 1, 1], [2, 2, 2, 2], 5, 6, b"still steered");
    for _ in 0..3 {
        tx.send(&f).unwrap();
    }
    assert_eq!(sink.wait_for(3, LIMIT).len(), 3, "port A still steers");
    assert_eq!(rx.counters().dropped_no_match, 0);

    // A stop removes only this port's steering: a root installed by someone else stays.
    let other = Arc::new(Pipe::new(
        "other",
        PipeKind::Basic,
        Fwd::None,
        Fwd::Drop,
        false,
    ));
    rx.set_flow_root(Some(other.clone()));
    assert_eq!(doca_flow_port_stop(port_a), OK);
    let kept = rx.flow_root().expect("the other root is kept");
    assert!(Arc::ptr_eq(&kept, &other));
    rx.set_flow_root(None);
    rx.unregister_rx_queue(0);
    doca_flow_destroy();
}

/// Out-of-range match enums are refused when the match is given (pipe template or entry),
/// not accepted and matched as something else.
#[test]
fn out_of_range_match_enums_are_refused() {
    let _g = serial();
    let rig = Rig::new(&[0], 1);
    let c = pipe_cfg(rig.port, c"p", DOCA_FLOW_PIPE_BASIC, false);
    let mut bad = doca_flow_match_v1::default();
    bad.outer.l3_type = 77;
    // SAFETY: live config; valid structs.
    unsafe {
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(c, &bad, null()), INVALID);
        let mut tpl = doca_flow_match_v1::default();
        tpl.parser_meta.outer_l4_type = u32::MAX; // changeable: each entry gives it
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(c, &tpl, null()), OK);
    }
    let pipe = create(c, Some(&rss(&Q0, 0)), None);
    let mut e = doca_flow_match_v1::default();
    e.parser_meta.outer_l4_type = 77;
    assert_eq!(
        basic_entry(0, pipe, Some(&e), None, None, null_mut()).0,
        INVALID
    );
    e.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
    assert_eq!(basic_entry(0, pipe, Some(&e), None, None, null_mut()).0, OK);
    let root = rig.control_root();
    assert_eq!(
        control_entry(root, 0, &bad, None, None, None, &to_pipe(pipe), null_mut()).0,
        INVALID
    );
    rig.finish();
}

/// root -> b -> root is refused when the last edge is set (before the fix it was accepted
/// and packets were cut off after 16 hops).
#[test]
fn a_pipe_loop_is_refused_at_creation() {
    let _g = serial();
    let rig = Rig::new(&[0], 1);
    let root = rig.control_root();
    let b = create(
        pipe_cfg(rig.port, c"b", DOCA_FLOW_PIPE_BASIC, false),
        Some(&to_pipe(root)),
        None,
    );
    let any = doca_flow_match_v1::default();
    assert_eq!(
        control_entry(root, 0, &any, None, None, None, &to_pipe(b), null_mut()).0,
        INVALID
    );
    rig.finish();
}

/// The other ways to close a loop are refused too: an entry forwarding to its own pipe, a
/// per-entry (CHANGEABLE) forward, a hash pipe's entry, and a miss forward changed later;
/// an edge removed with its entry no longer counts, so the same forward is then accepted.
#[test]
fn every_way_to_close_a_pipe_loop_is_refused() {
    let _g = serial();
    let rig = Rig::new(&[0], 1);
    let root = rig.control_root();
    let any = doca_flow_match_v1::default();
    // root -> root.
    assert_eq!(
        control_entry(root, 0, &any, None, None, None, &to_pipe(root), null_mut()).0,
        INVALID
    );
    // b forwards per entry; its entry to root closes root -> b -> root.
    let b = create(
        pipe_cfg(rig.port, c"b", DOCA_FLOW_PIPE_BASIC, false),
        Some(&kind(DOCA_FLOW_FWD_CHANGEABLE)),
        Some(&kind(DOCA_FLOW_FWD_DROP)),
    );
    let (rc, to_b) = control_entry(root, 1, &any, None, None, None, &to_pipe(b), null_mut());
    assert_eq!(rc, OK);
    assert_eq!(
        basic_entry(0, b, None, None, Some(&to_pipe(root)), null_mut()).0,
        INVALID
    );
    // A hash pipe h (root -> h) whose entry forwards back to root.
    let mut h_mask = doca_flow_match_v1::default();
    h_mask.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
    m::ip4(&mut h_mask.outer).src_ip = u32::MAX;
    let hc = pipe_cfg(rig.port, c"h", DOCA_FLOW_PIPE_HASH, false);
    // SAFETY: a live config; the mask is valid for the call.
    unsafe {
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(hc, null(), &h_mask), OK);
        assert_eq!(doca_flow_pipe_cfg_set_nr_entries(hc, 2), OK);
    }
    let h = create(hc, Some(&kind(DOCA_FLOW_FWD_CHANGEABLE)), None);
    assert_eq!(
        control_entry(root, 2, &any, None, None, None, &to_pipe(h), null_mut()).0,
        OK
    );
    let mut e = null_mut();
    // SAFETY: a live pipe; the forward is valid for the call.
    let rc = unsafe {
        doca_flow_pipe_hash_add_entry_v1(
            0,
            h,
            0,
            0,
            null(),
            null(),
            &to_pipe(root),
            DOCA_FLOW_ENTRY_FLAGS_NO_WAIT,
            null_mut(),
            &mut e,
        )
    };
    assert_eq!(rc, INVALID, "hash entry h -> root");
    // b's miss forward changed to root.
    // SAFETY: a live pipe; the forward is valid for the call.
    assert_eq!(
        unsafe { doca_flow_pipe_update_miss_v1(b, &to_pipe(root)) },
        INVALID,
        "miss b -> root"
    );
    // Without root -> b, b may forward to root.
    assert_eq!(
        doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, to_b),
        OK
    );
    rig.process(0);
    assert_eq!(
        basic_entry(0, b, None, None, Some(&to_pipe(root)), null_mut()).0,
        OK,
        "no loop any more"
    );
    rig.finish();
}

/// The queue array of an RSS forward is the application's: gpu_packet_processing builds it
/// on the stack of the function creating the pipe. The pipe keeps its own copy, so frames
/// still reach the queues named at creation after the array is overwritten and freed.
#[test]
fn rss_queues_are_copied_at_pipe_creation() {
    let _g = serial();
    let rig = Rig::new(&[0, 1], 1);
    let mut queues: Vec<u16> = vec![1];
    let mut fwd = rss(&Q0, 0);
    // Writing a union field is safe: the RSS view.
    fwd.__bindgen_anon_1
        .__bindgen_anon_1
        .__bindgen_anon_1
        .rss
        .queues_array = queues.as_mut_ptr();
    let root = rig.control_root();
    let any = doca_flow_match_v1::default();
    let (rc, _) = control_entry(root, 0, &any, None, None, None, &fwd, null_mut());
    assert_eq!(rc, OK);
    queues[0] = 0;
    drop(queues);
    rig.process(0);
    let f = udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"q1");
    rig.send(std::slice::from_ref(&f));
    assert_eq!(rig.got(1), vec![f], "to queue 1, as at creation");
    assert!(rig.got(0).is_empty());
    rig.finish();
}
