//! # doca-urom: safe Rust API for DOCA UROM
//!
//! Host side: a [`Service`] (the UROM daemon, found through `DOCA_UROM_SERVICE_FILE`),
//! [`Worker`]s (worker processes running plugins; commands with typed notifications), and a
//! [`Domain`] joining workers of several processes. Worker side: the plugin SDK
//! ([`sdk::UromPlugin`] + [`export_plugin!`]) to write plugins in Rust with the C plugin ABI.
//! Host helpers for the sample plugins: [`graph`] and [`sandbox`].
//!
//! Ownership: workers hold an `Arc` of their service and PE, domains of their workers, so
//! handles can live together; drops stop contexts and progress them to IDLE (bounded).

#[cfg(feature = "soft")]
use doca_soft as _;

pub mod device;
pub mod domain;
pub mod error;
mod ffi;
pub mod graph;
pub mod pe;
#[cfg(feature = "soft")]
pub mod sandbox;
pub mod sdk;
pub mod service;
pub mod worker;

pub use device::Device;
pub use domain::{Domain, Oob};
pub use error::{DocaError, Error, Result};
pub use pe::ProgressEngine;
pub use service::{CpuSet, PluginInfo, Service};
pub use worker::{Notification, Worker, WORKER_ID_ANY};
