//! The exit flag the CPU sets to end a kernel's loop, shared by every launcher (its own
//! module so that the scope and the launchers both use it without importing each other).

use crate::launch::KernelError;
use doca_gpunetio::{Gpu, GpuAtomicBuffer, MemType};
use std::sync::atomic::{AtomicU32, Ordering};

/// A 32-bit flag in GPU memory that the CPU can write (GPU_CPU): kernels loop until it is
/// non-zero. Any thread may set it (an atomic store), while kernels read it.
pub struct ExitFlag {
    word: GpuAtomicBuffer<AtomicU32>,
}

impl ExitFlag {
    /// A cleared flag on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<ExitFlag, KernelError> {
        let word = GpuAtomicBuffer::new(gpu, 1, MemType::GpuCpu)
            .map_err(|e| KernelError::Invalid(format!("exit flag allocation: {e}")))?;
        Ok(ExitFlag { word })
    }

    /// Tells the kernels to finish.
    pub fn set(&self) {
        self.word[0].store(1, Ordering::Release);
    }

    /// Whether [`set`](Self::set) was called.
    pub fn is_set(&self) -> bool {
        self.word[0].load(Ordering::Acquire) != 0
    }

    pub(crate) fn device_ptr(&self) -> u64 {
        self.word.device_ptr()
    }
}
