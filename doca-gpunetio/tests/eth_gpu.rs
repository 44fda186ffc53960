//! Queues with a real GPU data path (needs a CUDA driver; each test prints why it skips
//! without one): an `EthRxq` whose ring the builder allocates in GPU memory receives frames
//! sent on a wire port (bytes checked by copying the ring back), an `EthTxq` with GPU
//! completions starts and hands out its device handle.

// These tests drive the software runtime (its host-memory hooks and wire ports).
#![cfg(doca_backend = "soft")]

mod eth_support;

use doca_gpunetio::soft::SoftCountersExt;
use doca_gpunetio::{take_drop_errors, EthRxq, EthTxq, Gpu, RxqType, GPU_PAGE_SIZE};
use doca_test_support::require_cuda;
use eth_support::*;

fn gpu() -> Option<Gpu> {
    require_cuda("GPU data path queues")
        .then(|| Gpu::by_ordinal(0).expect("CUDA driver present but GPU 0 did not open"))
}

#[test]
fn gpu_ring_receives_frames_byte_for_byte() {
    let Some(gpu) = gpu() else { return };
    declare_wires(&["sgpr", "sgpt"]);
    let (dev, peer) = wire("sgpr");
    let q = EthRxq::builder(&dev)
        .max_burst_size(256)
        .max_packet_size(2048)
        .gpu_packet_buffer(&gpu)
        .kind(RxqType::Cyclic)
        .start()
        .unwrap();
    assert!(q.gpu().is_some());
    let (m, off, len) = q.packet_buffer();
    let want = EthRxq::estimate_packet_buffer_size(RxqType::Cyclic, 2048, 256).unwrap() as usize;
    assert_eq!(
        (off, len as usize),
        (0, want.div_ceil(GPU_PAGE_SIZE) * GPU_PAGE_SIZE)
    );
    let (base, mlen) = m.range().unwrap();
    assert_eq!(mlen, len as usize);
    assert_eq!(base as usize % GPU_PAGE_SIZE, 0, "page-aligned ring");
    q.apply_queue_id(0).unwrap();
    assert!(!q.gpu_handle().unwrap().as_raw().is_null());
    soft_port(&dev).set_default_queue(Some(0));

    let frames: Vec<Vec<u8>> = (0..8u8)
        .map(|i| udp_frame(100 + i as u16, 53, 64 + 100 * i as usize, i))
        .collect();
    let tx = soft_port(&peer);
    for f in &frames {
        tx.send(f).unwrap();
    }
    assert!(
        eventually(|| q.counters().unwrap().delivered == 8),
        "{:?}",
        q.counters().unwrap()
    );
    // The first frames land in consecutive 2048-byte slots from the start of the ring.
    let mut ring = vec![0u8; 8 * 2048];
    gpu.cuda().bind_to_thread().unwrap();
    // SAFETY: the ring is device memory of at least 8 slots of 2048 bytes.
    unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut ring, base as u64) }.unwrap();
    for (k, f) in frames.iter().enumerate() {
        assert_eq!(&ring[k * 2048..k * 2048 + f.len()], &f[..], "slot {k}");
    }
    q.stop().unwrap();
    assert!(take_drop_errors().is_empty());
}

#[test]
fn gpu_txq_starts_with_completions_on_gpu() {
    let Some(gpu) = gpu() else { return };
    declare_wires(&["sgpr", "sgpt"]);
    let (dev, _) = wire("sgpt");
    let q = EthTxq::builder(&dev)
        .max_burst_size(8192)
        .l3_checksum_offload(true)
        .l4_checksum_offload(true)
        .completion_on_gpu()
        .datapath_gpu(&gpu)
        .start()
        .unwrap();
    q.apply_queue_id(0).unwrap();
    assert!(!q.gpu_handle().unwrap().as_raw().is_null());
    assert!(q.calculate_timestamp(1_000_000_123).unwrap() != 0);
    assert_eq!(q.counters().unwrap().sent, 0);
    q.stop().unwrap();
    // CPU proxy mode too.
    let q = EthTxq::builder(&dev)
        .max_burst_size(64)
        .cpu_proxy()
        .datapath_gpu(&gpu)
        .start()
        .unwrap();
    q.cpu_proxy_progress().unwrap();
    drop(q);
    assert!(take_drop_errors().is_empty());
}
