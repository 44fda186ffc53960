//! The soft NIC's RX path into GPU memory, consumed by a receive kernel (figure 2 on the GPU
//! machine): RX queues through the DOCA C API of doca-soft (`doca_eth_rxq_*` with the
//! datapath on the GPU, packet buffers in GPU memory), behind an RSS root pipe on the port,
//! and `kernels/bench_rx.cu` (one block per queue, device API receive, every packet's
//! headers parsed, a (sender, seq) bitmap for the zero-loss check).
//!
//! The kernel is built by `scripts/bench build` (nvcc) into `kernels/bench_rx.fatbin` next
//! to the bench binaries; `BENCH_KERNELS_DIR` overrides where it is looked for.

use std::ffi::{c_void, CString};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaModule, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use doca_soft::testing;
use doca_soft::testing::capi::doca_ctx::{
    doca_ctx_set_datapath_on_gpu, doca_ctx_start, doca_ctx_stop,
};
use doca_soft::testing::capi::doca_dev::Dev;
use doca_soft::testing::capi::doca_eth_rxq::{
    doca_eth_rxq_apply_queue_id, doca_eth_rxq_as_doca_ctx, doca_eth_rxq_create,
    doca_eth_rxq_destroy, doca_eth_rxq_set_pkt_buf, EthRxq,
};
use doca_soft::testing::capi::doca_eth_rxq_gpu_data_path::doca_eth_rxq_get_gpu_handle;
use doca_soft::testing::capi::doca_gpunetio::{
    doca_gpu_create, doca_gpu_destroy, doca_gpu_mem_alloc, doca_gpu_mem_free, Gpu,
};
use doca_soft::testing::capi::doca_mmap::{
    doca_mmap_add_dev, doca_mmap_create, doca_mmap_destroy, doca_mmap_set_memrange,
    doca_mmap_start, doca_mmap_stop, Mmap,
};
use doca_soft::testing::capi::doca_soft_queue::{
    doca_soft_eth_rxq_get_counters, RxqCountersSnapshot,
};
use doca_soft::testing::capi::doca_types::{GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU};
use doca_soft::testing::{Fwd, Pipe, PipeKind, Port, PortSpec, RSS_IPV4, RSS_UDP};

use super::point;
use super::soft::{port_spec, slot_size, wire_frame, wire_send, Mode, SoftRun};
use super::udp;
use doca_test_support::alloc::{Counts, Region};

/// Packet slots per GPU RX queue.
pub const SLOTS: usize = 8192;
/// Burst size the queues are created with (the kernel's BURST).
const BURST: u32 = 256;
/// Threads per block of the receive kernel.
const THREADS: u32 = 256;

/// A DOCA return code as a Result naming the call.
pub fn check(what: &str, rc: u32) -> Result<(), String> {
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{what}: DOCA error {rc}"))
    }
}

/// Where the bench kernels are.
pub fn kernels_dir() -> PathBuf {
    if let Ok(d) = std::env::var("BENCH_KERNELS_DIR") {
        return d.into();
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|p| p.join("../kernels")));
    match beside {
        Some(d) if d.join("bench_rx.fatbin").exists() => d,
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench/kernels"),
    }
}

/// The GPU, its DOCA handle and the bench kernels.
pub struct GpuEnv {
    gpu: *mut Gpu,
    ctx: Arc<CudaContext>,
    module: Arc<CudaModule>,
    /// GPU name.
    pub name: String,
}

impl GpuEnv {
    /// Opens GPU 0 and loads the kernels; the error says why GPU figures are skipped.
    pub fn open() -> Result<GpuEnv, String> {
        if !super::report::gpu_present() {
            return Err(super::report::no_gpu_reason());
        }
        let fatbin = kernels_dir().join("bench_rx.fatbin");
        if !fatbin.exists() {
            return Err(format!(
                "needs the bench kernel {} (built by 'scripts/bench build' with nvcc): skipped",
                fatbin.display()
            ));
        }
        let ctx = CudaContext::new(0).map_err(|e| format!("CUDA context: {e:?}"))?;
        let name = ctx.name().unwrap_or_else(|_| "GPU 0".into());
        let module = ctx
            .load_module(Ptx::from_file(&fatbin))
            .map_err(|e| format!("loading {}: {e:?}", fatbin.display()))?;
        // The context above initialised the driver.
        let bus = doca_cuda_driver::result::device_pci_bus_id(ctx.cu_device())
            .map_err(|e| e.to_string())?;
        let bus = CString::new(bus).map_err(|_| "PCI address with NUL".to_string())?;
        let mut gpu = null_mut();
        // SAFETY: bus is a NUL-terminated bus id; gpu is a valid out-pointer.
        check("doca_gpu_create", unsafe {
            doca_gpu_create(bus.as_ptr(), &mut gpu)
        })?;
        Ok(GpuEnv {
            gpu,
            ctx,
            module,
            name,
        })
    }
}

impl GpuEnv {
    /// The CUDA context (GPU 0's primary context).
    pub fn ctx(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The bench kernels (`bench_rx.fatbin`).
    pub fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// The DOCA GPU handle.
    pub fn gpu(&self) -> *mut Gpu {
        self.gpu
    }
}

impl Drop for GpuEnv {
    fn drop(&mut self) {
        // SAFETY: created in `open`; every queue and buffer using it is gone.
        unsafe { doca_gpu_destroy(self.gpu) };
    }
}

/// One RX queue with its GPU packet buffer (freed with the queue).
pub struct GpuQueue {
    q: *mut EthRxq,
    mem: *mut c_void,
    mmap: *mut Mmap,
    handle: u64,
    started: bool,
    gpu: *mut Gpu,
}

impl GpuQueue {
    /// Started queue `id` on `dev` with a GPU packet buffer of `SLOTS` slots of `slot` bytes.
    pub fn new(env: &GpuEnv, dev: *mut Dev, id: u16, slot: u32) -> Result<GpuQueue, String> {
        let len = SLOTS * slot as usize;
        let mut g = GpuQueue {
            gpu: env.gpu,
            q: null_mut(),
            mem: null_mut(),
            mmap: null_mut(),
            handle: 0,
            started: false,
        };
        let mut cpu = null_mut();
        // SAFETY: live GPU and device; valid out-pointers. Partial setups are undone by Drop.
        unsafe {
            check(
                "doca_gpu_mem_alloc",
                doca_gpu_mem_alloc(env.gpu, len, 65536, GPU_MEM_TYPE_GPU, &mut g.mem, &mut cpu),
            )?;
            check("doca_mmap_create", doca_mmap_create(&mut g.mmap))?;
            check("doca_mmap_add_dev", doca_mmap_add_dev(g.mmap, dev))?;
            check(
                "doca_mmap_set_memrange",
                doca_mmap_set_memrange(g.mmap, g.mem, len),
            )?;
            check("doca_mmap_start", doca_mmap_start(g.mmap))?;
            check(
                "doca_eth_rxq_create",
                doca_eth_rxq_create(dev, BURST, slot, &mut g.q),
            )?;
            check(
                "doca_eth_rxq_set_pkt_buf",
                doca_eth_rxq_set_pkt_buf(g.q, g.mmap, 0, len as u32),
            )?;
            let c = doca_eth_rxq_as_doca_ctx(g.q);
            check(
                "set_datapath_on_gpu",
                doca_ctx_set_datapath_on_gpu(c, env.gpu.cast()),
            )?;
            check("doca_ctx_start", doca_ctx_start(c))?;
            g.started = true;
            check(
                "doca_eth_rxq_apply_queue_id",
                doca_eth_rxq_apply_queue_id(g.q, id),
            )?;
            let mut h = null_mut();
            check(
                "doca_eth_rxq_get_gpu_handle",
                doca_eth_rxq_get_gpu_handle(g.q, &mut h),
            )?;
            g.handle = h as u64;
        }
        Ok(g)
    }

    fn ring_full(&self) -> u64 {
        self.counters().dropped_ring_full
    }

    fn counters(&self) -> RxqCountersSnapshot {
        let mut c = RxqCountersSnapshot::default();
        // SAFETY: live queue; valid out-pointer.
        unsafe { doca_soft_eth_rxq_get_counters(self.q, &mut c) };
        c
    }
}

impl Drop for GpuQueue {
    fn drop(&mut self) {
        // SAFETY: objects created in `new` (null when that step was not reached), destroyed
        // in reverse order; no kernel uses them any more.
        unsafe {
            if !self.q.is_null() {
                if self.started {
                    doca_ctx_stop(doca_eth_rxq_as_doca_ctx(self.q));
                }
                doca_eth_rxq_destroy(self.q);
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

/// A device (boxed, as the C API hands them out) for a mode's port (side 0 of a wire).
pub struct BenchDev(pub *mut Dev);

impl BenchDev {
    /// The device of `mode` (`wire` names the wire).
    pub fn new(mode: Mode, wire: &str) -> BenchDev {
        let spec = port_spec(mode, wire, 0);
        let iface = match &spec {
            PortSpec::Linux { ifname, .. } => ifname.clone(),
            _ => format!("{wire}0"),
        };
        let info = testing::dev_info("e0:00.0", &iface, [2, 0, 0, 0, 0xbe, 0], spec);
        BenchDev(testing::open_dev(info))
    }

    /// Its port.
    pub fn port(&self) -> Result<Arc<Port>, String> {
        // SAFETY: the device lives until Drop.
        unsafe { testing::port_of(self.0) }.map_err(|e| format!("port: {e:?}"))
    }
}

impl Drop for BenchDev {
    fn drop(&mut self) {
        // SAFETY: created in `new`; the queues and mmaps that used it are gone.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

static RUN: AtomicU32 = AtomicU32::new(0);

/// One RX run into GPU memory with the receive kernel: `queues` senders (UDP on `lo`, or
/// generators on a wire), `frames` each, paced to `rate_pps` in total (0 = unpaced).
pub fn run_gpu_rx(
    env: &GpuEnv,
    mode: Mode,
    queues: usize,
    size: usize,
    frames: u64,
    rate_pps: f64,
) -> Result<SoftRun, String> {
    run_gpu_rx_counted(env, mode, queues, size, frames, rate_pps, None)
}

/// Heap allocations counted in the steady-state window of a run (see [`run_gpu_rx_counted`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct CountWindow {
    /// Allocations of every thread inside the window.
    pub counts: Counts,
    /// Frames the senders sent inside the window.
    pub frames: u64,
}

/// Share of the frames sent before the counting window opens (warm-up: first batches grow
/// the staging buffers to their steady size).
const WARM_UP_SHARE: u64 = 5;

/// [`run_gpu_rx`], counting heap allocations of every thread into `counts` from the moment
/// the `lo` senders have sent a fifth of their frames (the wire's generators: from their
/// start) until the last frame is sent (needs the counting allocator installed).
pub fn run_gpu_rx_counted(
    env: &GpuEnv,
    mode: Mode,
    queues: usize,
    size: usize,
    frames: u64,
    rate_pps: f64,
    counts: Option<&mut CountWindow>,
) -> Result<SoftRun, String> {
    let wire = format!(
        "gbench{}x{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    );
    let dev = BenchDev::new(mode, &wire);
    let slot = slot_size(size);
    let progress = KernelProgress::new(env, queues)?;
    let trace = Arc::new(Trace {
        phase: AtomicU8::new(Phase::Setup as u8),
        rings: Mutex::new(Vec::new()),
        kernel: progress.cpu as usize,
        blocks: queues,
        sent: (0..queues).map(|_| AtomicU64::new(0)).collect(),
        port: dev.port().ok(),
        start: Instant::now(),
        done: AtomicBool::new(false),
    });
    // Not while allocations are counted (the trace formats text: it allocates).
    let tracer = counts.is_none().then(|| {
        let t = trace.clone();
        std::thread::spawn(move || t.run())
    });
    // Dropped (explicitly, below) before `dev`.
    let mut qs: Vec<GpuQueue> = Vec::new();
    let result = (|| {
        for i in 0..queues {
            qs.push(GpuQueue::new(env, dev.0, i as u16, slot)?);
        }
        *trace.rings.lock().unwrap_or_else(|e| e.into_inner()) =
            qs.iter().map(|q| q.q as usize).collect();
        let port = dev.port()?;
        let ids: Vec<u16> = (0..queues as u16).collect();
        port.set_flow_root(Some(Arc::new(Pipe::new(
            "bench-rss",
            PipeKind::Basic,
            Fwd::None,
            Fwd::Rss {
                queues: ids,
                flags: RSS_IPV4 | RSS_UDP,
            },
            false,
        ))));
        let r = receive(
            env, &qs, mode, &wire, queues, size, frames, rate_pps, counts, &trace, &progress,
        );
        port.set_flow_root(None);
        r
    })();
    trace.set(Phase::Teardown);
    // The tracer stops reading the rings before they go.
    trace
        .rings
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
    drop(qs);
    drop(dev);
    trace.set(Phase::Done);
    trace.done.store(true, Ordering::Release);
    if let Some(t) = tracer {
        let _ = t.join();
    }
    drop(progress);
    result
}

/// Where a GPU point is (printed by the trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Queues being created and started.
    Setup,
    /// Senders running, kernel receiving.
    Sending,
    /// Senders done; waiting for the receive kernel to end.
    Kernel,
    /// Queues being stopped and destroyed (`Port::unregister_rx_queue` waits for the lanes).
    Teardown,
    /// Over.
    Done,
}

impl Phase {
    fn name(v: u8) -> &'static str {
        match v {
            0 => "setup",
            1 => "sending",
            2 => "kernel-wait",
            3 => "teardown",
            _ => "done",
        }
    }
}

/// Words per block in the receive kernel's progress array (`bench_rx`'s `progress`).
const PROGRESS_WORDS: usize = 4;

/// The receive kernel's per-block progress, in pinned host memory the kernel writes and the
/// trace reads while it runs: packets received, receive calls, globaltimer of the last
/// burst with packets, and why the block stopped (0 running, 1 all received, 2 idle, 3 time
/// bound).
pub struct KernelProgress {
    gpu: *mut Gpu,
    dev: *mut c_void,
    cpu: *mut u64,
}

impl KernelProgress {
    fn new(env: &GpuEnv, blocks: usize) -> Result<KernelProgress, String> {
        let len = blocks.max(1) * PROGRESS_WORDS * 8;
        let (mut dev, mut cpu) = (null_mut(), null_mut());
        // SAFETY: live GPU; valid out-pointers.
        check("doca_gpu_mem_alloc(progress)", unsafe {
            doca_gpu_mem_alloc(env.gpu, len, 4096, GPU_MEM_TYPE_CPU_GPU, &mut dev, &mut cpu)
        })?;
        // SAFETY: cpu points to `len` writable bytes of the allocation just made.
        unsafe { std::ptr::write_bytes(cpu.cast::<u8>(), 0, len) };
        Ok(KernelProgress {
            gpu: env.gpu,
            dev,
            cpu: cpu.cast(),
        })
    }
}

impl Drop for KernelProgress {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`; the kernel that wrote it has ended.
        unsafe { doca_gpu_mem_free(self.gpu, self.dev) };
    }
}

/// Every this often a running GPU point prints a trace line.
const TRACE_EVERY: Duration = Duration::from_millis(500);

/// What a GPU point's trace reads: lanes (the port's per-lane counters), rings (each
/// queue's counters: frames received, published, dropped as ring full), the kernel's
/// progress, the senders' progress and the phase.
struct Trace {
    phase: AtomicU8,
    /// The queues' `EthRxq` pointers while they are alive (cleared before they go).
    rings: Mutex<Vec<usize>>,
    kernel: usize,
    blocks: usize,
    sent: Vec<AtomicU64>,
    port: Option<Arc<Port>>,
    start: Instant,
    done: AtomicBool,
}

impl Trace {
    fn set(&self, p: Phase) {
        self.phase.store(p as u8, Ordering::Release);
    }

    fn run(&self) {
        let mut next = TRACE_EVERY;
        while !self.done.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(20));
            if self.start.elapsed() >= next {
                next += TRACE_EVERY;
                self.emit();
            }
        }
        self.emit();
    }

    /// One trace line (to stdout with the trace prefix in an isolated point, else stderr).
    fn emit(&self) {
        let line = self.line();
        if point::child_point().is_some() {
            println!("{}{line}", point::TRACE);
        } else {
            eprintln!("[trace] {line}");
        }
    }

    fn line(&self) -> String {
        let mut s = format!(
            "t={:.2}s phase={}",
            self.start.elapsed().as_secs_f64(),
            Phase::name(self.phase.load(Ordering::Acquire))
        );
        let sent: Vec<u64> = self
            .sent
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect();
        let _ = write!(s, " sent={sent:?}");
        if let Some(p) = &self.port {
            let now = doca_now_ns();
            let _ = write!(s, " unregistering={} lanes=[", p.unregistering());
            for l in p.lane_stats() {
                let age = |t: u64| {
                    if t == 0 {
                        "never".to_string()
                    } else {
                        format!("{}ms", now.saturating_sub(t) / 1_000_000)
                    }
                };
                let _ = write!(
                    s,
                    "{}:{}f/{}b/{}loops last-frame {} last-loop {}{} ",
                    l.lane,
                    l.frames,
                    l.batches,
                    l.loops,
                    age(l.last_frame_ns),
                    age(l.last_loop_ns),
                    l.queued.map_or(String::new(), |q| format!(" queued {q}")),
                );
            }
            s.push(']');
        }
        {
            let rings = self.rings.lock().unwrap_or_else(|e| e.into_inner());
            if !rings.is_empty() {
                s.push_str(" rings(recv/published/ring-full)=[");
                for (i, &q) in rings.iter().enumerate() {
                    let mut c = RxqCountersSnapshot::default();
                    // SAFETY: the queue is alive while its pointer is in `rings` (cleared
                    // under this lock before the queues are destroyed).
                    unsafe { doca_soft_eth_rxq_get_counters(q as *mut EthRxq, &mut c) };
                    let _ = write!(
                        s,
                        "{i}:{}/{}/{} ",
                        c.received, c.delivered, c.dropped_ring_full
                    );
                }
                s.push(']');
            }
        }
        s.push_str(" kernel(pkts/calls/state)=[");
        for b in 0..self.blocks {
            let w = |k: usize| {
                // SAFETY: `kernel` is the CPU address of the progress array (blocks x
                // PROGRESS_WORDS words), alive until after the tracer is joined; the kernel
                // writes it concurrently, hence volatile.
                unsafe { ((self.kernel as *const u64).add(b * PROGRESS_WORDS + k)).read_volatile() }
            };
            let state = match w(3) {
                0 => "running",
                1 => "all-received",
                2 => "idle-stop",
                3 => "time-bound",
                _ => "?",
            };
            let _ = write!(s, "{b}:{}/{}/{state} ", w(0), w(1));
        }
        s.push(']');
        s
    }
}

/// CLOCK_REALTIME in ns (the clock of the port's lane counters).
fn doca_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Longest a receive kernel runs (`BENCH_KERNEL_MAX_S`, default 10 s): bounds a point whose
/// frames never arrive.
fn kernel_max_ns() -> u64 {
    let s = std::env::var("BENCH_KERNEL_MAX_S")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| *v > 0.0)
        .unwrap_or(10.0);
    (s * 1e9) as u64
}

/// Packets the receive kernel asks for per call (a proxy publishes at most a dispatcher
/// batch at a time, so larger bursts would only wait longer for their timeout).
const RX_BURST: u32 = 256;

#[allow(clippy::too_many_arguments)]
fn receive(
    env: &GpuEnv,
    qs: &[GpuQueue],
    mode: Mode,
    wire: &str,
    queues: usize,
    size: usize,
    frames: u64,
    rate_pps: f64,
    counts: Option<&mut CountWindow>,
    trace: &Arc<Trace>,
    kprog: &KernelProgress,
) -> Result<SoftRun, String> {
    // A stream of its own (non-blocking): the proxy's synchronous host-to-device copies
    // (legacy default stream) must not be ordered behind the running receive kernel.
    let stream = env.ctx.new_stream().map_err(|e| format!("stream: {e:?}"))?;
    let e = |what: &str| {
        let what = what.to_string();
        move |err: cudarc::driver::DriverError| format!("{what}: {err:?}")
    };
    let handles: Vec<u64> = qs.iter().map(|q| q.handle).collect();
    let handles = stream.clone_htod(&handles).map_err(e("handles"))?;
    let bits = (queues as u64 * frames).div_ceil(32) as usize;
    let mut bitmap = stream
        .alloc_zeros::<u32>(bits.max(1))
        .map_err(e("bitmap"))?;
    let mut out = stream
        .clone_htod(&[0u64, u64::MAX, 0, 0, 0, 0, 0, 0])
        .map_err(e("out"))?;
    let f = env
        .module
        .load_function("bench_rx")
        .map_err(e("bench_rx"))?;
    let want = queues as u64 * frames;
    let senders = queues as u32;
    let idle_ns: u64 = 300_000_000;
    let max_ns: u64 = kernel_max_ns();
    let progress_ptr = kprog.dev as u64;
    let burst: u32 = RX_BURST;
    let mut b = stream.launch_builder(&f);
    b.arg(&handles)
        .arg(&want)
        .arg(&senders)
        .arg(&frames)
        .arg(&mut bitmap)
        .arg(&mut out)
        .arg(&idle_ns)
        .arg(&max_ns)
        .arg(&burst)
        .arg(&progress_ptr);
    let cfg = LaunchConfig {
        grid_dim: (queues as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the arguments match bench_rx's signature in kernels/bench_rx.cu; the handles
    // are of started GPU queues that outlive the kernel (synchronized below).
    unsafe { b.launch(cfg) }.map_err(e("launch bench_rx"))?;
    let per = if rate_pps > 0.0 {
        rate_pps / queues as f64
    } else {
        0.0
    };
    let peer = match mode {
        Mode::Wire => Some(
            Port::for_spec(&port_spec(mode, wire, 1)).map_err(|e| format!("wire peer: {e:?}"))?,
        ),
        Mode::Lo => None,
    };
    // lo: the destination ports end at sockets that drop in the kernel (see DropSinks).
    let _sinks = (mode == Mode::Lo)
        .then(|| udp::DropSinks::bind(queues))
        .transpose()
        .map_err(|e| format!("drop sockets on the destination ports: {e}"))?;
    // Senders get ready (everything allocated), then start together with the counting
    // region when one is asked for.
    let ready = Arc::new(Barrier::new(queues + 1));
    // Frames each `lo` sender has handed to the kernel so far (counting window, trace).
    trace.set(Phase::Sending);
    let senders_t: Vec<_> = (0..queues)
        .map(|i| {
            let (peer, ready, progress) = (peer.clone(), ready.clone(), trace.clone());
            std::thread::spawn(move || match peer {
                Some(p) => {
                    let mut f = wire_frame(i as u16, size);
                    ready.wait();
                    wire_send(&p, &mut f, i as u16, frames, per);
                    progress.sent[i].store(frames, Ordering::Relaxed);
                    frames
                }
                None => {
                    let s = udp::UdpSender::new(i as u16, udp::BASE_PORT + i as u16, size);
                    ready.wait();
                    let start = Instant::now();
                    let paced = |seq: u64| {
                        progress.sent[i].store(seq, Ordering::Relaxed);
                        if per > 0.0 {
                            let due = Duration::from_secs_f64(seq as f64 / per);
                            while start.elapsed() < due {
                                std::hint::spin_loop();
                            }
                        }
                    };
                    s.and_then(|mut s| s.send_range(0, frames, paced))
                        .map_or(0, |_| frames)
                }
            })
        })
        .collect();
    ready.wait();
    let mut region = None;
    if counts.is_some() {
        let sent_so_far = || {
            trace
                .sent
                .iter()
                .map(|p| p.load(Ordering::Relaxed))
                .sum::<u64>()
        };
        let warm = if mode == Mode::Lo {
            queues as u64 * frames / WARM_UP_SHARE
        } else {
            0
        };
        while sent_so_far() < warm && !senders_t.iter().all(|s| s.is_finished()) {
            std::thread::sleep(Duration::from_micros(200));
        }
        region = Some((Region::start(), sent_so_far()));
    }
    let sent: u64 = senders_t.into_iter().map(|s| s.join().unwrap_or(0)).sum();
    trace.set(Phase::Kernel);
    if let (Some((r, at)), Some(c)) = (region, counts) {
        *c = CountWindow {
            counts: r.finish(),
            frames: sent.saturating_sub(at),
        };
    }
    let synced = stream.synchronize().map_err(e("kernel"));
    synced?;
    let o = stream.clone_dtoh(&out).map_err(e("out"))?;
    let bm = stream.clone_dtoh(&bitmap).map_err(e("bitmap"))?;
    let received: u64 = bm.iter().map(|w| u64::from(w.count_ones())).sum();
    if o[5] != 0 {
        return Err(format!("receive kernel: {} recv errors", o[5]));
    }
    if o[0] == 0 {
        return Err(format!(
            "the receive kernel got nothing of {sent} frames sent (ring-full drops {})",
            qs.iter().map(GpuQueue::ring_full).sum::<u64>()
        ));
    }
    Ok(SoftRun {
        sent,
        received,
        lost: want - received,
        ring_full: qs.iter().map(GpuQueue::ring_full).sum(),
        secs: if o[2] > o[1] && o[1] != u64::MAX {
            (o[2] - o[1]) as f64 / 1e9
        } else {
            0.0
        },
    })
}
