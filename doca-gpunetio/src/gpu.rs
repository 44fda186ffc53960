//! GPUs (`doca_gpu`) and GPU memory (`doca_gpu_mem_alloc`).

use cudarc::driver::{sys as cu, CudaContext};
use doca_common::error::{check, Error, Result};
use doca_cuda_driver::result::Named;
use doca_sys as sys;
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

/// Whether a CUDA driver can be loaded on this machine. Everything GPU-related returns
/// [`Error::Cuda`] when it cannot; this never panics.
pub fn cuda_available() -> bool {
    // SAFETY: only probes whether the driver library can be loaded.
    unsafe { cu::is_culib_present() }
}

fn no_driver() -> Error {
    Error::Cuda("no CUDA driver on this machine (libcuda.so could not be loaded)".into())
}

/// PCI bus ids (`0000:17:00.0` form, lower case) of the CUDA devices, by ordinal.
pub fn gpu_pci_bus_ids() -> Result<Vec<String>> {
    if !cuda_available() {
        return Err(no_driver());
    }
    let n = CudaContext::device_count().named("cuDeviceGetCount")?;
    (0..n as usize).map(pci_bus_id_of).collect()
}

fn pci_bus_id_of(ordinal: usize) -> Result<String> {
    use cudarc::driver::result;
    let attr = |dev, a| {
        // SAFETY: `dev` comes from cuDeviceGet; the attribute ids are valid.
        unsafe { result::device::get_attribute(dev, a) }.named("cuDeviceGetAttribute")
    };
    result::init().named("cuInit")?;
    let dev = result::device::get(ordinal as i32).named("cuDeviceGet")?;
    let domain = attr(
        dev,
        cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
    )?;
    let bus = attr(dev, cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?;
    let device = attr(
        dev,
        cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
    )?;
    Ok(format!("{domain:04x}:{bus:02x}:{device:02x}.0"))
}

struct GpuInner {
    raw: NonNull<sys::doca_gpu>,
    pci: String,
    cuda: Arc<CudaContext>,
}

// SAFETY: doca_gpu is a thread-safe handle (allocation calls are serialized by DOCA).
unsafe impl Send for GpuInner {}
// SAFETY: as above.
unsafe impl Sync for GpuInner {}

impl Drop for GpuInner {
    fn drop(&mut self) {
        // SAFETY: created by doca_gpu_create; every allocation (which holds an Arc of this)
        // is already freed.
        let rc = unsafe { sys::doca_gpu_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_gpu_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A GPU as DOCA sees it (`doca_gpu`), with the CUDA primary context of that device
/// (memory DOCA allocates is valid in kernels launched in that context). Cheap to clone;
/// `Send + Sync`.
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<GpuInner>,
}

impl Gpu {
    /// Opens the GPU with this PCI bus id (`17:00.0` or `0000:17:00.0`).
    pub fn open(pci_bus_id: &str) -> Result<Gpu> {
        let ids = gpu_pci_bus_ids()?;
        let want = normalize_pci(pci_bus_id);
        let ordinal = ids
            .iter()
            .position(|id| normalize_pci(id) == want)
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "no CUDA GPU at PCI address {pci_bus_id:?}; GPUs here: {ids:?}"
                ))
            })?;
        Self::open_ordinal(ordinal, pci_bus_id)
    }

    /// Opens CUDA device `ordinal` (0 is the first GPU).
    pub fn by_ordinal(ordinal: usize) -> Result<Gpu> {
        let ids = gpu_pci_bus_ids()?;
        let id = ids.get(ordinal).ok_or_else(|| {
            Error::NotFound(format!("no CUDA device {ordinal} ({} present)", ids.len()))
        })?;
        Self::open_ordinal(ordinal, &id.clone())
    }

    fn open_ordinal(ordinal: usize, pci: &str) -> Result<Gpu> {
        doca_common::log::init_default();
        // The samples create the CUDA context before doca_gpu_create; so do we.
        let cuda = CudaContext::new(ordinal)
            .map_err(|e| Error::Cuda(format!("primary context of device {ordinal}: {e}")))?;
        let c =
            CString::new(pci).map_err(|_| Error::InvalidArgument("PCI address with NUL".into()))?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `c` is a valid C string and `raw` a valid out-pointer.
        check("doca_gpu_create", unsafe {
            sys::doca_gpu_create(c.as_ptr(), &mut raw)
        })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::NotFound("doca_gpu_create returned no GPU".into()))?;
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                raw,
                pci: pci.to_owned(),
                cuda,
            }),
        })
    }

    /// PCI bus id as given when opened.
    pub fn pci_bus_id(&self) -> &str {
        &self.inner.pci
    }

    /// The CUDA context (cudarc) of this GPU, for loading modules and launching kernels.
    pub fn cuda(&self) -> &Arc<CudaContext> {
        &self.inner.cuda
    }

    /// Compute capability (major, minor).
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        let a = |x| self.inner.cuda.attribute(x).named("cuDeviceGetAttribute");
        Ok((
            a(cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            a(cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ))
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_gpu {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("pci_bus_id", &self.inner.pci)
            .finish()
    }
}

fn normalize_pci(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    if s.matches(':').count() == 1 {
        format!("0000:{s}")
    } else {
        s
    }
}

/// Where GPU memory lives (`enum doca_gpu_mem_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemType {
    /// Device memory; no CPU pointer.
    Gpu,
    /// Device memory also mapped for the CPU (GDRCopy; falls back to `CpuGpu` without it).
    GpuCpu,
    /// Pinned host memory mapped into the GPU.
    CpuGpu,
}

impl MemType {
    /// The raw value.
    pub fn raw(self) -> sys::doca_gpu_mem_type {
        match self {
            MemType::Gpu => sys::doca_gpu_mem_type::DOCA_GPU_MEM_TYPE_GPU,
            MemType::GpuCpu => sys::doca_gpu_mem_type::DOCA_GPU_MEM_TYPE_GPU_CPU,
            MemType::CpuGpu => sys::doca_gpu_mem_type::DOCA_GPU_MEM_TYPE_CPU_GPU,
        }
    }
}

/// Types whose every bit pattern is a valid value, so GPU memory can be read back as them.
///
/// # Safety
/// Implement only for plain-old-data types: no padding that matters, no invalid bit
/// patterns (no `bool`, `char`, references or enums).
pub unsafe trait GpuPod: Copy + Send + Sync + 'static {}
macro_rules! pod {
    ($($t:ty),*) => { $(
        // SAFETY: primitive integers and floats accept any bit pattern.
        unsafe impl GpuPod for $t {}
    )* };
}
pod!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// SAFETY: arrays of POD are POD.
unsafe impl<T: GpuPod, const N: usize> GpuPod for [T; N] {}

/// One allocation from `doca_gpu_mem_alloc`, freed on drop.
pub(crate) struct GpuAlloc {
    gpu: Gpu,
    gpu_ptr: NonNull<c_void>,
    cpu_ptr: Option<NonNull<c_void>>,
    bytes: usize,
    mem_type: MemType,
}

// SAFETY: the allocation is plain memory owned by this value; the types built on it decide
// who may write it (GpuBuffer: `&mut` only; GpuAtomicBuffer: atomics only).
unsafe impl Send for GpuAlloc {}
// SAFETY: `&GpuAlloc` gives only addresses; reads and writes go through the types above.
unsafe impl Sync for GpuAlloc {}

impl GpuAlloc {
    /// `bytes` (non-zero) of `mem_type` memory aligned to `align` (a power of two).
    pub(crate) fn new(
        gpu: &Gpu,
        bytes: usize,
        align: usize,
        mem_type: MemType,
    ) -> Result<GpuAlloc> {
        if !align.is_power_of_two() {
            return Err(Error::InvalidArgument(format!(
                "alignment {align} is not a power of two"
            )));
        }
        let mut g = std::ptr::null_mut();
        let mut c = std::ptr::null_mut();
        // SAFETY: the GPU is live and both out-pointers are valid.
        check("doca_gpu_mem_alloc", unsafe {
            sys::doca_gpu_mem_alloc(gpu.as_raw(), bytes, align, mem_type.raw(), &mut g, &mut c)
        })?;
        let gpu_ptr = NonNull::new(g)
            .ok_or_else(|| Error::Cuda("doca_gpu_mem_alloc returned NULL".into()))?;
        let cpu_ptr = if mem_type == MemType::Gpu {
            None
        } else {
            NonNull::new(c)
        };
        Ok(GpuAlloc {
            gpu: gpu.clone(),
            gpu_ptr,
            cpu_ptr,
            bytes,
            mem_type,
        })
    }

    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }
    pub(crate) fn gpu_ptr(&self) -> *mut c_void {
        self.gpu_ptr.as_ptr()
    }
    pub(crate) fn cpu_ptr(&self) -> Option<NonNull<c_void>> {
        self.cpu_ptr
    }
    pub(crate) fn mem_type(&self) -> MemType {
        self.mem_type
    }
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for GpuAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated by doca_gpu_mem_alloc on this GPU, freed once.
        let rc = unsafe { sys::doca_gpu_mem_free(self.gpu.as_raw(), self.gpu_ptr.as_ptr()) };
        if let Err(e) = check("doca_gpu_mem_free", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A typed array in GPU memory from `doca_gpu_mem_alloc`. Freed when dropped and no memory
/// map or queue uses it any more.
///
/// `Send + Sync`. The CPU writes it only through `&mut self` ([`write`](Self::write),
/// [`copy_from_host`](Self::copy_from_host)), so no two threads of the program write it,
/// or read what another is writing, at once; reads through `&self` are volatile loads (or
/// CUDA copies), because kernels and the NIC write the memory behind the program's back,
/// as a device does. Words that CPU threads and running kernels share (flags, counters)
/// belong in a [`GpuAtomicBuffer`](crate::GpuAtomicBuffer) instead, which the CPU touches only atomically.
///
/// Writing through a shared reference, e.g. from two threads, does not compile:
///
/// ```compile_fail
/// fn set_from_two_threads(buf: &doca_gpunetio::GpuBuffer<u32>) {
///     std::thread::scope(|s| {
///         s.spawn(|| buf.write(0, 1));
///         s.spawn(|| buf.write(0, 2));
///     });
/// }
/// ```
pub struct GpuBuffer<T: GpuPod> {
    alloc: Arc<GpuAlloc>,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: GpuPod> GpuBuffer<T> {
    /// `len` elements of `mem_type` memory, aligned for `T`.
    pub fn new(gpu: &Gpu, len: usize, mem_type: MemType) -> Result<Self> {
        Self::with_alignment(gpu, len, std::mem::align_of::<T>(), mem_type)
    }

    /// `len` elements aligned to `align` bytes (a power of two; rings use the page size).
    pub fn with_alignment(gpu: &Gpu, len: usize, align: usize, mem_type: MemType) -> Result<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .filter(|&b| b > 0)
            .ok_or_else(|| Error::InvalidArgument(format!("GPU buffer of {len} elements")))?;
        Ok(GpuBuffer {
            alloc: Arc::new(GpuAlloc::new(gpu, bytes, align, mem_type)?),
            len,
            _t: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the buffer has no elements (never, since zero-length buffers are refused).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.alloc.bytes
    }
    /// Where the memory lives.
    pub fn mem_type(&self) -> MemType {
        self.alloc.mem_type
    }
    /// The GPU it belongs to.
    pub fn gpu(&self) -> &Gpu {
        &self.alloc.gpu
    }
    /// Device address, for kernel arguments.
    pub fn device_ptr(&self) -> u64 {
        self.alloc.gpu_ptr.as_ptr() as u64
    }
    /// CPU address of the same memory, for `GpuCpu` and `CpuGpu` buffers.
    pub fn cpu_ptr(&self) -> Option<*mut T> {
        self.alloc.cpu_ptr.map(|p| p.as_ptr().cast())
    }

    /// Reads element `i` through the CPU mapping with a volatile load (the GPU may be
    /// writing it). `None` for `Gpu` memory or an index out of range.
    pub fn read(&self, i: usize) -> Option<T> {
        let p = self.cpu_ptr()?;
        // SAFETY: in bounds (checked), mapped for the CPU, T is POD.
        (i < self.len).then(|| unsafe { p.add(i).read_volatile() })
    }

    /// Writes element `i` through the CPU mapping with a volatile store. Returns false for
    /// `Gpu` memory or an index out of range.
    pub fn write(&mut self, i: usize, v: T) -> bool {
        match self.cpu_ptr() {
            Some(p) if i < self.len => {
                // SAFETY: in bounds, mapped for the CPU.
                unsafe { p.add(i).write_volatile(v) };
                true
            }
            _ => false,
        }
    }

    /// Copies `src` into the start of the buffer (CPU mapping when there is one, else a
    /// synchronous CUDA copy).
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        self.check_len(src.len())?;
        match self.cpu_ptr() {
            Some(p) => src.iter().enumerate().for_each(|(i, v)| {
                // SAFETY: i < src.len() <= self.len, mapped for the CPU.
                unsafe { p.add(i).write_volatile(*v) }
            }),
            None => {
                self.gpu()
                    .cuda()
                    .bind_to_thread()
                    .map_err(|e| Error::Cuda(format!("bind context: {e}")))?;
                // SAFETY: destination is device memory of at least src.len() elements.
                unsafe { cudarc::driver::result::memcpy_htod_sync(self.device_ptr(), src) }
                    .named("cuMemcpyHtoD")?;
            }
        }
        Ok(())
    }

    /// Copies the start of the buffer into `dst`.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.check_len(dst.len())?;
        match self.cpu_ptr() {
            Some(p) => dst.iter_mut().enumerate().for_each(|(i, v)| {
                // SAFETY: i < dst.len() <= self.len, mapped for the CPU.
                *v = unsafe { p.add(i).read_volatile() }
            }),
            None => {
                self.gpu()
                    .cuda()
                    .bind_to_thread()
                    .map_err(|e| Error::Cuda(format!("bind context: {e}")))?;
                // SAFETY: source is device memory of at least dst.len() elements.
                unsafe { cudarc::driver::result::memcpy_dtoh_sync(dst, self.device_ptr()) }
                    .named("cuMemcpyDtoH")?;
            }
        }
        Ok(())
    }

    fn check_len(&self, n: usize) -> Result<()> {
        if n > self.len {
            return Err(Error::InvalidArgument(format!(
                "{n} elements do not fit in a buffer of {}",
                self.len
            )));
        }
        Ok(())
    }

    pub(crate) fn allocation(&self) -> &Arc<GpuAlloc> {
        &self.alloc
    }
}

impl<T: GpuPod> std::fmt::Debug for GpuBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBuffer")
            .field("len", &self.len)
            .field("mem_type", &self.alloc.mem_type)
            .field("device_ptr", &format_args!("{:#x}", self.device_ptr()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses_normalize() {
        assert_eq!(normalize_pci("17:00.0"), "0000:17:00.0");
        assert_eq!(normalize_pci("0000:17:00.0"), normalize_pci("17:00.0"));
        assert_ne!(normalize_pci("18:00.0"), normalize_pci("17:00.0"));
    }

    #[test]
    fn without_a_driver_gpu_calls_fail_cleanly() {
        if cuda_available() {
            {
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped: a CUDA driver is present (this test covers machines without one)"
                );
            };
            return;
        }
        let e = Gpu::by_ordinal(0).unwrap_err();
        assert!(matches!(e, Error::Cuda(_)), "{e}");
        assert!(e.to_string().contains("no CUDA driver"));
    }
}
