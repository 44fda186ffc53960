//! The first GPU, for tests that drive one directly through the CUDA driver: its PCI bus id
//! (what `doca_gpu_create` takes) and compute capability (what nvcc's `-arch` wants), or a
//! skip line naming what is missing.

use crate::skip::{cuda_driver_present, no_cuda_reason, no_gpu_reason, skip};
use cudarc::driver::sys;
use std::ffi::{c_char, c_int, CStr, CString};

/// CUDA device 0 as the GPU tests use it.
#[derive(Clone, Debug)]
pub struct FirstGpu {
    /// The PCI bus id, e.g. `0000:17:00.0`.
    pub bus_id: CString,
    /// Compute capability, major.
    pub major: i32,
    /// Compute capability, minor.
    pub minor: i32,
}

impl FirstGpu {
    /// The bus id as text.
    pub fn bus_id_str(&self) -> String {
        self.bus_id.to_string_lossy().into_owned()
    }

    /// nvcc's `-arch=sm_XY` for this GPU.
    pub fn nvcc_arch(&self) -> String {
        format!("-arch=sm_{}{}", self.major, self.minor)
    }
}

/// CUDA device 0, or None after printing the skip line: no driver ([`no_cuda_reason`] with
/// `what`), or a driver without a usable GPU ([`no_gpu_reason`]).
pub fn require_gpu(what: &str) -> Option<FirstGpu> {
    if !cuda_driver_present() {
        skip(&no_cuda_reason(what));
        return None;
    }
    match first_gpu() {
        Ok(g) => Some(g),
        Err(why) => {
            skip(&no_gpu_reason(&why));
            None
        }
    }
}

fn check(call: &str, r: sys::CUresult) -> Result<(), String> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{call}: {r:?}"))
    }
}

/// Device 0's bus id and compute capability; the driver must be loadable (cudarc panics
/// otherwise).
fn first_gpu() -> Result<FirstGpu, String> {
    let mut dev: sys::CUdevice = 0;
    let mut buf = [0 as c_char; 32];
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain driver calls with valid out-pointers and a buffer of the given length;
    // the driver library is present (checked by the caller).
    unsafe {
        check("cuInit", sys::cuInit(0))?;
        check("cuDeviceGet", sys::cuDeviceGet(&mut dev, 0))?;
        check(
            "cuDeviceGetPCIBusId",
            sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as c_int, dev),
        )?;
        check(
            "cuDeviceGetAttribute",
            sys::cuDeviceGetAttribute(
                &mut major,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                dev,
            ),
        )?;
        check(
            "cuDeviceGetAttribute",
            sys::cuDeviceGetAttribute(
                &mut minor,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                dev,
            ),
        )?;
    }
    // SAFETY: the driver wrote a NUL-terminated id into `buf`, which it fits.
    let bus_id = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_owned();
    Ok(FirstGpu {
        bus_id,
        major,
        minor,
    })
}

/// Compiles the CUDA C++17 source `src` (headers from `include`) into a cubin for `gpu` at
/// `out`; panics with nvcc's output when it fails (a test kernel that does not build is a
/// failure, not a skip).
pub fn compile_cubin(
    nvcc: &doca_build::Nvcc,
    gpu: &FirstGpu,
    include: &std::path::Path,
    src: &std::path::Path,
    out: &std::path::Path,
) {
    let o = nvcc
        .command()
        .arg(gpu.nvcc_arch())
        .args(["-std=c++17", "-cubin", "-I"])
        .arg(include)
        .arg(src)
        .arg("-o")
        .arg(out)
        .output()
        .expect("running nvcc");
    assert!(
        o.status.success(),
        "nvcc {}: {}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}
