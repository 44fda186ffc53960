//! [`GpuAtomicBuffer`]: words in GPU-visible memory that CPU threads and running kernels
//! share (exit flags, counters), accessed by the CPU only atomically.

use crate::gpu::{Gpu, GpuAlloc, MemType};
use doca_common::error::{Error, Result};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
}

/// The atomic types a [`GpuAtomicBuffer`] holds: `AtomicU32`, `AtomicI32`, `AtomicU64`,
/// `AtomicI64` (the word sizes kernels update with their own atomics or plain stores).
///
/// # Safety
/// Sealed: implemented only for atomics whose value is plain bytes of their own size, so
/// that zeroed memory is a valid value and the kernel sees the integer it expects.
pub unsafe trait GpuAtomic: sealed::Sealed + Send + Sync + 'static {
    /// Stores zero.
    fn clear(&self);
}

macro_rules! gpu_atomic {
    ($($t:ty),*) => { $(
        impl sealed::Sealed for $t {}
        // SAFETY: an integer atomic of its own size; any bit pattern is a valid value.
        unsafe impl GpuAtomic for $t {
            fn clear(&self) {
                self.store(0, Ordering::Release);
            }
        }
    )* };
}
gpu_atomic!(AtomicU32, AtomicI32, AtomicU64, AtomicI64);

/// An array of atomics in GPU-visible memory with a CPU mapping ([`MemType::CpuGpu`] or
/// [`MemType::GpuCpu`]), zeroed at creation: the words that CPU threads and running
/// kernels share. The CPU side is a `[A]` slice (`Deref`), so every CPU access is atomic
/// and any number of threads may use it through `&self`; kernels get
/// [`device_ptr`](Self::device_ptr).
///
/// Use loads and stores. Read-modify-write operations (`fetch_add`, `compare_exchange`)
/// are atomic between CPU threads on [`MemType::CpuGpu`] (host) memory only: on
/// `GpuCpu` (device memory seen through the PCIe BAR) the bus does not carry locked
/// operations, and in no case are CPU and GPU read-modify-writes atomic with each other.
///
/// ```no_run
/// use doca_gpunetio::{Gpu, GpuAtomicBuffer, MemType};
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// # fn main() -> Result<(), doca_gpunetio::Error> {
/// let gpu = Gpu::by_ordinal(0)?;
/// let flag = GpuAtomicBuffer::<AtomicU32>::new(&gpu, 1, MemType::GpuCpu)?;
/// // Any thread: tell the kernel polling `flag.device_ptr()` to finish.
/// std::thread::scope(|s| s.spawn(|| flag[0].store(1, Ordering::Release)).join().unwrap());
/// assert_eq!(flag[0].load(Ordering::Acquire), 1);
/// # Ok(())
/// # }
/// ```
pub struct GpuAtomicBuffer<A: GpuAtomic> {
    alloc: Arc<GpuAlloc>,
    len: usize,
    _a: PhantomData<A>,
}

impl<A: GpuAtomic> GpuAtomicBuffer<A> {
    /// `len` zeroed atomics of `mem_type` memory (which must have a CPU mapping).
    pub fn new(gpu: &Gpu, len: usize, mem_type: MemType) -> Result<Self> {
        if mem_type == MemType::Gpu {
            return Err(Error::InvalidArgument(
                "GpuAtomicBuffer needs memory with a CPU mapping (CpuGpu or GpuCpu)".into(),
            ));
        }
        let (size, align) = (std::mem::size_of::<A>(), std::mem::align_of::<A>());
        let bytes = len
            .checked_mul(size)
            .filter(|&b| b > 0)
            .ok_or_else(|| Error::InvalidArgument(format!("atomic buffer of {len} words")))?;
        let alloc = GpuAlloc::new(gpu, bytes, align, mem_type)?;
        match alloc.cpu_ptr() {
            Some(p) if (p.as_ptr() as usize).is_multiple_of(align) => {}
            Some(_) => {
                return Err(Error::InvalidArgument(format!(
                    "the CPU mapping of {mem_type:?} memory is not {align}-byte aligned"
                )))
            }
            None => {
                return Err(Error::InvalidArgument(format!(
                    "{mem_type:?} memory came without a CPU mapping"
                )))
            }
        }
        let buf = GpuAtomicBuffer {
            alloc: Arc::new(alloc),
            len,
            _a: PhantomData,
        };
        buf.iter().for_each(A::clear);
        Ok(buf)
    }

    /// Device address, for kernel arguments.
    pub fn device_ptr(&self) -> u64 {
        self.alloc.gpu_ptr() as u64
    }

    /// Where the memory lives.
    pub fn mem_type(&self) -> MemType {
        self.alloc.mem_type()
    }

    /// The GPU it belongs to.
    pub fn gpu(&self) -> &Gpu {
        self.alloc.gpu()
    }
}

impl<A: GpuAtomic> std::ops::Deref for GpuAtomicBuffer<A> {
    type Target = [A];

    fn deref(&self) -> &[A] {
        let p = self
            .alloc
            .cpu_ptr()
            .expect("checked at creation: the memory has a CPU mapping");
        // SAFETY: `len` atomics of CPU-mapped memory owned by `alloc` for as long as `self`
        // lives, aligned for A (checked at creation) and initialized (zeroed there); the CPU
        // accesses them only through these atomics.
        unsafe { std::slice::from_raw_parts(p.as_ptr().cast::<A>(), self.len) }
    }
}

impl<A: GpuAtomic> std::fmt::Debug for GpuAtomicBuffer<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuAtomicBuffer")
            .field("len", &self.len)
            .field("mem_type", &self.mem_type())
            .field("device_ptr", &format_args!("{:#x}", self.device_ptr()))
            .finish()
    }
}
