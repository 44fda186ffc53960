//! Launchers of the gpunetio_dma_memcpy kernel (`kernels/dma_memcpy.cu`) and of the DMA
//! bench kernel (`kernels/rdma_bench.cu`), methods of [`KernelScope`].

use crate::exit_flag::ExitFlag;
use crate::launch::KernelError;
use crate::launch::{grid, launch_err};
use crate::scope::{KernelScope, RunningKernel};
use crate::status::DeviceStatus;
use cudarc::driver::PushKernelArg;
use doca_gpunetio::dma::DmaHandle;
use doca_gpunetio::rdma::{BufArrHandle, Local};
use doca_gpunetio::GpuBuffer;

impl<'scope> KernelScope<'scope, '_> {
    /// Starts the sample's DMA kernel with `threads` threads (at most 1024): thread t
    /// copies `length` bytes of buffer t of `src` to buffer t of `dst` through `dma`, and
    /// thread 0 commits. With `cpu_copied_text` (text the GPU reads, what the CPU-datapath
    /// copy delivered), thread 0 prints it first as the sample does (up to its first NUL;
    /// not at all when the buffer holds none). Completion is seen at the destination (there is none on the device).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_dma_memcpy(
        &self,
        cpu_copied_text: Option<&'scope GpuBuffer<u8>>,
        dma: DmaHandle<'scope>,
        src: BufArrHandle<'scope, Local>,
        dst: BufArrHandle<'scope, Local>,
        length: u64,
        threads: u32,
        exit: &'scope ExitFlag,
        status: &'scope DeviceStatus,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        if threads == 0 || threads > crate::MAX_THREADS_PER_BLOCK {
            return Err(KernelError::Invalid(format!(
                "{threads} threads: need 1..={}",
                crate::MAX_THREADS_PER_BLOCK
            )));
        }
        let name = "doca_rs_dma_memcpy";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let text = cpu_copied_text.map_or(0, |t| t.device_ptr());
        let text_len = cpu_copied_text.map_or(0, |t| t.len() as u64);
        let st = status.device_ptr();
        let mut b = stream.launch_builder(&f);
        b.arg(&text)
            .arg(&text_len)
            .arg(&dma)
            .arg(&src)
            .arg(&dst)
            .arg(&length)
            .arg(&st);
        let cfg = grid(1, threads);
        // SAFETY: the arguments match (const char *, u64, doca_gpu_dma *, 2 x doca_gpu_buf_arr *,
        // u64, u32 *status); the copies' ranges are the arrays' own (the proxy checks them
        // against their registrations); all borrowed for 'scope, joined by the scope.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }

    /// Starts the DMA bench kernel (1 block of `threads`): `iters` copies of `size` bytes
    /// from buffer 0 of `src` to buffer 0 of `dst`, committed every `batch` (1..=512, so a
    /// batch fits the request ring), then the 8 bytes of `marker_src` to `marker_dst`.
    /// Copies complete in order: the marker's arrival means all are done.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_dma_bench_copy(
        &self,
        dma: DmaHandle<'scope>,
        src: BufArrHandle<'scope, Local>,
        dst: BufArrHandle<'scope, Local>,
        size: u64,
        iters: u32,
        batch: u32,
        threads: u32,
        markers: (BufArrHandle<'scope, Local>, BufArrHandle<'scope, Local>),
        exit: &'scope ExitFlag,
        status: &'scope DeviceStatus,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        if !(1..=512).contains(&batch) || threads == 0 || threads > crate::MAX_THREADS_PER_BLOCK {
            return Err(KernelError::Invalid(format!(
                "batch {batch} (1..=512), threads {threads} (1..={})",
                crate::MAX_THREADS_PER_BLOCK
            )));
        }
        let name = "doca_rs_dma_bench_copy";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let st = status.device_ptr();
        let mut b = stream.launch_builder(&f);
        b.arg(&dma)
            .arg(&src)
            .arg(&dst)
            .arg(&size)
            .arg(&iters)
            .arg(&batch)
            .arg(&markers.0)
            .arg(&markers.1)
            .arg(&st);
        let cfg = grid(1, threads);
        // SAFETY: the arguments match (doca_gpu_dma *, 2 x doca_gpu_buf_arr *, u64, u32,
        // u32, 2 x doca_gpu_buf_arr *, u32 *status); the proxy checks every copy against
        // its registrations; all borrowed for 'scope, joined by the scope.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }
}
