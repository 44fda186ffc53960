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
//! A driver JIT-compiles only PTX whose ISA version it knows (CUDA 12.x drivers know up to
//! ISA 8.8, CUDA 13.0's up to 9.0), and nvcc 13.0 writes ISA 9.0. So there are two recipes:
//!
//! | recipe | SASS (sm_80, sm_90) | PTX (compute_80) | drivers |
//! |---|---|---|---|
//! | default | nvcc 13.0 | ISA 9.0, compressed | CUDA 13 (>= 580) |
//! | older driver, `DOCA_BUILD_PTX_ISA=8.0` | CUDA 12.2's ptxas | ISA 8.0, uncompressed | CUDA 13, and CUDA 12 (see below) |
//!
//! The [`older_driver`] recipe still compiles with nvcc 13.0, lowers the PTX's `.version`
//! and has an older ptxas assemble it, which refuses any instruction the lower ISA lacks;
//! the device headers read `DOCA_BUILD_CUDA_TARGET` to choose code that release has. Set
//! the variable for the build (`DOCA_BUILD_PTX_ISA=8.0 cargo build`); `scripts/setup`
//! installs the ptxas (or set `DOCA_BUILD_PTXAS`). Every kernel of doca-rs builds at ISA 8.0
//! (test `older_driver` in CI).
//!
//! **Measured on an H200 with driver 580.159.04 (CUDA 13.0)**, `scripts/cuda-compat run`
//! over builds of `examples/own-kernel`'s kernels, each loaded as built and again with
//! `CUDA_FORCE_PTX_JIT=1`:
//!
//! | build | as built | JIT forced |
//! |---|---|---|
//! | default fatbin (nvcc 13.0) | runs | runs |
//! | older-driver fatbin, ISA 8.0 and 8.2 | runs | runs |
//! | PTX alone, ISA 8.0 / 9.0 | runs | runs |
//! | PTX alone, ISA 9.1 (newer than the driver) | refused at load | refused at load |
//! | sm_90 cubin alone, from ptxas 12.2 / 13.0 | runs | runs (no PTX to compile: the SASS is used) |
//!
//! and `cuda-kernels`' GPU tests built with `DOCA_BUILD_PTX_ISA=8.0` (the sample, scope
//! and unit tests) pass both ways. `scripts/gpu-test run` repeats all of this on any GPU
//! machine.
//!
//! **CUDA 12 drivers: not measured.** No machine with one was available to this project.
//! What is shown instead: the ISA 8.0 PTX is, by the ISA's definition, what every CUDA 12
//! driver JIT-compiles, and it runs on 13.0 through the JIT; ptxas 12.2's SASS runs on
//! 13.0; CUDA's minor-version compatibility covers SASS of 12.2 on 12.0 and 12.1 drivers.
//! The default fatbin's PTX (ISA 9.0) is refused by every CUDA 12 driver; whether such a
//! driver would still take the nvcc 13.0 SASS is unknown, so build with the older-driver
//! recipe for them. A refused fatbin makes `cuda-kernels`' `Kernels::load` fail naming the
//! driver's version and this variable.
//!
//! The host side: cudarc loads the driver at run time (`dynamic-loading`) and resolves each
//! function at its first call, so the `cuda-13000` bindings run on an older driver as long
//! as the functions called exist there. Every driver function doca-rs's GPU tests look up
//! (measured with `LD_DEBUG` on an H200 machine, `scripts/cuda-driver-functions.txt`) is in
//! CUDA 12.0's API (`scripts/check-cuda-driver-api`, a CI step), after one fix: the verbs
//! kernels' timing now falls back from `cuEventElapsedTime_v2` (CUDA 12.8 on) to
//! `cuEventElapsedTime`. Your own host code may call newer functions: a missing one panics
//! at its first call with cudarc's "Missing symbol" message.
//!
//! To see what a driver accepts:
//!
//! ```text
//! own-kernel --probe                             # driver version, then load and launch
//! CUDA_FORCE_PTX_JIT=1 own-kernel --probe        # the same through the PTX JIT
//! own-kernel --probe --module other.fatbin       # another build (fatbin, cubin or PTX)
//! scripts/cuda-compat build DIR && scripts/cuda-compat run DIR   # the table above
//! ```
//!
//! ## Kernels that run together
//!
//! CUDA loads a module's kernels lazily by default (since CUDA 12.2): a kernel's code
//! reaches the GPU when its function is first looked up, and that may wait for the kernels
//! already running. If one kernel spins until another one runs (a server and a client in
//! one process), look every such kernel up (`module.load_function(name)`) before launching
//! the first, or the second launch can deadlock. doca-rs's `cuda-kernels` looks up every
//! kernel of its fatbin when it loads it.
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

mod arch;
mod error;
mod fatbin;
pub mod nvcc;
pub mod older_driver;

pub use arch::{gencode_args, PTX_ARCH, SASS_ARCHS};
pub use error::Error;
pub use fatbin::{Fatbin, DOCA_INCLUDE_VARS};
pub use nvcc::{Nvcc, Origin};
pub use older_driver::{OlderDriver, PtxIsa, PTXAS_VAR, PTX_ISA_VAR};
