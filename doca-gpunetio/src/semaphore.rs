//! GPU semaphores (`doca_gpu_semaphore`): an array of status words, each with an optional
//! typed blob of custom information, through which CUDA kernels and CPU threads hand work
//! to each other (a kernel fills item `i` and marks it READY, a CPU thread reads it and
//! marks it FREE).

use crate::gpu::{Gpu, GpuPod, MemType};
use crate::handles::SemaphoreHandle;
use doca_common::error::{check, DocaError, Error, Result};
use doca_sys as sys;
use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};
use std::ptr::NonNull;
use std::sync::Mutex;

/// State of one semaphore item (`enum doca_gpu_semaphore_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SemStatus {
    /// Free for the producer.
    Free,
    /// Filled, ready for the consumer.
    Ready,
    /// Consumed.
    Done,
    /// Held by someone.
    Hold,
    /// The producer hit an error.
    Error,
    /// Producer or consumer should exit.
    Exit,
    /// A value this crate does not know (written by other code into shared memory).
    Unknown(u32),
}

impl SemStatus {
    /// From the raw value; unknown values become [`SemStatus::Unknown`].
    pub fn from_raw(v: sys::doca_gpu_semaphore_status) -> Self {
        use sys::doca_gpu_semaphore_status as S;
        match v {
            S::DOCA_GPU_SEMAPHORE_STATUS_FREE => SemStatus::Free,
            S::DOCA_GPU_SEMAPHORE_STATUS_READY => SemStatus::Ready,
            S::DOCA_GPU_SEMAPHORE_STATUS_DONE => SemStatus::Done,
            S::DOCA_GPU_SEMAPHORE_STATUS_HOLD => SemStatus::Hold,
            S::DOCA_GPU_SEMAPHORE_STATUS_ERROR => SemStatus::Error,
            S::DOCA_GPU_SEMAPHORE_STATUS_EXIT => SemStatus::Exit,
            other => SemStatus::Unknown(other.0),
        }
    }

    /// The raw value; `None` for [`SemStatus::Unknown`].
    pub fn raw(self) -> Option<sys::doca_gpu_semaphore_status> {
        use sys::doca_gpu_semaphore_status as S;
        Some(match self {
            SemStatus::Free => S::DOCA_GPU_SEMAPHORE_STATUS_FREE,
            SemStatus::Ready => S::DOCA_GPU_SEMAPHORE_STATUS_READY,
            SemStatus::Done => S::DOCA_GPU_SEMAPHORE_STATUS_DONE,
            SemStatus::Hold => S::DOCA_GPU_SEMAPHORE_STATUS_HOLD,
            SemStatus::Error => S::DOCA_GPU_SEMAPHORE_STATUS_ERROR,
            SemStatus::Exit => S::DOCA_GPU_SEMAPHORE_STATUS_EXIT,
            SemStatus::Unknown(_) => return None,
        })
    }
}

/// Custom information type of a semaphore without any (zero-sized).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoInfo;
// SAFETY: a zero-sized type has no bits, so every bit pattern is valid.
unsafe impl GpuPod for NoInfo {}

fn cpu_accessible(m: MemType) -> bool {
    matches!(m, MemType::CpuGpu | MemType::GpuCpu)
}

/// Configures and starts a [`Semaphore`]. Obtained from [`Semaphore::builder`].
#[must_use = "a builder does nothing until start()"]
pub struct SemaphoreBuilder<T: GpuPod = NoInfo> {
    /// Taken by `start`; an adopted handle left here is destroyed with the builder.
    source: Option<Source>,
    memory: MemType,
    items: u32,
    info_memory: MemType,
    _t: PhantomData<T>,
}

/// Where the semaphore object comes from.
enum Source {
    /// `doca_gpu_semaphore_create` on this GPU.
    Gpu(Gpu),
    /// A semaphore the caller created (see [`SemaphoreBuilder::from_raw`]).
    Raw(NonNull<sys::doca_gpu_semaphore>),
}

impl<T: GpuPod> Drop for SemaphoreBuilder<T> {
    fn drop(&mut self) {
        if let Some(Source::Raw(raw)) = self.source.take() {
            // SAFETY: adopted by `from_raw`, never started, owned by this builder.
            let rc = unsafe { sys::doca_gpu_semaphore_destroy(raw.as_ptr()) };
            if let Err(e) = check("doca_gpu_semaphore_destroy", rc) {
                doca_common::record_drop_error(e);
            }
        }
    }
}

impl<T: GpuPod> SemaphoreBuilder<T> {
    /// Configures a semaphore object created elsewhere (for example by a backend-specific
    /// constructor such as the software runtime's host-memory semaphore) instead of
    /// calling `doca_gpu_semaphore_create`. The result owns it and destroys it.
    ///
    /// # Safety
    /// `raw` is a live `doca_gpu_semaphore` that is not started and that nothing else uses
    /// or destroys.
    pub unsafe fn from_raw(raw: NonNull<sys::doca_gpu_semaphore>) -> Self {
        SemaphoreBuilder {
            source: Some(Source::Raw(raw)),
            memory: MemType::CpuGpu,
            items: 0,
            info_memory: MemType::CpuGpu,
            _t: PhantomData,
        }
    }

    /// Where the status words live (default [`MemType::CpuGpu`], which the CPU can read).
    pub fn memory(mut self, m: MemType) -> Self {
        self.memory = m;
        self
    }

    /// Number of items. Required (> 0).
    pub fn items(mut self, n: u32) -> Self {
        self.items = n;
        self
    }

    /// Where the custom information of type `T` lives (default [`MemType::CpuGpu`]).
    /// Ignored for [`NoInfo`].
    pub fn custom_info_memory(mut self, m: MemType) -> Self {
        self.info_memory = m;
        self
    }

    fn validate(&self) -> Result<u32> {
        if self.items == 0 {
            return Err(Error::InvalidArgument(
                "Semaphore::start: items is required and must be > 0".into(),
            ));
        }
        u32::try_from(size_of::<T>()).map_err(|_| {
            Error::InvalidArgument(format!(
                "Semaphore::start: custom info of {} bytes is too large",
                size_of::<T>()
            ))
        })
    }

    /// Creates, configures and starts the semaphore.
    pub fn start(mut self) -> Result<Semaphore<T>> {
        let (raw, gpu) = match self.source.take() {
            Some(Source::Gpu(gpu)) => {
                self.validate()?;
                let mut raw = std::ptr::null_mut();
                // SAFETY: the GPU is live; `raw` is a valid out-pointer.
                check("doca_gpu_semaphore_create", unsafe {
                    sys::doca_gpu_semaphore_create(gpu.as_raw(), &mut raw)
                })?;
                let raw = NonNull::new(raw).ok_or(Error::Doca {
                    op: "doca_gpu_semaphore_create",
                    code: DocaError::UNEXPECTED,
                })?;
                (raw, Some(gpu))
            }
            Some(Source::Raw(raw)) => (raw, None),
            None => unreachable!("the source is taken only here"),
        };
        // Dropping `s` on an error below destroys the semaphore.
        let mut s = Semaphore {
            raw,
            gpu,
            memory: self.memory,
            items: self.items,
            info_memory: (size_of::<T>() > 0).then_some(self.info_memory),
            started: false,
            destroyed: false,
            lock: Mutex::new(()),
            _t: PhantomData,
        };
        let info_bytes = self.validate()?;
        let p = raw.as_ptr();
        // SAFETY (every call below): `p` is a live semaphore not started yet.
        check("doca_gpu_semaphore_set_memory_type", unsafe {
            sys::doca_gpu_semaphore_set_memory_type(p, self.memory.raw())
        })?;
        // SAFETY: as above.
        check("doca_gpu_semaphore_set_items_num", unsafe {
            sys::doca_gpu_semaphore_set_items_num(p, self.items)
        })?;
        if info_bytes > 0 {
            // SAFETY: as above.
            check("doca_gpu_semaphore_set_custom_info", unsafe {
                sys::doca_gpu_semaphore_set_custom_info(p, info_bytes, self.info_memory.raw())
            })?;
        }
        // SAFETY: as above.
        check("doca_gpu_semaphore_start", unsafe {
            sys::doca_gpu_semaphore_start(p)
        })?;
        s.started = true;
        Ok(s)
    }
}

/// A started GPU semaphore of `items` status words, each with custom information of type
/// `T` ([`NoInfo`] for none).
///
/// CPU access ([`status`](Self::status), [`custom_info`](Self::custom_info), ...) needs
/// CPU-reachable memory ([`MemType::CpuGpu`] or [`MemType::GpuCpu`]); with
/// [`MemType::Gpu`] those calls return a clear [`Error::InvalidArgument`]. Stopped and
/// destroyed on drop; holds its GPU.
///
/// `Send + Sync`: CPU calls are serialized by an internal lock; kernels access the items
/// concurrently through [`gpu_handle`](Self::gpu_handle), which is what semaphores are for.
pub struct Semaphore<T: GpuPod = NoInfo> {
    raw: NonNull<sys::doca_gpu_semaphore>,
    gpu: Option<Gpu>,
    memory: MemType,
    items: u32,
    info_memory: Option<MemType>,
    started: bool,
    destroyed: bool,
    lock: Mutex<()>,
    _t: PhantomData<T>,
}

// SAFETY: the semaphore's memory is shared with the GPU by design; CPU calls into DOCA
// are serialized by `lock`.
unsafe impl<T: GpuPod> Send for Semaphore<T> {}
// SAFETY: as above.
unsafe impl<T: GpuPod> Sync for Semaphore<T> {}

impl Semaphore<NoInfo> {
    /// Starts configuring a semaphore on `gpu` without custom information.
    pub fn builder(gpu: &Gpu) -> SemaphoreBuilder<NoInfo> {
        Self::with_info(gpu)
    }
}

impl<T: GpuPod> Semaphore<T> {
    /// Starts configuring a semaphore on `gpu` whose items carry a `T` each
    /// (`doca_gpu_semaphore_set_custom_info(size_of::<T>())`).
    pub fn with_info(gpu: &Gpu) -> SemaphoreBuilder<T> {
        SemaphoreBuilder {
            source: Some(Source::Gpu(gpu.clone())),
            memory: MemType::CpuGpu,
            items: 0,
            info_memory: MemType::CpuGpu,
            _t: PhantomData,
        }
    }

    /// Number of items.
    pub fn items(&self) -> u32 {
        self.items
    }

    /// Where the status words live.
    pub fn memory(&self) -> MemType {
        self.memory
    }

    /// The GPU it was created on (`None` for one adopted with
    /// [`SemaphoreBuilder::from_raw`]).
    pub fn gpu(&self) -> Option<&Gpu> {
        self.gpu.as_ref()
    }

    fn check_cpu(&self, op: &str, idx: u32) -> Result<()> {
        if idx >= self.items {
            return Err(Error::InvalidArgument(format!(
                "{op}: item {idx} out of range (semaphore has {})",
                self.items
            )));
        }
        if !cpu_accessible(self.memory) {
            return Err(Error::InvalidArgument(format!(
                "{op}: the semaphore lives in {:?} memory, which the CPU cannot access (use CpuGpu or GpuCpu)",
                self.memory
            )));
        }
        Ok(())
    }

    /// The status of item `idx` (`doca_gpu_semaphore_get_status`).
    pub fn status(&self, idx: u32) -> Result<SemStatus> {
        self.check_cpu("Semaphore::status", idx)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut s = sys::doca_gpu_semaphore_status::DOCA_GPU_SEMAPHORE_STATUS_FREE;
        // SAFETY: started, CPU-reachable, index checked; `s` is a valid out-pointer.
        check("doca_gpu_semaphore_get_status", unsafe {
            sys::doca_gpu_semaphore_get_status(self.raw.as_ptr(), idx, &mut s)
        })?;
        Ok(SemStatus::from_raw(s))
    }

    /// Sets the status of item `idx` (`doca_gpu_semaphore_set_status`).
    pub fn set_status(&self, idx: u32, status: SemStatus) -> Result<()> {
        self.check_cpu("Semaphore::set_status", idx)?;
        let raw = status.raw().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "Semaphore::set_status: {status:?} is not a status DOCA knows"
            ))
        })?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: started, CPU-reachable, index checked.
        check("doca_gpu_semaphore_set_status", unsafe {
            sys::doca_gpu_semaphore_set_status(self.raw.as_ptr(), idx, raw)
        })
    }

    /// CPU address of item `idx`'s custom information.
    fn info_ptr(&self, op: &str, idx: u32) -> Result<*mut u8> {
        if idx >= self.items {
            return Err(Error::InvalidArgument(format!(
                "{op}: item {idx} out of range (semaphore has {})",
                self.items
            )));
        }
        let m = self.info_memory.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{op}: this semaphore has no custom information (NoInfo)"
            ))
        })?;
        if !cpu_accessible(m) {
            return Err(Error::InvalidArgument(format!(
                "{op}: the custom information lives in {m:?} memory, which the CPU cannot access (use CpuGpu or GpuCpu)"
            )));
        }
        let mut p = std::ptr::null_mut();
        // SAFETY: started, index checked; `p` is a valid out-pointer.
        check("doca_gpu_semaphore_get_custom_info_addr", unsafe {
            sys::doca_gpu_semaphore_get_custom_info_addr(self.raw.as_ptr(), idx, &mut p)
        })?;
        if p.is_null() {
            return Err(Error::Doca {
                op: "doca_gpu_semaphore_get_custom_info_addr",
                code: DocaError::UNEXPECTED,
            });
        }
        Ok(p.cast())
    }

    /// Reads item `idx`'s custom information (byte-wise volatile reads: a kernel may be
    /// writing it; pair with [`status`](Self::status) to know when it is complete).
    pub fn custom_info(&self, idx: u32) -> Result<T> {
        let src = self.info_ptr("Semaphore::custom_info", idx)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut v = MaybeUninit::<T>::uninit();
        let dst = v.as_mut_ptr().cast::<u8>();
        for i in 0..size_of::<T>() {
            // SAFETY: `src` points at size_of::<T>() CPU-mapped bytes of this item
            // (DOCA allocated `items × size_of::<T>()`); `dst` is the local value.
            unsafe { dst.add(i).write(src.add(i).read_volatile()) };
        }
        // SAFETY: every byte was written and T accepts any bit pattern (GpuPod).
        Ok(unsafe { v.assume_init() })
    }

    /// Writes item `idx`'s custom information (byte-wise volatile writes).
    pub fn set_custom_info(&self, idx: u32, value: T) -> Result<()> {
        let dst = self.info_ptr("Semaphore::set_custom_info", idx)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let src = (&value as *const T).cast::<u8>();
        for i in 0..size_of::<T>() {
            // SAFETY: as in `custom_info`, in the other direction.
            unsafe { dst.add(i).write_volatile(src.add(i).read()) };
        }
        Ok(())
    }

    /// The device handle for kernels (`doca_gpu_semaphore_get_gpu_handle`), valid while
    /// this borrow lasts.
    pub fn gpu_handle(&self) -> Result<SemaphoreHandle<'_>> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut h = std::ptr::null_mut();
        // SAFETY: the semaphore is live and started; `h` is a valid out-pointer.
        check("doca_gpu_semaphore_get_gpu_handle", unsafe {
            sys::doca_gpu_semaphore_get_gpu_handle(self.raw.as_ptr(), &mut h)
        })?;
        NonNull::new(h)
            .map(SemaphoreHandle::new)
            .ok_or(Error::Doca {
                op: "doca_gpu_semaphore_get_gpu_handle",
                code: DocaError::UNEXPECTED,
            })
    }

    /// Stops and destroys the semaphore, returning what went wrong.
    pub fn stop(mut self) -> Result<()> {
        self.teardown()
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_gpu_semaphore {
        self.raw.as_ptr()
    }

    fn teardown(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.started, false) {
            // SAFETY: started and stopped once.
            check("doca_gpu_semaphore_stop", unsafe {
                sys::doca_gpu_semaphore_stop(self.raw.as_ptr())
            })?;
        }
        if !std::mem::replace(&mut self.destroyed, true) {
            // SAFETY: created by doca_gpu_semaphore_create (or adopted), destroyed once.
            check("doca_gpu_semaphore_destroy", unsafe {
                sys::doca_gpu_semaphore_destroy(self.raw.as_ptr())
            })?;
        }
        Ok(())
    }
}

impl<T: GpuPod> Drop for Semaphore<T> {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            doca_common::record_drop_error(e);
        }
    }
}

impl<T: GpuPod> std::fmt::Debug for Semaphore<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semaphore")
            .field("items", &self.items)
            .field("memory", &self.memory)
            .field("info_bytes", &size_of::<T>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_raw_status_maps_and_unknown_values_are_kept() {
        use sys::doca_gpu_semaphore_status as S;
        let all = [
            SemStatus::Free,
            SemStatus::Ready,
            SemStatus::Done,
            SemStatus::Hold,
            SemStatus::Error,
            SemStatus::Exit,
        ];
        for (i, s) in all.iter().enumerate() {
            let raw = s.raw().unwrap();
            assert_eq!(raw.0 as usize, i, "{s:?} has DOCA's value");
            assert_eq!(SemStatus::from_raw(raw), *s);
        }
        assert_eq!(SemStatus::from_raw(S(6)), SemStatus::Unknown(6));
        assert_eq!(
            SemStatus::from_raw(S(u32::MAX)),
            SemStatus::Unknown(u32::MAX)
        );
        assert_eq!(SemStatus::Unknown(9).raw(), None);
    }

    #[test]
    fn only_cpu_reachable_memory_is_cpu_accessible() {
        assert!(cpu_accessible(MemType::CpuGpu));
        assert!(cpu_accessible(MemType::GpuCpu));
        assert!(!cpu_accessible(MemType::Gpu));
        assert_eq!(size_of::<NoInfo>(), 0);
    }
}
