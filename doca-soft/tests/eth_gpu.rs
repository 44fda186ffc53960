//! GPU tests of the Ethernet data path: the device API in real kernels against live
//! proxies, one receive kernel per execution scope (plus the legacy API) and one send
//! kernel per send mode (thread/warp/block, timed, low-level submit, legacy enqueue/commit),
//! plus semaphores.
//! Packet buffers are GPU memory; frames travel over an in-process wire port.
//!
//! Without a CUDA driver (or without nvcc to build the kernels) each test prints
//! "skipped: <test>: <reason>" and returns. Kernels: tests/cuda/eth_kernels.cu, compiled at
//! test time with nvcc (doca-build's search) for the GPU's architecture;
//! the sources are found through `DOCA_SOFT_SRC_DIR`, the build-time path, or `./doca-soft`
//! (a built test binary run from the repository root on another machine).

use cudarc::driver::{CudaContext, CudaModule, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use doca_soft::capi::doca_ctx::{doca_ctx_set_datapath_on_gpu, doca_ctx_start, doca_ctx_stop};
use doca_soft::capi::doca_dev::Dev;
use doca_soft::capi::doca_eth_rxq::*;
use doca_soft::capi::doca_eth_rxq_gpu_data_path::*;
use doca_soft::capi::doca_eth_txq::*;
use doca_soft::capi::doca_eth_txq_gpu_data_path::*;
use doca_soft::capi::doca_gpunetio::{
    doca_gpu_create, doca_gpu_destroy, doca_gpu_mem_alloc, doca_gpu_mem_free, Gpu, *,
};
use doca_soft::capi::doca_mmap::*;
use doca_soft::capi::doca_soft_queue::{RxqCountersSnapshot, *};
use doca_soft::capi::doca_types::{GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU};
use doca_soft::testing::{CpuRxq, PktBuf, Port, PortSpec, RxRing};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::{Arc, Mutex};

/// Tests share one GPU; run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

struct Env {
    gpu: *mut Gpu,
    ctx: Arc<CudaContext>,
    module: Arc<CudaModule>,
    _dir: tempfile::TempDir,
}

fn setup() -> Option<Env> {
    let first = doca_test_support::require_gpu("the Ethernet GPU kernels")?;
    let nvcc = doca_test_support::require_nvcc()?;
    let dir = tempfile::tempdir().unwrap();
    let cubin = dir.path().join("eth_kernels.cubin");
    let root = doca_test_support::workspace::doca_soft_src_dir();
    doca_test_support::gpu::compile_cubin(
        &nvcc,
        &first,
        &root.join("include"),
        &root.join("tests/cuda/eth_kernels.cu"),
        &cubin,
    );
    let ctx = CudaContext::new(0).unwrap();
    let module = ctx.load_module(Ptx::from_file(&cubin)).unwrap();
    let mut gpu: *mut Gpu = null_mut();
    // SAFETY: valid string and out-pointer.
    assert_eq!(
        unsafe { doca_gpu_create(first.bus_id.as_ptr(), &mut gpu) },
        0
    );
    Some(Env {
        gpu,
        ctx,
        module,
        _dir: dir,
    })
}

fn wire_dev(name: &str, side: u8) -> *mut Dev {
    doca_soft::testing::open_wire_dev('e', 2, name, side)
}

/// GPU memory of `len` bytes registered in a started mmap: (gpu pointer, mmap, mkey).
fn gpu_mmap(env: &Env, dev: *mut Dev, len: usize) -> (*mut c_void, *mut Mmap, u32) {
    let (mut d, mut c) = (null_mut(), null_mut());
    let mut m = null_mut();
    let mut mkey = 0;
    // SAFETY: live GPU/device; valid out-pointers.
    unsafe {
        assert_eq!(
            doca_gpu_mem_alloc(env.gpu, len, 65536, GPU_MEM_TYPE_GPU, &mut d, &mut c),
            0
        );
        assert_eq!(doca_mmap_create(&mut m), 0);
        assert_eq!(doca_mmap_add_dev(m, dev), 0);
        assert_eq!(doca_mmap_set_memrange(m, d, len), 0);
        assert_eq!(doca_mmap_start(m), 0);
        assert_eq!(doca_mmap_get_mkey(m, dev, &mut mkey), 0);
    }
    (d, m, mkey)
}

fn free_mmap(env: &Env, d: *mut c_void, m: *mut Mmap) {
    // SAFETY: objects created by gpu_mmap and no longer used by queues.
    unsafe {
        assert_eq!(doca_mmap_stop(m), 0);
        assert_eq!(doca_mmap_destroy(m), 0);
        assert_eq!(doca_gpu_mem_free(env.gpu, d), 0);
    }
}

fn frame(seq: u32, len: usize) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len).map(|i| (seq as usize * 7 + i * 3) as u8).collect();
    f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes()); // local experimental ethertype
    f[14..18].copy_from_slice(&seq.to_be_bytes());
    f
}

/// Launches kernel `$name` with one block of `$threads` and the given arguments on the
/// context's default stream, without waiting.
macro_rules! launch_async {
    ($env:expr, $name:expr, $threads:expr; $($arg:expr),*) => {{
        let f = $env.module.load_function($name).unwrap();
        let stream = $env.ctx.default_stream();
        let mut b = stream.launch_builder(&f);
        $( b.arg($arg); )*
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: ($threads, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the argument list matches the kernel's signature in eth_kernels.cu.
        #[allow(unused_unsafe)]
        let r = unsafe { b.launch(cfg) };
        r.unwrap();
    }};
}

/// Launches kernel `$name` with one block of `$threads` and the given arguments, and waits.
macro_rules! launch {
    ($env:expr, $name:expr, $threads:expr; $($arg:expr),*) => {{
        let f = $env.module.load_function($name).unwrap();
        let stream = $env.ctx.default_stream();
        let mut b = stream.launch_builder(&f);
        $( b.arg($arg); )*
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: ($threads, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the argument list matches the kernel's signature in eth_kernels.cu.
        #[allow(unused_unsafe)]
        let r = unsafe { b.launch(cfg) };
        r.unwrap();
        stream.synchronize().unwrap();
    }};
}

fn rx_case(env: &Env, kernel: &str, threads: u32, wire: &str) {
    let dev = wire_dev(wire, 0);
    let (d, m, _mkey) = gpu_mmap(env, dev, 64 * 2048);
    let n = 40u32;
    // SAFETY: live objects throughout.
    unsafe {
        let mut q = null_mut();
        assert_eq!(doca_eth_rxq_create(dev, 64, 2048, &mut q), 0);
        assert_eq!(doca_eth_rxq_set_pkt_buf(q, m, 0, 64 * 2048), 0);
        let c = doca_eth_rxq_as_doca_ctx(q);
        assert_eq!(doca_ctx_set_datapath_on_gpu(c, env.gpu.cast()), 0);
        assert_eq!(doca_ctx_start(c), 0);
        assert_eq!(doca_eth_rxq_apply_queue_id(q, 0), 0);
        let mut h: *mut c_void = null_mut();
        assert_eq!(doca_eth_rxq_get_gpu_handle(q, &mut h), 0);
        doca_soft::testing::port_of(dev)
            .unwrap()
            .set_default_queue(Some(0));
        let peer = Port::for_spec(&PortSpec::Wire {
            name: wire.into(),
            side: 1,
        })
        .unwrap();
        let frames: Vec<Vec<u8>> = (0..n).map(|i| frame(i, 60 + i as usize * 11)).collect();
        // Half the frames are in the ring before the kernel starts, half arrive while it
        // runs (the proxy copies into GPU memory while a kernel waits for it).
        let half = (n / 2) as usize;
        for f in &frames[..half] {
            peer.send(f).unwrap();
        }
        let mut cnt = RxqCountersSnapshot::default();
        for _ in 0..100_000 {
            assert_eq!(doca_soft_eth_rxq_get_counters(q, &mut cnt), 0);
            if cnt.delivered == half as u64 {
                break;
            }
            std::thread::yield_now();
        }
        assert_eq!(
            cnt.delivered, half as u64,
            "{kernel}: frames reached the ring"
        );
        let stream = env.ctx.default_stream();
        let mut out = stream.alloc_zeros::<u64>(4).unwrap();
        let hq = h as u64;
        launch_async!(env, kernel, threads; &hq, &n, &mut out);
        std::thread::sleep(std::time::Duration::from_millis(20));
        for f in &frames[half..] {
            peer.send(f).unwrap();
        }
        stream.synchronize().unwrap();
        let v = stream.clone_dtoh(&out).unwrap();
        let lens: u64 = frames.iter().map(|f| f.len() as u64).sum();
        let bytes: u64 = frames
            .iter()
            .flat_map(|f| f.iter())
            .map(|&b| u64::from(b))
            .sum();
        assert_eq!(v[0], u64::from(n), "{kernel}: packets");
        assert_eq!(v[1], lens, "{kernel}: lengths");
        assert_eq!(v[2], bytes, "{kernel}: payload bytes");
        assert_eq!(v[3], 0, "{kernel}: errors");
        doca_soft::testing::port_of(dev)
            .unwrap()
            .set_default_queue(None);
        assert_eq!(doca_ctx_stop(c), 0);
        assert_eq!(doca_eth_rxq_destroy(q), 0);
    }
    free_mmap(env, d, m);
    // SAFETY: created by wire_dev; nothing uses it any more.
    drop(unsafe { Box::from_raw(dev) });
}

#[test]
fn receive_kernels_per_scope_get_every_frame() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = setup() else { return };
    rx_case(&env, "rx_thread", 32, "gpurx_t");
    rx_case(&env, "rx_warp", 32, "gpurx_w");
    rx_case(&env, "rx_block", 128, "gpurx_b");
    rx_case(&env, "rx_legacy_block", 64, "gpurx_l");
    // SAFETY: every object using the GPU is gone.
    assert_eq!(unsafe { doca_gpu_destroy(env.gpu) }, 0);
}

/// Runs a send kernel with `threads` threads sending frame i from GPU memory; returns the
/// frames the peer received with their wire timestamps.
fn tx_case(
    env: &Env,
    kernel: &str,
    threads: u32,
    wire: &str,
    wait_ns: Option<u64>,
) -> Vec<(u64, Vec<u8>)> {
    let size = 128usize;
    let dev = wire_dev(wire, 0);
    let (d, m, mkey) = gpu_mmap(env, dev, threads as usize * size);
    let frames: Vec<Vec<u8>> = (0..threads).map(|i| frame(i, size)).collect();
    // SAFETY: live GPU; the destination lies in the allocation above.
    unsafe {
        let g = doca_soft::testing::GpuView::new(env.gpu).unwrap();
        g.copy_to_device(d as u64, &frames.concat()).unwrap();
    }
    // Receiver: a host ring on the other side of the wire.
    let peer = Port::for_spec(&PortSpec::Wire {
        name: wire.into(),
        side: 1,
    })
    .unwrap();
    let mut rx_mem = vec![0u8; 256 * 256];
    let ring = Arc::new(
        RxRing::new(
            PktBuf::host(rx_mem.as_mut_ptr(), rx_mem.len(), 0),
            256,
            None,
        )
        .unwrap(),
    );
    peer.register_rx_queue(0, ring.clone()).unwrap();
    peer.set_default_queue(Some(0));
    let mut got = Vec::new();
    // SAFETY: live objects throughout.
    unsafe {
        let mut q = null_mut();
        assert_eq!(doca_eth_txq_create(dev, 1024, &mut q), 0);
        assert_eq!(doca_eth_txq_gpu_set_completion_on_gpu(q), 0);
        if wait_ns.is_some() {
            assert_eq!(doca_eth_txq_set_wait_on_time_offload(q), 0);
        }
        let c = doca_eth_txq_as_doca_ctx(q);
        assert_eq!(doca_ctx_set_datapath_on_gpu(c, env.gpu.cast()), 0);
        assert_eq!(doca_ctx_start(c), 0);
        assert_eq!(doca_eth_txq_apply_queue_id(q, 0), 0);
        let mut h: *mut c_void = null_mut();
        assert_eq!(doca_eth_txq_get_gpu_handle(q, &mut h), 0);
        let stream = env.ctx.default_stream();
        let mut out = stream.alloc_zeros::<u64>(4).unwrap();
        let (hq, base, mk, sz) = (h as u64, d as u64, mkey.to_be(), size as u32);
        match wait_ns {
            Some(at) => {
                let mut w = 0u64;
                assert_eq!(doca_eth_txq_calculate_timestamp(q, at, &mut w), 0);
                launch!(env, kernel, threads; &hq, &w, &base, &mk, &sz, &mut out);
            }
            None if kernel == "tx_legacy" => {
                // doca_gpu_buf descriptors {addr, mkey (BE)} for each frame, in GPU memory.
                let descs: Vec<u8> = (0..threads as u64)
                    .flat_map(|i| {
                        let mut e = Vec::with_capacity(16);
                        e.extend_from_slice(&(base + i * size as u64).to_ne_bytes());
                        e.extend_from_slice(&mk.to_ne_bytes());
                        e.extend_from_slice(&0u32.to_ne_bytes());
                        e
                    })
                    .collect();
                let bufs = stream.clone_htod(&descs).unwrap();
                launch!(env, kernel, threads; &hq, &bufs, &sz, &mut out);
            }
            None if kernel == "tx_lowlevel" => {
                let first = 0u64;
                launch!(env, kernel, threads; &hq, &base, &mk, &sz, &first, &mut out);
            }
            None => launch!(env, kernel, threads; &hq, &base, &mk, &sz, &mut out),
        }
        let v = stream.clone_dtoh(&out).unwrap();
        assert_eq!(v[0], 0, "{kernel}: completion status");
        assert_eq!(v[1], 1, "{kernel}: completions");
        let rx = CpuRxq::new(ring.handle_cpu());
        for _ in 0..10_000 {
            rx.recv_with(0, 1_000_000, |_, a, p| {
                got.push((a.timestamp_ns, p.to_vec()))
            });
            if got.len() >= threads as usize {
                break;
            }
        }
        assert_eq!(doca_ctx_stop(c), 0);
        assert_eq!(doca_eth_txq_destroy(q), 0);
    }
    peer.set_default_queue(None);
    peer.unregister_rx_queue(0);
    free_mmap(env, d, m);
    // SAFETY: created by wire_dev; nothing uses it any more.
    drop(unsafe { Box::from_raw(dev) });
    let mut sorted: Vec<Vec<u8>> = got.iter().map(|g| g.1.clone()).collect();
    sorted.sort_by_key(|f| u32::from_be_bytes(f[14..18].try_into().unwrap()));
    assert_eq!(sorted, frames, "{kernel}: exact frames, each once");
    got
}

#[test]
fn send_kernels_per_mode_deliver_exact_frames_and_completions() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = setup() else { return };
    tx_case(&env, "tx_thread", 64, "gputx_t", None);
    tx_case(&env, "tx_warp", 32, "gputx_w", None);
    tx_case(&env, "tx_block", 128, "gputx_b", None);
    tx_case(&env, "tx_lowlevel", 64, "gputx_l", None);
    tx_case(&env, "tx_legacy", 64, "gputx_lg", None);
    tx_case(&env, "tx_empw", 32, "gputx_e", None);
    let at = doca_soft::testing::realtime_ns() + 50_000_000;
    let got = tx_case(&env, "tx_wait_block", 32, "gputx_wt", Some(at));
    assert!(
        got.iter().all(|(ts, _)| *ts >= at),
        "a timed frame left before its time"
    );
    // SAFETY: every object using the GPU is gone.
    assert_eq!(unsafe { doca_gpu_destroy(env.gpu) }, 0);
}

#[test]
fn semaphore_items_written_by_a_kernel_are_read_by_the_cpu() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = setup() else { return };
    // SAFETY: live objects throughout.
    unsafe {
        let mut s = null_mut();
        assert_eq!(doca_gpu_semaphore_create(env.gpu, &mut s), 0);
        assert_eq!(
            doca_gpu_semaphore_set_memory_type(s, GPU_MEM_TYPE_CPU_GPU),
            0
        );
        assert_eq!(doca_gpu_semaphore_set_items_num(s, 32), 0);
        assert_eq!(
            doca_gpu_semaphore_set_custom_info(s, 4, GPU_MEM_TYPE_CPU_GPU),
            0
        );
        assert_eq!(doca_gpu_semaphore_start(s), 0);
        let mut h: *mut c_void = null_mut();
        assert_eq!(doca_gpu_semaphore_get_gpu_handle(s, &mut h), 0);
        let stream = env.ctx.default_stream();
        let mut out = stream.alloc_zeros::<u64>(1).unwrap();
        let hs = h as u64;
        launch!(env, "sem_fill", 32; &hs, &mut out);
        assert_eq!(
            stream.clone_dtoh(&out).unwrap()[0],
            0,
            "device calls failed"
        );
        for i in 0..32u32 {
            let mut st = 0u32;
            assert_eq!(doca_gpu_semaphore_get_status(s, i, &mut st), 0);
            assert_eq!(st, 1, "item {i} READY");
            let mut info: *mut c_void = null_mut();
            assert_eq!(doca_gpu_semaphore_get_custom_info_addr(s, i, &mut info), 0);
            assert_eq!(*(info as *const u32), i);
            assert_eq!(doca_gpu_semaphore_set_status(s, i, 0), 0);
        }
        assert_eq!(doca_gpu_semaphore_stop(s), 0);
        assert_eq!(doca_gpu_semaphore_destroy(s), 0);
        assert_eq!(doca_gpu_destroy(env.gpu), 0);
    }
}
