//! gpunetio_rdma_client_server_write: DOCA's GPU RDMA sample. A server and a client, each
//! with a `doca_rdma` context whose data path is on the GPU, connect (out of band over TCP
//! port 2000, or through RDMA-CM with `-cm`); then CUDA kernels move the data themselves:
//! for each of 4 buffers the server kernel posts two receives and flags the client with
//! an inline RDMA write, and the client kernel's two threads write (even buffers, with
//! immediate) or send (odd buffers, with immediate) 128 bytes each into the server's
//! buffer array A in GPU memory. The server prints A before and after (`1111 | 1111`, then
//! `2222 | 3333`) and checks every byte of it in GPU memory.
//!
//! ```sh
//! gpunetio_rdma_client_server_write -d lo -gpu 0                 # server
//! gpunetio_rdma_client_server_write -d lo -gpu 0 -c 127.0.0.1    # client
//! ```
//!
//! Flags as the original's: `-d/--device` (IB device name, or any name `Device::open`
//! takes), `-gpu/--gpu` (PCIe address or ordinal), `-c/--client <server OOB IP>`,
//! `-gid/--gid-index`, `-cm/--use-rdma-cm`, `-p/--port` (RDMA-CM port, 13579),
//! `-sa/--server-addr` and `-sat/--server-addr-type` (ip4|ipv4|ip6|ipv6|gid; CM client).
//! DOCA's general flags too (`-l/--log-level`, `--sdk-log-level`, `-v/--version`, `-h`).
//! Extra: `-o/--oob-port` (default 2000). Differences: the client retries the out-of-band
//! connect for up to 20 s (the server may still be starting), and the checks of A, of the
//! immediates and of every device call's result are ours; a failed check exits with 1.

#[path = "common/mod.rs"]
mod common;

use clap::Parser;
use common::cli::{self, fail, usage_error, General};
use common::gpu::{kernel_stopped, open_gpu, open_nic};
use cuda_kernels::{
    ExitFlag, Kernels, RdmaCsReport, RecvRound, RDMA_CS_BUFS as BUFS, RDMA_CS_HALF as HALF,
};
use doca::gpunetio::rdma::{
    self, oob::OobStream, AddrType, BufArrHandle, GpuBufArr, Local, Rdma, Remote, RemoteMmap,
};
use doca::gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap, ProgressEngine};
use std::time::{Duration, Instant};

const PROG: &str = "gpunetio_rdma_client_server_write";
/// The sample's RDMA-CM port.
const DEFAULT_CM_PORT: u16 = 13579;
/// How long RDMA-CM connection set-up may take.
const CM_TIMEOUT: Duration = Duration::from_secs(30);
const PAGE: usize = 4096;
/// How long the server kernel may wait for the client's writes and sends.
const SERVER_KERNEL_WAIT: Duration = Duration::from_secs(60);

/// DOCA argp's multi-letter short flags and the long flags clap knows them by.
const ARGP_SHORT: [(&str, &str); 5] = [
    ("-gpu", "--gpu"),
    ("-gid", "--gid-index"),
    ("-cm", "--use-rdma-cm"),
    ("-sa", "--server-addr"),
    ("-sat", "--server-addr-type"),
];

#[derive(Parser, Debug)]
#[command(
    name = PROG,
    about = "DOCA GPUNetIO RDMA client/server write sample (-gpu, -gid, -cm, -sa and -sat \
             as the original's short flags)"
)]
struct Cli {
    /// IB device name (or any name or PCIe address of a device)
    #[arg(short = 'd', long)]
    device: String,
    /// GPU PCIe address (or ordinal); short form -gpu
    #[arg(long)]
    gpu: String,
    /// Client mode: the server's out-of-band IPv4 address
    #[arg(short = 'c', long)]
    client: Option<String>,
    /// GID index of the device; short form -gid
    #[arg(long = "gid-index", allow_hyphen_values = true)]
    gid_index: Option<u32>,
    /// Connect through RDMA-CM; short form -cm
    #[arg(long = "use-rdma-cm")]
    use_rdma_cm: bool,
    /// RDMA-CM port
    #[arg(short = 'p', long, default_value_t = DEFAULT_CM_PORT)]
    port: u16,
    /// RDMA-CM client: the server's address; short form -sa
    #[arg(long = "server-addr")]
    server_addr: Option<String>,
    /// ip4|ipv4|ip6|ipv6|gid (any case); short form -sat [default: ipv4]
    #[arg(long = "server-addr-type")]
    server_addr_type: Option<String>,
    /// Out-of-band TCP port (an addition; the original's is fixed)
    #[arg(short = 'o', long = "oob-port", default_value_t = rdma::oob::DEFAULT_PORT)]
    oob_port: u16,
    #[command(flatten)]
    general: General,
}

struct Args {
    device: String,
    gpu: String,
    client: Option<String>,
    gid_index: Option<u32>,
    cm: bool,
    cm_port: u16,
    server_addr: Option<String>,
    addr_type: AddrType,
    oob_port: u16,
}

/// The process arguments with DOCA argp's multi-letter short flags in their long form.
fn argp_args() -> Vec<std::ffi::OsString> {
    std::env::args_os()
        .map(|a| {
            ARGP_SHORT
                .iter()
                .find(|(short, _)| a == *short)
                .map_or(a, |(_, long)| (*long).into())
        })
        .collect()
}

fn parse() -> Args {
    let c: Cli = cli::try_parse_from::<Cli, _, _>(argp_args()).unwrap_or_else(|e| e.exit());
    c.general.apply();
    if c.device.len() > 63 {
        usage_error::<Cli>("--device: at most 63 characters");
    }
    if c.gpu.len() >= 32 {
        usage_error::<Cli>("--gpu: fewer than 32 characters");
    }
    if c.server_addr.is_some() && !c.use_rdma_cm {
        usage_error::<Cli>("--server-addr needs --use-rdma-cm");
    }
    if c.server_addr.is_some() && c.client.is_none() {
        usage_error::<Cli>("--server-addr is for the RDMA-CM client only");
    }
    if c.use_rdma_cm && c.client.is_some() && c.server_addr.is_none() {
        usage_error::<Cli>("the RDMA-CM client needs --server-addr");
    }
    let addr_type = match &c.server_addr_type {
        None => AddrType::Ipv4,
        Some(t) => AddrType::parse(t).unwrap_or_else(|| {
            usage_error::<Cli>(format!(
                "--server-addr-type {t:?}: ip4, ipv4, ip6, ipv6 or gid"
            ))
        }),
    };
    Args {
        device: c.device,
        gpu: c.gpu,
        client: c.client,
        gid_index: c.gid_index,
        cm: c.use_rdma_cm,
        cm_port: c.port,
        server_addr: c.server_addr,
        addr_type,
        oob_port: c.oob_port,
    }
}

fn info(msg: impl std::fmt::Display) {
    println!("[INFO] {msg}");
}

/// What both roles hold for the whole run.
struct Common {
    dev: Device,
    gpu: Gpu,
    rdma: Rdma,
    kernels: Kernels,
}

fn perms() -> AccessFlags {
    AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE
}

fn setup(a: &Args) -> Result<Common, String> {
    let dev = open_nic(&a.device)?;
    let gpu = open_gpu(&a.gpu)?;
    let kernels = Kernels::load(&gpu).map_err(|e| e.to_string())?;
    let mut b = Rdma::builder(&dev)
        .permissions(perms())
        .send_queue_size(8192)
        .gpu_datapath(&gpu)
        .recv_queue_size(8192)
        .grh(true);
    if let Some(g) = a.gid_index {
        b = b.gid_index(g);
    }
    if a.cm {
        let pe = ProgressEngine::new().map_err(|e| e.to_string())?;
        b = b.rdma_cm(&pe).max_connections(2);
    }
    let rdma = b.start().map_err(|e| format!("RDMA context: {e}"))?;
    Ok(Common {
        dev,
        gpu,
        rdma,
        kernels,
    })
}

fn oob_server(port: u16) -> Result<OobStream, String> {
    info("Socket created successfully");
    info("Done with binding");
    info("Listening for incoming connections");
    let s = OobStream::accept(port).map_err(|e| e.to_string())?;
    info(format!(
        "Client connected at IP: {} and port: {}",
        s.peer().ip(),
        s.peer().port()
    ));
    Ok(s)
}

fn oob_client(ip: &str, port: u16) -> Result<OobStream, String> {
    let t0 = Instant::now();
    loop {
        match OobStream::connect(ip, port) {
            Ok(s) => {
                info("Connected with server successfully");
                return Ok(s);
            }
            Err(e) if t0.elapsed() > Duration::from_secs(20) => return Err(e.to_string()),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// GPU_CPU memory of `len` bytes (page-aligned, as the sample's) filled with `byte`.
fn gpu_bytes(gpu: &Gpu, len: usize, byte: u8, mem: MemType) -> Result<GpuBuffer<u8>, String> {
    let mut b = GpuBuffer::<u8>::with_alignment(gpu, len, PAGE, mem).map_err(|e| e.to_string())?;
    b.copy_from_host(&vec![byte; len])
        .map_err(|e| e.to_string())?;
    Ok(b)
}

fn map(c: &Common, b: &GpuBuffer<u8>) -> Result<Mmap, String> {
    Mmap::from_gpu_buffer(b, &[&c.dev], perms()).map_err(|e| e.to_string())
}

fn print_a(bytes: &[u8]) {
    for i in 0..BUFS {
        let e = &bytes[i * 2 * HALF..];
        info(format!(
            "Buffer {i} -> offset 0: {:x}{:x}{:x}{:x} | offset {HALF}: {:x}{:x}{:x}{:x}",
            e[0],
            e[1],
            e[2],
            e[3],
            e[HALF],
            e[HALF + 1],
            e[HALF + 2],
            e[HALF + 3]
        ));
    }
}

/// Every byte of A after the run: written buffers (even) hold B's bytes then C's; sent
/// buffers (odd) hold one of each, in the order the sends arrived.
fn check_a(bytes: &[u8]) -> Result<(), String> {
    for i in 0..BUFS {
        let e = &bytes[i * 2 * HALF..(i + 1) * 2 * HALF];
        let (lo, hi) = e.split_at(HALF);
        let all = |s: &[u8], v: u8| s.iter().position(|&b| b != v);
        let ok = if i % 2 == 0 {
            all(lo, 2).is_none() && all(hi, 3).is_none()
        } else {
            (all(lo, 2).is_none() && all(hi, 3).is_none())
                || (all(lo, 3).is_none() && all(hi, 2).is_none())
        };
        if !ok {
            let bad = e.iter().position(|&b| b != 2 && b != 3).unwrap_or(0);
            return Err(format!("buffer {i}: unexpected bytes (byte {bad} is {:#x}, offsets 0 and {HALF}: {:#x} {:#x})", e[bad], e[0], e[HALF]));
        }
    }
    Ok(())
}

/// The server kernel's receive rounds: two receives each, immediates i and i+1 (either
/// order), both on connection `conn`.
fn check_rounds(rounds: &[RecvRound; BUFS], conn: u32) -> Result<(), String> {
    for (i, r) in rounds.iter().enumerate() {
        let mut imm = r.imm;
        imm.sort_unstable();
        if r.ops != 2 || imm != [i as u32, i as u32 + 1] || r.conn != [conn, conn] {
            return Err(format!("buffer {i}: receives reported {r:?}, expected 2 with immediates {i} and {} on connection {conn}", i + 1));
        }
    }
    Ok(())
}

fn kernel_done(r: Result<(), cuda_kernels::KernelError>) -> Result<(), String> {
    kernel_stopped(PROG, r)
}

fn server_connection(
    c: &Common,
    oob: &mut OobStream,
    conn: u32,
    label: &str,
) -> Result<(), String> {
    let a = gpu_bytes(&c.gpu, BUFS * 2 * HALF, 0x01, MemType::GpuCpu)?;
    let a_map = map(c, &a)?;
    oob.send_blob(
        rdma::export_mmap(&a_map, &c.dev)
            .map_err(|e| e.to_string())?
            .as_bytes(),
    )
    .map_err(|e| e.to_string())?;
    let f_map = RemoteMmap::from_export(&c.dev, &oob.recv_blob().map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let a_arr =
        GpuBufArr::<Local>::new(&a_map, &c.gpu, BUFS, 2 * HALF).map_err(|e| e.to_string())?;
    let f_arr = GpuBufArr::<Remote>::new(&f_map, &c.gpu, 1, BUFS).map_err(|e| e.to_string())?;
    let mut bytes = vec![0u8; BUFS * 2 * HALF];
    a.copy_to_host(&mut bytes).map_err(|e| e.to_string())?;
    info("Before launching CUDA kernel, buffer array A is:");
    print_a(&bytes);

    let exit = ExitFlag::new(&c.gpu).map_err(|e| e.to_string())?;
    let report = RdmaCsReport::new(&c.gpu).map_err(|e| e.to_string())?;
    let handle = c.rdma.gpu_handle().map_err(|e| e.to_string())?;
    let (ah, fh) = (
        a_arr.gpu_handle().map_err(|e| e.to_string())?,
        f_arr.gpu_handle().map_err(|e| e.to_string())?,
    );
    c.kernels.scope(|s| -> Result<(), String> {
        let k = s
            .launch_rdma_cs_server(handle, conn, ah, fh, &exit, &report)
            .map_err(|e| e.to_string())?;
        // The kernel returns once every receive completed; a client that never comes
        // leaves it waiting, and then the process exits without teardown.
        let t0 = Instant::now();
        while !k.is_finished() && t0.elapsed() < SERVER_KERNEL_WAIT {
            std::thread::sleep(Duration::from_millis(1));
        }
        kernel_done(k.stop())
    })?;

    a.copy_to_host(&mut bytes).map_err(|e| e.to_string())?;
    info(format!(
        "After launching CUDA kernel{label}, buffer array A is:"
    ));
    print_a(&bytes);
    if report.first_error() != 0 {
        return Err(format!(
            "a device call failed with DOCA error {}",
            report.first_error()
        ));
    }
    check_rounds(&report.rounds(), conn)?;
    check_a(&bytes)?;
    println!("Validation successful: every byte of buffer array A (connection {conn}) as expected");
    Ok(())
}

fn client_connection(c: &Common, oob: &mut OobStream, conn: u32) -> Result<(), String> {
    let b = gpu_bytes(&c.gpu, BUFS * HALF, 0x02, MemType::GpuCpu)?;
    let cbuf = gpu_bytes(&c.gpu, BUFS * HALF, 0x03, MemType::GpuCpu)?;
    // The flags the server writes (zeroed here: the kernel waits for the byte 1).
    let f = gpu_bytes(&c.gpu, BUFS, 0x00, MemType::Gpu)?;
    let (b_map, c_map, f_map) = (map(c, &b)?, map(c, &cbuf)?, map(c, &f)?);
    let a_map = RemoteMmap::from_export(&c.dev, &oob.recv_blob().map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    oob.send_blob(
        rdma::export_mmap(&f_map, &c.dev)
            .map_err(|e| e.to_string())?
            .as_bytes(),
    )
    .map_err(|e| e.to_string())?;
    let arr =
        |m: &Mmap, n, sz| GpuBufArr::<Local>::new(m, &c.gpu, n, sz).map_err(|e| e.to_string());
    let (b_arr, c_arr, f_arr) = (
        arr(&b_map, BUFS, HALF)?,
        arr(&c_map, BUFS, HALF)?,
        arr(&f_map, 1, BUFS)?,
    );
    let a_arr =
        GpuBufArr::<Remote>::new(&a_map, &c.gpu, BUFS, 2 * HALF).map_err(|e| e.to_string())?;

    let exit = ExitFlag::new(&c.gpu).map_err(|e| e.to_string())?;
    let report = RdmaCsReport::new(&c.gpu).map_err(|e| e.to_string())?;
    let handle = c.rdma.gpu_handle().map_err(|e| e.to_string())?;
    fn h(a: &GpuBufArr<Local>) -> Result<BufArrHandle<'_, Local>, String> {
        a.gpu_handle().map_err(|e| e.to_string())
    }
    let (bh, ch, fh) = (h(&b_arr)?, h(&c_arr)?, h(&f_arr)?);
    let ah = a_arr.gpu_handle().map_err(|e| e.to_string())?;
    c.kernels.scope(|s| -> Result<(), String> {
        let k = s
            .launch_rdma_cs_client(handle, conn, ah, bh, ch, fh, &exit, &report)
            .map_err(|e| e.to_string())?;
        // As the sample: the exit flag is set at once; the kernel sees it after its work.
        kernel_done(k.stop())
    })?;
    if report.first_error() != 0 {
        return Err(format!(
            "a device call failed with DOCA error {}",
            report.first_error()
        ));
    }
    if report.commits() != BUFS as u32 {
        return Err(format!(
            "wait_all reported {} commits, expected {BUFS}",
            report.commits()
        ));
    }
    println!("Client: {BUFS} commits completed on connection {conn}");
    Ok(())
}

/// Out of band: the server sends its details first, the client answers with its own.
fn connect_oob(c: &Common, oob: &mut OobStream, server: bool) -> Result<u32, String> {
    let (ours, conn) = c.rdma.export().map_err(|e| e.to_string())?;
    let theirs = if server {
        oob.send_blob(ours.as_bytes()).map_err(|e| e.to_string())?;
        oob.recv_blob().map_err(|e| e.to_string())?
    } else {
        let t = oob.recv_blob().map_err(|e| e.to_string())?;
        oob.send_blob(ours.as_bytes()).map_err(|e| e.to_string())?;
        t
    };
    c.rdma.connect(&conn, &theirs).map_err(|e| e.to_string())?;
    Ok(conn.id())
}

fn connect_cm(c: &Common, a: &Args) -> Result<u32, String> {
    // The client asks; the server's listener accepts in wait_established.
    if let Some(addr) = &a.server_addr {
        c.rdma
            .connect_to_addr(a.addr_type, addr, a.cm_port)
            .map_err(|e| e.to_string())?;
    }
    c.rdma
        .wait_established(CM_TIMEOUT)
        .map_err(|e| e.to_string())
}

fn run(a: &Args) -> Result<(), String> {
    // As the sample: CUDA is set up on the chosen GPU before anything else.
    let c = setup(a)?;
    let server = a.client.is_none();
    // Listening before the out-of-band accept: the client connects once that succeeded.
    if a.cm && server {
        c.rdma.listen(a.cm_port).map_err(|e| e.to_string())?;
    }
    let mut oob = match &a.client {
        None => oob_server(a.oob_port)?,
        Some(ip) => oob_client(ip, a.oob_port)?,
    };
    let conns = if a.cm { 2 } else { 1 };
    for n in 0..conns {
        let conn = if a.cm {
            connect_cm(&c, a)?
        } else {
            connect_oob(&c, &mut oob, server)?
        };
        if server {
            let label = if n == 0 {
                String::new()
            } else {
                format!(" for connection {}", n + 1)
            };
            server_connection(&c, &mut oob, conn, &label)?;
        } else {
            client_connection(&c, &mut oob, conn)?;
        }
    }
    if a.cm && server {
        c.rdma.stop_listen(a.cm_port).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn main() {
    let a = parse();
    match run(&a) {
        Ok(()) => info("Sample finished successfully"),
        Err(e) => {
            info("Sample finished with errors");
            fail(PROG, e);
        }
    }
}
