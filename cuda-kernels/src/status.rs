//! [`DeviceStatus`]: the first error a kernel's DOCA device calls returned, in CPU-visible
//! memory.

use crate::launch::KernelError;
use doca_gpunetio::{Gpu, GpuAtomicBuffer, MemType};
use std::sync::atomic::{AtomicU32, Ordering};

/// The first `doca_error_t` a kernel's device calls returned (0: none); kernels record it
/// with a compare-and-swap from 0, so later errors do not hide the first.
pub struct DeviceStatus {
    word: GpuAtomicBuffer<AtomicU32>,
}

impl DeviceStatus {
    /// A cleared status on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<DeviceStatus, KernelError> {
        let word = GpuAtomicBuffer::new(gpu, 1, MemType::CpuGpu)
            .map_err(|e| KernelError::Invalid(format!("status allocation: {e}")))?;
        Ok(DeviceStatus { word })
    }

    /// The first error, 0 when every call succeeded.
    pub fn first_error(&self) -> u32 {
        self.word[0].load(Ordering::Acquire)
    }

    pub(crate) fn device_ptr(&self) -> u64 {
        self.word.device_ptr()
    }
}
