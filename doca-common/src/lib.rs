//! # doca-common: what the safe DOCA crates share
//!
//! The types every safe crate over NVIDIA DOCA needs, whatever the library: network devices
//! ([`Device`], [`DeviceInfo`]), progress engines ([`ProgressEngine`]), the state machine of
//! contexts ([`context::Ctx`], [`CtxState`]), the DOCA error code ([`DocaError`]) and the one
//! error type ([`Error`]). `doca-gpunetio` and `doca-urom` re-export them, so one device or
//! engine serves both, and an error passes from one crate's call to another's `?` whole.
//!
//! ## Quick start
//!
//! ```no_run
//! use doca_common::{Device, ProgressEngine};
//!
//! fn main() -> Result<(), doca_common::Error> {
//!     // Every network device DOCA sees (with the software runtime: Linux interfaces).
//!     for info in Device::list()? {
//!         println!("{} {} {}", info.pci_addr(), info.iface_name(), info.ibdev_name());
//!     }
//!     let nic = Device::open("lo")?; // PCI address, interface or IB device name
//!     let pe = ProgressEngine::new()?;
//!     pe.progress(); // nothing is connected yet: no progress
//!     println!("{:?}", nic.info());
//!     Ok(())
//! }
//! ```
//!
//! ## Errors
//!
//! [`DocaError`] is the raw `doca_error_t` as a `#[repr(transparent)]` newtype with named
//! constants (`DocaError::BAD_STATE`), whose `Display` comes from `doca_error_get_name` and
//! `doca_error_get_descr`. [`Error`] names the failed operation
//! (`"doca_ctx_start failed: ..."`) and keeps the code ([`Error::doca_code`]), or carries the
//! message of a problem found before DOCA was called (an unknown device name, a bad
//! argument, a timeout). `Drop` cannot return errors: they are recorded, and
//! [`take_drop_errors`] hands them out.
//!
//! ## Ownership and threads
//!
//! [`Device`] and [`ProgressEngine`] are cheap clones of an `Arc`; the DOCA object is
//! destroyed with the last clone. Objects built on them (queues, services, workers) hold a
//! clone, so they outlive what uses them. Both are `Send + Sync`; a progress engine
//! serializes its own `progress` calls.
//!
//! ## Waiting from async code
//!
//! A [`ProgressEngine`] offers DOCA's notification handle where the runtime has one
//! ([`ProgressEngine::notification_handle`]), and [`ProgressWaiter`] is what a future that
//! needs an engine progressed does between polls: sleep until the engine's descriptor is
//! readable, or, without one, re-poll after a bounded backoff (50 us doubling to 1 ms). It
//! works under any executor and never spins.
//!
//! ## Logging
//!
//! [`log`] sets DOCA's log levels from Rust ([`log::set_sdk_level`],
//! [`log::set_global_level`]) and makes the runtime's warnings visible by default (on
//! stderr, from the first device or engine on). With the feature `log` (on by default),
//! [`log::install_log_bridge`] routes every DOCA log line into the `log` facade instead.
//!
//! ## Backends
//!
//! Like every safe crate, this one compiles against the backend `doca-sys` binds: `soft`
//! (default, the software runtime `doca-soft`) or `sdk` (an installed NVIDIA DOCA SDK). The
//! features are additive; see `doca-sys` for how the backend is chosen.

#![warn(missing_docs)]

pub mod context;
mod device;
pub mod error;
pub mod log;
pub mod pe;

pub use context::{CtxState, DROP_STOP_TIMEOUT};
pub use device::{Device, DeviceInfo};
pub use error::{check, record_drop_error, take_drop_errors, DocaError, Error, Result};
pub use pe::{ProgressEngine, ProgressWaiter};

/// The raw bindings this crate is built on.
pub use doca_sys as sys;
