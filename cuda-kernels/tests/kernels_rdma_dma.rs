//! The RDMA and DMA sample kernels (`kernels/rdma_client_server_write.cu`,
//! `kernels/dma_memcpy.cu`):
//! - CI: both are in the embedded fatbin;
//! - GPU: they load; the client/server exchange of `gpunetio_rdma_client_server_write`
//!   between two `doca_rdma` contexts of one process over `lo` (both kernels running at
//!   once on one GPU), every byte of the server's buffers checked in GPU memory, with the
//!   immediates and connection indices the server kernel saw and the client's commits;
//!   GPU-initiated DMA copies GPU->GPU, GPU->host and host->GPU by 32 threads at once,
//!   every byte checked, and a copy beyond its registration refused without touching the
//!   destination; the bench kernels move every byte (write queue wrapping, copies behind
//!   their in-order marker); a write beyond the peer's registration ends the kernel with
//!   IO_FAILED from wait_all, nothing written.
//!
//! GPU tests skip with a printed reason without a CUDA driver.

use cuda_kernels::{
    DeviceStatus, ExitFlag, Kernels, RdmaCsReport, RDMA_CS_BUFS as BUFS, RDMA_CS_HALF as HALF,
};
use doca_gpunetio::dma::Dma;
use doca_gpunetio::rdma::{self, GpuBufArr, Local, Rdma, Remote, RemoteMmap};
use doca_gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap};
use doca_test_support::require_cuda;
use std::time::{Duration, Instant};

const KERNELS: &[&str] = &[
    "doca_rs_rdma_cs_server",
    "doca_rs_rdma_cs_client",
    "doca_rs_dma_memcpy",
    "doca_rs_rdma_bench_write",
    "doca_rs_dma_bench_copy",
];

/// How long a copy or a kernel may take before the test fails instead of hanging.
const LIMIT: Duration = Duration::from_secs(20);

#[test]
fn fatbin_names_the_rdma_and_dma_kernels() {
    let text = String::from_utf8_lossy(cuda_kernels::FATBIN);
    for k in KERNELS {
        assert!(text.contains(k), "{k} missing from the fatbin");
    }
}

fn gpu() -> Option<Gpu> {
    require_cuda("RDMA/DMA kernels on a GPU")
        .then(|| Gpu::by_ordinal(0).expect("CUDA driver present but GPU 0 did not open"))
}

#[test]
fn gpu_rdma_and_dma_kernels_load_and_reports_start_clear() {
    let Some(gpu) = gpu() else { return };
    let k = Kernels::load(&gpu).unwrap();
    for name in KERNELS {
        k.function(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let r = RdmaCsReport::new(&gpu).unwrap();
    assert_eq!((r.first_error(), r.commits()), (0, 0));
    assert!(r.rounds().iter().all(|x| *x == Default::default()));
    assert_eq!(DeviceStatus::new(&gpu).unwrap().first_error(), 0);
}

fn filled(gpu: &Gpu, len: usize, mem: MemType, f: impl Fn(usize) -> u8) -> GpuBuffer<u8> {
    let mut b = GpuBuffer::<u8>::with_alignment(gpu, len, 4096, mem).unwrap();
    let bytes: Vec<u8> = (0..len).map(f).collect();
    b.copy_from_host(&bytes).unwrap();
    b
}

fn bytes_of(b: &GpuBuffer<u8>) -> Vec<u8> {
    let mut v = vec![0u8; b.len()];
    b.copy_to_host(&mut v).unwrap();
    v
}

/// Two RDMA contexts on `dev`, connected to each other, with their connections.
fn connected_pair(dev: &Device, gpu: &Gpu) -> (Rdma, rdma::Connection, Rdma, rdma::Connection) {
    let (a, b) = (rdma_ctx(dev, gpu), rdma_ctx(dev, gpu));
    let (da, ca) = a.export().unwrap();
    let (db, cb) = b.export().unwrap();
    a.connect(&ca, db.as_bytes()).unwrap();
    b.connect(&cb, da.as_bytes()).unwrap();
    (a, ca, b, cb)
}

fn rdma_ctx(dev: &Device, gpu: &Gpu) -> Rdma {
    Rdma::builder(dev)
        .permissions(AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE)
        .send_queue_size(256)
        .recv_queue_size(256)
        .gpu_datapath(gpu)
        .start()
        .unwrap()
}

#[test]
fn gpu_rdma_client_server_exchange_between_two_contexts_over_lo() {
    let Some(gpu) = gpu() else { return };
    let kernels = Kernels::load(&gpu).unwrap();
    let dev = Device::open("lo").unwrap();
    let perms = AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE;
    let (srv, cs, cli, cc) = connected_pair(&dev, &gpu);
    let (sconn, cconn) = (cs.id(), cc.id());

    // Server: A in plain device memory (no CPU mapping), 0x01 as the sample's memset.
    let a = filled(&gpu, BUFS * 2 * HALF, MemType::Gpu, |_| 1);
    let a_map = Mmap::from_gpu_buffer(&a, &[&dev], perms).unwrap();
    // Client: B (0x02), C (0x03), the flags F (zeroed, device memory).
    let b = filled(&gpu, BUFS * HALF, MemType::GpuCpu, |_| 2);
    let c = filled(&gpu, BUFS * HALF, MemType::GpuCpu, |_| 3);
    let f = filled(&gpu, BUFS, MemType::Gpu, |_| 0);
    let map = |x: &GpuBuffer<u8>| Mmap::from_gpu_buffer(x, &[&dev], perms).unwrap();
    let (b_map, c_map, f_map) = (map(&b), map(&c), map(&f));
    // The exports cross as the sample moves them over TCP.
    let a_remote =
        RemoteMmap::from_export(&dev, rdma::export_mmap(&a_map, &dev).unwrap().as_bytes()).unwrap();
    let f_remote =
        RemoteMmap::from_export(&dev, rdma::export_mmap(&f_map, &dev).unwrap().as_bytes()).unwrap();
    let a_arr = GpuBufArr::<Local>::new(&a_map, &gpu, BUFS, 2 * HALF).unwrap();
    let f_arr_remote = GpuBufArr::<Remote>::new(&f_remote, &gpu, 1, BUFS).unwrap();
    let b_arr = GpuBufArr::<Local>::new(&b_map, &gpu, BUFS, HALF).unwrap();
    let c_arr = GpuBufArr::<Local>::new(&c_map, &gpu, BUFS, HALF).unwrap();
    let f_arr = GpuBufArr::<Local>::new(&f_map, &gpu, 1, BUFS).unwrap();
    let a_arr_remote = GpuBufArr::<Remote>::new(&a_remote, &gpu, BUFS, 2 * HALF).unwrap();

    let (sexit, cexit) = (ExitFlag::new(&gpu).unwrap(), ExitFlag::new(&gpu).unwrap());
    let (srep, crep) = (
        RdmaCsReport::new(&gpu).unwrap(),
        RdmaCsReport::new(&gpu).unwrap(),
    );
    let (sh, ch) = (srv.gpu_handle().unwrap(), cli.gpu_handle().unwrap());
    let (ah, fh) = (
        a_arr.gpu_handle().unwrap(),
        f_arr_remote.gpu_handle().unwrap(),
    );
    let (arh, bh, chh, flh) = (
        a_arr_remote.gpu_handle().unwrap(),
        b_arr.gpu_handle().unwrap(),
        c_arr.gpu_handle().unwrap(),
        f_arr.gpu_handle().unwrap(),
    );
    kernels.scope(|s| {
        let server = s
            .launch_rdma_cs_server(sh, sconn, ah, fh, &sexit, &srep)
            .unwrap();
        let client = s
            .launch_rdma_cs_client(ch, cconn, arh, bh, chh, flh, &cexit, &crep)
            .unwrap();
        let t0 = Instant::now();
        while !server.is_finished() {
            assert!(
                t0.elapsed() < LIMIT,
                "the server kernel did not finish: report {:?}",
                srep.rounds()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        server.stop().unwrap();
        client.stop().unwrap();
    });

    assert_eq!(srep.first_error(), 0, "server device calls");
    assert_eq!(crep.first_error(), 0, "client device calls");
    assert_eq!(crep.commits(), BUFS as u32, "client commits completed");
    for (i, r) in srep.rounds().iter().enumerate() {
        let mut imm = r.imm;
        imm.sort_unstable();
        assert_eq!(r.ops, 2, "buffer {i}: {r:?}");
        assert_eq!(imm, [i as u32, i as u32 + 1], "buffer {i}: {r:?}");
        assert_eq!(r.conn, [sconn, sconn], "buffer {i}: {r:?}");
    }
    let got = bytes_of(&a);
    for i in 0..BUFS {
        let e = &got[i * 2 * HALF..(i + 1) * 2 * HALF];
        let (lo, hi) = e.split_at(HALF);
        let all = |s: &[u8], v: u8| s.iter().all(|&x| x == v);
        if i % 2 == 0 {
            assert!(all(lo, 2) && all(hi, 3), "written buffer {i}: {e:x?}");
        } else {
            // Sends land in the receives in arrival order.
            assert!(
                (all(lo, 2) && all(hi, 3)) || (all(lo, 3) && all(hi, 2)),
                "sent buffer {i}: {e:x?}"
            );
        }
    }
    assert_eq!(
        bytes_of(&f),
        vec![1; BUFS],
        "the server's flags at the client"
    );
}

/// Runs the DMA kernel with `threads` threads copying `len` bytes each between arrays of
/// `threads` buffers of `elem` bytes; waits for `dst` to equal `src` when `expect_copy`.
#[allow(clippy::too_many_arguments)]
fn dma_run(
    kernels: &Kernels,
    dev: &Device,
    gpu: &Gpu,
    src: &GpuBuffer<u8>,
    dst: &GpuBuffer<u8>,
    threads: u32,
    elem: usize,
    len: u64,
    expect_copy: bool,
) -> u32 {
    let rw = AccessFlags::LOCAL_READ_WRITE;
    let (sm, dm) = (
        Mmap::from_gpu_buffer(src, &[dev], rw).unwrap(),
        Mmap::from_gpu_buffer(dst, &[dev], rw).unwrap(),
    );
    let n = threads as usize;
    let sa = GpuBufArr::<Local>::new(&sm, gpu, n, elem).unwrap();
    let da = GpuBufArr::<Local>::new(&dm, gpu, n, elem).unwrap();
    let dma = Dma::gpu(dev, gpu).unwrap();
    let exit = ExitFlag::new(gpu).unwrap();
    let status = DeviceStatus::new(gpu).unwrap();
    let (h, sh, dh) = (
        dma.gpu_handle().unwrap(),
        sa.gpu_handle().unwrap(),
        da.gpu_handle().unwrap(),
    );
    kernels.scope(|s| {
        s.launch_dma_memcpy(None, h, sh, dh, len, threads, &exit, &status)
            .unwrap()
            .stop()
            .unwrap();
    });
    // No device-side completion: wait for the destination, as the sample does.
    let want = bytes_of(src);
    let t0 = Instant::now();
    while expect_copy && bytes_of(dst) != want && t0.elapsed() < LIMIT {
        std::thread::sleep(Duration::from_millis(1));
    }
    // The context stops (and its proxy drains) before the check below.
    drop(dma);
    status.first_error()
}

#[test]
fn gpu_dma_copies_between_gpu_and_host_memory_every_byte() {
    let Some(gpu) = gpu() else { return };
    let kernels = Kernels::load(&gpu).unwrap();
    let dev = Device::open("lo").unwrap();
    const T: u32 = 32;
    const ELEM: usize = 4096;
    let len = T as usize * ELEM;
    for (sm, dm) in [
        (MemType::Gpu, MemType::Gpu),
        (MemType::Gpu, MemType::CpuGpu),
        (MemType::CpuGpu, MemType::Gpu),
    ] {
        let src = filled(&gpu, len, sm, |i| (i * 7 + i / ELEM) as u8 | 1);
        let dst = filled(&gpu, len, dm, |_| 0);
        let err = dma_run(&kernels, &dev, &gpu, &src, &dst, T, ELEM, ELEM as u64, true);
        assert_eq!(err, 0, "{sm:?} -> {dm:?}: device calls");
        assert_eq!(
            bytes_of(&dst),
            bytes_of(&src),
            "{sm:?} -> {dm:?}: every byte"
        );
    }
}

#[test]
fn gpu_dma_copy_beyond_its_registration_is_refused() {
    let Some(gpu) = gpu() else { return };
    let kernels = Kernels::load(&gpu).unwrap();
    let dev = Device::open("lo").unwrap();
    let src = filled(&gpu, 4096, MemType::Gpu, |_| 0x5a);
    let dst = filled(&gpu, 4096, MemType::Gpu, |_| 0);
    // One buffer of 4096 bytes, a copy of 8192: the proxy skips it.
    let err = dma_run(&kernels, &dev, &gpu, &src, &dst, 1, 4096, 8192, false);
    assert_eq!(err, 0, "the device call only enqueues");
    assert_eq!(bytes_of(&dst), vec![0; 4096], "nothing copied");
}

#[test]
fn gpu_rdma_bench_write_moves_every_byte_and_completes() {
    let Some(gpu) = gpu() else { return };
    let kernels = Kernels::load(&gpu).unwrap();
    let dev = Device::open("lo").unwrap();
    let perms = AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE;
    let (a, ca, _b, _cb) = connected_pair(&dev, &gpu);
    const SIZE: usize = 64 * 1024;
    let local = filled(&gpu, SIZE, MemType::Gpu, |i| (i % 251) as u8 + 1);
    let remote = filled(&gpu, SIZE, MemType::Gpu, |_| 0);
    let lmap = Mmap::from_gpu_buffer(&local, &[&dev], perms).unwrap();
    let rmap = Mmap::from_gpu_buffer(&remote, &[&dev], perms).unwrap();
    let rimp =
        RemoteMmap::from_export(&dev, rdma::export_mmap(&rmap, &dev).unwrap().as_bytes()).unwrap();
    let larr = GpuBufArr::<Local>::new(&lmap, &gpu, 1, SIZE).unwrap();
    let rarr = GpuBufArr::<Remote>::new(&rimp, &gpu, 1, SIZE).unwrap();
    let exit = ExitFlag::new(&gpu).unwrap();
    let status = DeviceStatus::new(&gpu).unwrap();
    let (h, rh, lh) = (
        a.gpu_handle().unwrap(),
        rarr.gpu_handle().unwrap(),
        larr.gpu_handle().unwrap(),
    );
    // Batches of 16 over a queue of 256: the queue wraps several times.
    kernels.scope(|s| {
        s.launch_rdma_bench_write(
            h,
            ca.id(),
            rh,
            lh,
            SIZE as u64,
            1000,
            16,
            32,
            &exit,
            &status,
        )
        .unwrap()
        .stop()
        .unwrap();
    });
    assert_eq!(status.first_error(), 0, "device calls");
    assert_eq!(bytes_of(&remote), bytes_of(&local), "every byte written");
}

#[test]
fn gpu_dma_bench_copy_completes_in_order_behind_its_marker() {
    let Some(gpu) = gpu() else { return };
    let kernels = Kernels::load(&gpu).unwrap();
    let dev = Device::open("lo").unwrap();
    let rw = AccessFlags::LOCAL_READ_WRITE;
    const SIZE: usize = 1 << 20;
    let src = filled(&gpu, SIZE, MemType::Gpu, |i| (i % 253) as u8 + 1);
    let dst = filled(&gpu, SIZE, MemType::Gpu, |_| 0);
    let msrc = filled(&gpu, 8, MemType::Gpu, |_| 0xa5);
    let mdst = filled(&gpu, 8, MemType::CpuGpu, |_| 0);
    let map = |b: &GpuBuffer<u8>| Mmap::from_gpu_buffer(b, &[&dev], rw).unwrap();
    let (sm, dm, msm, mdm) = (map(&src), map(&dst), map(&msrc), map(&mdst));
    let arr = |m: &Mmap, n| GpuBufArr::<Local>::new(m, &gpu, 1, n).unwrap();
    let (sa, da, msa, mda) = (arr(&sm, SIZE), arr(&dm, SIZE), arr(&msm, 8), arr(&mdm, 8));
    let dma = Dma::gpu(&dev, &gpu).unwrap();
    let exit = ExitFlag::new(&gpu).unwrap();
    let status = DeviceStatus::new(&gpu).unwrap();
    let h = dma.gpu_handle().unwrap();
    let hs = (
        sa.gpu_handle().unwrap(),
        da.gpu_handle().unwrap(),
        msa.gpu_handle().unwrap(),
        mda.gpu_handle().unwrap(),
    );
    // 600 copies in batches of 100 by 32 threads: more than half the request ring.
    kernels.scope(|s| {
        s.launch_dma_bench_copy(
            h,
            hs.0,
            hs.1,
            SIZE as u64,
            600,
            100,
            32,
            (hs.2, hs.3),
            &exit,
            &status,
        )
        .unwrap()
        .stop()
        .unwrap();
    });
    let t0 = Instant::now();
    while mdst.read(0) != Some(0xa5) {
        assert!(t0.elapsed() < LIMIT, "the marker never arrived");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(status.first_error(), 0, "device calls");
    assert_eq!(
        bytes_of(&dst),
        bytes_of(&src),
        "every byte before the marker"
    );
}

#[test]
fn gpu_rdma_write_beyond_the_remote_registration_completes_in_error() {
    let Some(gpu) = gpu() else { return };
    let kernels = Kernels::load(&gpu).unwrap();
    let dev = Device::open("lo").unwrap();
    let perms = AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE;
    let (a, ca, _b, _cb) = connected_pair(&dev, &gpu);
    // The peer registered 4 KiB; the kernel writes 8 KiB into it.
    let local = filled(&gpu, 8192, MemType::Gpu, |_| 0x77);
    let remote = filled(&gpu, 4096, MemType::Gpu, |_| 0);
    let lmap = Mmap::from_gpu_buffer(&local, &[&dev], perms).unwrap();
    let rmap = Mmap::from_gpu_buffer(&remote, &[&dev], perms).unwrap();
    let rimp =
        RemoteMmap::from_export(&dev, rdma::export_mmap(&rmap, &dev).unwrap().as_bytes()).unwrap();
    let larr = GpuBufArr::<Local>::new(&lmap, &gpu, 1, 8192).unwrap();
    let rarr = GpuBufArr::<Remote>::new(&rimp, &gpu, 1, 4096).unwrap();
    let exit = ExitFlag::new(&gpu).unwrap();
    let status = DeviceStatus::new(&gpu).unwrap();
    let (h, rh, lh) = (
        a.gpu_handle().unwrap(),
        rarr.gpu_handle().unwrap(),
        larr.gpu_handle().unwrap(),
    );
    kernels.scope(|s| {
        // The kernel returns (no hang) once the error completion is seen.
        s.launch_rdma_bench_write(h, ca.id(), rh, lh, 8192, 4, 4, 4, &exit, &status)
            .unwrap()
            .stop()
            .unwrap();
    });
    assert_eq!(
        status.first_error(),
        doca_gpunetio::DocaError::IO_FAILED.raw().0,
        "wait_all reports the error completion"
    );
    assert_eq!(
        bytes_of(&remote),
        vec![0; 4096],
        "nothing written past the check"
    );
}
