//! # doca-build: compile CUDA kernels for DOCA GPUNetIO in a build script
//!
//! Finds nvcc and compiles `.cu` files that use the DOCA device headers into one fatbin,
//! with the recipe every crate of doca-rs uses (SASS for sm_80 and sm_90, PTX for
//! compute_80, C++17, `-O3`). Embed the fatbin in your crate and load it with cudarc at
//! run time. No GPU is needed to build.
//!
//! ## Quick start
//!
//! `Cargo.toml` of your crate (doca-sys tells your build script where the DOCA headers
//! are, through its `links = "doca"` metadata):
//!
//! ```toml
//! [dependencies]
//! doca-sys = "0.1"
//! cudarc = { version = "0.19", default-features = false, features = ["std", "driver", "nvrtc", "dynamic-loading", "cuda-13000"] }
//!
//! [build-dependencies]
//! doca-build = "0.1"
//! ```
//!
//! `build.rs`: every `kernels/*.cu` into `$OUT_DIR/kernels.fatbin`:
//!
//! ```no_run
//! fn main() {
//!     let fatbin = doca_build::Fatbin::new()
//!         .dir("kernels")
//!         .and_then(|f| f.doca_includes().compile("kernels"))
//!         .unwrap_or_else(|e| panic!("{e}")); // says what is missing and how to get it
//!     println!("cargo:rerun-if-changed=kernels");
//!     println!("cargo:warning=built {}", fatbin.display());
//! }
//! ```
//!
//! `src/lib.rs`: embed it, load it into GPU 0's context and look a kernel up by name
//! (declare kernels `extern "C"` so their names are not mangled):
//!
//! ```no_run
//! # macro_rules! include_bytes { ($($t:tt)*) => { &[0u8; 0] } }
//! use cudarc::driver::CudaContext;
//! use cudarc::nvrtc::Ptx;
//!
//! static KERNELS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.fatbin"));
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Without a CUDA driver cudarc panics: check first.
//!     // SAFETY: only tries to load the driver library.
//!     if !unsafe { cudarc::driver::sys::is_culib_present() } {
//!         return Err("no CUDA driver on this machine".into());
//!     }
//!     let ctx = CudaContext::new(0)?;
//!     let module = ctx.load_module(Ptx::from_binary(KERNELS.to_vec()))?;
//!     let _receive = module.load_function("my_receive_kernel")?;
//!     Ok(())
//! }
//! ```
//!
//! ## Finding nvcc
//!
//! [`Nvcc::find`] looks at `NVCC`, `CUDA_HOME/bin`, `PATH`, then the pinned pip wheels that
//! doca-rs's `scripts/setup` installs (`.tools/py/nvidia/cu13/bin`, or `$DOCA_RS_TOOLS`),
//! then `/usr/local/cuda/bin` (details in [`nvcc`]). Use nvcc 13.0: the CUDA 13.0 driver
//! refuses PTX from a newer nvcc. When nvcc is missing the error lists every place tried and
//! how to install it; tests that compile kernels at run time can call [`Nvcc::find`] too.
//!
//! ## From the command line
//!
//! `doca-fatbin [-I DIR]... [-D NAME[=VALUE]]... -o OUT.fatbin SRC.cu...` runs the same
//! recipe (`cargo run -p doca-build --bin doca-fatbin -- ...` in a checkout).

#![warn(missing_docs)]
// The quick start shows a build script: its `fn main` is the point of the example.
#![allow(clippy::needless_doctest_main)]

mod error;
mod fatbin;
pub mod nvcc;

pub use error::Error;
pub use fatbin::{gencode_args, Fatbin, PTX_ARCH, SASS_ARCHS};
pub use nvcc::{Nvcc, Origin};
