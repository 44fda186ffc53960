//! `EthRxq` through the safe API against the software runtime, without a GPU: builder
//! validation, state errors from DOCA, queue ids, the device handle, frames arriving on a
//! wire port (host-memory data path, consumed on the CPU), counters and clean teardown.

// These tests drive the software runtime (its host-memory hooks and wire ports).
#![cfg(doca_backend = "soft")]

mod eth_support;

use doca_gpunetio::soft::SoftCountersExt;
use doca_gpunetio::{
    take_drop_errors, CtxState, Device, DocaError, Error, EthRxq, Mmap, ProgressEngine, RxqType,
};
use eth_support::*;

const WIRES: &[&str] = &["srxv", "srxs", "srxi", "srxf", "srxh"];

fn setup() {
    declare_wires(WIRES);
}

fn invalid(e: Error) -> String {
    match e {
        Error::InvalidArgument(m) => m,
        other => panic!("expected InvalidArgument, got {other}"),
    }
}

#[test]
fn builder_rejects_incomplete_or_inconsistent_settings() {
    setup();
    let (dev, other) = wire("srxv");
    let m = host_mmap(&dev, 1 << 16);
    let e = invalid(
        EthRxq::builder(&dev)
            .max_packet_size(2048)
            .packet_buffer(&m, 0, 4096)
            .start()
            .unwrap_err(),
    );
    assert!(
        e.contains("EthRxq::start") && e.contains("max_burst_size"),
        "{e}"
    );
    let e = invalid(
        EthRxq::builder(&dev)
            .max_burst_size(32)
            .packet_buffer(&m, 0, 4096)
            .start()
            .unwrap_err(),
    );
    assert!(e.contains("max_packet_size"), "{e}");
    let e = invalid(
        EthRxq::builder(&dev)
            .max_burst_size(32)
            .max_packet_size(2048)
            .start()
            .unwrap_err(),
    );
    assert!(e.contains("packet buffer"), "{e}");
    let e = invalid(
        EthRxq::builder(&dev)
            .max_burst_size(32)
            .max_packet_size(2048)
            .packet_buffer(&m, 1 << 15, 1 << 16)
            .start()
            .unwrap_err(),
    );
    assert!(e.contains("exceeds the memory map"), "{e}");
    let e = invalid(
        EthRxq::builder(&dev)
            .max_burst_size(32)
            .max_packet_size(2048)
            .packet_buffer(&m, 0, 0)
            .start()
            .unwrap_err(),
    );
    assert!(e.contains("length is 0"), "{e}");
    // A map registered only with another device.
    let m_other = host_mmap(&other, 1 << 16);
    let e = invalid(
        EthRxq::builder(&dev)
            .max_burst_size(32)
            .max_packet_size(2048)
            .packet_buffer(&m_other, 0, 4096)
            .start()
            .unwrap_err(),
    );
    assert!(e.contains("not registered with device srxv0"), "{e}");
    assert!(take_drop_errors().is_empty());
}

#[test]
fn doca_errors_surface_with_the_operation_and_code() {
    setup();
    let (dev, _) = wire("srxs");
    let m = host_mmap(&dev, 1 << 16);
    // No GPU data path: the runtime cannot start the queue (NOT_SUPPORTED from
    // doca_ctx_start); the half-built queue is destroyed cleanly.
    let e = EthRxq::builder(&dev)
        .max_burst_size(16)
        .max_packet_size(1024)
        .packet_buffer(&m, 0, 1 << 14)
        .start()
        .unwrap_err();
    assert_eq!(e.doca_code(), Some(DocaError::NOT_SUPPORTED), "{e}");
    assert!(e.to_string().starts_with("doca_ctx_start failed"), "{e}");
    // An oversize packet is refused by doca_eth_rxq_create itself.
    let e = EthRxq::builder(&dev)
        .max_burst_size(16)
        .max_packet_size(1 << 20)
        .packet_buffer(&m, 0, 1 << 14)
        .start()
        .unwrap_err();
    assert!(
        matches!(e, Error::Doca { op: "doca_eth_rxq_create", code } if code == DocaError::INVALID_VALUE),
        "{e}"
    );
    // A configure_raw step's error aborts the start.
    let e = EthRxq::builder(&dev)
        .max_burst_size(16)
        .max_packet_size(1024)
        .packet_buffer(&m, 0, 1 << 14)
        .configure_raw(|_| Err(Error::InvalidArgument("raw step refused".into())))
        .start()
        .unwrap_err();
    assert!(e.to_string().contains("raw step refused"));
    // A step that starts the context early: the builder's own start then meets a RUNNING
    // context (BAD_STATE from doca_ctx_start), and the half-built queue is still stopped
    // and destroyed without recorded errors.
    let e = EthRxq::builder(&dev)
        .max_burst_size(16)
        .max_packet_size(1024)
        .packet_buffer(&m, 0, 1 << 14)
        .configure_raw(rxq_host_datapath)
        .configure_raw(|raw| {
            // SAFETY: the builder passes a live, configured queue.
            let rc = unsafe {
                doca_gpunetio::sys::doca_ctx_start(doca_gpunetio::sys::doca_eth_rxq_as_doca_ctx(
                    raw,
                ))
            };
            assert_eq!(rc, doca_gpunetio::sys::doca_error_t::DOCA_SUCCESS);
            Ok(())
        })
        .start()
        .unwrap_err();
    assert!(
        matches!(e, Error::Doca { op: "doca_ctx_start", code } if code == DocaError::BAD_STATE),
        "{e}"
    );
    // Estimation goes to DOCA.
    assert_eq!(
        EthRxq::estimate_packet_buffer_size(RxqType::Cyclic, 2048, 16384).unwrap(),
        32 << 20
    );
    let e = EthRxq::estimate_packet_buffer_size(RxqType::Cyclic, 2048, 0).unwrap_err();
    assert_eq!(e.doca_code(), Some(DocaError::INVALID_VALUE));
    assert!(take_drop_errors().is_empty());
}

fn host_rxq(dev: &Device, m: &Mmap, burst: u32, max_pkt: u32) -> EthRxq {
    EthRxq::builder(dev)
        .max_burst_size(burst)
        .max_packet_size(max_pkt)
        .packet_buffer(m, 0, burst * max_pkt)
        .timestamps(true)
        .configure_raw(rxq_host_datapath)
        .start()
        .unwrap()
}

#[test]
fn queue_ids_apply_once_and_are_unique_per_device() {
    setup();
    let (dev, _) = wire("srxi");
    let m = host_mmap(&dev, 1 << 17);
    let a = host_rxq(&dev, &m, 16, 2048);
    assert_eq!(a.state().unwrap(), CtxState::Running);
    assert_eq!(a.queue_id(), None);
    a.apply_queue_id(3).unwrap();
    assert_eq!(a.queue_id(), Some(3));
    let e = a.apply_queue_id(4).unwrap_err();
    assert_eq!(e.doca_code(), Some(DocaError::ALREADY_EXIST), "{e}");
    assert!(
        e.to_string()
            .starts_with("doca_eth_rxq_apply_queue_id failed"),
        "{e}"
    );
    assert_eq!(
        a.queue_id(),
        Some(3),
        "a refused id does not replace the applied one"
    );

    let m2 = host_mmap(&dev, 1 << 17);
    let b = host_rxq(&dev, &m2, 16, 2048);
    assert_eq!(
        b.apply_queue_id(3).unwrap_err().doca_code(),
        Some(DocaError::IN_USE)
    );
    b.apply_queue_id(5).unwrap();
    // The handle is the runtime's ring handle; same value on every call.
    assert_eq!(
        a.gpu_handle().unwrap().as_raw(),
        a.gpu_handle().unwrap().as_raw()
    );
    assert_ne!(
        a.gpu_handle().unwrap().as_raw(),
        b.gpu_handle().unwrap().as_raw()
    );
    b.stop().unwrap();
    // Stopping `a` frees id 3 for a new queue.
    a.stop().unwrap();
    let c = host_rxq(&dev, &m, 16, 2048);
    c.apply_queue_id(3).unwrap();
    drop(c);
    assert!(take_drop_errors().is_empty());
}

#[test]
fn frames_reach_the_queue_ring_with_their_bytes() {
    setup();
    let (dev, peer) = wire("srxf");
    let m = host_mmap(&dev, 64 * 2048);
    let q = host_rxq(&dev, &m, 64, 2048);
    q.apply_queue_id(0).unwrap();
    assert_eq!(q.packet_buffer().1, 0);
    assert_eq!(q.packet_buffer().2, 64 * 2048);
    // No Flow on this port: the runtime's default queue takes every frame.
    soft_port(&dev).set_default_queue(Some(0));
    let frames: Vec<Vec<u8>> = (0..10u8)
        .map(|i| udp_frame(1000 + i as u16, 53, 20 + i as usize * 7, i))
        .collect();
    let too_big = udp_frame(1, 2, 3000, 99);
    let tx = soft_port(&peer);
    for f in &frames {
        tx.send(f).unwrap();
    }
    tx.send(&too_big).unwrap();
    assert!(
        eventually(|| q.counters().unwrap().received == 11),
        "{:?}",
        q.counters().unwrap()
    );
    let c = q.counters().unwrap();
    assert_eq!(
        (c.delivered, c.dropped_too_big, c.dropped_ring_full),
        (10, 1, 0),
        "{c:?}"
    );

    let rx = cpu_rxq(&q);
    let mut got = Vec::new();
    rx.recv_with(0, 1_000_000_000, |_, attr, payload| {
        assert!(attr.timestamp_ns > 0, "timestamps were enabled");
        got.push(payload.to_vec());
    });
    assert_eq!(got, frames, "every frame, in order, byte for byte");
    q.stop().unwrap();
    assert!(take_drop_errors().is_empty());
}

#[test]
fn host_memory_queue_has_no_gpu_and_drop_is_clean() {
    setup();
    let (dev, _) = wire("srxh");
    let m = host_mmap(&dev, 1 << 16);
    let q = host_rxq(&dev, &m, 8, 1024);
    assert!(q.gpu().is_none());
    assert_eq!((q.max_burst_size(), q.max_packet_size()), (8, 1024));
    assert_eq!(q.device().info().iface_name(), "srxh0");
    assert!(format!("{q:?}").contains("srxh0"));
    assert_eq!(q.counters().unwrap(), Default::default());
    // The queue keeps its memory map alive: dropping our clone first is fine.
    let (qm, _, _) = q.packet_buffer();
    assert_eq!(qm.range().unwrap(), m.range().unwrap());
    drop(m);
    drop(q);
    // Connected to a progress engine, which the queue keeps alive and drives on stop.
    let pe = ProgressEngine::new().unwrap();
    let m = host_mmap(&dev, 1 << 16);
    let q = EthRxq::builder(&dev)
        .max_burst_size(8)
        .max_packet_size(1024)
        .packet_buffer(&m, 0, 8 * 1024)
        .progress_engine(&pe)
        .configure_raw(rxq_host_datapath)
        .start()
        .unwrap();
    assert_eq!(q.state().unwrap(), CtxState::Running);
    drop(pe);
    q.stop().unwrap();
    assert!(take_drop_errors().is_empty());
}
