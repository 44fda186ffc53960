//! # doca-build: compile CUDA kernels for DOCA GPUNetIO in a build script
//!
//! Finds nvcc and compiles `.cu` files that use the DOCA device headers into one fatbin,
//! with the recipe every crate of doca-rs uses (SASS for sm_80 and sm_90, PTX for
//! compute_80, C++17, `-O3`). Embed the fatbin in your crate and load it with cudarc at
//! run time. No GPU is needed to build.
//!
//! ## Quick start
//!
//! `Cargo.toml` of your crate. Depending on `doca` is enough: its `links` metadata tells
//! your build script where the DOCA headers of the chosen backend are (see
//! [`DOCA_INCLUDE_VARS`]), and it re-exports the cudarc its GPU handles are built for, so
//! the versions cannot diverge:
//!
//! ```toml
//! [dependencies]
//! doca = "0.1"
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
//! A kernel includes the device headers it uses and is declared `extern "C"`, so that it is
//! found by name (the templates of the device API are instantiated inside it):
//!
//! ```c
//! #include <doca_gpunetio_dev_eth_rxq.cuh>
//!
//! extern "C" __global__ void my_receive_kernel(struct doca_gpu_eth_rxq *rxq,
//!                                              const uint32_t *exit_flag, uint64_t *packets)
//! {
//!     __shared__ uint64_t first;
//!     __shared__ uint32_t num;
//!     __shared__ struct doca_gpu_dev_eth_rxq_attr attr[512];
//!     while (*(volatile const uint32_t *)exit_flag == 0) {
//!         if (doca_gpu_dev_eth_rxq_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD,
//!                                       DOCA_GPUNETIO_ETH_MCST_AUTO,
//!                                       DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
//!                                       DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(
//!                 rxq, 512, 500000, &first, &num, attr) == DOCA_SUCCESS)
//!             *(volatile uint64_t *)packets += num;
//!     }
//! }
//! ```
//!
//! `src/main.rs`: embed the fatbin, load it into the GPU's context with `doca::cudarc`, and
//! launch the kernel with a queue's GPU handle (`doca::gpunetio::RxqHandle` is a kernel
//! argument):
//!
//! ```no_run
//! # macro_rules! include_bytes { ($($t:tt)*) => { &[0u8; 0] } }
//! # mod doca { pub use cudarc; }
//! use doca::cudarc::driver::CudaContext;
//! use doca::cudarc::nvrtc::Ptx;
//!
//! static KERNELS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.fatbin"));
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Without a CUDA driver cudarc panics: check first
//!     // (doca::gpunetio::cuda_available() does the same).
//!     // SAFETY: only tries to load the driver library.
//!     if !unsafe { doca::cudarc::driver::sys::is_culib_present() } {
//!         return Err("no CUDA driver on this machine".into());
//!     }
//!     // With doca-gpunetio: `gpu.cuda()` is this context for a `Gpu`.
//!     let ctx = CudaContext::new(0)?;
//!     let module = ctx.load_module(Ptx::from_binary(KERNELS.to_vec()))?;
//!     let _receive = module.load_function("my_receive_kernel")?;
//!     Ok(())
//! }
//! ```
//!
//! doca-rs's `examples/own-kernel` is this crate, complete: DOCA Flow steering UDP to a GPU
//! receive queue, the launch with the queue's handle, the exit flag and counters in
//! CPU-visible memory, and the teardown order.
//!
//! ## docs.rs
//!
//! Under `DOCS_RS` [`Fatbin::compile`] writes an empty fatbin without looking for nvcc, so
//! a crate whose build script uses this one documents on docs.rs unchanged.
//!
//! ## Which drivers run the result
//!
//! The fatbin carries SASS for sm_80 and sm_90 and PTX for compute_80. The pinned nvcc
//! 13.0 writes PTX ISA 9.0; a driver JIT-compiles only PTX whose ISA it knows, and CUDA
//! 12.x drivers know up to ISA 8.8 (12.9).
//!
//! | fatbin built with | CUDA 13 driver (>= 580) | CUDA 12 driver |
//! |---|---|---|
//! | nvcc 13.0 (the default) | runs: SASS on sm_80/sm_90, PTX JIT on newer GPUs | PTX refused (ISA 9.0); whether it loads the 13.0 SASS on sm_80/sm_90 is **to be measured** |
//! | nvcc 12.x (`NVCC=/path/to/12.x/nvcc`) | runs (older PTX and SASS are accepted) | expected to run up to the driver's ISA: **to be measured** |
//!
//! The host side needs nothing version-specific: cudarc loads the driver at run time
//! (`dynamic-loading`) and resolves each function when first called, so the `cuda-13000`
//! bindings work on a CUDA 12 driver as long as the functions called exist there (the
//! context, module, memory, stream and launch calls used here all do; **to be measured**).
//! To measure on a GPU machine, build `examples/own-kernel` and run
//!
//! ```text
//! own-kernel --probe                        # driver version, then load and launch: SASS
//! CUDA_FORCE_PTX_JIT=1 own-kernel --probe   # the same, forcing the PTX JIT
//! ```
//!
//! Each prints one line `probe driver=<major.minor> ... load=ok launch=ok`, or names the
//! step that failed (exit status 1). Expected: both `ok` on a CUDA 13 driver; on a CUDA 12
//! driver the forced JIT fails at `load` (unsupported PTX version) with an nvcc-13.0
//! fatbin, and the rows above marked to be measured are what the two lines decide.
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
pub mod older_driver;

pub use error::Error;
pub use fatbin::{gencode_args, Fatbin, DOCA_INCLUDE_VARS, PTX_ARCH, SASS_ARCHS};
pub use nvcc::{Nvcc, Origin};
pub use older_driver::{OlderDriver, PtxIsa, PTXAS_VAR, PTX_ISA_VAR};
