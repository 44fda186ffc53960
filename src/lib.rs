//! # doca
//!
//! Safe Rust crates for NVIDIA DOCA GPUNetIO and DOCA UROM, and a software DOCA runtime
//! (`doca-soft`) that runs every program built on them without a ConnectX NIC or a
//! BlueField DPU.
//!
//! This facade re-exports the safe crates:
//!
//! * [`gpunetio`]: devices, GPUs, GPU memory, memory maps, progress engines, Ethernet queues
//!   whose data path lives in GPU memory, DOCA Flow and semaphores.
//! * [`urom`]: UROM services, workers and domains, and the SDK for worker plugins.
//! * [`sys`]: the raw FFI bindings, for what the safe crates do not cover yet.
//!
//! ## Quick start
//!
//! ```no_run
//! use doca::gpunetio::Device;
//!
//! fn main() -> Result<(), doca::gpunetio::Error> {
//!     for info in Device::list()? {
//!         println!("{} {}", info.pci_addr(), info.iface_name());
//!     }
//!     Ok(())
//! }
//! ```
//!
//! ## Backends
//!
//! The feature `soft` (default) links the software runtime; the feature `sdk` links an
//! installed NVIDIA DOCA SDK instead. Exactly one of them must be enabled.

pub use doca_gpunetio as gpunetio;
pub use doca_sys as sys;
pub use doca_urom as urom;
