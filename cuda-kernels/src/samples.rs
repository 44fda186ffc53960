//! Launchers of the sample kernels (simple_receive, simple_send, send_wait_time), methods
//! of [`KernelScope`], and the exit flag and counters the kernels share with the CPU.

use crate::counters::CounterBlock;
use crate::exit_flag::ExitFlag;
use crate::launch::{grid, launch_err, KernelError, Kernels};
use crate::scope::{KernelScope, RunningKernel};
use cudarc::driver::{CudaStream, PushKernelArg};
use doca_gpunetio::{Gpu, GpuBuffer, RxqHandle, TxqHandle};
use std::sync::Arc;

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
pub struct RxCounters(CounterBlock);

impl RxCounters {
    /// Zeroed counters on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, KernelError> {
        CounterBlock::new(gpu, 5).map(RxCounters)
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
pub struct TxCounters(CounterBlock);

impl TxCounters {
    /// Zeroed counters on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, KernelError> {
        CounterBlock::new(gpu, 3 * TX_MAX_BLOCKS).map(TxCounters)
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

/// Most threads per block the sample launchers accept.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

impl Kernels {
    /// A stream of its own for one sample kernel (the end of its work is the kernel's end).
    pub(crate) fn sample_stream(&self) -> Result<Arc<CudaStream>, KernelError> {
        self.gpu()
            .cuda()
            .new_stream()
            .map_err(|e| KernelError::Cuda {
                op: "cuStreamCreate",
                msg: e.to_string(),
            })
    }
}

impl<'scope> KernelScope<'scope, '_> {
    /// Starts the simple_receive kernel (1 block of 32 threads) on `rxq` with `scope`; it
    /// runs until `exit` is set.
    pub fn launch_simple_receive(
        &self,
        rxq: RxqHandle<'scope>,
        scope: ExecScope,
        exit: &'scope ExitFlag,
        counters: &'scope RxCounters,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let name = format!("doca_rs_simple_receive_{}", scope.suffix());
        let f = self.kernels().function(&name)?;
        let stream = self.kernels().sample_stream()?;
        let (flag, stats) = (exit.device_ptr(), counters.0.device_ptr());
        let mut b = stream.launch_builder(&f);
        b.arg(&rxq).arg(&flag).arg(&stats);
        let cfg = grid(1, 32);
        // SAFETY: the arguments match the kernel's (rxq *, const uint32_t *, stats *); the
        // queue, flag and counters are borrowed for 'scope and the scope joins the kernel.
        unsafe { b.launch(cfg) }.map_err(launch_err(&name))?;
        self.track(stream, exit, None)
    }

    /// Starts a simple_send kernel. `frames` holds `threads` frames of `size` bytes (one per
    /// thread, registered in the memory map whose big-endian key is `mkey_be`). `shared`:
    /// 2 blocks of `threads / 2` sending through `txq_send` with `scope`; otherwise one
    /// block writing ring entries itself. `rounds` = 0 runs until `exit` is set.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_simple_send(
        &self,
        txq: TxqHandle<'scope>,
        shared: bool,
        scope: ExecScope,
        threads: u32,
        frames: &'scope GpuBuffer<u8>,
        mkey_be: u32,
        size: u32,
        rounds: u64,
        exit: &'scope ExitFlag,
        counters: &'scope TxCounters,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let (blocks, block) = if shared {
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
        let f = self.kernels().function(&name)?;
        let stream = self.kernels().sample_stream()?;
        let mut barrier = stream
            .alloc_zeros::<u32>(1)
            .map_err(|e| KernelError::Cuda {
                op: "allocate the grid barrier",
                msg: e.to_string(),
            })?;
        let (buf, flag, stats) = (
            frames.device_ptr(),
            exit.device_ptr(),
            counters.0.device_ptr(),
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
        let cfg = grid(blocks, block);
        // SAFETY: arguments match (txq *, uint8_t *, u32, u32, const u32 *, u64, stats *,
        // unsigned *barrier);
        // every thread touches only its own `size` bytes of `frames`, checked above; all
        // borrowed for 'scope and joined by the scope.
        unsafe { b.launch(cfg) }.map_err(launch_err(&name))?;
        self.track(stream, exit, Some(barrier))
    }

    /// Starts the send_wait_time kernel: `wait_on_time.len()` bursts of 32 frames of
    /// `size` bytes from `frames` (burst b = frames 32b..32b+31), burst b held until
    /// `wait_on_time[b]` (values from `EthTxq::calculate_timestamp`). `sent` counts the
    /// frames whose burst completed.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_send_wait_time(
        &self,
        txq: TxqHandle<'scope>,
        frames: &'scope GpuBuffer<u8>,
        mkey_be: u32,
        size: u32,
        wait_on_time: &'scope GpuBuffer<u64>,
        exit: &'scope ExitFlag,
        counters: &'scope TxCounters,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let bursts = wait_on_time.len() as u32;
        if (frames.len() as u64) < u64::from(bursts) * 32 * u64::from(size) {
            return Err(KernelError::Invalid(format!(
                "frame buffer of {} bytes is smaller than {bursts} bursts x 32 x {size}",
                frames.len()
            )));
        }
        let name = "doca_rs_send_wait_time";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let (buf, ts, flag, sent) = (
            frames.device_ptr(),
            wait_on_time.device_ptr(),
            exit.device_ptr(),
            counters.0.device_ptr(),
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
        let cfg = grid(1, 32);
        // SAFETY: arguments match the kernel; frame and timestamp sizes checked above;
        // everything is borrowed for 'scope and joined by the scope.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }
}
