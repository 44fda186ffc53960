//! Launcher of the gpunetio_dma_memcpy kernel (`kernels/dma_memcpy.cu`), a method of
//! [`KernelScope`], and the status word it leaves in CPU-visible memory.

use crate::launch::KernelError;
use crate::samples::{launch_err, ExitFlag};
use crate::scope::{KernelScope, RunningKernel};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use doca_gpunetio::dma::DmaHandle;
use doca_gpunetio::rdma::{BufArrHandle, Local};
use doca_gpunetio::{Gpu, GpuAtomicBuffer, GpuBuffer, MemType};
use std::sync::atomic::{AtomicU32, Ordering};

/// The first `doca_error_t` a DMA kernel's device calls returned (0: none).
pub struct DmaStatus {
    word: GpuAtomicBuffer<AtomicU32>,
}

impl DmaStatus {
    /// A cleared status on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<DmaStatus, KernelError> {
        let word = GpuAtomicBuffer::new(gpu, 1, MemType::CpuGpu)
            .map_err(|e| KernelError::Invalid(format!("status allocation: {e}")))?;
        Ok(DmaStatus { word })
    }

    /// The first error, 0 when every call succeeded.
    pub fn first_error(&self) -> u32 {
        self.word[0].load(Ordering::Acquire)
    }
}

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
        status: &'scope DmaStatus,
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
        let st = status.word.device_ptr();
        let mut b = stream.launch_builder(&f);
        b.arg(&text)
            .arg(&text_len)
            .arg(&dma)
            .arg(&src)
            .arg(&dst)
            .arg(&length)
            .arg(&st);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match (const char *, u64, doca_gpu_dma *, 2 x doca_gpu_buf_arr *,
        // u64, u32 *status); the copies' ranges are the arrays' own (the proxy checks them
        // against their registrations); all borrowed for 'scope, joined by the scope.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }
}
