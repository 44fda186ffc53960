//! Launchers of the gpunetio_rdma_client_server_write kernels
//! (`kernels/rdma_client_server_write.cu`) and of the RDMA write bench kernel
//! (`kernels/rdma_bench.cu`), methods of [`KernelScope`], and the report the sample
//! kernels leave in CPU-visible memory.

use crate::exit_flag::ExitFlag;
use crate::launch::KernelError;
use crate::launch::{grid, launch_err};
use crate::scope::{KernelScope, RunningKernel};
use crate::status::DeviceStatus;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use doca_gpunetio::rdma::{BufArrHandle, Local, RdmaHandle, Remote};
use doca_gpunetio::{Gpu, GpuAtomicBuffer, MemType};
use std::sync::atomic::{AtomicU32, Ordering};

/// Buffers exchanged per connection (the sample's 4: even ones written with immediate,
/// odd ones sent with immediate).
pub const RDMA_CS_BUFS: usize = 4;
/// Bytes each of the two client threads moves per buffer; a server buffer is two halves.
pub const RDMA_CS_HALF: usize = 128;

/// Words of the report: the first error, then 5 per buffer.
const REPORT_WORDS: usize = 1 + 5 * RDMA_CS_BUFS;

/// What the server kernel saw for one buffer: `recv_wait_all`'s count, immediates and
/// connection indices (`u32::MAX` where it reported nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvRound {
    /// Receives completed.
    pub ops: u32,
    /// Immediates of the two receives, in arrival order.
    pub imm: [u32; 2],
    /// Connection indices of the two receives, in arrival order.
    pub conn: [u32; 2],
}

/// The report of a client or server kernel (`report` in the kernel file): the first
/// failing `doca_error_t` of any device call, the client's completed commits, the server's
/// receive rounds.
pub struct RdmaCsReport {
    words: GpuAtomicBuffer<AtomicU32>,
}

impl RdmaCsReport {
    /// A zeroed report on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<RdmaCsReport, KernelError> {
        let words = GpuAtomicBuffer::new(gpu, REPORT_WORDS, MemType::CpuGpu)
            .map_err(|e| KernelError::Invalid(format!("report allocation: {e}")))?;
        Ok(RdmaCsReport { words })
    }

    fn get(&self, i: usize) -> u32 {
        self.words.get(i).map_or(0, |w| w.load(Ordering::Acquire))
    }

    /// The first `doca_error_t` a device call returned, 0 when every call succeeded.
    pub fn first_error(&self) -> u32 {
        self.get(0)
    }

    /// Client: the commits `doca_gpu_dev_rdma_wait_all` reported.
    pub fn commits(&self) -> u32 {
        self.get(1)
    }

    /// Server: what `recv_wait_all` reported for each buffer.
    pub fn rounds(&self) -> [RecvRound; RDMA_CS_BUFS] {
        std::array::from_fn(|i| {
            let w = |k| self.get(1 + 5 * i + k);
            RecvRound {
                ops: w(0),
                imm: [w(1), w(2)],
                conn: [w(3), w(4)],
            }
        })
    }
}

fn two_threads() -> LaunchConfig {
    grid(1, 2)
}

fn check_arrays<S: doca_gpunetio::rdma::MemSide>(
    what: &str,
    arr: &BufArrHandle<'_, S>,
) -> Result<(), KernelError> {
    if arr.as_raw().is_null() {
        return Err(KernelError::Invalid(format!("{what}: NULL buffer array")));
    }
    Ok(())
}

impl<'scope> KernelScope<'scope, '_> {
    /// Starts the sample's server kernel (1 block of 2 threads) on connection
    /// `connection_index`: receives into `local_a` (at least [`RDMA_CS_BUFS`] buffers of
    /// 2 x [`RDMA_CS_HALF`] bytes), flags the client through `remote_f` (the client's
    /// flag buffer, at least [`RDMA_CS_BUFS`] bytes). It finishes by itself once the
    /// client's writes and sends arrived; `exit` is only what the guard sets.
    pub fn launch_rdma_cs_server(
        &self,
        rdma: RdmaHandle<'scope>,
        connection_index: u32,
        local_a: BufArrHandle<'scope, Local>,
        remote_f: BufArrHandle<'scope, Remote>,
        exit: &'scope ExitFlag,
        report: &'scope RdmaCsReport,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        check_arrays("A", &local_a)?;
        check_arrays("F", &remote_f)?;
        let name = "doca_rs_rdma_cs_server";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let rep = report.words.device_ptr();
        let mut b = stream.launch_builder(&f);
        b.arg(&rdma)
            .arg(&connection_index)
            .arg(&local_a)
            .arg(&remote_f)
            .arg(&rep);
        // SAFETY: the arguments match (doca_gpu_dev_rdma *, u32, doca_gpu_buf_arr *,
        // doca_gpu_buf_arr *, u32 *report); the context, arrays and report are borrowed for
        // 'scope and the scope joins the kernel.
        unsafe { b.launch(two_threads()) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }

    /// Starts the sample's client kernel (1 block of 2 threads) on connection
    /// `connection_index`: per buffer i it waits for the server's flag byte i in
    /// `local_f`, then thread 0 moves [`RDMA_CS_HALF`] bytes of `local_b[i]` and thread 1
    /// of `local_c[i]` (writes with immediate into `remote_a[i]` for even i, sends with
    /// immediate for odd i). It then waits for its commits and for `exit`.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_rdma_cs_client(
        &self,
        rdma: RdmaHandle<'scope>,
        connection_index: u32,
        remote_a: BufArrHandle<'scope, Remote>,
        local_b: BufArrHandle<'scope, Local>,
        local_c: BufArrHandle<'scope, Local>,
        local_f: BufArrHandle<'scope, Local>,
        exit: &'scope ExitFlag,
        report: &'scope RdmaCsReport,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        check_arrays("A", &remote_a)?;
        check_arrays("B", &local_b)?;
        check_arrays("C", &local_c)?;
        check_arrays("F", &local_f)?;
        let name = "doca_rs_rdma_cs_client";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let (flag, rep) = (exit.device_ptr(), report.words.device_ptr());
        let mut b = stream.launch_builder(&f);
        b.arg(&rdma)
            .arg(&connection_index)
            .arg(&remote_a)
            .arg(&local_b)
            .arg(&local_c)
            .arg(&local_f)
            .arg(&flag)
            .arg(&rep);
        // SAFETY: the arguments match (doca_gpu_dev_rdma *, u32, 4 x doca_gpu_buf_arr *,
        // const u32 *exit, u32 *report); all borrowed for 'scope, joined by the scope.
        unsafe { b.launch(two_threads()) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }

    /// Starts the RDMA write bench kernel (1 block of `threads`): `iters` writes of `size`
    /// bytes from buffer 0 of `local` to buffer 0 of `remote`, committed every `batch`
    /// (at most the send queue's size; later writes wait for queue slots), then a wait for
    /// every completion. One thread and batch 1: a latency loop (each write waited for).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_rdma_bench_write(
        &self,
        rdma: RdmaHandle<'scope>,
        connection_index: u32,
        remote: BufArrHandle<'scope, Remote>,
        local: BufArrHandle<'scope, Local>,
        size: u64,
        iters: u32,
        batch: u32,
        threads: u32,
        exit: &'scope ExitFlag,
        status: &'scope DeviceStatus,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        if batch == 0 || threads == 0 || threads > crate::MAX_THREADS_PER_BLOCK {
            return Err(KernelError::Invalid(format!(
                "batch {batch} (>= 1), threads {threads} (1..={})",
                crate::MAX_THREADS_PER_BLOCK
            )));
        }
        check_arrays("remote", &remote)?;
        check_arrays("local", &local)?;
        let name = "doca_rs_rdma_bench_write";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let st = status.device_ptr();
        let mut b = stream.launch_builder(&f);
        b.arg(&rdma)
            .arg(&connection_index)
            .arg(&remote)
            .arg(&local)
            .arg(&size)
            .arg(&iters)
            .arg(&batch)
            .arg(&st);
        let cfg = grid(1, threads);
        // SAFETY: the arguments match (doca_gpu_dev_rdma *, u32, 2 x doca_gpu_buf_arr *,
        // u64, u32, u32, u32 *status); the NIC checks every range against the keys; all
        // borrowed for 'scope, joined by the scope.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }
}
