//! The u64 counters that kernels update in CPU-visible memory while they run, read by the
//! CPU with atomic loads (the samples' and gpu_packet_processing's counter types wrap one).

use crate::launch::KernelError;
use doca_gpunetio::{Gpu, GpuAtomicBuffer, MemType};
use std::sync::atomic::{AtomicU64, Ordering};

/// `n` zeroed u64 counters in CPU_GPU memory.
pub(crate) struct CounterBlock {
    words: GpuAtomicBuffer<AtomicU64>,
}

impl CounterBlock {
    /// Allocates `n` zeroed counters on `gpu`.
    pub(crate) fn new(gpu: &Gpu, n: usize) -> Result<CounterBlock, KernelError> {
        let words = GpuAtomicBuffer::new(gpu, n, MemType::CpuGpu)
            .map_err(|e| KernelError::Invalid(format!("counter allocation: {e}")))?;
        Ok(CounterBlock { words })
    }

    /// Counter `i` (0 past the end).
    pub(crate) fn get(&self, i: usize) -> u64 {
        self.words.get(i).map_or(0, |w| w.load(Ordering::Acquire))
    }

    /// The block's device address, as the kernels take it.
    pub(crate) fn device_ptr(&self) -> u64 {
        self.words.device_ptr()
    }
}
