//! DOCA UROM in the software runtime. The engine is crate-private; what is public here are
//! the entry points of the two UROM programs. The C API is `capi::doca_urom`; tests and
//! benches reach the rest through `testing::urom` (feature `testing`).
//!
//! * `host`: the host library (service, worker contexts, domains);
//! * `daemon`: `doca_urom_daemon`, which loads plugins and spawns workers;
//! * `worker`: `doca_urom_worker`, one process per worker id, driving plugins through the
//!   plugin ABI (`plugin_abi`, generated from `doca_urom_plugin.h`);
//! * `wire`: the protocol between them (frames, messages, and the Cmd/Notify codec
//!   `wire::command`), carried by `transport` (UCX byte streams through `ucx_sys`).

pub(crate) mod daemon;
pub(crate) mod host;
pub(crate) mod plugin_abi;
pub(crate) mod stop;
pub(crate) mod transport;
pub(crate) mod wire;
pub(crate) mod worker;

/// Runs `doca_urom_daemon` with `args` (without `argv[0]`); returns its exit code.
pub fn daemon_main(args: &[String]) -> i32 {
    daemon::main_with_args(args)
}

/// Runs `doca_urom_worker` with `args` (without `argv[0]`); returns its exit code.
pub fn worker_main(args: &[String]) -> i32 {
    worker::main_with_args(args)
}
