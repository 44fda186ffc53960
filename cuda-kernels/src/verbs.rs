//! Launchers of the GPU verbs sample kernels (`kernels/verbs_*.cu`): the nine
//! `gpunetio_verbs_*` benchmarks' kernels, posting through a connected
//! [`doca_gpunetio::verbs::GpuQp`] with the `doca_gpu_dev_verbs_*` device functions.
//!
//! Local memory is a [`MemoryRegion`] (its key is the lkey; buffers a kernel reads or
//! writes itself, such as flags, must be GPU-accessible); peer memory is a [`RemoteBuf`]
//! (address and key as exchanged out of band). Sizes are checked against the local
//! regions before launching; the peer's ranges are checked by the NIC (a bad key or range
//! is an error completion, counted in [`VerbsErrors`]).
//!
//! The launchers are methods of [`KernelScope`] (see [`Kernels::scope`](crate::Kernels::scope)):
//! what a kernel borrows stays borrowed until the scope has joined it. Each returns a
//! [`VerbsRun`]; [`VerbsRun::wait_within`] gives the kernel time. Kernels that wait for
//! their peer (flags, ping-pong rounds) also watch an [`ExitFlag`], so a run whose peer
//! never answers can be stopped ([`KernelError::Hung`] from `wait_within`) instead of
//! spinning forever. A set flag stays set: use a new one for the next launches.

use crate::exit_flag::ExitFlag;
use crate::launch::KernelError;
use crate::launch::{grid, launch_err};
use crate::scope::{KernelScope, RunningKernel, JOIN_TIMEOUT};
use cudarc::driver::{sys::CUevent_flags, CudaEvent, CudaStream, LaunchConfig, PushKernelArg};
use doca_gpunetio::verbs::{MemoryRegion, QpHandle};
use doca_gpunetio::{Gpu, GpuAtomicBuffer, MemType};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Who calls the verbs device functions (`doca_gpu_dev_verbs_exec_scope`; the samples'
/// `-e` values 0 and 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerbsScope {
    /// Each thread posts its own WQEs.
    Thread,
    /// Each warp posts 32 WQEs together (lane 0 rings the doorbell).
    Warp,
}

impl VerbsScope {
    /// From the samples' `-e` value (0: per thread, 1: per warp).
    pub fn from_index(v: u32) -> Option<VerbsScope> {
        match v {
            0 => Some(VerbsScope::Thread),
            1 => Some(VerbsScope::Warp),
            _ => None,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            VerbsScope::Thread => "thread",
            VerbsScope::Warp => "warp",
        }
    }
}

/// Which side of a ping-pong a kernel plays: the client sends first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends first, then waits for the answer.
    Client,
    /// Waits, then answers.
    Server,
}

impl Role {
    fn suffix(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
        }
    }
}

/// A peer's registered buffer: its address and key (host byte order, as the samples
/// exchange them; the launchers pass `key.to_be()` to the kernels).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteBuf {
    /// Address in the peer's address space.
    pub addr: u64,
    /// The peer's rkey.
    pub key: u32,
}

impl RemoteBuf {
    /// The buffer `off` bytes further.
    pub fn at(self, off: u64) -> RemoteBuf {
        RemoteBuf {
            addr: self.addr + off,
            key: self.key,
        }
    }
}

/// How a bandwidth kernel runs: CUDA threads in all, WQEs per launch, message size, scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// CUDA threads in all (the samples' `-t`).
    pub threads: u32,
    /// Messages per launch (the samples' `-i`).
    pub iters: u32,
    /// Bytes per message.
    pub size: u32,
    /// Who posts (write_bw ignores it: its threads build raw WQEs).
    pub scope: VerbsScope,
}

impl Shape {
    /// Rounds of a kernel whose `threads` threads post one message each per round:
    /// `max(iters / threads, 1)` (the samples' loops).
    pub fn rounds(&self) -> u64 {
        (self.iters / self.threads.max(1)).max(1) as u64
    }

    fn check(&self, blocks: u32, what: &str) -> Result<(), KernelError> {
        let per_block = self.threads / blocks;
        if self.size == 0 || self.threads == 0 || !self.threads.is_multiple_of(blocks) {
            return Err(KernelError::Invalid(format!(
                "{what}: {} threads over {blocks} blocks of messages of {} bytes",
                self.threads, self.size
            )));
        }
        if per_block > crate::MAX_THREADS_PER_BLOCK {
            return Err(KernelError::Invalid(format!(
                "{what}: {per_block} threads per block (at most {})",
                crate::MAX_THREADS_PER_BLOCK
            )));
        }
        if self.scope == VerbsScope::Warp && !per_block.is_multiple_of(32) {
            return Err(KernelError::Invalid(format!(
                "{what}: warp scope needs whole warps per block, not {per_block} threads"
            )));
        }
        Ok(())
    }

    fn bytes(&self) -> u64 {
        self.threads as u64 * self.size as u64
    }
}

fn need(mr: &MemoryRegion, bytes: u64, what: &str) -> Result<(), KernelError> {
    if (mr.len() as u64) < bytes {
        return Err(KernelError::Invalid(format!(
            "{what}: {bytes} bytes needed, the region holds {}",
            mr.len()
        )));
    }
    Ok(())
}

fn need_gpu(mr: &MemoryRegion, bytes: u64, what: &str) -> Result<(), KernelError> {
    if !mr.is_gpu_accessible() {
        return Err(KernelError::Invalid(format!(
            "{what}: the kernel reads or writes it directly, so it must be GPU memory"
        )));
    }
    need(mr, bytes, what)
}

/// An error counter in CPU-visible memory (CPU_GPU) that the kernels increment for every
/// failed completion (and print "Error CQE!", as the samples do).
pub struct VerbsErrors {
    word: GpuAtomicBuffer<AtomicU32>,
}

impl VerbsErrors {
    /// A zeroed counter on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<VerbsErrors, KernelError> {
        let word = GpuAtomicBuffer::new(gpu, 1, MemType::CpuGpu)
            .map_err(|e| KernelError::Invalid(format!("error counter allocation: {e}")))?;
        Ok(VerbsErrors { word })
    }

    /// Failed completions counted so far.
    pub fn count(&self) -> u32 {
        self.word[0].load(Ordering::Acquire)
    }

    fn device_ptr(&self) -> u64 {
        self.word.device_ptr()
    }
}

/// A launched verbs kernel, run in a [`KernelScope`] (which joins it before the scope
/// ends, so what it borrows stays alive). Its kernel time is measured between events
/// recorded around the launch, as the samples measure it. Dropping it before the kernel
/// returned sets its exit flag: kernels that wait for their peer give up then.
#[must_use = "dropping a VerbsRun stops its kernel"]
pub struct VerbsRun<'scope> {
    running: RunningKernel<'scope>,
    start: CudaEvent,
    end: CudaEvent,
}

impl VerbsRun<'_> {
    /// Whether the kernel returned (a failed kernel counts as returned).
    pub fn is_finished(&self) -> bool {
        self.running.is_finished()
    }

    /// Waits up to `timeout` for the kernel to return by itself: its kernel time in
    /// milliseconds, or [`KernelError::Hung`] (the kernel is then stopped through its exit
    /// flag, and the scope waits for it).
    pub fn wait_within(self, timeout: Duration) -> Result<f32, KernelError> {
        let t0 = Instant::now();
        while !self.running.is_finished() {
            if t0.elapsed() >= timeout {
                let _ = self.running.stop_within(JOIN_TIMEOUT);
                return Err(KernelError::Hung(timeout));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        // The kernel returned: surface its own failure, if any.
        self.end.synchronize().map_err(|e| KernelError::Cuda {
            op: "kernel execution",
            msg: e.to_string(),
        })?;
        crate::driver_compat::elapsed_ms(&self.start, &self.end).map_err(|e| KernelError::Cuda {
            op: "time the kernel",
            msg: e.to_string(),
        })
    }

    /// Sets the exit flag and waits up to [`JOIN_TIMEOUT`] for the kernel.
    pub fn stop(self) -> Result<(), KernelError> {
        self.running.stop()
    }
}

fn event(stream: &CudaStream) -> Result<CudaEvent, KernelError> {
    stream
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(|e| KernelError::Cuda {
            op: "cuEventRecord",
            msg: e.to_string(),
        })
}

/// Kernel arguments, pushed in order (each a `DeviceRepr` value of the kernel's type).
enum Arg {
    U8(u8),
    U32(u32),
    U64(u64),
    /// A buffer as the kernels take it: its address (u64), then its key big-endian (u32).
    Buf(u64, u32),
}

impl Arg {
    /// A local registered region: its address and lkey.
    fn local(mr: &MemoryRegion) -> Self {
        Arg::Buf(mr.addr(), mr.key().to_be())
    }

    /// A peer's buffer: its address and rkey.
    fn remote(buf: RemoteBuf) -> Self {
        Arg::Buf(buf.addr, buf.key.to_be())
    }
}

impl<'scope> KernelScope<'scope, '_> {
    /// Launches `name` with a QP handle, an optional companion handle, `args` and the exit
    /// flag's address last, and tracks it in this scope.
    ///
    /// # Safety
    /// `args` match the kernel's parameters between the QP (and companion) and the exit
    /// flag, and every address among them stays valid for `'scope`.
    unsafe fn launch_verbs(
        &self,
        name: &str,
        qp: QpHandle<'scope>,
        companion: Option<QpHandle<'scope>>,
        cfg: LaunchConfig,
        args: &[Arg],
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let start = event(&stream)?;
        let flag = exit.device_ptr();
        let mut b = stream.launch_builder(&f);
        b.arg(&qp);
        if let Some(c) = &companion {
            b.arg(c);
        }
        for a in args {
            match a {
                Arg::U8(v) => b.arg(v),
                Arg::U32(v) => b.arg(v),
                Arg::U64(v) => b.arg(v),
                Arg::Buf(addr, key_be) => b.arg(addr).arg(key_be),
            };
        }
        b.arg(&flag);
        // SAFETY: caller contract (argument list and lifetimes); the scope joins the kernel.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        let end = event(&stream);
        let running = self.track(stream, exit, None)?;
        Ok(VerbsRun {
            running,
            start,
            end: end?,
        })
    }

    /// write_bw: `<<<1, threads>>>`; each round every thread builds one RDMA write WQE of
    /// `size` bytes from `src + size * tid` to `dst + size * tid` at `sq_wqe_pi + tid` (the
    /// low-level helpers), the last thread submits the round, until `iters` WQEs; the last
    /// CQE is polled.
    pub fn verbs_write_bw(
        &self,
        qp: QpHandle<'scope>,
        shape: Shape,
        src: &'scope MemoryRegion,
        dst: RemoteBuf,
        errors: &'scope VerbsErrors,
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        let shape = Shape {
            scope: VerbsScope::Thread,
            ..shape
        };
        shape.check(1, "write_bw")?;
        need(src, shape.bytes(), "write_bw source")?;
        let args = [
            Arg::U32(shape.iters),
            Arg::U32(shape.size),
            Arg::local(src),
            Arg::remote(dst),
            Arg::U64(errors.device_ptr()),
        ];
        // SAFETY: (qp, iters, size, src, skey, dst, dkey, errors) as declared; the kernel
        // touches only the borrowed region (through the NIC) and the counter.
        unsafe {
            self.launch_verbs(
                "doca_rs_verbs_write_bw",
                qp,
                None,
                grid(1, shape.threads),
                &args,
                exit,
            )
        }
    }

    /// write_lat, `<<<1, 1>>>`: `iters` round trips of a `size`-byte RDMA write from `post`
    /// to the peer's `dst` (its poll buffer). Round i carries `(start + i + 1) mod 256` in
    /// byte 0; the client writes first and waits for it in byte 0 of `poll`, the server
    /// waits, then answers.
    #[allow(clippy::too_many_arguments)]
    pub fn verbs_write_lat(
        &self,
        qp: QpHandle<'scope>,
        role: Role,
        iters: u32,
        size: u32,
        poll: &'scope MemoryRegion,
        post: &'scope MemoryRegion,
        dst: RemoteBuf,
        start: u32,
        errors: &'scope VerbsErrors,
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        if size == 0 {
            return Err(KernelError::Invalid("write_lat: empty messages".into()));
        }
        need_gpu(poll, 1, "write_lat poll buffer")?;
        need_gpu(post, size as u64, "write_lat post buffer")?;
        let args = [
            Arg::U32(iters),
            Arg::U32(size),
            Arg::U64(poll.addr()),
            Arg::local(post),
            Arg::remote(dst),
            Arg::U32(start),
            Arg::U64(errors.device_ptr()),
        ];
        let name = format!("doca_rs_verbs_write_lat_{}", role.suffix());
        // SAFETY: (qp, iters, size, poll, post, pkey, dst, dkey, start, errors); the kernel
        // reads byte 0 of `poll`, writes byte 0 of `post` (both GPU memory, checked).
        unsafe { self.launch_verbs(&name, qp, None, grid(1, 1), &args, exit) }
    }

    /// put_bw, `<<<2, threads / 2>>>`: each round every thread puts `size` bytes from
    /// `src + size * gtid` to `dst + size * gtid` and waits for the completion (warp scope:
    /// lane 31 waits for its warp's 32), until `iters` messages.
    pub fn verbs_put_bw(
        &self,
        qp: QpHandle<'scope>,
        shape: Shape,
        src: &'scope MemoryRegion,
        dst: RemoteBuf,
        errors: &'scope VerbsErrors,
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        shape.check(2, "put_bw")?;
        need(src, shape.bytes(), "put_bw source")?;
        let args = [
            Arg::U32(shape.iters),
            Arg::U32(shape.size),
            Arg::local(src),
            Arg::remote(dst),
            Arg::U64(errors.device_ptr()),
        ];
        let name = format!("doca_rs_verbs_put_bw_{}", shape.scope.suffix());
        // SAFETY: (qp, iters, size, src, skey, dst, dkey, errors) as declared.
        unsafe { self.launch_verbs(&name, qp, None, grid(2, shape.threads / 2), &args, exit) }
    }

    /// get_bw, `<<<2, threads / 2>>>`: each round every thread reads `size` bytes from
    /// `remote + size * gtid` into `local + size * gtid`; thread 0 of each block then waits
    /// for the QP's reads (with a DUMP of one byte of `dump` before sm_90).
    #[allow(clippy::too_many_arguments)]
    pub fn verbs_get_bw(
        &self,
        qp: QpHandle<'scope>,
        shape: Shape,
        local: &'scope MemoryRegion,
        remote: RemoteBuf,
        dump: &'scope MemoryRegion,
        errors: &'scope VerbsErrors,
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        shape.check(2, "get_bw")?;
        need(local, shape.bytes(), "get_bw destination")?;
        need(dump, 1, "get_bw dump flag")?;
        let args = [
            Arg::U32(shape.iters),
            Arg::U32(shape.size),
            Arg::local(local),
            Arg::remote(remote),
            Arg::local(dump),
            Arg::U64(errors.device_ptr()),
        ];
        let name = format!("doca_rs_verbs_get_bw_{}", shape.scope.suffix());
        // SAFETY: (qp, iters, size, local, lkey, remote, rkey, dump, dkey, errors); the
        // kernel writes only through the NIC into the borrowed regions.
        unsafe { self.launch_verbs(&name, qp, None, grid(2, shape.threads / 2), &args, exit) }
    }

    /// put_signal_bw (`companion` None) or put_counter_bw (the group's companion QP),
    /// `<<<2, threads / 2>>>`: each thread (warp scope: each warp) does
    /// [`Shape::rounds`] puts of `size` bytes to `dst + size * gtid`, each adding 1 to
    /// the peer's 8-byte flag `flags + 8 * gtid` (put_counter: through the companion, after
    /// a WAIT for the write); the old values land in `prev`. The kernel returns when its
    /// last fetched value is `base + rounds - 1` (`base`: the flag before this launch) and
    /// the QP's completions are in.
    #[allow(clippy::too_many_arguments)]
    pub fn verbs_put_signal_bw(
        &self,
        qp: QpHandle<'scope>,
        companion: Option<QpHandle<'scope>>,
        shape: Shape,
        src: &'scope MemoryRegion,
        dst: RemoteBuf,
        flags: RemoteBuf,
        prev: &'scope MemoryRegion,
        base: u64,
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        let what = if companion.is_some() {
            "put_counter_bw"
        } else {
            "put_signal_bw"
        };
        shape.check(2, what)?;
        need(src, shape.bytes(), what)?;
        need_gpu(prev, 8 * shape.threads as u64, "previous-flag buffer")?;
        let args = [
            Arg::U32(shape.iters),
            Arg::U32(shape.size),
            Arg::local(src),
            Arg::remote(dst),
            Arg::remote(flags),
            Arg::local(prev),
            Arg::U64(base),
        ];
        let name = format!("doca_rs_verbs_{what}_{}", shape.scope.suffix());
        // The signal kernels take a companion parameter they do not use: pass the QP.
        let comp = Some(companion.unwrap_or(qp));
        // SAFETY: (qp, companion, iters, size, src, skey, dst, dkey, flags, fkey, prev,
        // pkey, base); the kernel reads `prev` (GPU memory, checked) and writes through the
        // NIC only.
        unsafe { self.launch_verbs(&name, qp, comp, grid(2, shape.threads / 2), &args, exit) }
    }

    /// put_signal_lat (`companion` None) or put_counter_lat, `<<<1, 1>>>`: `iters` round
    /// trips; each side puts `size` bytes from `src` to `dst` adding 1 to the peer's flag
    /// `rflag` (old value into `prev`), and round i ends when the local flag `lflag`
    /// reaches `start + i + 1`. The client sends first.
    #[allow(clippy::too_many_arguments)]
    pub fn verbs_put_signal_lat(
        &self,
        qp: QpHandle<'scope>,
        companion: Option<QpHandle<'scope>>,
        role: Role,
        iters: u32,
        size: u32,
        src: &'scope MemoryRegion,
        dst: RemoteBuf,
        rflag: RemoteBuf,
        prev: &'scope MemoryRegion,
        lflag: &'scope MemoryRegion,
        start: u64,
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        let what = if companion.is_some() {
            "put_counter_lat"
        } else {
            "put_signal_lat"
        };
        if size == 0 {
            return Err(KernelError::Invalid(format!("{what}: empty messages")));
        }
        need(src, size as u64, what)?;
        need(prev, 8, "previous-flag buffer")?;
        need_gpu(lflag, 8, "local flag")?;
        let args = [
            Arg::U32(iters),
            Arg::U32(size),
            Arg::local(src),
            Arg::remote(dst),
            Arg::remote(rflag),
            Arg::local(prev),
            Arg::U64(lflag.addr()),
            Arg::U64(start),
        ];
        let name = format!("doca_rs_verbs_{what}_{}", role.suffix());
        let comp = Some(companion.unwrap_or(qp));
        // SAFETY: (qp, companion, iters, size, src, skey, dst, dkey, rflag, rfkey, prev,
        // pkey, lflag, start); the kernel reads `lflag` (GPU memory, checked).
        unsafe { self.launch_verbs(&name, qp, comp, grid(1, 1), &args, exit) }
    }

    /// twosided_bw client, `<<<1, threads>>>`: per round (of [`Shape::rounds`]) thread 0
    /// waits until the local `flag` (the server writes it) is `start + round + 1`, then
    /// every thread (warp scope: every warp) sends `size` bytes from `src + size * tid`;
    /// at the end the last send's completion is polled.
    #[allow(clippy::too_many_arguments)]
    pub fn verbs_twosided_client(
        &self,
        qp: QpHandle<'scope>,
        shape: Shape,
        src: &'scope MemoryRegion,
        flag: &'scope MemoryRegion,
        start: u64,
        errors: &'scope VerbsErrors,
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        shape.check(1, "twosided_bw client")?;
        need(src, shape.bytes(), "twosided_bw source")?;
        need_gpu(flag, 8, "twosided_bw flag")?;
        let args = [
            Arg::U32(shape.iters),
            Arg::U32(shape.size),
            Arg::local(src),
            Arg::U64(flag.addr()),
            Arg::U64(start),
            Arg::U64(errors.device_ptr()),
        ];
        let name = format!("doca_rs_verbs_twosided_client_{}", shape.scope.suffix());
        // SAFETY: (qp, iters, size, src, skey, flag, start, errors); the kernel reads the
        // flag (GPU memory, checked).
        unsafe { self.launch_verbs(&name, qp, None, grid(1, shape.threads), &args, exit) }
    }

    /// twosided_bw server, `<<<1, threads>>>`: per round every thread (warp scope: every
    /// warp) posts a receive of `size` bytes at `buf + size * tid`, thread 0 writes
    /// `start + round + 1` into `lflag` and RDMA-writes it to the client's `rflag`, then
    /// the receives are awaited. `inline_check`: receives arrive inside the CQEs, and every
    /// thread checks its CQE (inline bit, length `size`, first byte `fill`).
    #[allow(clippy::too_many_arguments)]
    pub fn verbs_twosided_server(
        &self,
        qp: QpHandle<'scope>,
        shape: Shape,
        inline_check: bool,
        buf: &'scope MemoryRegion,
        lflag: &'scope MemoryRegion,
        rflag: RemoteBuf,
        dump: &'scope MemoryRegion,
        start: u64,
        fill: u8,
        errors: &'scope VerbsErrors,
        exit: &'scope ExitFlag,
    ) -> Result<VerbsRun<'scope>, KernelError> {
        shape.check(1, "twosided_bw server")?;
        need(buf, shape.bytes(), "twosided_bw receive buffer")?;
        need_gpu(lflag, 8, "twosided_bw flag")?;
        need(dump, 1, "twosided_bw dump flag")?;
        if inline_check && shape.size > 32 {
            return Err(KernelError::Invalid(format!(
                "twosided_bw: inline receives carry at most 32 bytes, not {}",
                shape.size
            )));
        }
        let args = [
            Arg::U32(shape.iters),
            Arg::U32(shape.size),
            Arg::local(buf),
            Arg::local(lflag),
            Arg::remote(rflag),
            Arg::local(dump),
            Arg::U64(start),
            Arg::U8(fill),
            Arg::U64(errors.device_ptr()),
        ];
        let inl = if inline_check { "inline_" } else { "" };
        let name = format!(
            "doca_rs_verbs_twosided_server_{inl}{}",
            shape.scope.suffix()
        );
        // SAFETY: (qp, iters, size, buf, bkey, lflag, lfkey, rflag, rfkey, dump, dkey,
        // start, fill, errors); the kernel writes `lflag` (GPU memory, checked).
        unsafe { self.launch_verbs(&name, qp, None, grid(1, shape.threads), &args, exit) }
    }
}
