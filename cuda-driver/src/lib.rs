//! # doca-cuda-driver: the CUDA driver calls of doca-rs
//!
//! Two layers, as cudarc keeps them:
//!
//! * [`sys`]: the driver entry points the crates call, loaded from `libcuda.so.1` at run
//!   time, with the driver's names and types. Each returns the raw [`sys::CUresult`]; a
//!   missing driver or symbol is `CUDA_ERROR_NOT_FOUND`, never a panic.
//! * [`result`]: the one place a `CUresult` becomes an error. [`result::Error`] names the
//!   failed call and the driver's name for the code (`cuGetErrorName`, where a driver is
//!   loaded); [`cu!`] makes a `sys` call and checks it; a few safe queries (driver version,
//!   devices, PCI addresses) serve the tests and benches. With the `cudarc` feature,
//!   `result::Named` gives cudarc's own failures the same form.
//!
//! Each crate maps [`result::Error`] to its own error type in one place: doca-soft to
//! `DOCA_ERROR_DRIVER` with the error logged, doca-common to `Error::Cuda`.
//!
//! ```
//! use doca_cuda_driver::{cu, sys};
//!
//! let mut version = 0;
//! // SAFETY: cuDriverGetVersion writes one int.
//! match unsafe { cu!(cuDriverGetVersion(&mut version)) } {
//!     Ok(()) => assert!(version > 0),
//!     // Without a driver: "cuDriverGetVersion: no CUDA driver (...)".
//!     Err(e) => assert_eq!(e.call(), "cuDriverGetVersion"),
//! }
//! # let _ = sys::is_culib_present();
//! ```

pub mod result;
pub mod sys;
