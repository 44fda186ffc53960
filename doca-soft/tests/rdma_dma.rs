//! `doca_dma.h` without a GPU, through the C API: memcpy tasks on the CPU data path (a PE,
//! both callbacks, buffer lengths, task limits, state rules), and the GPU data path's
//! request ring with its proxy on host memory, driven by CPU threads running the device
//! functions ([`CpuDma`]): concurrent producers, ring wrap, in-order completion, and bad
//! requests skipped without stalling the ring.

mod rdma_support;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use doca_soft::capi::doca_buf::*;
use doca_soft::capi::doca_buf_array::*;
use doca_soft::capi::doca_buf_inventory::*;
use doca_soft::capi::doca_ctx::*;
use doca_soft::capi::doca_dev::*;
use doca_soft::capi::doca_dma::*;
use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_mmap::*;
use doca_soft::capi::doca_pe::*;
use doca_soft::capi::doca_types::DocaData;
use doca_soft::testing::rdma::{buf_arr_entries, dma_set_host_datapath, dma_skipped, CpuDma};
use doca_soft::testing::GpuBufEntry;
use rdma_support::open_lo;

const BAD: u32 = DocaError::BAD_STATE.0;

static OK: AtomicUsize = AtomicUsize::new(0);
static ERR: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn ok_cb(t: *mut MemcpyTask, ud: DocaData, _ctx: DocaData) {
    // SAFETY: the union was set from an integer; the task is live in its callback.
    unsafe {
        assert_eq!(ud.u64, 99);
        assert!(!doca_dma_task_memcpy_get_src(t).is_null());
    }
    OK.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn err_cb(_t: *mut MemcpyTask, _ud: DocaData, _ctx: DocaData) {
    ERR.fetch_add(1, Ordering::SeqCst);
}

/// A started mmap over `mem` with `dev` added (LOCAL_READ_WRITE).
unsafe fn mmap_over(mem: &mut [u8], dev: *mut Dev) -> *mut Mmap {
    let mut m = std::ptr::null_mut();
    // SAFETY: caller's live device; `mem` outlives the mmap (caller).
    unsafe {
        assert_eq!(doca_mmap_create(&mut m), 0);
        assert_eq!(
            doca_mmap_set_memrange(m, mem.as_mut_ptr().cast(), mem.len()),
            0
        );
        assert_eq!(doca_mmap_add_dev(m, dev), 0);
        assert_eq!(doca_mmap_start(m), 0);
    }
    m
}

#[test]
fn cpu_memcpy_tasks_complete_through_the_pe() {
    let dev = open_lo();
    let text = b"This is a sample piece of text from CPU";
    let mut src = vec![0u8; 4096];
    src[..text.len()].copy_from_slice(text);
    let mut dst = vec![0u8; 4096];
    // SAFETY: live handles throughout, destroyed once at the end; buffers outlive them.
    unsafe {
        let (sm, dm) = (mmap_over(&mut src, dev), mmap_over(&mut dst, dev));
        let mut inv = std::ptr::null_mut();
        assert_eq!(doca_buf_inventory_create(4, &mut inv), 0);
        assert_eq!(doca_buf_inventory_start(inv), 0);
        let (mut sb, mut db) = (std::ptr::null_mut(), std::ptr::null_mut());
        let sp = src.as_mut_ptr().cast::<c_void>();
        let dp = dst.as_mut_ptr().cast::<c_void>();
        assert_eq!(
            doca_buf_inventory_buf_get_by_data(inv, sm, sp, 4096, &mut sb),
            0
        );
        assert_eq!(
            doca_buf_inventory_buf_get_by_args(inv, dm, dp, 4096, dp, 0, &mut db),
            0
        );

        let mut dma = std::ptr::null_mut();
        assert_eq!(doca_dma_create(dev, &mut dma), 0);
        let ctx = doca_dma_as_ctx(dma);
        let mut h: *mut c_void = std::ptr::null_mut();
        assert_eq!(doca_dma_get_gpu_handle(dma, &mut h), BAD, "not started");
        assert_eq!(doca_ctx_start(ctx), BAD, "no PE connected");
        let mut pe = std::ptr::null_mut();
        assert_eq!(doca_pe_create(&mut pe), 0);
        assert_eq!(doca_pe_connect_ctx(pe, ctx), 0);
        assert_eq!(doca_ctx_start(ctx), BAD, "no task configuration");
        assert_eq!(
            doca_dma_task_memcpy_set_conf(dma, Some(ok_cb), None, 1),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_dma_task_memcpy_set_conf(dma, Some(ok_cb), Some(err_cb), 1),
            0
        );
        assert_eq!(doca_dma_set_ordered_completions(dma, 1), 0);
        assert_eq!(doca_ctx_start(ctx), 0);
        assert_eq!(doca_dma_set_ordered_completions(dma, 0), BAD);
        assert_eq!(doca_dma_get_gpu_handle(dma, &mut h), BAD, "CPU data path");

        let mut t = std::ptr::null_mut();
        assert_eq!(
            doca_dma_task_memcpy_alloc_init(dma, sb, db, DocaData { u64: 99 }, &mut t),
            0
        );
        let mut t2 = std::ptr::null_mut();
        assert_eq!(
            doca_dma_task_memcpy_alloc_init(dma, sb, db, DocaData { u64: 1 }, &mut t2),
            DocaError::NO_MEMORY.0,
            "one task configured"
        );
        assert_eq!(doca_dma_task_memcpy_get_dst(t), db);
        assert_eq!(doca_task_submit(doca_dma_task_memcpy_as_task(t)), 0);
        let end = Instant::now() + Duration::from_secs(10);
        while OK.load(Ordering::SeqCst) == 0 {
            doca_pe_progress(pe);
            assert!(Instant::now() < end, "completion");
        }
        assert_eq!(doca_task_get_status(doca_dma_task_memcpy_as_task(t)), 0);
        assert_eq!(&dst[..4096], &src[..4096]);
        let mut len = 0usize;
        assert_eq!(doca_buf_get_data_len(db, &mut len), 0);
        assert_eq!(len, 4096, "the destination's data grew by the copy");
        // A second copy into the same destination does not fit: the submit fails.
        assert_eq!(
            doca_task_submit(doca_dma_task_memcpy_as_task(t)),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_ctx_stop(ctx), 0);
        assert_eq!(
            doca_dma_destroy(dma),
            DocaError::IN_USE.0,
            "a task is allocated"
        );
        doca_task_free(doca_dma_task_memcpy_as_task(t));
        assert_eq!(doca_dma_destroy(dma), 0);
        assert_eq!(ERR.load(Ordering::SeqCst), 0);
        assert_eq!(doca_buf_dec_refcount(sb, std::ptr::null_mut()), 0);
        assert_eq!(doca_buf_dec_refcount(db, std::ptr::null_mut()), 0);
        assert_eq!(doca_buf_inventory_destroy(inv), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
        assert_eq!(doca_mmap_destroy(sm), 0);
        assert_eq!(doca_mmap_destroy(dm), 0);
        assert_eq!(doca_dev_close(dev), 0);
    }
}

/// A started buffer array of `n` elements of `elem` bytes over a started mmap.
unsafe fn array(m: *mut Mmap, n: usize, elem: usize) -> (*mut BufArr, Vec<GpuBufEntry>) {
    let mut a = std::ptr::null_mut();
    // SAFETY: caller's live mmap.
    unsafe {
        assert_eq!(doca_buf_arr_create(n, &mut a), 0);
        assert_eq!(doca_buf_arr_set_params(a, m, elem, 0), 0);
        assert_eq!(doca_buf_arr_start(a), 0);
        let e = buf_arr_entries(a.cast()).unwrap();
        (a, e)
    }
}

#[test]
fn gpu_datapath_ring_runs_requests_in_order_and_skips_bad_ones() {
    let dev = open_lo();
    const N: usize = 64;
    const ELEM: usize = 256;
    let mut src: Vec<u8> = (0..N * ELEM).map(|i| (i * 13 + 1) as u8).collect();
    let mut dst = vec![0u8; N * ELEM];
    let mut chain = vec![0u8; 2 * ELEM];
    let t = Duration::from_secs(20);
    // SAFETY: live handles throughout, destroyed once at the end; buffers outlive them.
    unsafe {
        let (sm, dm, cm) = (
            mmap_over(&mut src, dev),
            mmap_over(&mut dst, dev),
            mmap_over(&mut chain, dev),
        );
        let (sa, se) = array(sm, N, ELEM);
        let (da, de) = array(dm, N, ELEM);
        let (ca, ce) = array(cm, 2, ELEM);

        let mut dma = std::ptr::null_mut();
        assert_eq!(doca_dma_create(dev, &mut dma), 0);
        dma_set_host_datapath(dma.cast()).unwrap();
        let ctx = doca_dma_as_ctx(dma);
        assert_eq!(doca_ctx_start(ctx), 0, "the GPU data path needs no PE");
        let mut h: *mut c_void = std::ptr::null_mut();
        assert_eq!(doca_dma_get_gpu_handle(dma, &mut h), 0);
        let cpu = CpuDma::new(h).unwrap();

        // Four threads enqueue 16 copies each, one commits.
        std::thread::scope(|s| {
            for k in 0..4 {
                let (cpu, se, de) = (&cpu, &se, &de);
                s.spawn(move || {
                    for i in (k * 16)..(k * 16 + 16) {
                        cpu.memcpy(&se[i], 0, &de[i], 0, ELEM, t).unwrap();
                    }
                });
            }
        });
        cpu.commit();
        cpu.wait_done(N as u64, t).unwrap();
        assert_eq!(dst, src, "every byte");

        // In order: the second request copies what the first one wrote.
        cpu.memcpy(&se[5], 0, &ce[0], 0, ELEM, t).unwrap();
        cpu.memcpy(&ce[0], 0, &ce[1], 0, ELEM, t).unwrap();
        cpu.commit();
        cpu.wait_done(N as u64 + 2, t).unwrap();
        assert_eq!(&chain[ELEM..], &src[5 * ELEM..6 * ELEM]);

        // Bad requests are skipped, counted, and the ring goes on.
        let unknown = GpuBufEntry {
            addr: se[0].addr,
            mkey_be: 0x1234u32.to_be(),
            reserved: 0,
        };
        cpu.memcpy(&unknown, 0, &de[0], 0, 16, t).unwrap();
        cpu.memcpy(&se[N - 1], 0, &de[0], 0, ELEM + 1, t).unwrap();
        cpu.memcpy(&se[0], 0, &de[1], 0, 0, t).unwrap(); // nothing enqueued
        let before = dst.clone();
        cpu.memcpy(&se[2], 0, &de[3], 0, 8, t).unwrap();
        cpu.commit();
        cpu.wait_done(N as u64 + 5, t).unwrap();
        assert_eq!(dma_skipped(dma.cast()).unwrap(), 2);
        assert_eq!(
            &dst[..ELEM],
            &before[..ELEM],
            "the skipped requests wrote nothing"
        );
        assert_eq!(&dst[3 * ELEM..3 * ELEM + 8], &src[2 * ELEM..2 * ELEM + 8]);

        // Past the ring's 1024 descriptors.
        for r in 0..1500usize {
            let i = r % N;
            cpu.memcpy(&de[i], 0, &se[i], 0, ELEM, t).unwrap();
            if r % 100 == 99 {
                cpu.commit();
            }
        }
        cpu.commit();
        cpu.wait_done(N as u64 + 5 + 1500, t).unwrap();
        assert_eq!(dma_skipped(dma.cast()).unwrap(), 2);

        assert_eq!(doca_ctx_stop(ctx), 0);
        assert_eq!(doca_dma_get_gpu_handle(dma, &mut h), BAD);
        assert_eq!(doca_dma_destroy(dma), 0);
        for a in [sa, da, ca] {
            assert_eq!(doca_buf_arr_destroy(a), 0);
        }
        for m in [sm, dm, cm] {
            assert_eq!(doca_mmap_destroy(m), 0);
        }
        assert_eq!(doca_dev_close(dev), 0);
    }
}
