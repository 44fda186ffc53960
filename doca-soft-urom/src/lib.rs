//! # doca-soft-urom: the UROM service of the software DOCA runtime
//!
//! What runs on a BlueField's Arm cores in DOCA UROM, as ordinary processes:
//!
//! * [`daemon`]: `doca_urom_daemon`, which loads plugins from `UROM_PLUGIN_PATH`, answers
//!   hosts and spawns one worker process per worker id;
//! * [`worker`]: `doca_urom_worker`, which drives plugins through the plugin ABI
//!   ([`plugin_abi`], generated from `doca_urom_plugin.h`) and serves their domains;
//! * [`wire`]: the protocol between hosts, daemon and workers (frames, messages, the
//!   Cmd/Notify codec), carried by [`transport`] (UCX byte streams through `ucx-sys`, with a
//!   TCP connection beside them that tells a dead peer at once).
//!
//! * Owns: the two programs (binaries `doca_urom_daemon` and `doca_urom_worker` of this
//!   package), the wire protocol, the plugin host.
//! * May call: `doca-soft-base` (error codes, logging), `ucx-sys`, libc, libloading (plugins).
//! * Called by: `doca-soft`'s UROM host library (`doca_urom_service_*`, `doca_urom_worker_*`,
//!   `doca_urom_domain_*`), which speaks [`wire`] over [`transport`] to the daemon and its
//!   workers. Applications never use it directly.
//!
//! ## Quick start
//!
//! ```text
//! cargo build -p doca-soft-urom              # target/debug/doca_urom_daemon, doca_urom_worker
//! UROM_PLUGIN_PATH=target/debug target/debug/doca_urom_daemon
//! # prints "doca_urom_daemon listening on 127.0.0.1:PORT"; hosts find it through
//! # DOCA_UROM_SERVICE_FILE (see doca-soft's crate docs)
//! ```
//!
//! From Rust, the same programs run in-process:
//!
//! ```
//! // `--help` prints the usage and exits 0 without starting anything.
//! assert_eq!(doca_soft_urom::daemon_main(&["--help".to_string()]), 0);
//! ```

#[macro_use]
extern crate doca_soft_base;

// The runtime's shared pieces, under the names the modules use.
pub(crate) use doca_soft_base::{error, log};

pub mod daemon;
pub mod plugin_abi;
pub mod stop;
pub mod transport;
pub mod wire;
pub mod worker;

/// Runs `doca_urom_daemon` with `args` (without `argv[0]`); returns its exit code.
pub fn daemon_main(args: &[String]) -> i32 {
    daemon::main_with_args(args)
}

/// Runs `doca_urom_worker` with `args` (without `argv[0]`); returns its exit code.
pub fn worker_main(args: &[String]) -> i32 {
    worker::main_with_args(args)
}
