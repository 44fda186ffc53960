//! No heap allocation per request on the steady RDMA path: two `doca_rdma` contexts of
//! this process on `lo` (host data path of the testing hooks), connected; after a warm-up,
//! thousands of RDMA writes (and writes with immediate consumed by posted receives) go
//! through the device functions run by a CPU thread, the soft NIC's proxy and UCX, while a
//! counting global allocator watches every thread of the process (Rust allocations: the
//! NIC engine, the proxy, the device-function emulation; UCX's own memory pools are not
//! Rust's allocator). The count per request must be zero. The same for GPU-datapath DMA
//! copies through the request ring and its proxy (host data path, CPU copies).

mod rdma_support;

use doca_test_support::alloc::{count_all_threads as count, CountingAlloc};
use std::sync::{Mutex, MutexGuard};

use rdma_support::{cpu_device, destroy_rdma, export, open_lo, started_rdma, Region, Remote};

use doca_soft::capi::doca_ctx::*;
use doca_soft::capi::doca_dev::doca_dev_close;
use doca_soft::capi::doca_dma::*;
use doca_soft::capi::doca_rdma::*;
use doca_soft::testing::rdma::{dma_set_host_datapath, CpuDma};
use std::ffi::c_void;
use std::time::Duration;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The counter is process-wide: the tests of this binary run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn the_counter_sees_allocations_of_any_thread() {
    let _s = serial();
    let n = count(|| {
        std::thread::spawn(|| drop(std::hint::black_box(vec![1u8; 64])))
            .join()
            .unwrap();
    });
    assert!(n >= 1, "a Vec made on another thread was not counted");
}

const SIZE: usize = 4096;
const BATCH: u32 = 64;

#[test]
fn steady_writes_and_immediates_allocate_nothing_per_request() {
    let _s = serial();
    let dev = open_lo();
    let (a, b) = (started_rdma(dev, 1, 256), started_rdma(dev, 1, 256));
    let (da, ca) = export(a);
    let (db, cb) = export(b);
    // SAFETY: started contexts, their own connections, readable blobs.
    unsafe {
        assert_eq!(doca_rdma_connect(a, db.as_ptr().cast(), db.len(), ca), 0);
        assert_eq!(doca_rdma_connect(b, da.as_ptr().cast(), da.len(), cb), 0);
    }
    let (cpu_a, cpu_b) = (cpu_device(a), cpu_device(b));
    let src = Region::new(dev, 1, SIZE, 0x5c);
    let dst = Region::new(dev, 1, SIZE, 0);
    let remote = Remote::new(dev, &dst.blob, 1, SIZE);
    let (s, r) = (src.bufs()[0], remote.bufs()[0]);
    let mut done = Vec::with_capacity(BATCH as usize);

    // One round: BATCH writes, then BATCH writes with immediate into receives posted at b.
    let mut round = |k: u32| {
        for _ in 0..BATCH {
            cpu_a.write(0, &r, 0, &s, 0, SIZE, 0, 0, None).unwrap();
        }
        cpu_a.commit_strong(0).unwrap();
        for _ in 0..BATCH {
            cpu_b.recv(None, 0, 0, 0, None).unwrap();
        }
        cpu_b.recv_commit_strong().unwrap();
        for i in 0..BATCH {
            cpu_a.write(0, &r, 0, &s, 0, SIZE, k + i, 1, None).unwrap();
        }
        cpu_a.commit_strong(0).unwrap();
        assert_eq!(cpu_a.wait_all().unwrap(), 2);
        cpu_b.recv_wait_all(1, &mut done).unwrap();
        assert_eq!(done.len(), BATCH as usize, "receives of round {k}");
        assert!(done.iter().enumerate().all(|(i, d)| d.0 == k + i as u32));
    };
    // Warm-up: keys resolved, endpoints and pools grown, rings wrapped.
    for k in 0..20 {
        round(k * BATCH);
    }
    let rounds = 100u32;
    let allocs = count(|| {
        for k in 0..rounds {
            round((20 + k) * BATCH);
        }
    });
    let requests = u64::from(rounds * BATCH * 3);
    assert_eq!(dst.snapshot(), vec![0x5c; SIZE], "the writes landed");
    assert_eq!(
        allocs, 0,
        "{allocs} heap allocations over {requests} requests (writes, writes with immediate, receives)"
    );
    drop((remote, dst, src));
    destroy_rdma(a);
    destroy_rdma(b);
    // SAFETY: every user of the device is gone.
    assert_eq!(unsafe { doca_dev_close(dev) }, 0);
}

#[test]
fn steady_dma_copies_allocate_nothing_per_request() {
    let _s = serial();
    let dev = open_lo();
    const N: usize = 32;
    let src = Region::new(dev, N, SIZE, 0x7e);
    let dst = Region::new(dev, N, SIZE, 0);
    let (se, de) = (src.bufs(), dst.bufs());
    let t = Duration::from_secs(20);
    let mut dma = std::ptr::null_mut();
    // SAFETY: live device; the context is stopped and destroyed below, after its last use.
    let cpu = unsafe {
        assert_eq!(doca_dma_create(dev, &mut dma), 0);
        dma_set_host_datapath(dma.cast()).unwrap();
        assert_eq!(doca_ctx_start(doca_dma_as_ctx(dma)), 0);
        let mut h: *mut c_void = std::ptr::null_mut();
        assert_eq!(doca_dma_get_gpu_handle(dma, &mut h), 0);
        CpuDma::new(h).unwrap()
    };
    let mut total = 0u64;
    let mut round = || {
        for i in 0..N {
            cpu.memcpy(&se[i], 0, &de[i], 0, SIZE, t).unwrap();
        }
        cpu.commit();
        total += N as u64;
        cpu.wait_done(total, t).unwrap();
    };
    for _ in 0..50 {
        round();
    }
    let rounds = 200;
    let allocs = count(|| (0..rounds).for_each(|_| round()));
    assert_eq!(dst.snapshot(), vec![0x7e; N * SIZE], "the copies landed");
    assert_eq!(
        allocs,
        0,
        "{allocs} heap allocations over {} copies",
        rounds * N
    );
    // SAFETY: the context and device are not used afterwards.
    unsafe {
        assert_eq!(doca_ctx_stop(doca_dma_as_ctx(dma)), 0);
        assert_eq!(doca_dma_destroy(dma), 0);
    }
    drop((src, dst));
    // SAFETY: every user of the device is gone.
    assert_eq!(unsafe { doca_dev_close(dev) }, 0);
}
