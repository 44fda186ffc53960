//! GPU-initiated RDMA writes and DMA copies from a kernel, against their baselines measured
//! in the same run:
//!
//! - `rdma/write-bw/<size>`: a kernel posting RDMA writes of `size` bytes (8 B to 4 MiB)
//!   from GPU memory to GPU memory, through two `doca_rdma` contexts of this process
//!   connected over `lo` (the soft NIC's proxy executes them with UCX), a block of 256
//!   threads posting batches of 256 with up to the send queue in flight; MB/s = 2^20 B/s
//!   from the launch to the last completion. Baseline `ucx_perftest -t ucp_put_bw -m cuda`
//!   (overall bandwidth, same size) between two processes on loopback. Target: ratio >= 0.8
//!   from 64 KiB on.
//! - `rdma/write-lat/<size>`: one thread, one write in flight: post, commit, wait for its
//!   completion, again; microseconds per write. A completion needs the target's
//!   acknowledgement, so the baseline is a round trip of `ucx_perftest -t ucp_put_lat
//!   -m cuda` (2 x its one-way median). Target: <= 1.5 x baseline + 100 us (the proxy's
//!   longest idle sleep, `DOCA_SOFT_NIC_SLEEP_US`).
//! - `dma/copy-bw/<size>`: a kernel enqueuing GPU->GPU copies of `size` bytes through a
//!   GPU-datapath `doca_dma` (the proxy runs them as CUDA copies on its own stream), an
//!   in-order marker copy watched by the host; MB/s from the launch to the marker.
//!   Baseline: `cudaMemcpyAsync` device-to-device of the same size and count on one
//!   stream. Target: ratio >= 0.8.
//!
//! Without a CUDA driver every figure says skipped; without `ucx_perftest` (or without a
//! UCX built with CUDA) the RDMA figures carry no baseline and say why.

mod support;

use std::time::{Duration, Instant};

use clap::Parser;
use cuda_kernels::{DeviceStatus, ExitFlag, Kernels};
use doca::gpunetio::dma::Dma;
use doca::gpunetio::rdma::{self, GpuBufArr, Local, Rdma, Remote, RemoteMmap};
use doca::gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap};
use support::args::{self, Common};
use support::report::{gpu_present, Figure, Status};

#[derive(Parser, Debug)]
#[command(
    name = "rdma_dma",
    about = "GPU-initiated RDMA writes and DMA copies against ucx_perftest and cudaMemcpyAsync \
             (env UCX_PERFTEST: path of ucx_perftest, default: on PATH)"
)]
struct Cli {
    /// Message sizes in bytes (1 to 4 MiB)
    #[arg(long, value_delimiter = ',')]
    sizes: Option<Vec<usize>>,
    /// MiB moved per size for the bandwidth figures
    #[arg(long)]
    mib: Option<usize>,
    /// Writes of the latency loop
    #[arg(long = "lat-iters")]
    lat_iters: Option<u32>,
    #[command(flatten)]
    common: Common,
}

const DEFAULT_SIZES: &[usize] = &[8, 64, 512, 4096, 65536, 1 << 20, 4 << 20];
const QUICK_SIZES: &[usize] = &[8, 65536, 4 << 20];
const MAX_SIZE: usize = 4 << 20;
/// Writes and copies per batch (and the block's threads).
const BATCH: u32 = 256;
const QUEUE: u32 = 4096;
/// The proxy's longest idle sleep (doca-soft's DOCA_SOFT_NIC_SLEEP_US default).
const PROXY_SLEEP_US: f64 = 100.0;
const MIB: f64 = (1 << 20) as f64;

fn err<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what}: {e}")
}

/// Operations of `size` bytes moving about `bytes` in all (64 to 100000).
fn count_for(size: usize, bytes: usize) -> u32 {
    (bytes / size).clamp(64, 100_000) as u32
}

/// One ucx_perftest run with CUDA memory on both sides: its `Final:` columns.
fn perftest(test: &str, size: usize, iters: u32) -> Result<Vec<f64>, String> {
    let (s, n) = (size.to_string(), iters.to_string());
    support::perftest::run(
        &[],
        &[],
        &["-m", "cuda"],
        &["-t", test, "-m", "cuda", "-s", &s, "-n", &n],
        6,
    )
}

/// Two connected contexts and 4 MiB of GPU memory on each side.
struct RdmaEnv {
    gpu: Gpu,
    dev: Device,
    kernels: Kernels,
    a: Rdma,
    _b: Rdma,
    conn: u32,
    local: GpuBuffer<u8>,
    remote: GpuBuffer<u8>,
}

fn rdma_env() -> Result<RdmaEnv, String> {
    let gpu = Gpu::by_ordinal(0).map_err(err("GPU 0"))?;
    let dev = Device::open("lo").map_err(err("device lo"))?;
    let kernels = Kernels::load(&gpu).map_err(err("kernels"))?;
    let ctx = || {
        Rdma::builder(&dev)
            .permissions(AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE)
            .send_queue_size(QUEUE)
            .recv_queue_size(64)
            .gpu_datapath(&gpu)
            .start()
            .map_err(err("RDMA context"))
    };
    let (a, b) = (ctx()?, ctx()?);
    let (da, ca) = a.export().map_err(err("export"))?;
    let (db, cb) = b.export().map_err(err("export"))?;
    a.connect(&ca, db.as_bytes()).map_err(err("connect"))?;
    b.connect(&cb, da.as_bytes()).map_err(err("connect"))?;
    let mut local = GpuBuffer::<u8>::with_alignment(&gpu, MAX_SIZE, 4096, MemType::Gpu)
        .map_err(err("alloc"))?;
    local
        .copy_from_host(&vec![0x5a; MAX_SIZE])
        .map_err(err("fill"))?;
    let remote = GpuBuffer::<u8>::with_alignment(&gpu, MAX_SIZE, 4096, MemType::Gpu)
        .map_err(err("alloc"))?;
    Ok(RdmaEnv {
        gpu,
        dev,
        kernels,
        a,
        _b: b,
        conn: ca.id(),
        local,
        remote,
    })
}

/// Seconds for `iters` writes of `size` bytes (batch and threads as given).
fn time_writes(
    e: &RdmaEnv,
    size: usize,
    iters: u32,
    batch: u32,
    threads: u32,
) -> Result<f64, String> {
    let perms = AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE;
    let lmap = Mmap::from_gpu_buffer(&e.local, &[&e.dev], perms).map_err(err("mmap"))?;
    let rmap = Mmap::from_gpu_buffer(&e.remote, &[&e.dev], perms).map_err(err("mmap"))?;
    let export = rdma::export_mmap(&rmap, &e.dev).map_err(err("export mmap"))?;
    let rimp = RemoteMmap::from_export(&e.dev, export.as_bytes()).map_err(err("import"))?;
    let larr = GpuBufArr::<Local>::new(&lmap, &e.gpu, 1, size).map_err(err("buf arr"))?;
    let rarr = GpuBufArr::<Remote>::new(&rimp, &e.gpu, 1, size).map_err(err("buf arr"))?;
    let exit = ExitFlag::new(&e.gpu).map_err(err("exit flag"))?;
    let status = DeviceStatus::new(&e.gpu).map_err(err("status"))?;
    let h = e.a.gpu_handle().map_err(err("handle"))?;
    let rh = rarr.gpu_handle().map_err(err("handle"))?;
    let lh = larr.gpu_handle().map_err(err("handle"))?;
    let t0 = Instant::now();
    e.kernels.scope(|s| -> Result<(), String> {
        let k = s
            .launch_rdma_bench_write(
                h,
                e.conn,
                rh,
                lh,
                size as u64,
                iters,
                batch,
                threads,
                &exit,
                &status,
            )
            .map_err(err("launch"))?;
        k.stop().map_err(err("kernel"))
    })?;
    let dt = t0.elapsed().as_secs_f64();
    match status.first_error() {
        0 => Ok(dt),
        c => Err(format!("a write failed with DOCA error {c}")),
    }
}

fn rdma_figures(sizes: &[usize], mib: usize, lat_iters: u32) {
    let env = match rdma_env() {
        Ok(e) => e,
        Err(why) => {
            for &s in sizes {
                Figure::skipped(format!("rdma/write-bw/{s}"), None, why.clone()).emit();
                Figure::skipped(format!("rdma/write-lat/{s}"), None, why.clone()).emit();
            }
            return;
        }
    };
    for &size in sizes {
        let iters = count_for(size, mib << 20);
        let name = format!("rdma/write-bw/{size}");
        // Warm-up: registrations, the peer's key cache, clocks.
        let _ = time_writes(&env, size, iters.min(256), BATCH, BATCH);
        match time_writes(&env, size, iters, BATCH, BATCH) {
            Err(why) => Figure::skipped(&name, None, why).emit(),
            Ok(dt) => {
                let bw = size as f64 * f64::from(iters) / dt / MIB;
                let notes = format!("{iters} writes, batches of {BATCH} by {BATCH} threads, queue {QUEUE}, GPU->GPU over lo");
                let mut f = Figure::info(&name, bw, "MB/s", notes);
                match perftest("ucp_put_bw", size, iters) {
                    Ok(c) => {
                        f = f.with_baseline(format!("ucx/perftest-put-bw-cuda/{size}"), c[5]);
                        if size >= 65536 {
                            let ok = f.ratio().is_some_and(|r| r >= 0.8);
                            f = f.with_target("ratio >= 0.8", Status::check(ok));
                        }
                    }
                    Err(why) => f.notes.push_str(&format!("; no baseline: {why}")),
                }
                f.emit();
            }
        }
        let name = format!("rdma/write-lat/{size}");
        match time_writes(&env, size, lat_iters, 1, 1) {
            Err(why) => Figure::skipped(&name, None, why).emit(),
            Ok(dt) => {
                let us = dt * 1e6 / f64::from(lat_iters);
                let notes = format!("{lat_iters} writes, one in flight, launch included");
                let mut f = Figure::info(&name, us, "us", notes);
                match perftest("ucp_put_lat", size, lat_iters) {
                    Ok(c) => {
                        let rt = 2.0 * c[1];
                        f = f.with_baseline(format!("ucx/perftest-put-lat-cuda-rt/{size}"), rt);
                        let ok = us <= 1.5 * rt + PROXY_SLEEP_US;
                        f = f.with_target("<= 1.5 x baseline + 100 us", Status::check(ok));
                    }
                    Err(why) => f.notes.push_str(&format!("; no baseline: {why}")),
                }
                f.emit();
            }
        }
    }
}

/// Seconds from the launch of `iters` DMA copies of `size` bytes to their marker. `bufs`:
/// source, destination, marker source (0xa5 bytes), marker destination (CPU-visible).
fn time_copies(
    gpu: &Gpu,
    dev: &Device,
    kernels: &Kernels,
    bufs: &mut [GpuBuffer<u8>; 4],
    size: usize,
    iters: u32,
) -> Result<f64, String> {
    bufs[3]
        .copy_from_host(&[0; 8])
        .map_err(err("clear marker"))?;
    let bufs = &*bufs;
    let rw = AccessFlags::LOCAL_READ_WRITE;
    let map = |b: &GpuBuffer<u8>| Mmap::from_gpu_buffer(b, &[dev], rw).map_err(err("mmap"));
    let maps = [
        map(&bufs[0])?,
        map(&bufs[1])?,
        map(&bufs[2])?,
        map(&bufs[3])?,
    ];
    let arr = |m: &Mmap, n: usize| GpuBufArr::<Local>::new(m, gpu, 1, n).map_err(err("buf arr"));
    let arrs = [
        arr(&maps[0], size)?,
        arr(&maps[1], size)?,
        arr(&maps[2], 8)?,
        arr(&maps[3], 8)?,
    ];
    let dma = Dma::gpu(dev, gpu).map_err(err("DMA context"))?;
    let exit = ExitFlag::new(gpu).map_err(err("exit flag"))?;
    let status = DeviceStatus::new(gpu).map_err(err("status"))?;
    let h = dma.gpu_handle().map_err(err("handle"))?;
    let hs: Vec<_> = arrs
        .iter()
        .map(|a| a.gpu_handle().map_err(err("handle")))
        .collect::<Result<_, _>>()?;
    let t0 = Instant::now();
    kernels.scope(|s| -> Result<(), String> {
        let k = s
            .launch_dma_bench_copy(
                h,
                hs[0],
                hs[1],
                size as u64,
                iters,
                BATCH,
                BATCH,
                (hs[2], hs[3]),
                &exit,
                &status,
            )
            .map_err(err("launch"))?;
        k.stop().map_err(err("kernel"))
    })?;
    while bufs[3].read(0) != Some(0xa5) {
        if t0.elapsed() > Duration::from_secs(60) {
            return Err("the marker copy never arrived".into());
        }
        std::hint::spin_loop();
    }
    let dt = t0.elapsed().as_secs_f64();
    match status.first_error() {
        0 => Ok(dt),
        c => Err(format!("a copy failed with DOCA error {c}")),
    }
}

/// Seconds for `iters` device-to-device `cudaMemcpyAsync` of `size` bytes on one stream.
fn time_memcpy_async(gpu: &Gpu, size: usize, iters: u32) -> Result<f64, String> {
    let s = gpu.cuda().new_stream().map_err(err("stream"))?;
    let src = s.alloc_zeros::<u8>(size).map_err(err("alloc"))?;
    let mut dst = s.alloc_zeros::<u8>(size).map_err(err("alloc"))?;
    s.memcpy_dtod(&src, &mut dst).map_err(err("copy"))?;
    s.synchronize().map_err(err("sync"))?;
    let t0 = Instant::now();
    for _ in 0..iters {
        s.memcpy_dtod(&src, &mut dst).map_err(err("copy"))?;
    }
    s.synchronize().map_err(err("sync"))?;
    Ok(t0.elapsed().as_secs_f64())
}

/// The GPU, device, kernels and the buffers of [`time_copies`].
type DmaEnv = (Gpu, Device, Kernels, [GpuBuffer<u8>; 4]);

fn dma_figures(sizes: &[usize], mib: usize) {
    let setup = || -> Result<DmaEnv, String> {
        let gpu = Gpu::by_ordinal(0).map_err(err("GPU 0"))?;
        let dev = Device::open("lo").map_err(err("device lo"))?;
        let kernels = Kernels::load(&gpu).map_err(err("kernels"))?;
        let buf = |n: usize, mem: MemType, v: u8| -> Result<GpuBuffer<u8>, String> {
            let mut b =
                GpuBuffer::<u8>::with_alignment(&gpu, n, 4096, mem).map_err(err("alloc"))?;
            b.copy_from_host(&vec![v; n]).map_err(err("fill"))?;
            Ok(b)
        };
        let bufs = [
            buf(MAX_SIZE, MemType::Gpu, 0x3c)?,
            buf(MAX_SIZE, MemType::Gpu, 0)?,
            buf(8, MemType::Gpu, 0xa5)?,
            buf(8, MemType::CpuGpu, 0)?,
        ];
        Ok((gpu, dev, kernels, bufs))
    };
    let (gpu, dev, kernels, mut bufs) = match setup() {
        Ok(x) => x,
        Err(why) => {
            for &s in sizes {
                Figure::skipped(format!("dma/copy-bw/{s}"), None, why.clone()).emit();
            }
            return;
        }
    };
    for &size in sizes {
        let iters = count_for(size, mib << 20);
        let name = format!("dma/copy-bw/{size}");
        let _ = time_copies(&gpu, &dev, &kernels, &mut bufs, size, iters.min(256));
        let ours = time_copies(&gpu, &dev, &kernels, &mut bufs, size, iters);
        let base = time_memcpy_async(&gpu, size, iters);
        match (ours, base) {
            (Err(why), _) => Figure::skipped(&name, Some("ratio >= 0.8"), why).emit(),
            (Ok(dt), base) => {
                let bw = size as f64 * f64::from(iters) / dt / MIB;
                let notes =
                    format!("{iters} copies GPU->GPU, batches of {BATCH}, to the marker's arrival");
                let mut f = Figure::info(&name, bw, "MB/s", notes);
                match base {
                    Ok(bt) => {
                        let b = size as f64 * f64::from(iters) / bt / MIB;
                        f = f.with_baseline(format!("cuda/memcpy-async-d2d/{size}"), b);
                        let ok = f.ratio().is_some_and(|r| r >= 0.8);
                        f = f.with_target("ratio >= 0.8", Status::check(ok));
                    }
                    Err(why) => f.notes.push_str(&format!("; no baseline: {why}")),
                }
                f.emit();
            }
        }
    }
}

fn main() {
    let a: Cli = args::parse();
    let c = &a.common;
    let sizes = a
        .sizes
        .clone()
        .unwrap_or_else(|| c.pick(QUICK_SIZES, DEFAULT_SIZES).to_vec());
    if let Some(&s) = sizes.iter().find(|&&s| s == 0 || s > MAX_SIZE) {
        eprintln!("--sizes: {s} is outside 1..={MAX_SIZE}");
        std::process::exit(2);
    }
    let mib = a.mib.unwrap_or(c.pick(16, 512));
    let lat_iters = a.lat_iters.unwrap_or(c.pick(100, 2000));
    if !gpu_present() {
        let why = support::report::no_gpu_reason();
        for &s in &sizes {
            for f in ["rdma/write-bw", "rdma/write-lat", "dma/copy-bw"] {
                Figure::skipped(format!("{f}/{s}"), None, why.clone()).emit();
            }
        }
        return;
    }
    rdma_figures(&sizes, mib, lat_iters);
    dma_figures(&sizes, mib);
}
