//! Memory for RDMA: exports of local mmaps, remote mmaps made from a peer's export, and
//! the buffer arrays kernels address, typed by which side's memory they hold.

use crate::gpu::Gpu;
use crate::mmap::Mmap;
use cudarc::driver::DeviceRepr;
use doca_common::error::{check, Error, Result};
use doca_common::Device;
use doca_sys as sys;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

/// The export of an [`Mmap`] for a peer (`doca_mmap_export_rdma`): opaque bytes the peer
/// turns into a [`RemoteMmap`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmapExport(Vec<u8>);

impl MmapExport {
    /// The bytes to send.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Exports `mmap` (started with an RDMA access right, `device` among its devices).
pub fn export_mmap(mmap: &Mmap, device: &Device) -> Result<MmapExport> {
    let (mut p, mut n) = (std::ptr::null(), 0usize);
    // SAFETY: live mmap and device; valid out-pointers.
    check("doca_mmap_export_rdma", unsafe {
        sys::doca_mmap_export_rdma(mmap.as_raw(), device.as_raw(), &mut p, &mut n)
    })?;
    if p.is_null() {
        return Err(Error::InvalidArgument(
            "doca_mmap_export_rdma returned NULL".into(),
        ));
    }
    // SAFETY: DOCA returned `n` readable bytes owned by the mmap.
    Ok(MmapExport(
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }.to_vec(),
    ))
}

struct RemoteInner {
    raw: NonNull<sys::doca_mmap>,
    _device: Device,
}

// SAFETY: an immutable, started mmap.
unsafe impl Send for RemoteInner {}
// SAFETY: as above.
unsafe impl Sync for RemoteInner {}

impl Drop for RemoteInner {
    fn drop(&mut self) {
        // SAFETY: made by doca_mmap_create_from_export, destroyed once.
        let rc = unsafe { sys::doca_mmap_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_mmap_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A peer's memory (`doca_mmap_create_from_export`), usable at once. Cheap to clone.
#[derive(Clone)]
pub struct RemoteMmap {
    inner: Arc<RemoteInner>,
}

impl RemoteMmap {
    /// From the bytes of the peer's [`export_mmap`], reached through `device`.
    pub fn from_export(device: &Device, export: &[u8]) -> Result<RemoteMmap> {
        if export.is_empty() {
            return Err(Error::InvalidArgument("empty mmap export".into()));
        }
        let mut raw = std::ptr::null_mut();
        // SAFETY: readable bytes, a live device, a valid out-pointer.
        check("doca_mmap_create_from_export", unsafe {
            sys::doca_mmap_create_from_export(
                std::ptr::null(),
                export.as_ptr().cast(),
                export.len(),
                device.as_raw(),
                &mut raw,
            )
        })?;
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::InvalidArgument("doca_mmap_create_from_export returned NULL".into())
        })?;
        Ok(RemoteMmap {
            inner: Arc::new(RemoteInner {
                raw,
                _device: device.clone(),
            }),
        })
    }

    /// The peer's range: (address, length).
    pub fn range(&self) -> Result<(u64, usize)> {
        let (mut a, mut n) = (std::ptr::null_mut(), 0usize);
        // SAFETY: a live mmap; valid out-pointers.
        check("doca_mmap_get_memrange", unsafe {
            sys::doca_mmap_get_memrange(self.as_raw(), &mut a, &mut n)
        })?;
        Ok((a as u64, n))
    }

    /// The raw mmap.
    pub fn as_raw(&self) -> *mut sys::doca_mmap {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for RemoteMmap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteMmap")
            .field("raw", &self.as_raw())
            .finish()
    }
}

impl<S: MemSide> std::fmt::Debug for GpuBufArr<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBufArr")
            .field("len", &self.len())
            .field("elem_size", &self.elem_size())
            .finish()
    }
}

/// Memory of this process (a [`GpuBufArr`] over an [`Mmap`]).
#[derive(Clone, Copy, Debug)]
pub enum Local {}
/// Memory of the peer (a [`GpuBufArr`] over a [`RemoteMmap`]).
#[derive(Clone, Copy, Debug)]
pub enum Remote {}

/// Where a buffer array's memory is: [`Local`] or [`Remote`].
pub trait MemSide: private::Sealed + 'static {}
impl MemSide for Local {}
impl MemSide for Remote {}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Local {}
    impl Sealed for super::Remote {}
}

/// What keeps a buffer array's memory registered (held, never read).
#[allow(dead_code)]
enum Backing {
    Local(Mmap),
    Remote(RemoteMmap),
}

struct ArrInner {
    raw: NonNull<sys::doca_buf_arr>,
    num: usize,
    elem_size: usize,
    _backing: Backing,
    _gpu: Gpu,
}

// SAFETY: a started buffer array is immutable.
unsafe impl Send for ArrInner {}
// SAFETY: as above.
unsafe impl Sync for ArrInner {}

impl Drop for ArrInner {
    fn drop(&mut self) {
        // SAFETY: created by doca_buf_arr_create, destroyed once (it stops itself).
        let rc = unsafe { sys::doca_buf_arr_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_buf_arr_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// `num` elements of `elem_size` bytes of a memory map, exported to a GPU
/// (`doca_buf_arr` with a target GPU), typed by where the memory is. Cheap to clone.
pub struct GpuBufArr<S: MemSide> {
    inner: Arc<ArrInner>,
    _side: PhantomData<S>,
}

impl<S: MemSide> Clone for GpuBufArr<S> {
    fn clone(&self) -> Self {
        GpuBufArr {
            inner: self.inner.clone(),
            _side: PhantomData,
        }
    }
}

fn buf_arr(
    mmap: *mut sys::doca_mmap,
    gpu: &Gpu,
    num: usize,
    elem: usize,
) -> Result<NonNull<sys::doca_buf_arr>> {
    if num == 0 || elem == 0 {
        return Err(Error::InvalidArgument("an empty buffer array".into()));
    }
    let mut raw = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("doca_buf_arr_create", unsafe {
        sys::doca_buf_arr_create(num, &mut raw)
    })?;
    let raw = NonNull::new(raw)
        .ok_or_else(|| Error::InvalidArgument("doca_buf_arr_create returned NULL".into()))?;
    let r = raw.as_ptr();
    // SAFETY: a fresh array, a live mmap and GPU.
    let set = unsafe {
        check(
            "doca_buf_arr_set_params",
            sys::doca_buf_arr_set_params(r, mmap, elem, 0),
        )
        .and_then(|()| {
            check(
                "doca_buf_arr_set_target_gpu",
                sys::doca_buf_arr_set_target_gpu(r, gpu.as_raw()),
            )
        })
        .and_then(|()| check("doca_buf_arr_start", sys::doca_buf_arr_start(r)))
    };
    if let Err(e) = set {
        // SAFETY: created above, not shared.
        unsafe { sys::doca_buf_arr_destroy(r) };
        return Err(e);
    }
    Ok(raw)
}

impl GpuBufArr<Local> {
    /// Elements over this process's `mmap`, for kernels on `gpu`.
    pub fn new(mmap: &Mmap, gpu: &Gpu, num: usize, elem_size: usize) -> Result<Self> {
        let raw = buf_arr(mmap.as_raw(), gpu, num, elem_size)?;
        Ok(GpuBufArr {
            inner: Arc::new(ArrInner {
                raw,
                num,
                elem_size,
                _backing: Backing::Local(mmap.clone()),
                _gpu: gpu.clone(),
            }),
            _side: PhantomData,
        })
    }
}

impl GpuBufArr<Remote> {
    /// Elements over the peer's memory, for kernels on `gpu`.
    pub fn new(mmap: &RemoteMmap, gpu: &Gpu, num: usize, elem_size: usize) -> Result<Self> {
        let raw = buf_arr(mmap.as_raw(), gpu, num, elem_size)?;
        Ok(GpuBufArr {
            inner: Arc::new(ArrInner {
                raw,
                num,
                elem_size,
                _backing: Backing::Remote(mmap.clone()),
                _gpu: gpu.clone(),
            }),
            _side: PhantomData,
        })
    }
}

impl<S: MemSide> GpuBufArr<S> {
    /// Elements.
    pub fn len(&self) -> usize {
        self.inner.num
    }

    /// Whether there are none (never: arrays have at least one element).
    pub fn is_empty(&self) -> bool {
        self.inner.num == 0
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> usize {
        self.inner.elem_size
    }

    /// The device handle (`struct doca_gpu_buf_arr *`), typed by side.
    pub fn gpu_handle(&self) -> Result<BufArrHandle<'_, S>> {
        let mut h = std::ptr::null_mut();
        // SAFETY: a started array; valid out-pointer.
        check("doca_buf_arr_get_gpu_handle", unsafe {
            sys::doca_buf_arr_get_gpu_handle(self.as_raw(), &mut h)
        })?;
        let raw = NonNull::new(h)
            .ok_or_else(|| Error::InvalidArgument("NULL buffer array handle".into()))?;
        Ok(BufArrHandle {
            raw,
            _owner: PhantomData,
        })
    }

    /// The raw array.
    pub fn as_raw(&self) -> *mut sys::doca_buf_arr {
        self.inner.raw.as_ptr()
    }
}

/// The device handle of a [`GpuBufArr`] (`struct doca_gpu_buf_arr *`), typed by where its
/// memory is. `Copy`; borrows the array.
#[repr(transparent)]
pub struct BufArrHandle<'a, S: MemSide> {
    raw: NonNull<sys::doca_gpu_buf_arr>,
    _owner: PhantomData<&'a GpuBufArr<S>>,
}

impl<S: MemSide> Clone for BufArrHandle<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: MemSide> Copy for BufArrHandle<'_, S> {}

impl<S: MemSide> BufArrHandle<'_, S> {
    /// The raw device pointer.
    pub fn as_raw(&self) -> *mut sys::doca_gpu_buf_arr {
        self.raw.as_ptr()
    }
}

// SAFETY: a plain device address; the borrow ties it to its array.
unsafe impl<S: MemSide> Send for BufArrHandle<'_, S> {}
// SAFETY: as above.
unsafe impl<S: MemSide> Sync for BufArrHandle<'_, S> {}
// SAFETY: repr(transparent) over one pointer.
unsafe impl<S: MemSide> DeviceRepr for BufArrHandle<'_, S> {}

impl<S: MemSide> std::fmt::Debug for BufArrHandle<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BufArrHandle({:p})", self.raw.as_ptr())
    }
}
