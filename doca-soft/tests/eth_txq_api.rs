//! `doca_eth_txq_*` through the C ABI: argument and state errors, a TX queue sending over a
//! wire into an RX queue (CPU producer and consumer, host-memory data path), NOTIFY and error
//! PE events in CPU-completion mode.

use doca_soft::capi::doca_ctx::{doca_ctx_start, doca_ctx_stop, Ctx};
use doca_soft::capi::doca_dev::Dev;
use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_eth_rxq::*;
use doca_soft::capi::doca_eth_rxq_gpu_data_path::*;
use doca_soft::capi::doca_eth_txq::*;
use doca_soft::capi::doca_eth_txq_gpu_data_path::*;
use doca_soft::capi::doca_pe::{
    doca_pe_connect_ctx, doca_pe_create, doca_pe_destroy, doca_pe_progress,
};
use doca_soft::capi::doca_soft_queue::{TxqCountersSnapshot, *};
use doca_soft::capi::doca_types::DocaData;
use doca_soft::testing::{
    register_host_range, unregister_host_range, wait_on_time_to_ns, CpuRxq, CpuTxq, Port, PortSpec,
    RxqHandle, TxqHandle,
};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use doca_test_support::wait::watchdog;

const INVALID: u32 = DocaError::INVALID_VALUE.0;
const BAD_STATE: u32 = DocaError::BAD_STATE.0;

fn wire_dev(name: &str, side: u8) -> *mut Dev {
    doca_soft::testing::open_wire_dev('d', 1, name, side)
}

fn create(dev: *mut Dev, burst: u32) -> *mut EthTxq {
    let mut q = null_mut();
    // SAFETY: valid device and out pointer.
    assert_eq!(unsafe { doca_eth_txq_create(dev, burst, &mut q) }, 0);
    q
}

fn ctx(q: *mut EthTxq) -> *mut Ctx {
    // SAFETY: live queue.
    unsafe { doca_eth_txq_as_doca_ctx(q) }
}

#[test]
fn null_arguments_and_state_errors() {
    let dev = wire_dev("txstate", 0);
    let mut q = null_mut();
    let mut v = 0u64;
    let mut h: *mut c_void = null_mut();
    // SAFETY: every pointer is null or valid.
    unsafe {
        assert_eq!(doca_eth_txq_create(null_mut(), 16, &mut q), INVALID);
        assert_eq!(doca_eth_txq_create(dev, 16, null_mut()), INVALID);
        assert_eq!(doca_eth_txq_create(dev, 0, &mut q), INVALID);
        assert_eq!(doca_eth_txq_destroy(null_mut()), INVALID);
        assert_eq!(doca_eth_txq_set_l3_chksum_offload(null_mut(), 1), INVALID);
        assert_eq!(doca_eth_txq_gpu_set_completion_on_gpu(null_mut()), INVALID);
        let q = create(dev, 64);
        assert_eq!(doca_eth_txq_set_type(q, 1), INVALID);
        assert_eq!(doca_eth_txq_set_max_burst_size(q, 0), INVALID);
        assert_eq!(doca_eth_txq_set_max_lso_header_size(q, 64), INVALID);
        assert_eq!(
            doca_eth_txq_gpu_event_notify_send_packet_register(q, None, DocaData { u64: 0 }),
            INVALID
        );
        assert_eq!(doca_eth_txq_calculate_timestamp(q, 5, &mut v), BAD_STATE);
        assert_eq!(doca_eth_txq_apply_queue_id(q, 0), BAD_STATE);
        assert_eq!(
            doca_eth_txq_get_gpu_handle(q, &mut h),
            DocaError::NOT_SUPPORTED.0
        );
        assert_eq!(doca_ctx_start(ctx(q)), DocaError::NOT_SUPPORTED.0);
        doca_soft::testing::txq_set_host_datapath(q.cast()).unwrap();
        assert_eq!(doca_eth_txq_get_gpu_handle(q, &mut h), BAD_STATE);
        assert_eq!(doca_eth_txq_gpu_cpu_proxy_progress(q), BAD_STATE);
        assert_eq!(doca_eth_txq_set_wait_on_time_offload(q), 0);
        assert_eq!(doca_eth_txq_gpu_set_uar_on_cpu(q), 0);
        assert_eq!(doca_ctx_start(ctx(q)), 0);
        assert_eq!(doca_eth_txq_set_l3_chksum_offload(q, 1), BAD_STATE);
        assert_eq!(doca_eth_txq_set_wait_on_time_offload(q), BAD_STATE);
        assert_eq!(doca_eth_txq_gpu_set_completion_on_gpu(q), BAD_STATE);
        assert_eq!(doca_eth_txq_destroy(q), BAD_STATE);
        assert_eq!(doca_eth_txq_calculate_timestamp(q, 5, null_mut()), INVALID);
        let ns = 1_234_567_890_123_456_789u64;
        assert_eq!(doca_eth_txq_calculate_timestamp(q, ns, &mut v), 0);
        assert_eq!(wait_on_time_to_ns(v), ns);
        assert_eq!(u64::from_be(v) >> 32, ns / 1_000_000_000);
        assert_eq!(doca_eth_txq_get_gpu_handle(q, &mut h), 0);
        assert_eq!((*(h as *const TxqHandle)).wait_on_time, 1);
        assert_eq!(doca_eth_txq_apply_queue_id(q, 3), 0);
        assert_eq!(
            doca_eth_txq_apply_queue_id(q, 4),
            DocaError::ALREADY_EXIST.0
        );
        let q2 = create(dev, 64);
        doca_soft::testing::txq_set_host_datapath(q2.cast()).unwrap();
        assert_eq!(doca_ctx_start(ctx(q2)), 0);
        assert_eq!(doca_eth_txq_apply_queue_id(q2, 3), DocaError::IN_USE.0);
        assert_eq!(doca_ctx_stop(ctx(q2)), 0);
        assert_eq!(doca_eth_txq_destroy(q2), 0);
        assert_eq!(doca_ctx_stop(ctx(q)), 0);
        assert_eq!(doca_eth_txq_destroy(q), 0);
        drop(Box::from_raw(dev));
    }
}

#[test]
fn caps_report_offloads_and_native_wait_on_time() {
    let info = doca_soft::testing::dev_info(
        "d9:00.0",
        "y",
        [0; 6],
        PortSpec::Wire {
            name: "capy".into(),
            side: 0,
        },
    );
    let mut mode = 0u32;
    let mut burst = 0u32;
    // SAFETY: valid pointers or null where the call must reject it.
    unsafe {
        use doca_soft::capi::doca_eth_txq::*;
        use doca_soft::testing::MAX_BURST_SIZE;
        assert_eq!(doca_eth_txq_cap_is_l3_chksum_offload_supported(&info), 0);
        assert_eq!(doca_eth_txq_cap_is_l4_chksum_offload_supported(&info), 0);
        assert_eq!(
            doca_eth_txq_cap_is_l3_chksum_offload_supported(std::ptr::null()),
            INVALID
        );
        assert_eq!(
            doca_eth_txq_cap_get_wait_on_time_offload_supported(&info, &mut mode),
            0
        );
        assert_eq!(mode, WAIT_ON_TIME_NATIVE);
        assert_eq!(
            doca_eth_txq_cap_get_max_burst_size(&info, 1, 0, &mut burst),
            0
        );
        assert_eq!(burst, MAX_BURST_SIZE);
        assert_eq!(doca_eth_txq_cap_is_type_supported(&info, 0, 1), 0);
        assert_eq!(doca_eth_txq_cap_is_type_supported(&info, 1, 1), INVALID);
    }
}

static NOTIFIED: Mutex<Vec<(u16, u64)>> = Mutex::new(Vec::new());
static ERRORS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn on_notify(ev: *mut TxGpuEvent, ud: DocaData) {
    let (mut pos, mut ts) = (0u16, 0u64);
    // SAFETY: called by the runtime with a live event.
    unsafe {
        assert_eq!(
            doca_eth_txq_gpu_event_notify_send_packet_get_position(ev, &mut pos),
            0
        );
        assert_eq!(
            doca_eth_txq_gpu_event_notify_send_packet_get_timestamp(ev, &mut ts),
            0
        );
        assert_eq!(ud.u64, 77);
    }
    NOTIFIED.lock().unwrap().push((pos, ts));
}

unsafe extern "C" fn on_error(ev: *mut TxGpuEvent, _ud: DocaData) {
    let mut pos = 0u16;
    // SAFETY: called by the runtime with a live event.
    unsafe {
        assert_eq!(
            doca_eth_txq_gpu_event_error_send_packet_get_position(ev, &mut pos),
            0
        )
    };
    assert_eq!(pos, 5);
    ERRORS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn txq_sends_over_a_wire_into_an_rxq_with_pe_events() {
    let tx_dev = wire_dev("txloop", 0);
    let rx_dev = wire_dev("txloop", 1);
    let mut rx_buf = vec![0u8; 64 * 256];
    let frames: Vec<Vec<u8>> = (0..5u8)
        .map(|i| vec![0x40 + i; 64 + usize::from(i)])
        .collect();
    for f in &frames {
        register_host_range(f.as_ptr(), f.len());
    }
    // SAFETY: live objects throughout; handles are host pointers (host data path).
    unsafe {
        // Receiver on side 1.
        let mut rq = null_mut();
        assert_eq!(doca_eth_rxq_create(rx_dev, 64, 256, &mut rq), 0);
        doca_soft::testing::rxq_set_host_pkt_buf(rq.cast(), rx_buf.as_mut_ptr(), rx_buf.len(), 1)
            .unwrap();
        doca_soft::testing::rxq_set_host_datapath(rq.cast()).unwrap();
        assert_eq!(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rq)), 0);
        assert_eq!(doca_eth_rxq_apply_queue_id(rq, 0), 0);
        doca_soft::testing::port_of(rx_dev)
            .unwrap()
            .set_default_queue(Some(0));
        let mut rh: *mut c_void = null_mut();
        assert_eq!(doca_eth_rxq_get_gpu_handle(rq, &mut rh), 0);
        let rx = CpuRxq::new(rh as *mut RxqHandle);

        // Sender on side 0, CPU completions as PE events, proxy driven by the application.
        let q = create(tx_dev, 64);
        doca_soft::testing::txq_set_host_datapath(q.cast()).unwrap();
        assert_eq!(doca_eth_txq_gpu_set_uar_on_cpu(q), 0);
        assert_eq!(
            doca_eth_txq_gpu_event_notify_send_packet_register(
                q,
                Some(on_notify),
                DocaData { u64: 77 }
            ),
            0
        );
        assert_eq!(
            doca_eth_txq_gpu_event_error_send_packet_register(
                q,
                Some(on_error),
                DocaData { u64: 0 }
            ),
            0
        );
        assert_eq!(doca_ctx_start(ctx(q)), BAD_STATE, "events need a PE");
        let mut pe = null_mut();
        assert_eq!(doca_pe_create(&mut pe), 0);
        assert_eq!(doca_pe_connect_ctx(pe, ctx(q)), 0);
        assert_eq!(doca_ctx_start(ctx(q)), 0);
        let mut th: *mut c_void = null_mut();
        assert_eq!(doca_eth_txq_get_gpu_handle(q, &mut th), 0);
        let tx = CpuTxq::new(th as *mut TxqHandle);
        for (i, f) in frames.iter().enumerate() {
            tx.send(f.as_ptr() as u64, 0, f.len() as u32, i == 1 || i == 4);
        }
        tx.send(0x10, 0, 64, false); // not registered memory: an error event
        assert_eq!(doca_eth_txq_gpu_cpu_proxy_progress(q), 0);
        let mut got = Vec::new();
        let t0 = std::time::Instant::now();
        while got.len() < frames.len() {
            watchdog(t0, "frames on the wire");
            rx.recv_with(0, 1_000_000, |_, _, p| got.push(p.to_vec()));
        }
        assert_eq!(got, frames);
        while doca_pe_progress(pe) != 0 {}
        let n = NOTIFIED.lock().unwrap().clone();
        assert_eq!(n.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 4]);
        assert!(n.iter().all(|e| e.1 > 0), "timestamps set");
        assert_eq!(ERRORS.load(Ordering::SeqCst), 1);
        let mut c = TxqCountersSnapshot::default();
        assert_eq!(doca_soft_eth_txq_get_counters(q, &mut c), 0);
        assert_eq!((c.sent, c.completed, c.errors), (5, 3, 1));

        assert_eq!(doca_ctx_stop(ctx(q)), 0);
        let mut after = TxqCountersSnapshot::default();
        assert_eq!(doca_soft_eth_txq_get_counters(q, &mut after), 0);
        assert_eq!(after, c, "counters kept after stop");
        assert_eq!(doca_eth_txq_destroy(q), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
        assert_eq!(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(rq)), 0);
        assert_eq!(doca_eth_rxq_destroy(rq), 0);
        drop(Box::from_raw(tx_dev));
        drop(Box::from_raw(rx_dev));
    }
    for f in &frames {
        unregister_host_range(f.as_ptr(), f.len());
    }
}

#[test]
fn proxy_thread_sends_without_application_progress() {
    let tx_dev = wire_dev("txthread", 0);
    let frame = [0x5au8; 100];
    register_host_range(frame.as_ptr(), frame.len());
    let peer = Port::for_spec(&PortSpec::Wire {
        name: "txthread".into(),
        side: 1,
    })
    .unwrap();
    // The peer port gets a sink so that the wire has a reader (frames queue on side 1).
    let mut rx_buf = vec![0u8; 16 * 128];
    let ring = Arc::new(
        doca_soft::testing::RxRing::new(
            doca_soft::testing::PktBuf::host(rx_buf.as_mut_ptr(), rx_buf.len(), 0),
            128,
            None,
        )
        .unwrap(),
    );
    peer.register_rx_queue(9, ring.clone()).unwrap();
    peer.set_default_queue(Some(9));
    // SAFETY: live objects; host data path.
    unsafe {
        let q = create(tx_dev, 32);
        doca_soft::testing::txq_set_host_datapath(q.cast()).unwrap();
        assert_eq!(doca_eth_txq_gpu_set_completion_on_gpu(q), 0);
        assert_eq!(doca_ctx_start(ctx(q)), 0);
        let mut th: *mut c_void = null_mut();
        assert_eq!(doca_eth_txq_get_gpu_handle(q, &mut th), 0);
        let tx = CpuTxq::new(th as *mut TxqHandle);
        for _ in 0..10 {
            tx.send(frame.as_ptr() as u64, 0, 100, false);
        }
        tx.send(frame.as_ptr() as u64, 0, 100, true);
        assert_eq!(
            tx.poll_completion(1, true),
            Ok(1),
            "proxy thread completed it"
        );
        let rx = CpuRxq::new(ring.handle_cpu());
        let mut n = 0;
        let t0 = std::time::Instant::now();
        while n < 11 {
            watchdog(t0, "frames from the proxy thread");
            n += rx.recv_with(0, 1_000_000, |_, _, p| assert_eq!(p, &frame[..]));
        }
        assert_eq!(doca_ctx_stop(ctx(q)), 0);
        assert_eq!(doca_eth_txq_destroy(q), 0);
        drop(Box::from_raw(tx_dev));
    }
    peer.set_default_queue(None);
    peer.unregister_rx_queue(9);
    unregister_host_range(frame.as_ptr(), frame.len());
}

#[test]
fn mmap_packet_buffers_and_mkey_addressed_frames_loop_over_a_wire() {
    use doca_soft::capi::doca_mmap::*;
    let tx_dev = wire_dev("txmmap", 0);
    let rx_dev = wire_dev("txmmap", 1);
    let mut rx_mem = vec![0u8; 32 * 256];
    let mut tx_mem = vec![0u8; 4096];
    for (i, b) in tx_mem.iter_mut().enumerate() {
        *b = (i * 13) as u8;
    }
    // SAFETY: live objects throughout; handles are host pointers (host data path).
    unsafe {
        let (mut rm, mut tm) = (null_mut(), null_mut());
        assert_eq!(doca_mmap_create(&mut rm), 0);
        assert_eq!(doca_mmap_create(&mut tm), 0);
        assert_eq!(doca_mmap_add_dev(rm, rx_dev), 0);
        assert_eq!(doca_mmap_add_dev(tm, tx_dev), 0);
        assert_eq!(
            doca_mmap_set_memrange(rm, rx_mem.as_mut_ptr().cast(), rx_mem.len()),
            0
        );
        assert_eq!(
            doca_mmap_set_memrange(tm, tx_mem.as_mut_ptr().cast(), tx_mem.len()),
            0
        );
        assert_eq!(doca_mmap_start(tm), 0);
        let mut mkey = 0u32;
        assert_eq!(doca_mmap_get_mkey(tm, tx_dev, &mut mkey), 0);

        let mut rq = null_mut();
        assert_eq!(doca_eth_rxq_create(rx_dev, 32, 256, &mut rq), 0);
        assert_eq!(doca_eth_rxq_set_pkt_buf(rq, null_mut(), 0, 256), INVALID);
        assert_eq!(doca_eth_rxq_set_pkt_buf(rq, rm, 0, 0), INVALID);
        // A range past the end of the mmap is refused at start.
        assert_eq!(
            doca_eth_rxq_set_pkt_buf(rq, rm, 256, rx_mem.len() as u32),
            0
        );
        doca_soft::testing::rxq_set_host_datapath(rq.cast()).unwrap();
        let rctx = doca_eth_rxq_as_doca_ctx(rq);
        assert_eq!(doca_ctx_start(rctx), BAD_STATE, "mmap not started");
        assert_eq!(doca_mmap_start(rm), 0);
        assert_eq!(doca_ctx_start(rctx), INVALID, "range past the mmap");
        assert_eq!(doca_eth_rxq_set_pkt_buf(rq, rm, 0, rx_mem.len() as u32), 0);
        assert_eq!(doca_ctx_start(rctx), 0);
        assert_eq!(doca_mmap_destroy(rm), DocaError::IN_USE.0, "queue uses it");
        assert_eq!(doca_eth_rxq_apply_queue_id(rq, 0), 0);
        doca_soft::testing::port_of(rx_dev)
            .unwrap()
            .set_default_queue(Some(0));
        let mut rh: *mut c_void = null_mut();
        assert_eq!(doca_eth_rxq_get_gpu_handle(rq, &mut rh), 0);
        assert_eq!((*(rh as *const RxqHandle)).pkt_num, 32);
        assert_eq!(u32::from_be((*(rh as *const RxqHandle)).pkt_mkey), {
            let mut k = 0;
            assert_eq!(doca_mmap_get_mkey(rm, rx_dev, &mut k), 0);
            k
        });
        let rx = CpuRxq::new(rh as *mut RxqHandle);

        let q = create(tx_dev, 32);
        doca_soft::testing::txq_set_host_datapath(q.cast()).unwrap();
        assert_eq!(doca_eth_txq_gpu_set_uar_on_cpu(q), 0);
        assert_eq!(doca_ctx_start(ctx(q)), 0);
        let mut th: *mut c_void = null_mut();
        assert_eq!(doca_eth_txq_get_gpu_handle(q, &mut th), 0);
        let tx = CpuTxq::new(th as *mut TxqHandle);
        let base = tx_mem.as_ptr() as u64;
        // Frames addressed by (address, big-endian mkey) as the device API passes them.
        tx.send(base, mkey.to_be(), 100, false);
        tx.send(base + 1000, mkey.to_be(), 200, false);
        // Past the end of the mmap: refused (counted as an error).
        tx.send(base + 4000, mkey.to_be(), 200, false);
        while doca_eth_txq_gpu_cpu_proxy_progress(q) == 0 && {
            let mut c = TxqCountersSnapshot::default();
            assert_eq!(doca_soft_eth_txq_get_counters(q, &mut c), 0);
            c.errors == 0
        } {}
        let mut got = Vec::new();
        let t0 = std::time::Instant::now();
        while got.len() < 2 {
            watchdog(t0, "mmap frames");
            rx.recv_with(0, 1_000_000, |_, _, p| got.push(p.to_vec()));
        }
        assert_eq!(got[0], &tx_mem[..100]);
        assert_eq!(got[1], &tx_mem[1000..1200]);
        let mut c = TxqCountersSnapshot::default();
        assert_eq!(doca_soft_eth_txq_get_counters(q, &mut c), 0);
        assert_eq!((c.sent, c.errors), (2, 1));

        assert_eq!(doca_ctx_stop(ctx(q)), 0);
        assert_eq!(doca_eth_txq_destroy(q), 0);
        assert_eq!(doca_ctx_stop(rctx), 0);
        assert_eq!(doca_eth_rxq_destroy(rq), 0);
        assert_eq!(doca_mmap_stop(rm), 0);
        assert_eq!(doca_mmap_destroy(rm), 0, "released by the queue");
        assert_eq!(doca_mmap_stop(tm), 0);
        assert_eq!(doca_mmap_destroy(tm), 0);
        drop(Box::from_raw(tx_dev));
        drop(Box::from_raw(rx_dev));
    }
}

#[test]
fn burst_through_the_c_api_arrives_in_order_and_is_counted_once() {
    // More frames than one batch send (64) and than one read batch (256): the proxy
    // gathers what is ready and hands it to the port in batches.
    const N: usize = 300;
    let tx_dev = wire_dev("txburst", 0);
    let frames: Vec<Vec<u8>> = (0..N as u32)
        .map(|i| {
            let mut f = vec![0x33u8; 64];
            f[..4].copy_from_slice(&i.to_be_bytes());
            f
        })
        .collect();
    for f in &frames {
        register_host_range(f.as_ptr(), f.len());
    }
    let peer = Port::for_spec(&PortSpec::Wire {
        name: "txburst".into(),
        side: 1,
    })
    .unwrap();
    // Room for the whole burst: nobody consumes until it was sent.
    let mut rx_buf = vec![0u8; 4096 * 512];
    let ring = Arc::new(
        doca_soft::testing::RxRing::new(
            doca_soft::testing::PktBuf::host(rx_buf.as_mut_ptr(), rx_buf.len(), 0),
            512,
            None,
        )
        .unwrap(),
    );
    peer.register_rx_queue(3, ring.clone()).unwrap();
    peer.set_default_queue(Some(3));
    // SAFETY: live objects throughout; host data path (handles are host pointers).
    unsafe {
        let q = create(tx_dev, 512);
        doca_soft::testing::txq_set_host_datapath(q.cast()).unwrap();
        assert_eq!(doca_eth_txq_gpu_set_completion_on_gpu(q), 0);
        assert_eq!(doca_eth_txq_gpu_set_uar_on_cpu(q), 0);
        assert_eq!(doca_ctx_start(ctx(q)), 0);
        let mut th: *mut c_void = null_mut();
        assert_eq!(doca_eth_txq_get_gpu_handle(q, &mut th), 0);
        let tx = CpuTxq::new(th as *mut TxqHandle);
        for (i, f) in frames.iter().enumerate() {
            tx.send(f.as_ptr() as u64, 0, f.len() as u32, i == N - 1);
        }
        // The application drives the proxy: one progress call takes the whole burst.
        let t0 = std::time::Instant::now();
        while tx.poll_completion(1, false) != Ok(1) {
            watchdog(t0, "the burst's completion");
            doca_eth_txq_gpu_cpu_proxy_progress(q);
        }
        let rx = CpuRxq::new(ring.handle_cpu());
        let mut got: Vec<u32> = Vec::new();
        while got.len() < N {
            watchdog(t0, "the burst on the wire");
            rx.recv_with(0, 1_000_000, |_, _, p| {
                got.push(u32::from_be_bytes(p[..4].try_into().unwrap()))
            });
        }
        assert_eq!(
            got,
            (0..N as u32).collect::<Vec<_>>(),
            "in order, once each"
        );
        let mut c = TxqCountersSnapshot::default();
        assert_eq!(doca_soft_eth_txq_get_counters(q, &mut c), 0);
        assert_eq!((c.sent, c.completed, c.errors), (N as u64, 1, 0));
        assert_eq!(doca_ctx_stop(ctx(q)), 0);
        // Nothing was sent twice: the wire holds nothing more after the stop.
        assert_eq!(rx.recv_with(0, 1_000_000, |_, _, _| {}), 0);
        assert_eq!(peer.counters().delivered, N as u64);
        assert_eq!(doca_eth_txq_destroy(q), 0);
        drop(Box::from_raw(tx_dev));
    }
    peer.set_default_queue(None);
    peer.unregister_rx_queue(3);
    for f in &frames {
        unregister_host_range(f.as_ptr(), f.len());
    }
}
