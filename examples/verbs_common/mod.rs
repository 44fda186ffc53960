//! What the nine GPU verbs samples (`examples/verbs_*.rs`) share, included with `#[path]`:
//! the command line of DOCA's `gpunetio_verbs_*` samples ([`cli`]), their out-of-band TCP
//! exchange ([`oob`]), resources built as they build them ([`setup`]), their result
//! tables ([`report`]) and the server's SIGINT/SIGTERM wait.

#![allow(dead_code)]

pub mod cli;
#[path = "../common/cli.rs"]
pub mod general;
#[path = "../common/gpu.rs"]
pub mod gpu;
pub mod onesided;
pub mod oob;
pub mod report;
pub mod setup;
pub mod signal;

use std::sync::atomic::{AtomicI32, Ordering};

/// The message sizes of the samples (bytes).
pub const SIZES: [u32; 10] = [1, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

/// twosided_bw's sizes with inline receives (`-x`): all fit in a CQE.
pub const INLINE_SIZES: [u32; 10] = [1, 4, 8, 12, 16, 20, 24, 28, 30, 32];

/// The host page size buffers are rounded to.
pub const PAGE: usize = 4096;

/// `n` rounded up to whole pages.
pub fn page_round(n: usize) -> usize {
    n.div_ceil(PAGE) * PAGE
}

/// A DOCA-style log line on stdout: `[DOCA][INF][prog] msg`.
pub fn log(level: &str, prog: &str, msg: impl std::fmt::Display) {
    println!("[DOCA][{level}][{prog}] {msg}");
}

/// INFO log line.
pub fn info(prog: &str, msg: impl std::fmt::Display) {
    log("INF", prog, msg);
}

/// WARNING log line (how the samples report successful validation).
pub fn warn(prog: &str, msg: impl std::fmt::Display) {
    log("WRN", prog, msg);
}

/// ERROR log line.
pub fn err(prog: &str, msg: impl std::fmt::Display) {
    log("ERR", prog, msg);
}

static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// Installs the SIGINT/SIGTERM handler the bandwidth servers wait on.
pub fn install_signals() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only performs an atomic store, which is async-signal-safe.
        unsafe { libc::signal(sig, handler) };
    }
}

/// Waits for SIGINT or SIGTERM and logs it as the samples do.
pub fn wait_for_signal(prog: &str) {
    loop {
        let s = SIGNAL.load(Ordering::SeqCst);
        if s != 0 {
            info(prog, format!("Signal {s} received, preparing to exit!"));
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// How long one kernel launch may wait for its peer before the sample gives up.
pub const RUN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// The samples' launch pattern for one size: a warm-up launch (`launch(0)`), waited for,
/// then the timed one (`launch(1)`); its kernel time in milliseconds.
pub fn warmup_then_timed<'a>(
    mut launch: impl FnMut(u64) -> Result<cuda_kernels::VerbsRun<'a>, cuda_kernels::KernelError>,
) -> Result<f32, String> {
    let kerr = |e: cuda_kernels::KernelError| format!("kernel: {e}");
    launch(0)
        .map_err(kerr)?
        .wait_within(RUN_TIMEOUT)
        .map_err(kerr)?;
    launch(1)
        .map_err(kerr)?
        .wait_within(RUN_TIMEOUT)
        .map_err(kerr)
}

/// The bandwidth table's rows: for each message size, a warm-up and a timed launch of
/// `launch(size index, shape, launch number)` (see [`warmup_then_timed`]), the error check
/// when the kernel counts errors, and the row.
pub fn bw_rows<'a>(
    args: &cli::Args,
    sizes: &[u32],
    scope: cuda_kernels::VerbsScope,
    errors: Option<&cuda_kernels::VerbsErrors>,
    mut launch: impl FnMut(
        usize,
        cuda_kernels::Shape,
        u64,
    ) -> Result<cuda_kernels::VerbsRun<'a>, cuda_kernels::KernelError>,
) -> Result<(), String> {
    for (i, &size) in sizes.iter().enumerate() {
        let shape = cuda_kernels::Shape {
            threads: args.threads,
            iters: args.iters,
            size,
            scope,
        };
        let ms = warmup_then_timed(|n| launch(i, shape, n))?;
        if let Some(e) = errors {
            no_errors(e, size)?;
        }
        report::bw_row(size, args.iters, ms);
    }
    Ok(())
}

/// The latency table's rows: as [`bw_rows`], one thread, with `launch(size index, size,
/// launch number)`.
pub fn lat_rows<'a>(
    args: &cli::Args,
    sizes: &[u32],
    errors: Option<&cuda_kernels::VerbsErrors>,
    mut launch: impl FnMut(
        usize,
        u32,
        u64,
    ) -> Result<cuda_kernels::VerbsRun<'a>, cuda_kernels::KernelError>,
) -> Result<(), String> {
    for (i, &size) in sizes.iter().enumerate() {
        let ms = warmup_then_timed(|n| launch(i, size, n))?;
        if let Some(e) = errors {
            no_errors(e, size)?;
        }
        report::lat_row(size, args.iters, ms);
    }
    Ok(())
}

/// The launch line of the two-block bandwidth kernels (`-t`/2 threads each).
pub fn launching_two_blocks(prog: &str, args: &cli::Args) {
    info(
        prog,
        format!(
            "Launching {prog} kernel with 2 CUDA Blocks, {} CUDA threads, scope {:?}",
            args.threads / 2,
            args.scope
        ),
    );
}

/// The launch line of the one-thread latency kernels.
pub fn launching_one_thread(prog: &str) {
    info(
        prog,
        format!("Launching {prog} kernel with 1 CUDA Blocks, 1 CUDA threads"),
    );
}

/// The out-of-band channel of a symmetric sample (both sides run a kernel): listens as the
/// server, connects as the client.
pub fn oob_open(prog: &str, args: &cli::Args) -> Result<oob::Oob, String> {
    match &args.client {
        None => oob::Oob::server(prog, args.oob_port),
        Some(ip) => oob::Oob::client(prog, ip, args.oob_port),
    }
}

/// Swaps buffer lists over `oob` in the samples' order: the server sends first, the client
/// receives first.
pub fn swap_bufs<T>(
    args: &cli::Args,
    oob: &mut oob::Oob,
    send: impl FnOnce(&mut oob::Oob) -> Result<(), String>,
    recv: impl FnOnce(&mut oob::Oob) -> Result<T, String>,
) -> Result<T, String> {
    if args.is_server() {
        send(oob)?;
        recv(oob)
    } else {
        let r = recv(oob)?;
        send(oob)?;
        Ok(r)
    }
}

/// Fails when a kernel counted failed completions.
pub fn no_errors(errors: &cuda_kernels::VerbsErrors, size: u32) -> Result<(), String> {
    match errors.count() {
        0 => Ok(()),
        n => Err(format!("{n} error completion(s) at message size {size}")),
    }
}

/// Runs a sample's `main` body: prints its error and returns failure, as the samples
/// return `EXIT_FAILURE` after the first error.
pub fn exit(prog: &str, r: Result<(), String>) -> std::process::ExitCode {
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            err(prog, &e);
            eprintln!("{prog}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
