//! DOCA UROM's host library in the software runtime: the service, worker and domain
//! contexts behind `capi::doca_urom` (`host`), speaking the wire protocol of the UROM
//! service (the crate doca-soft-urom, which also holds the daemon and worker programs).
//! Tests and benches reach the rest through `testing::urom` (feature `testing`).

pub(crate) mod host;

// The service's pieces the host library speaks to.
pub(crate) use doca_soft_urom::{daemon, transport, wire};

/// Runs `doca_urom_daemon` with `args` (without `argv[0]`); returns its exit code.
pub use doca_soft_urom::daemon_main;
/// Runs `doca_urom_worker` with `args` (without `argv[0]`); returns its exit code.
pub use doca_soft_urom::worker_main;
