//! # doca-test-support: what the tests and benches of doca-rs share
//!
//! Dev-only (`publish = false`). Independent of doca-soft and the safe crates, so every
//! crate's tests can depend on it and its frame builders stay an independent check of
//! doca-soft's parser.
//!
//! * [`mod@skip`]: tests that cannot run here say so in one line,
//!   `skipped: <test>: <reason>`, and return ([`require_cuda()`] or [`require_cuda!`],
//!   [`require_raw_sockets`], [`require_nvcc`], [`skip_if!`]);
//! * [`alloc`]: a counting global allocator, for tests that a path allocates nothing;
//! * [`cc`]: C and C++ against doca-soft's headers with the samples' strict flags;
//! * [`gpu`]: CUDA device 0's bus id and compute capability ([`require_gpu`]), or the skip
//!   line saying what is missing;
//! * [`frames`]: Ethernet/IPv4/UDP/TCP/ICMP frames with correct checksums, and the
//!   Internet checksum;
//! * [`urom`]: a UROM daemon on loopback for a test ([`urom::Daemon`]), and where its
//!   binaries come from ([`urom::UromBinaries`]);
//! * [`wait`]: bounded polling ([`eventually`], [`wait_for`]);
//! * [`process`]: stopping a child process, bounded;
//! * [`workspace`]: paths of this checkout and nested cargo builds;
//! * [`netns`]: network namespaces, veth pairs (between two namespaces, to the host, or
//!   both ends in one) and link state, without the `ip` command;
//! * [`build`]: doca-build re-exported, for tests that compile kernels at run time.
//!
//! ## Quick start
//!
//! ```no_run
//! use doca_test_support::frames::FrameBuilder;
//! use doca_test_support::{eventually, require_cuda};
//!
//! #[test]
//! fn gpu_receives_a_frame() {
//!     if !require_cuda("GPU receive queue") {
//!         return; // printed: skipped: gpu_receives_a_frame: no CUDA driver (libcuda.so.1 not loadable) for GPU receive queue; run on ...
//!     }
//!     let frame = FrameBuilder::new().udp(4000, 53, b"payload");
//!     // ... send `frame`, then wait (bounded) for the queue to count it:
//!     let delivered = || 1;
//!     assert!(eventually(|| delivered() == 1));
//! }
//! # fn main() {}
//! ```

#![warn(missing_docs)]

pub mod alloc;
pub mod cc;
pub mod frames;
pub mod gpu;
pub mod netns;
pub mod process;
pub mod skip;
pub mod urom;
pub mod wait;
pub mod workspace;

/// doca-build (nvcc discovery and the fatbin recipe), for tests that compile `.cu` files.
pub use doca_build as build;
pub use doca_build::Nvcc;
pub use gpu::{require_gpu, FirstGpu};
pub use skip::{
    cuda_driver_present, have_tool, no_cuda_reason, no_gpu_reason, no_nvcc_reason,
    raw_sockets_allowed, require_cuda, require_nvcc, require_raw_sockets, require_tool, skip,
    GET_A_C_COMPILER, GET_A_GPU, NO_RAW_SOCKETS,
};
pub use wait::{eventually, poll_for, poll_until, wait_for, wait_for_file, PATIENCE};
