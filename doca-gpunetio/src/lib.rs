//! # doca-gpunetio: safe Rust for NVIDIA DOCA GPUNetIO
//!
//! GPUNetIO lets CUDA kernels receive and send packets straight from NIC queues whose
//! rings live in GPU memory. This crate wraps its host (control-path) API: devices, GPUs,
//! GPU memory, memory maps, progress engines, and (as they land) Ethernet queues, DOCA
//! Flow and semaphores.
//!
//! ## Quick start
//!
//! ```no_run
//! use doca_gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap};
//!
//! fn main() -> Result<(), doca_gpunetio::Error> {
//!     // Every network device DOCA sees (with the software runtime: Linux interfaces).
//!     for info in Device::list()? {
//!         println!("{} {} {}", info.pci_addr(), info.iface_name(), info.ibdev_name());
//!     }
//!     let nic = Device::open("lo")?;          // PCI address, interface or IB device name
//!     let gpu = Gpu::by_ordinal(0)?;          // or Gpu::open("17:00.0")
//!     let ring = GpuBuffer::<u8>::with_alignment(&gpu, 1 << 20, 4096, MemType::Gpu)?;
//!     let mmap = Mmap::from_gpu_buffer(&ring, &[&nic], AccessFlags::LOCAL_READ_WRITE)?;
//!     println!("mkey {:#x}", mmap.mkey(&nic)?);
//!     Ok(())
//! }
//! ```
//!
//! ## Backends and library dependency
//!
//! With the default feature `soft`, the DOCA C API comes from `doca-soft`, the software
//! runtime linked into your program: no NIC, DPU or DOCA install is needed, and GPU memory
//! is real CUDA memory (a CUDA driver is loaded at run time, only when you open a GPU).
//! With the feature `sdk`, an installed NVIDIA DOCA 3.3 SDK is linked instead.
//!
//! ## Ownership and cleanup
//!
//! Handles are cheap `Clone`s of an `Arc`. Every child holds its parents (a memory map its
//! devices and memory, a buffer its GPU), so handles can be stored together in any order
//! and are destroyed in a valid order. `Drop` never panics: a context is stopped, the
//! progress engine driven until IDLE (bounded by [`context::DROP_STOP_TIMEOUT`]), then
//! destroyed; failures are recorded and returned by [`take_drop_errors`]. Call the explicit
//! `stop()` methods to see errors directly.
//!
//! ## Thread safety
//!
//! [`Device`], [`Gpu`], [`GpuBuffer`], [`Mmap`] and [`ProgressEngine`] are `Send + Sync`.
//! A progress engine serializes its own `progress` calls.
//!
//! ## Errors
//!
//! [`DocaError`] is the raw `doca_error_t` as a transparent newtype with named constants;
//! [`Error`] says which DOCA call failed (`"doca_ctx_start failed: ..."`).
//!
//! Every type offers `as_raw()` for the calls this crate does not wrap yet (see `doca-sys`).

#![warn(missing_docs)]

pub mod context;
#[cfg(feature = "soft")]
mod counters;
mod device;
mod error;
mod eth_rxq;
mod eth_txq;
// FLOW-PENDING pub mod flow;
mod gpu;
mod handles;
mod mmap;
mod pe;
mod semaphore;

pub use context::CtxState;
pub use device::{Device, DeviceInfo};
pub use error::{take_drop_errors, DocaError, Error, Result};
pub use gpu::{cuda_available, gpu_pci_bus_ids, Gpu, GpuBuffer, GpuPod, MemType};
pub use mmap::{AccessFlags, Mmap};
pub use pe::ProgressEngine;

#[cfg(feature = "soft")]
pub use counters::{RxqCounters, TxqCounters};
// FLOW-PENDING #[cfg(feature = "soft")]
// FLOW-PENDING pub use flow::PortCounters;
pub use eth_rxq::{EthRxq, EthRxqBuilder, RxqType, GPU_PAGE_SIZE};
pub use eth_txq::{EthTxq, EthTxqBuilder, TxErrorEvent, TxNotifyEvent, WaitOnTime};
// FLOW-PENDING pub use flow::{Entry, Flow, FlowConfig, FlowPort, Pipe, RssFlags, TcpFlags};
pub use handles::{RxqHandle, SemaphoreHandle, TxqHandle};
pub use semaphore::{NoInfo, SemStatus, Semaphore, SemaphoreBuilder};

/// The raw bindings this crate is built on.
pub use doca_sys as sys;
