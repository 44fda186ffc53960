//! # cuda-kernels: the CUDA kernels of doca-rs
//!
//! `kernels/*.cu` are compiled by nvcc at build time (nvcc 13.0: SASS for sm_80 and sm_90,
//! PTX for compute_80, so any Ampere-or-newer GPU with a CUDA 13 driver runs them; build
//! with `DOCA_BUILD_PTX_ISA=8.0` for CUDA 12 drivers, see doca-build) into one fatbin
//! embedded in this crate, loaded into a GPU's CUDA context on first use (every kernel is
//! looked up then, before any runs), and launched through typed launchers.
//!
//! ## Quick start
//!
//! ```no_run
//! use doca_gpunetio::{Gpu, GpuBuffer, MemType};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let gpu = Gpu::by_ordinal(0)?;
//!     let kernels = cuda_kernels::Kernels::load(&gpu)?;
//!     let buf = GpuBuffer::<u32>::new(&gpu, 1024, MemType::CpuGpu)?;
//!     kernels.fill_pattern(&buf, 7)?;
//!     assert_eq!(buf.read(0), Some(7));
//!     Ok(())
//! }
//! ```
//!
//! ## Sample kernels
//!
//! The ported GPUNetIO samples (`examples/simple_receive.rs`, `simple_send.rs`,
//! `send_wait_time.rs`) run kernels written against the DOCA device headers. Kernels that
//! borrow queues and buffers run inside [`Kernels::scope`], which joins them before it
//! returns (as `std::thread::scope` does threads): the borrows last the whole scope, so
//! no path, not even a leaked guard, frees a queue a kernel still uses.
//! [`KernelScope::launch_simple_receive`], [`KernelScope::launch_simple_send`] and
//! [`KernelScope::launch_send_wait_time`] take the queues' GPU handles
//! ([`doca_gpunetio::RxqHandle`], [`doca_gpunetio::TxqHandle`]), an [`ExecScope`] where the
//! sample has one, and an [`ExitFlag`] the kernel polls; they return a [`RunningKernel`]
//! that sets the flag and waits for the kernel when stopped or dropped. Progress is read
//! from [`RxCounters`] / [`TxCounters`] in CPU-visible memory.
//! The device templates are instantiated per scope and exported under `extern "C"` names
//! (`doca_rs_simple_receive_{thread,warp,block}`, ...).
//!
//! ## gpu_packet_processing kernels
//!
//! `kernels/gpp_*.cu` are the reference application's kernels
//! (`examples/gpu_packet_processing`): [`KernelScope::launch_gpp_receive_udp`] (DNS and other
//! UDP counts posted through semaphores as [`StatsUdp`]), [`KernelScope::launch_gpp_receive_tcp`]
//! (HTTP/TCP classification, [`StatsTcp`], GETs handed on as [`InfoHttp`]),
//! [`KernelScope::launch_gpp_http_server`] (answers from prebuilt [`PageFrames`]),
//! [`KernelScope::launch_gpp_receive_icmp`] (echo replies in place, [`IcmpCounters`]) and
//! [`KernelScope::launch_gpp_tcp_cpu_relay`] (plays the CPU TCP queues, [`CpuFrame`]s to and
//! from the CPU threads). The semaphore records are `#[repr(C)]` mirrors of
//! `gpp_common.cuh`, their layouts asserted on both sides.
//!
//! ## RDMA and DMA sample kernels
//!
//! `kernels/rdma_client_server_write.cu` and `kernels/dma_memcpy.cu` are the kernels of
//! DOCA's `gpunetio_rdma_client_server_write` and `gpunetio_dma_memcpy`
//! (`examples/gpunetio_*.rs`), written against the legacy GPU RDMA and DMA device API:
//! [`KernelScope::launch_rdma_cs_server`] / [`KernelScope::launch_rdma_cs_client`] take the
//! context's [`doca_gpunetio::rdma::RdmaHandle`] and buffer arrays typed local or remote
//! (a local array cannot be passed where the kernel writes to the peer), and leave an
//! [`RdmaCsReport`]; [`KernelScope::launch_dma_memcpy`] takes a
//! [`doca_gpunetio::dma::DmaHandle`] and leaves a [`DeviceStatus`]. `kernels/rdma_bench.cu` holds the kernels of the
//! RDMA write and DMA copy benches ([`KernelScope::launch_rdma_bench_write`],
//! [`KernelScope::launch_dma_bench_copy`]).
//! ## GPU verbs kernels
//!
//! `kernels/verbs_*.cu` are the kernels of the nine `gpunetio_verbs_*` benchmarks
//! (`examples/verbs_*.rs`), written against the `doca_gpu_dev_verbs_*` device headers.
//! Their launchers are [`KernelScope`] methods: [`KernelScope::verbs_write_bw`],
//! [`KernelScope::verbs_write_lat`], [`KernelScope::verbs_put_bw`],
//! [`KernelScope::verbs_get_bw`], [`KernelScope::verbs_put_signal_bw`] (with a companion QP:
//! the put_counter kernel), [`KernelScope::verbs_put_signal_lat`],
//! [`KernelScope::verbs_twosided_client`] and [`KernelScope::verbs_twosided_server`]. They
//! take a connected QP's [`doca_gpunetio::verbs::QpHandle`], local
//! [`doca_gpunetio::verbs::MemoryRegion`]s and the peer's [`RemoteBuf`]s, and return a
//! [`VerbsRun`] that gives the kernel time.
//!
//! ## Build requirements
//!
//! The build script compiles the kernels with `doca-build` (the same recipe your own build
//! script can use for kernels of yours): nvcc is looked for in `NVCC`, `CUDA_HOME/bin`,
//! `PATH`, then where `scripts/setup` installs the pinned wheels
//! (`.tools/py/nvidia/cu13/bin`); no GPU is needed to build.

#![warn(missing_docs)]

mod counters;
mod dma;
mod driver_compat;
mod exit_flag;
mod gpp;
mod launch;
mod preload;
mod rdma;
mod samples;
mod scope;
mod status;
mod verbs;

pub use exit_flag::ExitFlag;
pub use gpp::{
    CpuFrame, HttpCounters, HttpPage, IcmpCounters, IcmpCounts, InfoHttp, PageFrames,
    RelayCounters, RelayCounts, StatsTcp, StatsUdp, GPP_CPU_FRAME_BYTES, GPP_CPU_TX_SLOTS,
    GPP_CUDA_THREADS, GPP_MAX_QUEUES, GPP_SEM_ITEMS, GPP_TCP_HDRS, GPP_TX_BUF_MAX_SZ,
    GPP_TX_BUF_NUM,
};
pub use launch::{KernelError, Kernels};
pub use rdma::{RdmaCsReport, RecvRound, RDMA_CS_BUFS, RDMA_CS_HALF};
pub use samples::{ExecScope, RxCounters, RxCounts, TxCounters, TxCounts, MAX_THREADS_PER_BLOCK};
pub use scope::{KernelScope, RunningKernel, JOIN_TIMEOUT};
pub use status::DeviceStatus;
pub use verbs::{RemoteBuf, Role, Shape, VerbsErrors, VerbsRun, VerbsScope};

/// The embedded fatbin holding every kernel (empty in documentation builds under `DOCS_RS`,
/// where nvcc is not run).
pub static FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.fatbin"));
