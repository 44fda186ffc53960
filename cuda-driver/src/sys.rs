//! The CUDA driver entry points doca-rs calls, loaded from `libcuda.so.1` at run time.
//!
//! About thirty entry points (contexts, allocation, copies, streams, events, device
//! queries), with the driver's own symbol names and types so that call sites read like the
//! CUDA documentation. Binding them here keeps cudarc out of the software runtime's
//! dependencies: programs that only use UROM do not compile a CUDA binding, and the GPU
//! crates keep cudarc for kernels. A missing driver or symbol is the result
//! [`CUresult::CUDA_ERROR_NOT_FOUND`], never a panic.
//!
//! Every function returns the raw [`CUresult`]; check it with [`crate::cu!`] or
//! [`crate::result::check`], which turn it into an error naming the call.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uchar, c_uint, c_ulonglong, c_void};
use std::sync::OnceLock;

/// A driver call's result (`CUresult`): 0 is success; any other value is an error code.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CUresult(pub c_uint);

impl CUresult {
    /// The call succeeded.
    pub const CUDA_SUCCESS: CUresult = CUresult(0);
    /// A value was out of range.
    pub const CUDA_ERROR_INVALID_VALUE: CUresult = CUresult(1);
    /// `cuInit` was not called.
    pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = CUresult(3);
    /// No CUDA-capable device.
    pub const CUDA_ERROR_NO_DEVICE: CUresult = CUresult(100);
    /// The device or context is not (or no longer) valid.
    pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = CUresult(201);
    /// The named symbol (or, here, the driver library) was not found.
    pub const CUDA_ERROR_NOT_FOUND: CUresult = CUresult(500);
    /// Asynchronous work (an event, a stream) has not completed yet.
    pub const CUDA_ERROR_NOT_READY: CUresult = CUresult(600);

    /// This crate's name for the code, for the codes it knows (the driver's own name, from
    /// [`crate::result::Error::name`], covers every code).
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "CUDA_SUCCESS",
            1 => "CUDA_ERROR_INVALID_VALUE",
            2 => "CUDA_ERROR_OUT_OF_MEMORY",
            3 => "CUDA_ERROR_NOT_INITIALIZED",
            100 => "CUDA_ERROR_NO_DEVICE",
            101 => "CUDA_ERROR_INVALID_DEVICE",
            201 => "CUDA_ERROR_INVALID_CONTEXT",
            400 => "CUDA_ERROR_INVALID_HANDLE",
            500 => "CUDA_ERROR_NOT_FOUND",
            600 => "CUDA_ERROR_NOT_READY",
            700 => "CUDA_ERROR_ILLEGAL_ADDRESS",
            801 => "CUDA_ERROR_NOT_SUPPORTED",
            _ => return None,
        })
    }
}

impl std::fmt::Debug for CUresult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "CUresult({})", self.0),
        }
    }
}

/// A device ordinal handle (`CUdevice`).
pub type CUdevice = c_int;
/// A device address (`CUdeviceptr`).
pub type CUdeviceptr = c_ulonglong;
/// A context (`CUcontext`), opaque.
pub type CUcontext = *mut c_void;
/// A stream (`CUstream`), opaque; null is the legacy default stream.
pub type CUstream = *mut c_void;
/// An event (`CUevent`), opaque.
pub type CUevent = *mut c_void;

/// The device attributes the runtime asks for (`CUdevice_attribute`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CUdevice_attribute {
    /// The major number of the device's compute capability.
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    /// The minor number of the device's compute capability.
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    /// Whether the device can export memory as dma-buf file descriptors.
    CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
}

/// Stream creation flags (`CUstream_flags`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CUstream_flags {
    /// The stream does not synchronise with the legacy default stream.
    CU_STREAM_NON_BLOCKING = 1,
}

/// Event creation flags (`CUevent_flags`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CUevent_flags {
    /// The event records no timestamp (cheaper to record and query).
    CU_EVENT_DISABLE_TIMING = 2,
}

/// Handle kinds of `cuMemGetHandleForAddressRange` (`CUmemRangeHandleType`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CUmemRangeHandleType {
    /// A dma-buf file descriptor.
    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1,
}

/// `cuMemHostAlloc` flag: the memory is pinned for every context.
pub const CU_MEMHOSTALLOC_PORTABLE: c_uint = 1;
/// `cuMemHostAlloc` flag: the memory is mapped into the device's address space.
pub const CU_MEMHOSTALLOC_DEVICEMAP: c_uint = 2;

/// The driver library names tried, in order.
const LIBRARIES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

fn library() -> Option<&'static libloading::Library> {
    static LIB: OnceLock<Option<libloading::Library>> = OnceLock::new();
    LIB.get_or_init(|| LIBRARIES.iter().find_map(|name| open(name)))
        .as_ref()
}

fn open(name: &str) -> Option<libloading::Library> {
    // SAFETY: loading the CUDA driver runs its initialisers, which have no preconditions
    // on the caller; the library stays loaded for the life of the process (a static).
    unsafe { libloading::Library::new(name) }.ok()
}

/// Whether the driver library can be loaded (cudarc's name for the same question).
pub fn is_culib_present() -> bool {
    library().is_some()
}

/// The address of driver function `name` (NUL-terminated), if the driver exports it.
fn symbol<F: Copy>(name: &'static [u8]) -> Option<F> {
    let lib = library()?;
    // SAFETY: every caller asks for a driver function with the exact C signature `F`
    // declares (the table below mirrors the driver API); the library is never unloaded.
    unsafe { lib.get::<F>(name) }.ok().map(|s| *s)
}

/// Declares each driver function: resolved once, then called directly; a missing driver
/// or symbol answers `CUDA_ERROR_NOT_FOUND`.
macro_rules! driver_fns {
    ($( $name:ident ( $($arg:ident : $ty:ty),* $(,)? ); )*) => {
        $(
            #[doc = concat!("The driver's `", stringify!($name), "`.")]
            ///
            /// # Safety
            /// As the driver documents for this function: pointers valid for what it
            /// writes or reads, handles live.
            pub unsafe fn $name($($arg: $ty),*) -> CUresult {
                type Fn = unsafe extern "C" fn($($ty),*) -> CUresult;
                static F: OnceLock<Option<Fn>> = OnceLock::new();
                let f = *F.get_or_init(|| symbol::<Fn>(concat!(stringify!($name), "\0").as_bytes()));
                match f {
                    // SAFETY: the caller upholds the driver's contract for this call.
                    Some(f) => unsafe { f($($arg),*) },
                    None => CUresult::CUDA_ERROR_NOT_FOUND,
                }
            }
        )*
    };
}

driver_fns! {
    cuInit(flags: c_uint);
    cuDriverGetVersion(version: *mut c_int);
    cuGetErrorName(code: CUresult, name: *mut *const c_char);
    cuGetErrorString(code: CUresult, text: *mut *const c_char);
    cuDeviceGet(dev: *mut CUdevice, ordinal: c_int);
    cuDeviceGetPCIBusId(pci_bus_id: *mut c_char, len: c_int, dev: CUdevice);
    cuDeviceGetByPCIBusId(dev: *mut CUdevice, pci_bus_id: *const c_char);
    cuDeviceGetAttribute(pi: *mut c_int, attrib: CUdevice_attribute, dev: CUdevice);
    cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice);
    cuDevicePrimaryCtxRelease_v2(dev: CUdevice);
    cuCtxSetCurrent(ctx: CUcontext);
    cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize);
    cuMemFree_v2(dptr: CUdeviceptr);
    cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize);
    cuMemHostAlloc(pp: *mut *mut c_void, bytesize: usize, flags: c_uint);
    cuMemHostGetDevicePointer_v2(pdptr: *mut CUdeviceptr, p: *mut c_void, flags: c_uint);
    cuMemFreeHost(p: *mut c_void);
    cuMemsetD8_v2(dst: CUdeviceptr, uc: c_uchar, n: usize);
    cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize);
    cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream);
    cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize);
    cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize);
    cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize, stream: CUstream);
    cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize, stream: CUstream);
    cuMemGetHandleForAddressRange(
        handle: *mut c_void,
        dptr: CUdeviceptr,
        size: usize,
        handle_type: CUmemRangeHandleType,
        flags: c_ulonglong,
    );
    cuStreamCreate(stream: *mut CUstream, flags: c_uint);
    cuStreamDestroy_v2(stream: CUstream);
    cuStreamSynchronize(stream: CUstream);
    cuEventCreate(event: *mut CUevent, flags: c_uint);
    cuEventRecord(event: CUevent, stream: CUstream);
    cuEventQuery(event: CUevent);
    cuEventDestroy_v2(event: CUevent);
}

/// The driver's `cuEventElapsedTime_v2` (CUDA 12.8 on) or, where the driver lacks it, its
/// `cuEventElapsedTime` (same signature): milliseconds between two recorded events of one
/// context. CUDA 13 kept only the newer name and drivers before 12.8 have only the older.
///
/// # Safety
/// As the driver documents: `ms` writable, both events live, recorded in one context.
pub unsafe fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult {
    type Fn = unsafe extern "C" fn(*mut f32, CUevent, CUevent) -> CUresult;
    static F: OnceLock<Option<Fn>> = OnceLock::new();
    let f = *F.get_or_init(|| {
        symbol::<Fn>(b"cuEventElapsedTime_v2\0").or_else(|| symbol::<Fn>(b"cuEventElapsedTime\0"))
    });
    match f {
        // SAFETY: the caller upholds the driver's contract for this call.
        Some(f) => unsafe { f(ms, start, end) },
        None => CUresult::CUDA_ERROR_NOT_FOUND,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_print_their_names_or_numbers() {
        assert_eq!(
            format!("{:?}", CUresult::CUDA_ERROR_NOT_READY),
            "CUDA_ERROR_NOT_READY"
        );
        assert_eq!(format!("{:?}", CUresult(9999)), "CUresult(9999)");
    }

    #[test]
    fn without_a_driver_calls_answer_not_found() {
        if is_culib_present() {
            eprintln!("SKIP: a CUDA driver is present (this checks the no-driver answer)");
            return;
        }
        // SAFETY: cuInit takes no pointers.
        assert_eq!(unsafe { cuInit(0) }, CUresult::CUDA_ERROR_NOT_FOUND);
    }

    /// The values mirror the driver's (cudarc's bindgen output of cuda.h is the reference).
    #[test]
    fn values_match_the_driver_headers() {
        use cudarc::driver::sys as cuda;
        for (ours, theirs) in [
            (CUresult::CUDA_SUCCESS, cuda::CUresult::CUDA_SUCCESS),
            (
                CUresult::CUDA_ERROR_INVALID_VALUE,
                cuda::CUresult::CUDA_ERROR_INVALID_VALUE,
            ),
            (
                CUresult::CUDA_ERROR_NOT_INITIALIZED,
                cuda::CUresult::CUDA_ERROR_NOT_INITIALIZED,
            ),
            (
                CUresult::CUDA_ERROR_NO_DEVICE,
                cuda::CUresult::CUDA_ERROR_NO_DEVICE,
            ),
            (
                CUresult::CUDA_ERROR_INVALID_CONTEXT,
                cuda::CUresult::CUDA_ERROR_INVALID_CONTEXT,
            ),
            (
                CUresult::CUDA_ERROR_NOT_FOUND,
                cuda::CUresult::CUDA_ERROR_NOT_FOUND,
            ),
            (
                CUresult::CUDA_ERROR_NOT_READY,
                cuda::CUresult::CUDA_ERROR_NOT_READY,
            ),
        ] {
            assert_eq!(ours.0, theirs as u32, "{ours:?}");
            assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
        }
        for (ours, theirs) in [
            (
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
                cuda::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
            ),
            (
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                cuda::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            ),
            (
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                cuda::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            ),
        ] {
            assert_eq!(ours as u32, theirs as u32, "{ours:?}");
        }
        assert_eq!(
            CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
            cuda::CUstream_flags::CU_STREAM_NON_BLOCKING as u32
        );
        assert_eq!(
            CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
            cuda::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32
        );
        assert_eq!(
            CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD as u32,
            cuda::CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD as u32
        );
        assert_eq!(CU_MEMHOSTALLOC_PORTABLE, cuda::CU_MEMHOSTALLOC_PORTABLE);
        assert_eq!(CU_MEMHOSTALLOC_DEVICEMAP, cuda::CU_MEMHOSTALLOC_DEVICEMAP);
    }
}
