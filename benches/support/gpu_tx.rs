//! The soft NIC's TX path from GPU memory (figure 3, on a machine with an NVIDIA GPU):
//! `doca_eth_txq` queues with the datapath on the GPU sending on the `lo` port, frames
//! prebuilt in GPU memory (registered through an mmap), sent by `kernels/bench_tx.cu` (one
//! block per queue, device API thread-scope send), and verified by `recvmmsg` receivers
//! (sequence numbers).

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use doca_soft::testing::capi::doca_ctx::{
    doca_ctx_set_datapath_on_gpu, doca_ctx_start, doca_ctx_stop,
};
use doca_soft::testing::capi::doca_dev::Dev;
use doca_soft::testing::capi::doca_eth_txq::{
    doca_eth_txq_apply_queue_id, doca_eth_txq_as_doca_ctx, doca_eth_txq_create,
    doca_eth_txq_destroy, doca_eth_txq_set_wait_on_time_offload, EthTxq,
};
use doca_soft::testing::capi::doca_eth_txq_gpu_data_path::{
    doca_eth_txq_get_gpu_handle, doca_eth_txq_gpu_set_completion_on_gpu,
};
use doca_soft::testing::capi::doca_gpunetio::{doca_gpu_mem_alloc, doca_gpu_mem_free};
use doca_soft::testing::capi::doca_mmap::{
    doca_mmap_add_dev, doca_mmap_create, doca_mmap_destroy, doca_mmap_get_mkey,
    doca_mmap_set_memrange, doca_mmap_start, doca_mmap_stop, Mmap,
};
use doca_soft::testing::capi::doca_types::GPU_MEM_TYPE_GPU;

use super::gpu_rx::{check, kernels_dir, BenchDev, GpuEnv};
use super::soft::{slot_size, Mode};
use super::udp::{self, SeqTracker, UdpRun};

/// Descriptors per TX queue.
const TX_BURST: u32 = 1024;
/// Threads per block of the send kernel.
const THREADS: u32 = 256;

/// One TX queue with its frames in GPU memory (freed with the queue).
pub struct GpuTxQueue {
    /// The queue.
    pub q: *mut EthTxq,
    /// GPU address of the frames.
    pub mem: *mut c_void,
    mmap: *mut Mmap,
    /// The GPU handle (`doca_eth_txq_get_gpu_handle`).
    pub handle: u64,
    /// mkey of the frames (big-endian, as the send API takes it).
    pub mkey_be: u32,
    started: bool,
    gpu: *mut doca_soft::testing::capi::doca_gpunetio::Gpu,
}

impl GpuTxQueue {
    /// Queue `id` on `dev` over a copy of `frames` in GPU memory; `wait_on_time` enables
    /// wait-on-time offload.
    pub fn new(
        env: &GpuEnv,
        dev: *mut Dev,
        id: u16,
        frames: &[u8],
        wait_on_time: bool,
    ) -> Result<GpuTxQueue, String> {
        let mut g = GpuTxQueue {
            gpu: env.gpu(),
            q: null_mut(),
            mem: null_mut(),
            mmap: null_mut(),
            handle: 0,
            mkey_be: 0,
            started: false,
        };
        let mut cpu = null_mut();
        let mut mkey = 0u32;
        // SAFETY: live GPU and device; valid out-pointers; the copy stays inside the
        // allocation. Partial setups are undone by Drop.
        unsafe {
            check(
                "doca_gpu_mem_alloc",
                doca_gpu_mem_alloc(
                    env.gpu(),
                    frames.len(),
                    65536,
                    GPU_MEM_TYPE_GPU,
                    &mut g.mem,
                    &mut cpu,
                ),
            )?;
            doca_soft::testing::GpuView::new(env.gpu())
                .ok_or("no GPU handle")?
                .copy_to_device(g.mem as u64, frames)
                .map_err(|e| format!("copying frames to the GPU: {e:?}"))?;
            check("doca_mmap_create", doca_mmap_create(&mut g.mmap))?;
            check("doca_mmap_add_dev", doca_mmap_add_dev(g.mmap, dev))?;
            check(
                "doca_mmap_set_memrange",
                doca_mmap_set_memrange(g.mmap, g.mem, frames.len()),
            )?;
            check("doca_mmap_start", doca_mmap_start(g.mmap))?;
            check(
                "doca_mmap_get_mkey",
                doca_mmap_get_mkey(g.mmap, dev, &mut mkey),
            )?;
            g.mkey_be = mkey.to_be();
            check(
                "doca_eth_txq_create",
                doca_eth_txq_create(dev, TX_BURST, &mut g.q),
            )?;
            check(
                "doca_eth_txq_gpu_set_completion_on_gpu",
                doca_eth_txq_gpu_set_completion_on_gpu(g.q),
            )?;
            if wait_on_time {
                check(
                    "doca_eth_txq_set_wait_on_time_offload",
                    doca_eth_txq_set_wait_on_time_offload(g.q),
                )?;
            }
            let c = doca_eth_txq_as_doca_ctx(g.q);
            check(
                "set_datapath_on_gpu",
                doca_ctx_set_datapath_on_gpu(c, env.gpu().cast()),
            )?;
            check("doca_ctx_start", doca_ctx_start(c))?;
            g.started = true;
            check(
                "doca_eth_txq_apply_queue_id",
                doca_eth_txq_apply_queue_id(g.q, id),
            )?;
            let mut h = null_mut();
            check(
                "doca_eth_txq_get_gpu_handle",
                doca_eth_txq_get_gpu_handle(g.q, &mut h),
            )?;
            g.handle = h as u64;
        }
        Ok(g)
    }
}

impl Drop for GpuTxQueue {
    fn drop(&mut self) {
        // SAFETY: objects created in `new` (null when not reached), destroyed in reverse
        // order; the send kernel has finished.
        unsafe {
            if !self.q.is_null() {
                if self.started {
                    doca_ctx_stop(doca_eth_txq_as_doca_ctx(self.q));
                }
                doca_eth_txq_destroy(self.q);
            }
            if !self.mmap.is_null() {
                doca_mmap_stop(self.mmap);
                doca_mmap_destroy(self.mmap);
            }
            if !self.mem.is_null() {
                doca_gpu_mem_free(self.gpu, self.mem);
            }
        }
    }
}

/// `queues` GPU send kernels blocks -> TX rings -> proxies -> `lo`, `frames` each, verified
/// by `recvmmsg` receivers; paced to `rate_pps` in total (0 = unpaced). `send_secs` is from
/// the kernel launch to the last frame received.
pub fn run_gpu_tx(
    env: &GpuEnv,
    queues: usize,
    size: usize,
    frames: u64,
    rate_pps: f64,
) -> Result<UdpRun, String> {
    let fatbin = kernels_dir().join("bench_tx.fatbin");
    if !fatbin.exists() {
        return Err(format!("needs {} (scripts/bench build)", fatbin.display()));
    }
    let module = env
        .ctx()
        .load_module(Ptx::from_file(&fatbin))
        .map_err(|e| format!("loading {}: {e:?}", fatbin.display()))?;
    let dev = BenchDev::new(Mode::Lo, "");
    let slot = slot_size(size) as usize;
    let mut qs: Vec<GpuTxQueue> = Vec::new();
    let result = (|| {
        for q in 0..queues {
            let mut buf = vec![0u8; frames as usize * slot];
            for (seq, f) in buf.chunks_mut(slot).enumerate() {
                udp::build_frame(
                    &mut f[..size],
                    40000 + q as u16,
                    udp::BASE_PORT + q as u16,
                    q as u16,
                    seq as u64,
                );
            }
            qs.push(GpuTxQueue::new(env, dev.0, q as u16, &buf, false)?);
        }
        send_and_verify(env, &module, &qs, queues, size, slot, frames, rate_pps)
    })();
    drop(qs);
    drop(dev);
    result
}

#[allow(clippy::too_many_arguments)]
fn send_and_verify(
    env: &GpuEnv,
    module: &Arc<cudarc::driver::CudaModule>,
    qs: &[GpuTxQueue],
    queues: usize,
    size: usize,
    slot: usize,
    frames: u64,
    rate_pps: f64,
) -> Result<UdpRun, String> {
    let e = |what: &'static str| move |err: cudarc::driver::DriverError| format!("{what}: {err:?}");
    let done = Arc::new(AtomicBool::new(false));
    let receivers = udp::spawn_receivers(queues, size, frames, &done)
        .map_err(|e| format!("receiver socket: {e}"))?;
    let stream = env.ctx().default_stream();
    let txqs = stream
        .clone_htod(&qs.iter().map(|q| q.handle).collect::<Vec<u64>>())
        .map_err(e("handles"))?;
    let bases = stream
        .clone_htod(&qs.iter().map(|q| q.mem as u64).collect::<Vec<u64>>())
        .map_err(e("bases"))?;
    let mkeys = stream
        .clone_htod(&qs.iter().map(|q| q.mkey_be).collect::<Vec<u32>>())
        .map_err(e("mkeys"))?;
    let f = module.load_function("bench_tx").map_err(e("bench_tx"))?;
    let (slot32, size32) = (slot as u32, size as u32);
    let ns_per_frame: u64 = if rate_pps > 0.0 {
        (1e9 * queues as f64 / rate_pps) as u64
    } else {
        0
    };
    let mut b = stream.launch_builder(&f);
    b.arg(&txqs)
        .arg(&bases)
        .arg(&mkeys)
        .arg(&frames)
        .arg(&slot32)
        .arg(&size32)
        .arg(&ns_per_frame);
    let cfg = LaunchConfig {
        grid_dim: (queues as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    stream.synchronize().map_err(e("setup"))?;
    let start = Instant::now();
    // SAFETY: the arguments match bench_tx's signature; the queues and frames outlive the
    // kernel (synchronized below).
    unsafe { b.launch(cfg) }.map_err(e("launch bench_tx"))?;
    let sync = stream.synchronize().map_err(e("send kernel"));
    done.store(true, Ordering::Release);
    let mut all = SeqTracker::new(queues, frames);
    let mut last: Option<Instant> = None;
    for r in receivers {
        let r = r.join().map_err(|_| "receiver panicked".to_string())?;
        all.merge(&r.tracker);
        if let Some(l) = r.last {
            last = Some(last.map_or(l, |x: Instant| x.max(l)));
        }
    }
    sync?;
    Ok(UdpRun {
        sent: queues as u64 * frames,
        received: all.received(),
        lost: all.lost(),
        duplicates: all.duplicates(),
        recv_secs: 0.0,
        send_secs: last.map_or(0.0, |l| (l - start).as_secs_f64()),
    })
}
