//! UROM for tests and benches: the wire protocol and a raw UCX connection to talk to the
//! daemon and workers directly, a direct way to point a service at a daemon, process
//! teardown, and the knobs the benches report.
//!
//! The C API (`capi::doca_urom`) is the way to drive the host library; this module holds
//! only what that API cannot give.

use crate::capi::doca_urom::UromService;
use crate::capi::toolkit::handle;
use crate::error::DocaResult;
use std::net::{Ipv4Addr, SocketAddrV4};

pub use crate::urom::host::link::{DEFAULT_LIVENESS, LIVENESS_ENV};
pub use crate::urom::host::service::DEFAULT_MAX_MSG;
pub use crate::urom::host::service_file::local_hostname;
pub use crate::urom::host::service_file::SERVICE_FILE_ENV;
pub use doca_soft_urom::daemon::procs::terminate_child;
pub use doca_soft_urom::transport::{
    ConnId, Event, EventRef, Limits, Node, PeerFailure, Transport, TCP_CHECK, UCX_WATCH_ENV,
};
pub use doca_soft_urom::wire::{
    Decoder, DomainBuf, DomainPeer, Msg, PluginDesc, SpawnReq, HEADER_LEN,
};
pub use doca_soft_urom::worker::spin::{DEFAULT_SPIN_US, SPIN_ENV};

/// `127.0.0.1:port`.
pub fn loopback(port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
}

/// Sets the liveness bound of an IDLE service and its workers: how long the daemon or a
/// worker may stay silent while a request waits for it (`DOCA_SOFT_UROM_LIVENESS_MS` for a
/// whole process).
///
/// # Safety
/// `service` is null or a live service from `doca_urom_service_create`.
pub unsafe fn set_service_liveness(
    service: *mut UromService,
    bound: std::time::Duration,
) -> DocaResult<()> {
    // SAFETY: caller contract.
    unsafe { handle(service) }?.set_liveness(bound)
}

/// Points an IDLE service at the daemon at `addr` directly, without a
/// `DOCA_UROM_SERVICE_FILE` (what `doca_urom_service_set_dev` looks up).
///
/// # Safety
/// `service` is null or a live service from `doca_urom_service_create`.
pub unsafe fn set_service_addr(service: *mut UromService, addr: SocketAddrV4) -> DocaResult<()> {
    // SAFETY: caller contract.
    unsafe { handle(service) }?.set_addr(addr)
}

/// Whether a RUNNING worker context's commands travel over UCX (the connection moved to an
/// endpoint made from the worker's address after the attach) rather than over TCP.
///
/// # Safety
/// `worker` is null or a live worker from `doca_urom_worker_create`.
pub unsafe fn worker_on_ucx(worker: *mut crate::capi::doca_urom::UromWorker) -> DocaResult<bool> {
    // SAFETY: caller contract.
    Ok(unsafe { handle(worker) }?.shared.on_ucx())
}

/// The transports of the UCX endpoint a RUNNING worker context's commands travel on (`None`:
/// they stay on TCP), by UCX's names (`sysv` on `memory`, `tcp` on `lo`, ...).
///
/// # Safety
/// `worker` is null or a live worker from `doca_urom_worker_create`.
pub unsafe fn worker_ucx_transports(
    worker: *mut crate::capi::doca_urom::UromWorker,
) -> DocaResult<Option<Vec<Transport>>> {
    // SAFETY: caller contract.
    Ok(unsafe { handle(worker) }?.shared.ucx_transports())
}
