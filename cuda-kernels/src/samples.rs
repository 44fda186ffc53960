//! Launchers of the sample kernels (simple_receive, simple_send, send_wait_time), the exit
//! flag they watch, and the guard that stops and joins a running kernel.

use crate::launch::{KernelError, Kernels};
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use doca_gpunetio::{Gpu, GpuBuffer, MemType, RxqHandle, TxqHandle};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long [`RunningKernel::stop`] and drop wait for a kernel after setting its exit flag.
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Who calls the receive/send device functions: one thread, each warp, or the whole block
/// (`doca_gpu_dev_eth_exec_scope`; the samples' `-e` values 0, 1, 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecScope {
    /// One thread per call.
    Thread = 0,
    /// A warp per call.
    Warp = 1,
    /// A block per call.
    Block = 2,
}

impl ExecScope {
    /// From the samples' `-e` value.
    pub fn from_index(v: u32) -> Option<ExecScope> {
        match v {
            0 => Some(ExecScope::Thread),
            1 => Some(ExecScope::Warp),
            2 => Some(ExecScope::Block),
            _ => None,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            ExecScope::Thread => "thread",
            ExecScope::Warp => "warp",
            ExecScope::Block => "block",
        }
    }
}

/// A 32-bit flag in GPU memory that the CPU can write (GPU_CPU): kernels loop until it is
/// non-zero.
pub struct ExitFlag {
    buf: GpuBuffer<u32>,
}

impl ExitFlag {
    /// A cleared flag on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<ExitFlag, KernelError> {
        let buf = GpuBuffer::<u32>::new(gpu, 1, MemType::GpuCpu)
            .map_err(|e| KernelError::Invalid(format!("exit flag allocation: {e}")))?;
        if !buf.write(0, 0) {
            return Err(KernelError::Invalid(
                "exit flag memory has no CPU mapping".into(),
            ));
        }
        Ok(ExitFlag { buf })
    }

    /// Tells the kernels to finish.
    pub fn set(&self) {
        self.buf.write(0, 1);
    }

    /// Whether [`set`](Self::set) was called.
    pub fn is_set(&self) -> bool {
        self.buf.read(0).is_some_and(|v| v != 0)
    }

    fn device_ptr(&self) -> u64 {
        self.buf.device_ptr()
    }
}

/// Counters a kernel updates in CPU-visible memory (CPU_GPU) while it runs.
pub struct Counters {
    buf: GpuBuffer<u64>,
}

impl Counters {
    fn new(gpu: &Gpu, n: usize) -> Result<Counters, KernelError> {
        let buf = GpuBuffer::<u64>::new(gpu, n, MemType::CpuGpu)
            .map_err(|e| KernelError::Invalid(format!("counter allocation: {e}")))?;
        for i in 0..n {
            buf.write(i, 0);
        }
        Ok(Counters { buf })
    }

    fn get(&self, i: usize) -> u64 {
        self.buf.read(i).unwrap_or(0)
    }
}

/// What the receive kernel counted so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxCounts {
    /// Packets received.
    pub packets: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Packets that carry a pktgen payload.
    pub pktgen_frames: u64,
    /// Sum of the pktgen sequence numbers seen.
    pub seq_sum: u64,
    /// Receive calls that returned an error.
    pub errors: u64,
}

/// Counters of the receive kernel.
pub struct RxCounters(Counters);

impl RxCounters {
    /// Zeroed counters on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, KernelError> {
        Counters::new(gpu, 5).map(RxCounters)
    }

    /// A snapshot.
    pub fn read(&self) -> RxCounts {
        RxCounts {
            packets: self.0.get(0),
            bytes: self.0.get(1),
            pktgen_frames: self.0.get(2),
            seq_sum: self.0.get(3),
            errors: self.0.get(4),
        }
    }
}

/// What a send kernel counted so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxCounts {
    /// Packets sent and completed.
    pub packets: u64,
    /// Rounds (every thread sent once) done.
    pub rounds: u64,
    /// Device calls that returned an error.
    pub errors: u64,
}

/// Most blocks a send kernel uses (each block writes its own counters).
const TX_MAX_BLOCKS: usize = 2;

/// Counters of the send kernels: `struct doca_rs_tx_stats` (packets, rounds, errors) per
/// block, each written by one thread of its block; [`read`](Self::read) sums the blocks.
pub struct TxCounters(Counters);

impl TxCounters {
    /// Zeroed counters on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, KernelError> {
        Counters::new(gpu, 3 * TX_MAX_BLOCKS).map(TxCounters)
    }

    /// A snapshot: packets and errors summed over the blocks, rounds of the slowest block
    /// that has started (every block runs the same rounds).
    pub fn read(&self) -> TxCounts {
        let blocks: Vec<[u64; 3]> = (0..TX_MAX_BLOCKS)
            .map(|b| {
                [
                    self.0.get(3 * b),
                    self.0.get(3 * b + 1),
                    self.0.get(3 * b + 2),
                ]
            })
            .collect();
        TxCounts {
            packets: blocks.iter().map(|b| b[0]).sum(),
            rounds: blocks
                .iter()
                .map(|b| b[1])
                .filter(|&r| r > 0)
                .min()
                .unwrap_or(0),
            errors: blocks.iter().map(|b| b[2]).sum(),
        }
    }
}

/// A kernel running on its own stream. Dropping it sets the exit flag and waits for the
/// kernel (up to [`JOIN_TIMEOUT`]), so no error path leaves a kernel reading freed queues
/// or buffers.
#[must_use = "dropping a RunningKernel stops it"]
pub struct RunningKernel<'a> {
    stream: Arc<CudaStream>,
    exit: &'a ExitFlag,
    joined: bool,
    /// Recorded after the launch: complete once the kernel returned.
    done: CudaEvent,
    /// Device scratch memory of the kernel (grid barrier), freed after the join.
    _scratch: Option<CudaSlice<u32>>,
}

impl<'a> RunningKernel<'a> {
    fn new(
        stream: Arc<CudaStream>,
        exit: &'a ExitFlag,
        scratch: Option<CudaSlice<u32>>,
    ) -> Result<Self, KernelError> {
        let done = stream.record_event(None).map_err(|e| KernelError::Cuda {
            op: "cuEventRecord",
            msg: e.to_string(),
        })?;
        Ok(RunningKernel {
            stream,
            exit,
            joined: false,
            done,
            _scratch: scratch,
        })
    }

    /// Whether the kernel has returned (bounded work done, or it saw the exit flag).
    /// A failed kernel counts as finished; [`stop`](Self::stop) reports its error.
    pub fn is_finished(&self) -> bool {
        self.done.try_is_complete().unwrap_or(true)
    }

    /// Sets the exit flag and waits up to [`JOIN_TIMEOUT`] for the kernel to return.
    pub fn stop(self) -> Result<(), KernelError> {
        self.stop_within(JOIN_TIMEOUT)
    }

    /// Sets the exit flag and waits up to `timeout` for the kernel to return;
    /// [`KernelError::Hung`] when it does not.
    pub fn stop_within(mut self, timeout: Duration) -> Result<(), KernelError> {
        self.exit.set();
        self.join(timeout)
    }

    fn join(&mut self, timeout: Duration) -> Result<(), KernelError> {
        self.joined = true;
        let t0 = Instant::now();
        loop {
            match self.done.try_is_complete() {
                Ok(true) => break,
                Ok(false) if t0.elapsed() >= timeout => return Err(KernelError::Hung(timeout)),
                Ok(false) => std::thread::sleep(Duration::from_millis(1)),
                Err(e) => {
                    return Err(KernelError::Cuda {
                        op: "kernel execution",
                        msg: e.to_string(),
                    })
                }
            }
        }
        // Surfaces an error of the kernel itself (the event only says it ended).
        self.stream.synchronize().map_err(|e| KernelError::Cuda {
            op: "kernel execution",
            msg: e.to_string(),
        })
    }
}

impl Drop for RunningKernel<'_> {
    fn drop(&mut self) {
        if !self.joined {
            self.exit.set();
            // A hung kernel cannot be killed; the error path that dropped us reports.
            let _ = self.join(JOIN_TIMEOUT);
        }
    }
}

fn launch_err(name: &str) -> impl FnOnce(cudarc::driver::DriverError) -> KernelError + '_ {
    move |e| KernelError::Cuda {
        op: "cuLaunchKernel",
        msg: format!("{name}: {e}"),
    }
}

/// Most threads per block the sample launchers accept.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

impl Kernels {
    fn sample_stream(&self) -> Result<Arc<CudaStream>, KernelError> {
        self.gpu()
            .cuda()
            .new_stream()
            .map_err(|e| KernelError::Cuda {
                op: "cuStreamCreate",
                msg: e.to_string(),
            })
    }

    /// Starts the simple_receive kernel (1 block of 32 threads) on `rxq` with `scope`; it
    /// runs until `exit` is set.
    pub fn launch_simple_receive<'a>(
        &self,
        rxq: RxqHandle<'a>,
        scope: ExecScope,
        exit: &'a ExitFlag,
        counters: &'a RxCounters,
    ) -> Result<RunningKernel<'a>, KernelError> {
        let name = format!("doca_rs_simple_receive_{}", scope.suffix());
        let f = self.function(&name)?;
        let stream = self.sample_stream()?;
        let (flag, stats) = (exit.device_ptr(), counters.0.buf.device_ptr());
        let mut b = stream.launch_builder(&f);
        b.arg(&rxq).arg(&flag).arg(&stats);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match the kernel's (rxq *, const uint32_t *, stats *); the
        // queue, flag and counters are borrowed for 'a and the guard joins the kernel.
        unsafe { b.launch(cfg) }.map_err(launch_err(&name))?;
        RunningKernel::new(stream, exit, None)
    }

    /// Starts a simple_send kernel. `frames` holds `threads` frames of `size` bytes (one per
    /// thread, registered in the memory map whose big-endian key is `mkey_be`). `shared`:
    /// 2 blocks of `threads / 2` sending through `txq_send` with `scope`; otherwise one
    /// block writing ring entries itself. `rounds` = 0 runs until `exit` is set.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_simple_send<'a>(
        &self,
        txq: TxqHandle<'a>,
        shared: bool,
        scope: ExecScope,
        threads: u32,
        frames: &'a GpuBuffer<u8>,
        mkey_be: u32,
        size: u32,
        rounds: u64,
        exit: &'a ExitFlag,
        counters: &'a TxCounters,
    ) -> Result<RunningKernel<'a>, KernelError> {
        let (grid, block) = if shared {
            (2, threads / 2)
        } else {
            (1, threads)
        };
        if threads == 0
            || !threads.is_multiple_of(32)
            || block > MAX_THREADS_PER_BLOCK
            || (shared && block % 32 != 0)
        {
            return Err(KernelError::Invalid(format!(
                "{threads} threads: need a multiple of 32 (of 64 with a shared queue), at most {} per block",
                MAX_THREADS_PER_BLOCK
            )));
        }
        if (frames.len() as u64) < u64::from(threads) * u64::from(size) {
            return Err(KernelError::Invalid(format!(
                "frame buffer of {} bytes is smaller than {threads} x {size}",
                frames.len()
            )));
        }
        let name = if shared {
            format!("doca_rs_simple_send_shared_{}", scope.suffix())
        } else {
            "doca_rs_simple_send_exclusive".to_string()
        };
        let f = self.function(&name)?;
        let stream = self.sample_stream()?;
        let mut barrier = stream
            .alloc_zeros::<u32>(1)
            .map_err(|e| KernelError::Cuda {
                op: "allocate the grid barrier",
                msg: e.to_string(),
            })?;
        let (buf, flag, stats) = (
            frames.device_ptr(),
            exit.device_ptr(),
            counters.0.buf.device_ptr(),
        );
        let mut b = stream.launch_builder(&f);
        b.arg(&txq)
            .arg(&buf)
            .arg(&mkey_be)
            .arg(&size)
            .arg(&flag)
            .arg(&rounds)
            .arg(&stats)
            .arg(&mut barrier);
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: arguments match (txq *, uint8_t *, u32, u32, const u32 *, u64, stats *,
        // unsigned *barrier);
        // every thread touches only its own `size` bytes of `frames`, checked above; all
        // borrowed for 'a and joined by the guard.
        unsafe { b.launch(cfg) }.map_err(launch_err(&name))?;
        RunningKernel::new(stream, exit, Some(barrier))
    }

    /// Starts the send_wait_time kernel: `wait_on_time.len()` bursts of 32 frames of
    /// `size` bytes from `frames` (burst b = frames 32b..32b+31), burst b held until
    /// `wait_on_time[b]` (values from `EthTxq::calculate_timestamp`). `sent` counts the
    /// frames whose burst completed.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_send_wait_time<'a>(
        &self,
        txq: TxqHandle<'a>,
        frames: &'a GpuBuffer<u8>,
        mkey_be: u32,
        size: u32,
        wait_on_time: &'a GpuBuffer<u64>,
        exit: &'a ExitFlag,
        counters: &'a TxCounters,
    ) -> Result<RunningKernel<'a>, KernelError> {
        let bursts = wait_on_time.len() as u32;
        if (frames.len() as u64) < u64::from(bursts) * 32 * u64::from(size) {
            return Err(KernelError::Invalid(format!(
                "frame buffer of {} bytes is smaller than {bursts} bursts x 32 x {size}",
                frames.len()
            )));
        }
        let name = "doca_rs_send_wait_time";
        let f = self.function(name)?;
        let stream = self.sample_stream()?;
        let (buf, ts, flag, sent) = (
            frames.device_ptr(),
            wait_on_time.device_ptr(),
            exit.device_ptr(),
            counters.0.buf.device_ptr(),
        );
        let mut b = stream.launch_builder(&f);
        b.arg(&txq)
            .arg(&buf)
            .arg(&mkey_be)
            .arg(&size)
            .arg(&ts)
            .arg(&bursts)
            .arg(&flag)
            .arg(&sent);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: arguments match the kernel; frame and timestamp sizes checked above;
        // everything is borrowed for 'a and joined by the guard.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        RunningKernel::new(stream, exit, None)
    }
}
