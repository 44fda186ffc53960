//! `doca_eth_rxq_*` through the C ABI: argument and state errors, and frames arriving on a
//! wire port reaching a started queue's ring (consumed on the CPU, host-memory data path).

use doca_soft::capi::doca_ctx::{doca_ctx_start, doca_ctx_stop, Ctx};
use doca_soft::capi::doca_dev::Dev;
use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_eth_rxq::*;
use doca_soft::capi::doca_eth_rxq_gpu_data_path::*;
use doca_soft::capi::doca_soft_queue::{RxqCountersSnapshot, *};
use doca_soft::testing::{CpuRxq, Port, PortSpec, RxqHandle};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

use doca_test_support::wait::watchdog;

const INVALID: u32 = DocaError::INVALID_VALUE.0;
const BAD_STATE: u32 = DocaError::BAD_STATE.0;

fn wire_dev(name: &str, side: u8) -> *mut Dev {
    doca_soft::testing::open_wire_dev('c', 0, name, side)
}

fn create(dev: *mut Dev, burst: u32, pkt: u32) -> *mut EthRxq {
    let mut q = null_mut();
    // SAFETY: valid device and out pointer.
    assert_eq!(unsafe { doca_eth_rxq_create(dev, burst, pkt, &mut q) }, 0);
    q
}

fn ctx(q: *mut EthRxq) -> *mut Ctx {
    // SAFETY: live queue.
    unsafe { doca_eth_rxq_as_doca_ctx(q) }
}

/// A queue with a host packet buffer and a CPU consumer data path, started.
fn started(dev: *mut Dev, buf: &mut [u8], max_pkt: u32) -> *mut EthRxq {
    let q = create(dev, 64, max_pkt);
    // SAFETY: a live queue; the buffer outlives its run (the caller's contract).
    unsafe {
        doca_soft::testing::rxq_set_host_pkt_buf(q.cast(), buf.as_mut_ptr(), buf.len(), 3).unwrap();
        doca_soft::testing::rxq_set_host_datapath(q.cast()).unwrap();
    }
    // SAFETY: live context.
    assert_eq!(unsafe { doca_ctx_start(ctx(q)) }, 0);
    q
}

#[test]
fn null_arguments_are_invalid_value() {
    let dev = wire_dev("rxnull", 0);
    let mut q = null_mut();
    // SAFETY: every pointer is null or valid; the calls must reject nulls.
    unsafe {
        assert_eq!(doca_eth_rxq_create(null_mut(), 16, 2048, &mut q), INVALID);
        assert_eq!(doca_eth_rxq_create(dev, 16, 2048, null_mut()), INVALID);
        assert_eq!(doca_eth_rxq_create(dev, 0, 2048, &mut q), INVALID);
        assert_eq!(doca_eth_rxq_create(dev, 16, 0, &mut q), INVALID);
        assert_eq!(doca_eth_rxq_create(dev, 16, 1 << 20, &mut q), INVALID);
        assert_eq!(doca_eth_rxq_destroy(null_mut()), INVALID);
        assert!(doca_eth_rxq_as_doca_ctx(null_mut()).is_null());
        assert_eq!(doca_eth_rxq_set_max_burst_size(null_mut(), 4), INVALID);
        assert_eq!(doca_eth_rxq_set_type(null_mut(), 0), INVALID);
        assert_eq!(doca_eth_rxq_apply_queue_id(null_mut(), 0), INVALID);
        assert_eq!(doca_eth_rxq_gpu_enable_mcst_qp(null_mut()), INVALID);
        let mut h: *mut c_void = null_mut();
        assert_eq!(doca_eth_rxq_get_gpu_handle(null(), &mut h), INVALID);
        let q = create(dev, 16, 2048);
        assert_eq!(doca_eth_rxq_get_gpu_handle(q, null_mut()), INVALID);
        assert_eq!(doca_soft_eth_rxq_get_counters(q, null_mut()), INVALID);
        assert_eq!(doca_eth_rxq_set_type(q, 3), INVALID, "unknown rxq type");
        assert_eq!(doca_eth_rxq_set_max_packet_size(q, 0), INVALID);
        assert_eq!(doca_eth_rxq_destroy(q), 0);
        drop(Box::from_raw(dev));
    }
}

#[test]
fn estimate_packet_buf_size_is_burst_times_size_page_aligned() {
    let mut sz = 0u32;
    // SAFETY: valid out pointer or null where the call must reject it.
    unsafe {
        assert_eq!(
            doca_eth_rxq_estimate_packet_buf_size(0, 0, 0, 2048, 16384, 0, 0, 0, &mut sz),
            0
        );
        assert_eq!(sz, 32 << 20);
        assert_eq!(
            doca_eth_rxq_estimate_packet_buf_size(0, 0, 0, 1500, 3, 0, 0, 0, &mut sz),
            0
        );
        assert_eq!(sz, 8192);
        assert_eq!(
            doca_eth_rxq_estimate_packet_buf_size(0, 0, 0, 1000, 4, 0, 24, 0, &mut sz),
            0
        );
        assert_eq!(sz, 4096, "head room counts per packet: 4 x (1000 + 24)");
        assert_eq!(
            doca_eth_rxq_estimate_packet_buf_size(9, 0, 0, 2048, 16, 0, 0, 0, &mut sz),
            INVALID
        );
        assert_eq!(
            doca_eth_rxq_estimate_packet_buf_size(0, 0, 0, 2048, 0, 0, 0, 0, &mut sz),
            INVALID
        );
        assert_eq!(
            doca_eth_rxq_estimate_packet_buf_size(0, 0, 0, 0, 16, 0, 0, 0, &mut sz),
            INVALID
        );
        assert_eq!(
            doca_eth_rxq_estimate_packet_buf_size(0, 0, 0, 2048, 16, 0, 0, 0, null_mut()),
            INVALID
        );
    }
}

#[test]
fn state_errors_follow_the_context_state() {
    let dev = wire_dev("rxstate", 0);
    let mut buf = vec![0u8; 16 * 2048];
    // SAFETY: live objects throughout.
    unsafe {
        let q = create(dev, 16, 2048);
        let mut h: *mut c_void = null_mut();
        assert_eq!(doca_eth_rxq_apply_queue_id(q, 0), BAD_STATE, "before start");
        assert_eq!(
            doca_eth_rxq_get_gpu_handle(q, &mut h),
            DocaError::NOT_SUPPORTED.0,
            "no GPU data path"
        );
        assert_eq!(
            doca_ctx_start(ctx(q)),
            DocaError::NOT_SUPPORTED.0,
            "start without a data path"
        );
        doca_soft::testing::rxq_set_host_datapath(q.cast()).unwrap();
        assert_eq!(doca_eth_rxq_get_gpu_handle(q, &mut h), BAD_STATE);
        assert_eq!(
            doca_ctx_start(ctx(q)),
            BAD_STATE,
            "start without packet buffer"
        );
        doca_soft::testing::rxq_set_host_pkt_buf(q.cast(), buf.as_mut_ptr(), 100, 0).unwrap();
        assert_eq!(
            doca_ctx_start(ctx(q)),
            INVALID,
            "buffer smaller than a packet"
        );
        doca_soft::testing::rxq_set_host_pkt_buf(q.cast(), buf.as_mut_ptr(), buf.len(), 0).unwrap();
        assert_eq!(doca_ctx_start(ctx(q)), 0);
        // Every setter is refused while running.
        assert_eq!(doca_eth_rxq_set_max_burst_size(q, 8), BAD_STATE);
        assert_eq!(doca_eth_rxq_set_max_packet_size(q, 1024), BAD_STATE);
        assert_eq!(doca_eth_rxq_set_type(q, 0), BAD_STATE);
        assert_eq!(doca_eth_rxq_set_timestamp(q, 1), BAD_STATE);
        assert_eq!(doca_eth_rxq_set_notification_moderation(q, 1, 1), BAD_STATE);
        assert_eq!(doca_eth_rxq_gpu_enable_mcst_qp(q), BAD_STATE);
        assert_eq!(doca_eth_rxq_gpu_set_rq_mem_type(q, 0), BAD_STATE);
        assert!(doca_soft::testing::rxq_set_host_datapath(q.cast()).is_err());
        assert_eq!(doca_eth_rxq_destroy(q), BAD_STATE, "destroy while running");
        assert_eq!(doca_eth_rxq_get_gpu_handle(q, &mut h), 0);
        assert!(!h.is_null());
        assert_eq!(doca_eth_rxq_apply_queue_id(q, 5), 0);
        assert_eq!(
            doca_eth_rxq_apply_queue_id(q, 6),
            DocaError::ALREADY_EXIST.0
        );
        // A second queue on the same port cannot take id 5.
        let mut buf2 = vec![0u8; 16 * 2048];
        let q2 = started(dev, &mut buf2, 2048);
        assert_eq!(doca_eth_rxq_apply_queue_id(q2, 5), DocaError::IN_USE.0);
        assert_eq!(doca_eth_rxq_apply_queue_id(q2, 7), 0);
        let mut fid = 0u16;
        assert_eq!(doca_eth_rxq_get_flow_queue_id(q2, &mut fid), 0);
        assert_eq!(fid, 7, "the applied id");
        // A third queue without an applied id gets the lowest free one (0).
        let mut buf3 = vec![0u8; 16 * 2048];
        let q3 = started(dev, &mut buf3, 2048);
        assert_eq!(doca_eth_rxq_get_flow_queue_id(q3, null_mut()), INVALID);
        assert_eq!(doca_eth_rxq_get_flow_queue_id(q3, &mut fid), 0);
        assert_eq!(fid, 0);
        assert_eq!(
            doca_eth_rxq_apply_queue_id(q3, 9),
            DocaError::ALREADY_EXIST.0
        );
        assert_eq!(doca_ctx_stop(ctx(q3)), 0);
        assert_eq!(doca_eth_rxq_get_flow_queue_id(q3, &mut fid), BAD_STATE);
        assert_eq!(doca_eth_rxq_destroy(q3), 0);
        assert_eq!(doca_ctx_stop(ctx(q2)), 0);
        assert_eq!(doca_eth_rxq_destroy(q2), 0);
        assert_eq!(doca_ctx_stop(ctx(q)), 0);
        assert_eq!(doca_eth_rxq_get_gpu_handle(q, &mut h), BAD_STATE);
        // Settable again once IDLE.
        assert_eq!(doca_eth_rxq_set_max_burst_size(q, 8), 0);
        assert_eq!(doca_eth_rxq_destroy(q), 0);
        drop(Box::from_raw(dev));
    }
}

#[test]
fn frames_on_the_wire_reach_the_ring_of_the_applied_queue() {
    let dev = wire_dev("rxflow", 0);
    let mut buf = vec![0u8; 32 * 512];
    // SAFETY: live objects throughout; the handle is a host pointer (host data path).
    unsafe {
        let q = started(dev, &mut buf, 512);
        assert_eq!(doca_eth_rxq_apply_queue_id(q, 2), 0);
        let mut h: *mut c_void = null_mut();
        assert_eq!(doca_eth_rxq_get_gpu_handle(q, &mut h), 0);
        let c = CpuRxq::new(h as *mut RxqHandle);
        let port0 = doca_soft::testing::port_of(dev).unwrap();
        port0.set_default_queue(Some(2));
        let peer = Port::for_spec(&PortSpec::Wire {
            name: "rxflow".into(),
            side: 1,
        })
        .unwrap();
        let frames: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; 60 + usize::from(i)]).collect();
        for f in &frames {
            peer.send(f).unwrap();
        }
        peer.send(&[0xee; 600]).unwrap(); // larger than the 512-byte slots
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut spins = 0;
        while got.len() < frames.len() {
            c.recv_with(0, 1_000_000, |_, a, p| {
                assert_eq!(a.bytes as usize, p.len());
                got.push(p.to_vec());
            });
            spins += 1;
            assert!(spins < 20_000, "frames never arrived");
        }
        assert_eq!(got, frames);
        let mut cnt = RxqCountersSnapshot::default();
        // The too-big frame follows the others on the wire: wait until it is counted.
        let t0 = std::time::Instant::now();
        while cnt.dropped_too_big == 0 {
            watchdog(t0, "the too-big drop");
            assert_eq!(doca_soft_eth_rxq_get_counters(q, &mut cnt), 0);
            std::thread::yield_now();
        }
        assert_eq!(cnt.delivered, 20);
        assert_eq!(cnt.received, 21);
        assert_eq!(cnt.dropped_ring_full, 0);
        port0.set_default_queue(None);
        assert_eq!(doca_ctx_stop(ctx(q)), 0);
        let mut after = RxqCountersSnapshot::default();
        assert_eq!(doca_soft_eth_rxq_get_counters(q, &mut after), 0);
        assert_eq!(after.delivered, 20, "counters kept after stop");
        assert_eq!(doca_eth_rxq_destroy(q), 0);
        drop(Box::from_raw(dev));
    }
}

#[test]
fn caps_report_cyclic_gpu_queues() {
    use doca_soft::capi::doca_eth_rxq::*;
    use doca_soft::testing::MAX_BURST_SIZE;
    let info = doca_soft::testing::dev_info(
        "c9:00.0",
        "x",
        [0; 6],
        PortSpec::Wire {
            name: "capx".into(),
            side: 0,
        },
    );
    let mut v = 0u32;
    // SAFETY: valid pointers or null where the call must reject it.
    unsafe {
        assert_eq!(doca_eth_rxq_cap_get_max_burst_size(&info, &mut v), 0);
        assert_eq!(v, MAX_BURST_SIZE);
        assert_eq!(
            doca_eth_rxq_cap_get_max_packet_size(null(), &mut v),
            INVALID
        );
        assert_eq!(
            doca_eth_rxq_cap_get_max_packet_size(&info, null_mut()),
            INVALID
        );
        assert_eq!(doca_eth_rxq_cap_is_type_supported(&info, 0, 1), 0);
        assert_eq!(
            doca_eth_rxq_cap_is_type_supported(&info, 2, 0),
            DocaError::NOT_SUPPORTED.0
        );
        assert_eq!(doca_eth_rxq_cap_is_type_supported(&info, 5, 1), INVALID);
    }
}
