//! own-kernel: a crate with a CUDA kernel of its own that receives packets through DOCA
//! GPUNetIO. It is the template for writing yours:
//!
//! * `Cargo.toml`: `doca` in `[dependencies]` (the API, the cudarc it re-exports, and the
//!   DOCA header directories for the build script through its `links` metadata),
//!   `doca-build` in `[build-dependencies]`;
//! * `build.rs`: `kernels/*.cu` into one fatbin with doca-build's recipe;
//! * `kernels/receive.cu`: the kernel, written against the DOCA device headers
//!   (`doca_gpu_dev_eth_rxq_recv`), declared `extern "C"` so it is found by name;
//! * this file: DOCA Flow steers IPv4/UDP to a GPU receive queue, the embedded fatbin is
//!   loaded with `doca::cudarc`, the kernel is launched with the queue's GPU handle, and
//!   the host reads its counters from CPU-visible memory.
//!
//! ```sh
//! own-kernel -n lo -g 0 -p 5000 --count 1000     # receive until 1000 frames to port 5000
//! own-kernel --probe                             # what this machine's driver accepts
//! CUDA_FORCE_PTX_JIT=1 own-kernel --probe        # the same through the PTX JIT
//! own-kernel --probe --module other.fatbin       # another build (fatbin, cubin or PTX)
//! ```
//!
//! Without a CUDA driver it prints `skipped: own-kernel: <reason>` and exits 0. With the
//! software runtime it needs root (AF_PACKET) for the receive run; `--probe` needs only the
//! driver. The last line of a receive run is `summary key=value ...`.

use clap::Parser;
use doca::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use doca::cudarc::nvrtc::Ptx;
use doca::gpunetio::{
    cuda_available, Device, EthRxq, Flow, FlowConfig, FlowPort, Gpu, GpuAtomicBuffer, MemType,
    Pipe, RssFlags, RxqType,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The fatbin build.rs compiled: SASS for sm_80 and sm_90, PTX for compute_80.
static KERNELS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.fatbin"));

/// Fields of `struct own_kernel_stats` (kernels/receive.cu), as u64 indices.
const PACKETS: usize = 0;
const BYTES: usize = 1;
const PORT_FRAMES: usize = 2;
const ERRORS: usize = 3;
const STATS_LEN: usize = 4;

/// The value `own_kernel_probe` writes.
const PROBE_VALUE: u32 = 0xd0ca;

/// Command line.
#[derive(Parser, Debug)]
#[command(
    name = "own-kernel",
    version,
    about = "Receive UDP frames in a CUDA kernel of this crate's own (a template for yours)"
)]
struct Args {
    /// Network device: interface name, PCI address or IB device name.
    #[arg(short = 'n', long, default_value = "lo")]
    nic: String,
    /// GPU: ordinal or PCI address.
    #[arg(short = 'g', long, default_value = "0")]
    gpu: String,
    /// UDP destination port whose frames the kernel counts separately.
    #[arg(short = 'p', long, default_value_t = 5000)]
    port: u16,
    /// Stop after this many seconds.
    #[arg(short = 'd', long, default_value_t = 10.0, value_parser = positive_seconds)]
    duration: f64,
    /// Stop once this many frames to --port arrived.
    #[arg(short = 'c', long)]
    count: Option<u64>,
    /// Create this file once the kernel receives (for scripts and tests).
    #[arg(short = 'R', long)]
    ready_file: Option<PathBuf>,
    /// Report the CUDA driver's version and whether it loads and runs this fatbin, then exit
    /// (set CUDA_FORCE_PTX_JIT=1 to make the driver JIT-compile the PTX instead of using
    /// the SASS).
    #[arg(long)]
    probe: bool,
    /// With --probe: load this file (a fatbin, a cubin or PTX text holding
    /// `own_kernel_probe`) instead of the embedded fatbin, to see which builds this
    /// machine's driver accepts.
    #[arg(long, requires = "probe", value_name = "FILE")]
    module: Option<PathBuf>,
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(d) if d > 0.0 && d.is_finite() => Ok(d),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    // Without a driver cudarc panics: check first, and say why nothing runs.
    if !cuda_available() {
        println!(
            "skipped: own-kernel: no CUDA driver on this machine (libcuda cannot be loaded); \
             the kernel needs an NVIDIA GPU and driver"
        );
        return ExitCode::SUCCESS;
    }
    let run = if args.probe {
        probe(&args)
    } else {
        receive(&args)
    };
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("own-kernel: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The GPU named by `-g`: an ordinal ("0") or a PCI address.
fn open_gpu(sel: &str) -> Result<Gpu, String> {
    let gpu = match sel.parse::<usize>() {
        Ok(n) if sel.len() <= 2 => Gpu::by_ordinal(n),
        _ => Gpu::open(sel),
    };
    gpu.map_err(|e| format!("cannot open GPU {sel:?}: {e}"))
}

fn receive(args: &Args) -> Result<(), String> {
    let nic = Device::open(&args.nic).map_err(|e| format!("device {:?}: {e}", args.nic))?;
    let gpu = open_gpu(&args.gpu)?;
    // DOCA Flow: every IPv4/UDP frame to receive queue 0, whose ring is in GPU memory.
    let flow = Flow::init(FlowConfig::default()).map_err(|e| format!("DOCA Flow: {e}"))?;
    let port = FlowPort::start(&flow, &nic, 0).map_err(|e| format!("Flow port: {e}"))?;
    let rxq = EthRxq::builder(&nic)
        .max_burst_size(8192)
        .max_packet_size(2048)
        .kind(RxqType::Cyclic)
        .gpu_packet_buffer(&gpu)
        .start()
        .map_err(|e| format!("GPU receive queue: {e}"))?;
    rxq.apply_queue_id(0)
        .map_err(|e| format!("receive queue id: {e}"))?;
    let udp = Pipe::basic(&port, "OWN_KERNEL_UDP")
        .match_udp_ipv4()
        .rss_to(&[0], RssFlags::IPV4 | RssFlags::UDP)
        .miss_drop()
        .build()
        .map_err(|e| format!("UDP pipe: {e}"))?;
    let udp_entry = udp.add_entry().map_err(|e| format!("UDP entry: {e}"))?;
    let root = Pipe::control_root(&port).map_err(|e| format!("root pipe: {e}"))?;
    let root_entry = root
        .forward_ipv4_udp_to(&udp, 0)
        .map_err(|e| format!("root entry: {e}"))?;
    port.entries_process()
        .map_err(|e| format!("Flow entries: {e}"))?;

    // The kernel, from the embedded fatbin, with the cudarc doca re-exports.
    let module = gpu
        .cuda()
        .load_module(Ptx::from_binary(KERNELS.to_vec()))
        .map_err(|e| format!("loading the fatbin: {e}"))?;
    let kernel = module
        .load_function("own_kernel_receive")
        .map_err(|e| format!("own_kernel_receive: {e}"))?;
    // Exit flag and counters in pinned host memory the GPU maps (MemType::CpuGpu).
    let cuda = |what: &str, e: doca::gpunetio::Error| format!("{what}: {e}");
    // Atomics: the kernel writes them while this thread reads them (zeroed at creation).
    let exit =
        GpuAtomicBuffer::<AtomicU32>::new(&gpu, 1, MemType::CpuGpu).map_err(|e| cuda("flag", e))?;
    let stats = GpuAtomicBuffer::<AtomicU64>::new(&gpu, STATS_LEN, MemType::CpuGpu)
        .map_err(|e| cuda("stats", e))?;
    let handle = rxq
        .gpu_handle()
        .map_err(|e| format!("queue GPU handle: {e}"))?;
    let stream = gpu
        .cuda()
        .new_stream()
        .map_err(|e| format!("stream: {e}"))?;
    let (flag_ptr, stats_ptr, dst_port) = (exit.device_ptr(), stats.device_ptr(), args.port as u32);
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&handle)
        .arg(&flag_ptr)
        .arg(&dst_port)
        .arg(&stats_ptr);
    let one_warp = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the arguments match own_kernel_receive(rxq *, const uint32_t *, uint32_t,
    // own_kernel_stats *); the queue, flag and counters outlive the kernel, which is
    // stopped and waited for below before any of them is dropped.
    unsafe { launch.launch(one_warp) }.map_err(|e| format!("launch: {e}"))?;
    println!(
        "Receiving on {} with GPU {}; counting UDP frames to port {}",
        nic.info().iface_name(),
        gpu.pci_bus_id(),
        args.port
    );
    if let Some(f) = &args.ready_file {
        std::fs::write(f, b"ready\n").map_err(|e| format!("{}: {e}", f.display()))?;
    }

    let start = Instant::now();
    let mut last_print = start;
    let why = loop {
        let port_frames = stats[PORT_FRAMES].load(Ordering::Acquire);
        if args.count.is_some_and(|n| port_frames >= n) {
            break "count";
        }
        if start.elapsed().as_secs_f64() >= args.duration {
            break "duration";
        }
        if last_print.elapsed() >= Duration::from_secs(1) {
            println!("... {port_frames} frames to port {}", args.port);
            last_print = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Stop the kernel and wait for it before anything it uses goes away.
    exit[0].store(1, Ordering::Release);
    let stopped = stream.synchronize().map_err(|e| format!("kernel: {e}"));
    let read = |i: usize| stats[i].load(Ordering::Acquire);
    println!(
        "summary packets={} bytes={} port_frames={} errors={} stop={why}",
        read(PACKETS),
        read(BYTES),
        read(PORT_FRAMES),
        read(ERRORS)
    );
    drop((root_entry, udp_entry, root, udp, port));
    let queue_stopped = rxq.stop().map_err(|e| format!("stopping the queue: {e}"));
    drop(flow);
    stopped.and(queue_stopped)
}

/// The `--module` file as the driver takes it: fatbins and cubins as bytes, PTX as text.
/// Prints its kind (and a PTX file's ISA) on the probe line.
fn module_image(path: &Path) -> Result<Ptx, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("--module {}: {e}", path.display()))?;
    let kind = match bytes.get(..4) {
        Some([0x50, 0xed, 0x55, 0xba]) => "fatbin",
        Some([0x7f, b'E', b'L', b'F']) => "cubin",
        _ => "ptx",
    };
    print!(" module={} kind={kind}", path.display());
    if kind != "ptx" {
        return Ok(Ptx::from_binary(bytes));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        format!(
            "--module {}: neither a fatbin, a cubin nor PTX text",
            path.display()
        )
    })?;
    match text.lines().find_map(|l| l.strip_prefix(".version ")) {
        Some(isa) => print!(" ptx_isa={}", isa.trim()),
        None => {
            return Err(format!(
                "--module {}: PTX text without a .version line",
                path.display()
            ))
        }
    }
    Ok(Ptx::from_src(text))
}

/// What the driver of this machine accepts: its version, then loading the fatbin and
/// running `own_kernel_probe` with cudarc alone (no DOCA involved). One `probe` line of
/// `key=value` pairs; a failing step ends the run with status 1 and names the step.
fn probe(args: &Args) -> Result<(), String> {
    let mut version = 0;
    // SAFETY: cuDriverGetVersion writes one int and needs no initialisation.
    let r = unsafe { doca::cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    if r != doca::cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        return Err(format!("cuDriverGetVersion: {r:?}"));
    }
    let jit = std::env::var("CUDA_FORCE_PTX_JIT").unwrap_or_default();
    print!(
        "probe driver={}.{} driver_version={version} force_ptx_jit={}",
        version / 1000,
        version % 1000 / 10,
        if jit.is_empty() { "0" } else { &jit }
    );
    let ordinal: usize = args
        .gpu
        .parse()
        .map_err(|_| format!("--probe takes a GPU ordinal, not {:?}", args.gpu))?;
    let step = |what: &'static str| {
        move |e: doca::cudarc::driver::DriverError| {
            println!(" {what}=failed");
            format!("{what}: {e}")
        }
    };
    let ctx = CudaContext::new(ordinal).map_err(step("context"))?;
    let (major, minor) = ctx.compute_capability().map_err(step("attributes"))?;
    let name = ctx.name().unwrap_or_default().replace(' ', "_");
    print!(" gpu={name} cc={major}.{minor}");
    let image = match &args.module {
        None => {
            print!(" module=embedded");
            Ptx::from_binary(KERNELS.to_vec())
        }
        Some(path) => module_image(path)?,
    };
    let module = ctx.load_module(image).map_err(step("load"))?;
    let kernel = module
        .load_function("own_kernel_probe")
        .map_err(step("load"))?;
    print!(" load=ok");
    let stream = ctx.default_stream();
    let mut out = stream.alloc_zeros::<u32>(1).map_err(step("launch"))?;
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&mut out);
    // SAFETY: own_kernel_probe(unsigned int *) writes one u32, which `out` holds.
    unsafe { launch.launch(LaunchConfig::for_num_elems(1)) }.map_err(step("launch"))?;
    let value = stream.clone_dtoh(&out).map_err(step("launch"))?;
    if value != [PROBE_VALUE] {
        println!(" launch=wrong-value");
        return Err(format!(
            "own_kernel_probe wrote {value:?}, not {PROBE_VALUE:#x}"
        ));
    }
    println!(" launch=ok");
    Ok(())
}
