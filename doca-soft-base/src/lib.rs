//! # doca-soft-base: what every part of the software DOCA runtime shares
//!
//! The bottom crate of doca-soft: DOCA's error codes (`doca_error_t`, [`error::DocaError`]),
//! the logging engine behind `doca_log.h` (sources, levels, backends, and the `sdk_*!`
//! macros the runtime logs with) and the lock helper every shared object uses.
//!
//! * Owns: the error code table, the process-wide logger, [`sync::lock`].
//! * May call: the standard library and libc only.
//! * Called by: every other doca-soft crate (`doca-soft-packet`, `doca-soft-nic`,
//!   `doca-soft-urom`, `doca-soft`). Applications use `doca-soft` (C API) or the safe crates,
//!   never this crate directly.
//!
//! ## Quick start
//!
//! ```
//! use doca_soft_base::error::DocaError;
//! use doca_soft_base::log;
//!
//! // Codes print as DOCA names them.
//! assert_eq!(DocaError::IN_PROGRESS.to_string(), "DOCA_ERROR_IN_PROGRESS: Operation is in progress");
//! // The runtime's own log lines go through the process-wide logger.
//! assert!(log::is_valid_level(log::LEVEL_ERROR));
//! ```

pub mod error;
#[macro_use]
pub mod log;
pub mod sync;
