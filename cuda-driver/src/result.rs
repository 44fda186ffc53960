//! CUDA driver results as errors that name the failed call.
//!
//! [`check`] (or the [`cu!`](crate::cu) macro, which makes the call and passes its name)
//! is where every driver result of doca-rs is turned into a Rust result.

use crate::sys::{self, CUdevice, CUdevice_attribute, CUresult};
use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr};
use std::fmt;

/// A failed driver call: which entry point, and the code the driver returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    call: &'static str,
    code: CUresult,
}

/// The result of a driver call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A failure of `call` (the entry point's name) with `code`.
    pub fn new(call: &'static str, code: CUresult) -> Error {
        Error { call, code }
    }

    /// The failed call as the CUDA documentation names it (`cuMemAlloc`: without the
    /// `_v2` of the versioned symbol).
    pub fn call(&self) -> &'static str {
        self.call.strip_suffix("_v2").unwrap_or(self.call)
    }

    /// The code the driver returned.
    pub fn code(&self) -> CUresult {
        self.code
    }

    /// The driver's name for the code; see [`error_name`].
    pub fn name(&self) -> Cow<'static, str> {
        error_name(self.code)
    }

    /// The driver's description of the code (`cuGetErrorString`: "out of memory"), if a
    /// driver is loaded and knows the code.
    pub fn description(&self) -> Option<&'static str> {
        // SAFETY: the out-pointer is writable.
        driver_string(|p| unsafe { sys::cuGetErrorString(self.code, p) })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code == CUresult::CUDA_ERROR_NOT_FOUND && !sys::is_culib_present() {
            write!(
                f,
                "{}: no CUDA driver (libcuda.so.1 could not be loaded)",
                self.call()
            )
        } else {
            write!(f, "{} failed: {}", self.call(), self.name())?;
            match self.description() {
                Some(d) => write!(f, " ({d})"),
                None => Ok(()),
            }
        }
    }
}

impl std::error::Error for Error {}

/// `Ok(())` when `code` is `CUDA_SUCCESS`, else the [`Error`] of `call`.
pub fn check(call: &'static str, code: CUresult) -> Result<()> {
    if code == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::new(call, code))
    }
}

/// Makes one [`sys`](crate::sys) call and checks its result with
/// [`check`](crate::result::check), naming the call: `cu!(cuMemAlloc_v2(&mut p, n))` is
/// `check("cuMemAlloc_v2", sys::cuMemAlloc_v2(&mut p, n))`. The call is unsafe: write the
/// macro inside an `unsafe` block with the call's `// SAFETY:` reasoning.
#[macro_export]
macro_rules! cu {
    ($f:ident ( $($arg:expr),* $(,)? )) => {
        $crate::result::check(::core::stringify!($f), $crate::sys::$f($($arg),*))
    };
}

/// The driver's name for `code` (`cuGetErrorName`: `"CUDA_ERROR_OUT_OF_MEMORY"`); without
/// a driver, or for a code the driver does not know, this crate's name for it or
/// `CUresult(<number>)`.
pub fn error_name(code: CUresult) -> Cow<'static, str> {
    // SAFETY: the out-pointer is writable.
    if let Some(s) = driver_string(|p| unsafe { sys::cuGetErrorName(code, p) }) {
        return Cow::Borrowed(s);
    }
    match code.name() {
        Some(n) => Cow::Borrowed(n),
        None => Cow::Owned(format!("CUresult({})", code.0)),
    }
}

/// The static string a driver query (`cuGetErrorName`, `cuGetErrorString`) points its
/// out-pointer at, if it succeeds.
fn driver_string(query: impl FnOnce(*mut *const c_char) -> CUresult) -> Option<&'static str> {
    let mut p: *const c_char = std::ptr::null();
    if query(&mut p) != CUresult::CUDA_SUCCESS || p.is_null() {
        return None;
    }
    // SAFETY: on success the driver points `p` at a NUL-terminated string of its own,
    // and the driver is never unloaded.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// `cuInit(0)`.
pub fn init() -> Result<()> {
    // SAFETY: cuInit takes no pointers.
    unsafe { cu!(cuInit(0)) }
}

/// The driver's CUDA version as (major, minor): `(13, 0)` for a CUDA 13.0 driver.
pub fn driver_version() -> Result<(i32, i32)> {
    let mut v: c_int = 0;
    // SAFETY: `v` is a writable int.
    unsafe { cu!(cuDriverGetVersion(&mut v)) }?;
    Ok((v / 1000, v % 1000 / 10))
}

/// The device of ordinal `ordinal` (after [`init`]).
pub fn device(ordinal: c_int) -> Result<CUdevice> {
    let mut dev: CUdevice = 0;
    // SAFETY: `dev` is writable.
    unsafe { cu!(cuDeviceGet(&mut dev, ordinal)) }?;
    Ok(dev)
}

/// The PCI address of `dev` (`0000:3b:00.0`).
pub fn device_pci_bus_id(dev: CUdevice) -> Result<String> {
    let mut buf = [0 as c_char; 32];
    // SAFETY: the driver writes at most `len` bytes, NUL included, into `buf`.
    unsafe {
        cu!(cuDeviceGetPCIBusId(
            buf.as_mut_ptr(),
            buf.len() as c_int,
            dev
        ))
    }?;
    // SAFETY: on success `buf` holds a NUL-terminated string (it was zeroed, and the
    // driver writes fewer than `len` bytes).
    let id = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Ok(id.to_string_lossy().into_owned())
}

/// An attribute of `dev`.
pub fn device_attribute(dev: CUdevice, attr: CUdevice_attribute) -> Result<c_int> {
    let mut v: c_int = 0;
    // SAFETY: `v` is writable.
    unsafe { cu!(cuDeviceGetAttribute(&mut v, attr, dev)) }?;
    Ok(v)
}

/// The PCI address of the first GPU, `None` without a driver or a device (after calling
/// [`init`] itself).
pub fn first_gpu_pci_bus_id() -> Option<String> {
    init().ok()?;
    device_pci_bus_id(device(0).ok()?).ok()
}

#[cfg(feature = "cudarc")]
mod cudarc_names {
    use super::{Error, Result};
    use crate::sys::CUresult;

    impl From<cudarc::driver::sys::CUresult> for CUresult {
        fn from(code: cudarc::driver::sys::CUresult) -> CUresult {
            CUresult(code as u32)
        }
    }

    /// Names the call behind a result of cudarc: its failure becomes an [`Error`] of that
    /// call (`result::init().named("cuInit")`).
    pub trait Named<T> {
        /// The result, its failure as an [`Error`] of `call`.
        fn named(self, call: &'static str) -> Result<T>;
    }

    impl<T> Named<T> for std::result::Result<T, cudarc::driver::DriverError> {
        fn named(self, call: &'static str) -> Result<T> {
            self.map_err(|e| Error::new(call, e.0.into()))
        }
    }
}

#[cfg(feature = "cudarc")]
pub use cudarc_names::Named;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_call_and_the_code() {
        let e = check("cuMemAlloc_v2", CUresult::CUDA_ERROR_INVALID_VALUE).unwrap_err();
        assert_eq!(e.call(), "cuMemAlloc");
        assert_eq!(e.code(), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(e.name(), "CUDA_ERROR_INVALID_VALUE");
        let text = e.to_string();
        assert!(
            text.starts_with("cuMemAlloc failed: CUDA_ERROR_INVALID_VALUE"),
            "{text}"
        );
        assert_eq!(check("cuInit", CUresult::CUDA_SUCCESS), Ok(()));
    }

    #[test]
    fn unknown_codes_print_their_number() {
        assert_eq!(error_name(CUresult(9999)), "CUresult(9999)");
    }

    #[test]
    fn the_macro_names_the_call_it_makes() {
        let mut v = 0;
        // SAFETY: cuDriverGetVersion writes one int.
        match unsafe { crate::cu!(cuDriverGetVersion(&mut v)) } {
            Ok(()) => assert!(v >= 1000, "driver version {v}"),
            Err(e) => {
                assert_eq!(e.call(), "cuDriverGetVersion");
                assert!(e.to_string().starts_with("cuDriverGetVersion"), "{e}");
            }
        }
    }

    #[test]
    fn without_a_driver_errors_say_so() {
        if sys::is_culib_present() {
            eprintln!("SKIP: a CUDA driver is present (this checks the no-driver message)");
            return;
        }
        let e = init().unwrap_err();
        assert_eq!(e.code(), CUresult::CUDA_ERROR_NOT_FOUND);
        assert_eq!(
            e.to_string(),
            "cuInit: no CUDA driver (libcuda.so.1 could not be loaded)"
        );
        assert_eq!(first_gpu_pci_bus_id(), None);
    }

    #[cfg(feature = "cudarc")]
    #[test]
    fn cudarc_failures_take_the_same_form() {
        let r: std::result::Result<(), _> = Err(cudarc::driver::DriverError(
            cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY,
        ));
        let e = r.named("cuEventQuery").unwrap_err();
        assert_eq!(e.code(), CUresult::CUDA_ERROR_NOT_READY);
        assert_eq!(e.call(), "cuEventQuery");
    }
}
