//! DOCA DMA (`doca_dma`): memory copies started by GPU kernels (the GPU data path: kernels
//! call `doca_gpu_dev_dma_memcpy` / `doca_gpu_dev_dma_commit` on the handle), or by the CPU
//! (memcpy tasks through a progress engine).
//!
//! ```no_run
//! use doca_gpunetio::dma::Dma;
//! use doca_gpunetio::rdma::{GpuBufArr, Local};
//! use doca_gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap};
//!
//! fn main() -> Result<(), doca_gpunetio::Error> {
//!     let dev = Device::open("lo")?;
//!     let gpu = Gpu::by_ordinal(0)?;
//!     let dma = Dma::gpu(&dev, &gpu)?;
//!     let src = GpuBuffer::<u8>::new(&gpu, 4096, MemType::CpuGpu)?;
//!     let dst = GpuBuffer::<u8>::new(&gpu, 4096, MemType::Gpu)?;
//!     let rw = AccessFlags::LOCAL_READ_WRITE;
//!     let s = GpuBufArr::<Local>::new(&Mmap::from_gpu_buffer(&src, &[&dev], rw)?, &gpu, 1, 4096)?;
//!     let d = GpuBufArr::<Local>::new(&Mmap::from_gpu_buffer(&dst, &[&dev], rw)?, &gpu, 1, 4096)?;
//!     // Kernel arguments: dma.gpu_handle()?, s.gpu_handle()?, d.gpu_handle()?
//!     # let _ = (s, d);
//!     Ok(())
//! }
//! ```

use crate::gpu::Gpu;
use crate::mmap::Mmap;
use cudarc::driver::DeviceRepr;
use doca_common::context::{Ctx, DROP_STOP_TIMEOUT};
use doca_common::error::{check, Error, Result};
use doca_common::{Device, ProgressEngine};
use doca_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

struct DmaInner {
    raw: NonNull<sys::doca_dma>,
    pe: Option<ProgressEngine>,
    _device: Device,
    _gpu: Option<Gpu>,
}

// SAFETY: set-up happens before start; afterwards the handle is read-only or used through
// serialized progress-engine calls.
unsafe impl Send for DmaInner {}
// SAFETY: as above.
unsafe impl Sync for DmaInner {}

impl DmaInner {
    fn ctx(&self) -> Ctx {
        // SAFETY: the context lives as long as self.
        unsafe { Ctx::from_raw(sys::doca_dma_as_ctx(self.raw.as_ptr())) }
    }
}

impl Drop for DmaInner {
    fn drop(&mut self) {
        if let Err(e) = self
            .ctx()
            .stop_and_drain(self.pe.as_ref(), DROP_STOP_TIMEOUT)
        {
            doca_common::record_drop_error(e);
        }
        // SAFETY: created by doca_dma_create, stopped above, destroyed once.
        let rc = unsafe { sys::doca_dma_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_dma_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A started DMA context. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Dma {
    inner: Arc<DmaInner>,
}

fn create(device: &Device) -> Result<NonNull<sys::doca_dma>> {
    let mut raw = std::ptr::null_mut();
    // SAFETY: a live device; valid out-pointer.
    check("doca_dma_create", unsafe {
        sys::doca_dma_create(device.as_raw(), &mut raw)
    })?;
    NonNull::new(raw).ok_or_else(|| Error::InvalidArgument("doca_dma_create returned NULL".into()))
}

unsafe extern "C" fn task_done(
    t: *mut sys::doca_dma_task_memcpy,
    _u: sys::doca_data,
    _c: sys::doca_data,
) {
    // The task's user data points to the waiting call's status cell.
    // SAFETY: a live task in its callback.
    let ud = unsafe { sys::doca_task_get_user_data(sys::doca_dma_task_memcpy_as_task(t)) };
    // SAFETY: the cell outlives the task (memcpy_blocking waits for this callback).
    if let Some(cell) = unsafe { (ud.ptr as *const AtomicU32).as_ref() } {
        cell.store(1, Ordering::Release);
    }
}

unsafe extern "C" fn task_error(
    t: *mut sys::doca_dma_task_memcpy,
    _u: sys::doca_data,
    _c: sys::doca_data,
) {
    // SAFETY: as in `task_done`.
    let ud = unsafe { sys::doca_task_get_user_data(sys::doca_dma_task_memcpy_as_task(t)) };
    // SAFETY: as in `task_done`.
    if let Some(cell) = unsafe { (ud.ptr as *const AtomicU32).as_ref() } {
        cell.store(2, Ordering::Release);
    }
}

impl Dma {
    /// A context with its data path on `gpu`, started (kernels enqueue copies; no progress
    /// engine is needed).
    pub fn gpu(device: &Device, gpu: &Gpu) -> Result<Dma> {
        let inner = DmaInner {
            raw: create(device)?,
            pe: None,
            _device: device.clone(),
            _gpu: Some(gpu.clone()),
        };
        // SAFETY: an IDLE context and a live GPU.
        check("doca_ctx_set_datapath_on_gpu", unsafe {
            sys::doca_ctx_set_datapath_on_gpu(inner.ctx().as_raw(), gpu.as_raw())
        })?;
        inner.ctx().start()?;
        Ok(Dma {
            inner: Arc::new(inner),
        })
    }

    /// A context on the CPU data path, connected to `pe`, started: [`Dma::memcpy_blocking`]
    /// runs copies through it. `max_tasks` tasks at most in flight.
    pub fn cpu(device: &Device, pe: &ProgressEngine, max_tasks: u32) -> Result<Dma> {
        let inner = DmaInner {
            raw: create(device)?,
            pe: Some(pe.clone()),
            _device: device.clone(),
            _gpu: None,
        };
        let ctx = inner.ctx();
        // SAFETY: an IDLE context; the engine outlives it (held in `inner`).
        unsafe { ctx.connect(pe)? };
        // SAFETY: an IDLE context; the callbacks have the memcpy signature.
        check("doca_dma_task_memcpy_set_conf", unsafe {
            sys::doca_dma_task_memcpy_set_conf(
                inner.raw.as_ptr(),
                Some(task_done),
                Some(task_error),
                max_tasks,
            )
        })?;
        if !ctx.start()? {
            pe.progress_until(DROP_STOP_TIMEOUT, || {
                ctx.state()
                    .is_ok_and(|s| s == doca_common::CtxState::Running)
            });
        }
        Ok(Dma {
            inner: Arc::new(inner),
        })
    }

    /// The device handle for kernels (`struct doca_gpu_dma *`); GPU data path only.
    pub fn gpu_handle(&self) -> Result<DmaHandle<'_>> {
        let mut h = std::ptr::null_mut();
        // SAFETY: a started context; valid out-pointer.
        check("doca_dma_get_gpu_handle", unsafe {
            sys::doca_dma_get_gpu_handle(self.as_raw(), &mut h)
        })?;
        let raw =
            NonNull::new(h).ok_or_else(|| Error::InvalidArgument("NULL DMA handle".into()))?;
        Ok(DmaHandle {
            raw,
            _owner: PhantomData,
        })
    }

    /// CPU data path: copies `len` bytes at `src_off` of `src` to `dst_off` of `dst` with one
    /// memcpy task, progressing until it completes (or `timeout`).
    pub fn memcpy_blocking(
        &self,
        src: &Mmap,
        src_off: usize,
        dst: &Mmap,
        dst_off: usize,
        len: usize,
        timeout: Duration,
    ) -> Result<()> {
        let pe = self
            .inner
            .pe
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("memcpy_blocking needs Dma::cpu".into()))?;
        let range = |m: &Mmap, off: usize| -> Result<*mut u8> {
            let (mut a, mut n) = (std::ptr::null_mut(), 0usize);
            // SAFETY: a live mmap; valid out-pointers.
            check("doca_mmap_get_memrange", unsafe {
                sys::doca_mmap_get_memrange(m.as_raw(), &mut a, &mut n)
            })?;
            if !matches!(off.checked_add(len), Some(e) if e <= n) {
                return Err(Error::InvalidArgument(format!(
                    "{len} bytes at offset {off} do not fit a map of {n} bytes"
                )));
            }
            // SAFETY: inside the map's range (checked).
            Ok(unsafe { a.cast::<u8>().add(off) })
        };
        let (s, d) = (range(src, src_off)?, range(dst, dst_off)?);
        let mut inv = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("doca_buf_inventory_create", unsafe {
            sys::doca_buf_inventory_create(2, &mut inv)
        })?;
        let inv = Inventory(inv);
        // SAFETY: a fresh inventory.
        check("doca_buf_inventory_start", unsafe {
            sys::doca_buf_inventory_start(inv.0)
        })?;
        let (mut sb, mut db) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: live inventory and maps; ranges inside them (checked above).
        unsafe {
            check(
                "doca_buf_inventory_buf_get_by_args",
                sys::doca_buf_inventory_buf_get_by_args(
                    inv.0,
                    src.as_raw(),
                    s.cast(),
                    len,
                    s.cast(),
                    len,
                    &mut sb,
                ),
            )?;
            let r = check(
                "doca_buf_inventory_buf_get_by_args",
                sys::doca_buf_inventory_buf_get_by_args(
                    inv.0,
                    dst.as_raw(),
                    d.cast(),
                    len,
                    d.cast(),
                    0,
                    &mut db,
                ),
            );
            if let Err(e) = r {
                sys::doca_buf_dec_refcount(sb, std::ptr::null_mut());
                return Err(e);
            }
        }
        let bufs = Bufs(sb, db);
        let cell = Box::new(AtomicU32::new(0));
        let ud = sys::doca_data {
            ptr: &*cell as *const AtomicU32 as *mut c_void,
        };
        let mut t = std::ptr::null_mut();
        // SAFETY: a started context, live buffers, valid out-pointer.
        check("doca_dma_task_memcpy_alloc_init", unsafe {
            sys::doca_dma_task_memcpy_alloc_init(self.as_raw(), bufs.0, bufs.1, ud, &mut t)
        })?;
        // SAFETY: the task just allocated.
        let task = unsafe { sys::doca_dma_task_memcpy_as_task(t) };
        // SAFETY: as above.
        let submitted = check("doca_task_submit", unsafe { sys::doca_task_submit(task) });
        let finished =
            submitted.is_ok() && pe.progress_until(timeout, || cell.load(Ordering::Acquire) != 0);
        if submitted.is_ok() && !finished {
            // The task is still in flight: it (and the status cell) must outlive the wait.
            Box::leak(cell);
            std::mem::forget(bufs);
            std::mem::forget(inv);
            return Err(Error::Timeout {
                op: "doca_dma memcpy task",
                ms: timeout.as_millis() as u64,
            });
        }
        // SAFETY: completed (or never submitted); freed once.
        let status = unsafe { sys::doca_task_get_status(task) };
        // SAFETY: as above.
        unsafe { sys::doca_task_free(task) };
        submitted?;
        check("doca_dma memcpy task", status)?;
        if cell.load(Ordering::Acquire) != 1 {
            return Err(Error::InvalidArgument("the memcpy task failed".into()));
        }
        Ok(())
    }

    /// The raw context.
    pub fn as_raw(&self) -> *mut sys::doca_dma {
        self.inner.raw.as_ptr()
    }
}

struct Inventory(*mut sys::doca_buf_inventory);
impl Drop for Inventory {
    fn drop(&mut self) {
        // SAFETY: created above; its buffers were released first (Bufs drops earlier).
        unsafe { sys::doca_buf_inventory_destroy(self.0) };
    }
}

struct Bufs(*mut sys::doca_buf, *mut sys::doca_buf);
impl Drop for Bufs {
    fn drop(&mut self) {
        // SAFETY: buffers from the inventory, released once.
        unsafe {
            sys::doca_buf_dec_refcount(self.0, std::ptr::null_mut());
            sys::doca_buf_dec_refcount(self.1, std::ptr::null_mut());
        }
    }
}

impl std::fmt::Debug for Dma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dma").field("raw", &self.as_raw()).finish()
    }
}

/// The device handle of a started GPU-datapath [`Dma`] (`struct doca_gpu_dma *`). `Copy`;
/// borrows the context.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct DmaHandle<'a> {
    raw: NonNull<sys::doca_gpu_dma>,
    _owner: PhantomData<&'a Dma>,
}

impl DmaHandle<'_> {
    /// The raw device pointer.
    pub fn as_raw(&self) -> *mut sys::doca_gpu_dma {
        self.raw.as_ptr()
    }
}

// SAFETY: a plain device address; the borrow ties it to the context.
unsafe impl Send for DmaHandle<'_> {}
// SAFETY: as above.
unsafe impl Sync for DmaHandle<'_> {}
// SAFETY: repr(transparent) over one pointer.
unsafe impl DeviceRepr for DmaHandle<'_> {}

impl std::fmt::Debug for DmaHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DmaHandle({:p})", self.raw.as_ptr())
    }
}
