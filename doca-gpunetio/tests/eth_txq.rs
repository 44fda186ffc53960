//! `EthTxq` through the safe API against the software runtime, without a GPU: builder
//! validation, state errors, queue ids, wait-on-time, and frames sent by a CPU producer on
//! the queue's ring reaching an `EthRxq` across a wire, with send events delivered to Rust
//! closures through a progress engine.

// These tests drive the software runtime (its host-memory hooks and wire ports).
#![cfg(doca_backend = "soft")]

mod eth_support;

use doca_gpunetio::soft::SoftCountersExt;
use doca_gpunetio::{
    take_drop_errors, DocaError, Error, EthRxq, EthTxq, ProgressEngine, TxErrorEvent,
    TxNotifyEvent, WaitOnTime,
};
use doca_soft::testing::{wait_on_time_to_ns, CpuTxq};
use eth_support::*;
use std::sync::{Arc, Mutex};

const WIRES: &[&str] = &["stxv", "stxi", "stxe", "stxw"];

fn setup() {
    declare_wires(WIRES);
}

#[test]
fn builder_validation_and_doca_state_errors() {
    setup();
    let (dev, _) = wire("stxv");
    let e = EthTxq::builder(&dev).start().unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("EthTxq::start") && m.contains("max_burst_size")),
        "{e}"
    );
    let pe = ProgressEngine::new().unwrap();
    let e = EthTxq::builder(&dev)
        .max_burst_size(64)
        .completion_on_gpu()
        .events(&pe, |_| {}, |_| {})
        .start()
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("completion_on_gpu")),
        "{e}"
    );
    // Without a data path the runtime refuses to start the queue.
    let e = EthTxq::builder(&dev)
        .max_burst_size(64)
        .start()
        .unwrap_err();
    assert_eq!(e.doca_code(), Some(DocaError::NOT_SUPPORTED), "{e}");
    assert!(e.to_string().starts_with("doca_ctx_start failed"), "{e}");
    let e = EthTxq::builder(&dev)
        .max_burst_size(0)
        .configure_raw(txq_host_datapath)
        .start()
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(take_drop_errors().is_empty());
}

#[test]
fn queue_id_once_and_wait_on_time_values() {
    setup();
    let (dev, _) = wire("stxi");
    assert_eq!(EthTxq::wait_on_time_mode(&dev).unwrap(), WaitOnTime::Native);
    let q = EthTxq::builder(&dev)
        .max_burst_size(32)
        .l3_checksum_offload(true)
        .l4_checksum_offload(true)
        .wait_on_time()
        .cpu_proxy()
        .configure_raw(txq_host_datapath)
        .start()
        .unwrap();
    assert_eq!(q.max_burst_size(), 32);
    q.apply_queue_id(7).unwrap();
    assert_eq!(
        q.apply_queue_id(8).unwrap_err().doca_code(),
        Some(DocaError::ALREADY_EXIST)
    );
    assert_eq!(q.queue_id(), Some(7));
    for ns in [
        0u64,
        1,
        999_999_999,
        1_000_000_000,
        1_733_000_000_123_456_789,
    ] {
        let v = q.calculate_timestamp(ns).unwrap();
        assert_eq!(wait_on_time_to_ns(v), ns, "round trip of {ns}");
    }
    // The device handle records the offloads the builder asked for.
    let h = q.gpu_handle().unwrap();
    // SAFETY: host data path: the handle is a CPU pointer to the runtime's ring handle.
    let raw = unsafe { &*(h.as_raw() as *const doca_soft::testing::TxqHandle) };
    // Ethernet segment checksum flags L3 (0x40) | L4 (0x80), wait-on-time on.
    assert_eq!((raw.cs_flags, raw.wait_on_time), (0xc0, 1));
    q.cpu_proxy_progress().unwrap();
    q.stop().unwrap();
    assert!(take_drop_errors().is_empty());
}

#[test]
fn cpu_produced_frames_cross_the_wire_and_events_reach_closures() {
    setup();
    let (tx_dev, rx_dev) = wire("stxe");
    // Receiver on side 1 (default queue: no Flow on this port).
    let rx_mem = host_mmap(&rx_dev, 64 * 512);
    let rq = EthRxq::builder(&rx_dev)
        .max_burst_size(64)
        .max_packet_size(512)
        .packet_buffer(&rx_mem, 0, 64 * 512)
        .configure_raw(rxq_host_datapath)
        .start()
        .unwrap();
    rq.apply_queue_id(0).unwrap();
    soft_port(&rx_dev).set_default_queue(Some(0));

    // Sender on side 0: CPU proxy driven here, CPU completions as events.
    let pe = ProgressEngine::new().unwrap();
    let notified = Arc::new(Mutex::new(Vec::<TxNotifyEvent>::new()));
    let errors = Arc::new(Mutex::new(Vec::<TxErrorEvent>::new()));
    let (n2, e2) = (notified.clone(), errors.clone());
    let q = EthTxq::builder(&tx_dev)
        .max_burst_size(64)
        .cpu_proxy()
        .events(
            &pe,
            move |e| e2.lock().unwrap().push(e),
            move |n| n2.lock().unwrap().push(n),
        )
        .configure_raw(txq_host_datapath)
        .start()
        .unwrap();

    // Frames live in a host memory map of the sender, addressed by (address, mkey).
    let tx_mem = host_mmap(&tx_dev, 4096);
    let (base, _) = tx_mem.range().unwrap();
    let frames: Vec<Vec<u8>> = (0..4u8)
        .map(|i| udp_frame(4000 + i as u16, 9000, 40 + 10 * i as usize, i))
        .collect();
    let mut off = 0usize;
    let mut addrs = Vec::new();
    for f in &frames {
        // SAFETY: the mapped range is 4096 bytes and the frames fit.
        unsafe { std::ptr::copy_nonoverlapping(f.as_ptr(), (base as *mut u8).add(off), f.len()) };
        addrs.push((base as u64 + off as u64, f.len() as u32));
        off += 512;
    }
    let mkey = tx_mem.mkey(&tx_dev).unwrap().to_be();
    let h = q.gpu_handle().unwrap();
    // SAFETY: host data path: the handle is a CPU pointer to the ring handle, live while
    // `q` is (the producer is dropped first).
    let producer = unsafe { CpuTxq::new(h.as_raw().cast()) };
    let mut tickets = Vec::new();
    for (i, (a, len)) in addrs.iter().enumerate() {
        tickets.push(producer.send(*a, mkey, *len, i % 2 == 1));
    }
    let bad = producer.send(base as u64 + 4000, mkey, 200, false); // past the map: an error
    assert!(eventually(|| {
        q.cpu_proxy_progress().unwrap();
        let c = q.counters().unwrap();
        c.sent + c.errors == 5
    }));
    let c = q.counters().unwrap();
    assert_eq!((c.sent, c.errors), (4, 1), "{c:?}");

    let rx = cpu_rxq(&rq);
    let mut got = Vec::new();
    assert!(eventually(|| {
        rx.recv_with(0, 1_000_000, |_, _, p| got.push(p.to_vec()));
        got.len() >= frames.len()
    }));
    assert_eq!(got, frames);

    assert!(
        pe.progress_until(std::time::Duration::from_secs(20), || notified
            .lock()
            .unwrap()
            .len()
            == 2
            && errors.lock().unwrap().len() == 1)
    );
    let n = notified.lock().unwrap().clone();
    assert_eq!(
        n.iter().map(|e| e.position as u64).collect::<Vec<_>>(),
        vec![tickets[1], tickets[3]]
    );
    assert!(n.iter().all(|e| e.timestamp_ns > 0));
    assert_eq!(errors.lock().unwrap()[0].position as u64, bad);
    assert_eq!(q.event_failures(), 0);
    assert_eq!(q.counters().unwrap().completed, 3);

    q.stop().unwrap();
    rq.stop().unwrap();
    assert!(take_drop_errors().is_empty());
}

#[test]
fn a_panicking_event_closure_is_counted_not_unwound() {
    setup();
    let (tx_dev, _) = wire("stxw");
    let pe = ProgressEngine::new().unwrap();
    let q = EthTxq::builder(&tx_dev)
        .max_burst_size(16)
        .cpu_proxy()
        .events(&pe, |_| panic!("closure panics on purpose"), |_| {})
        .configure_raw(txq_host_datapath)
        .start()
        .unwrap();
    let h = q.gpu_handle().unwrap();
    // SAFETY: as in the test above.
    let producer = unsafe { CpuTxq::new(h.as_raw().cast()) };
    producer.send(0x10, 0, 64, false); // unmapped: an error event
    assert!(eventually(|| {
        q.cpu_proxy_progress().unwrap();
        q.counters().unwrap().errors == 1
    }));
    assert!(
        pe.progress_until(std::time::Duration::from_secs(20), || q.event_failures()
            == 1)
    );
    drop(q);
    assert!(take_drop_errors().is_empty());
}
