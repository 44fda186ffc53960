//! # doca-urom: safe Rust for NVIDIA DOCA UROM
//!
//! UROM (Unified Resource and Offload Manager) runs *workers*, processes on a DPU (with the
//! software runtime: on this or another host) that load *plugins* and execute commands for
//! host processes. This crate wraps both sides:
//!
//! * host side: a [`Service`] (the connection to the UROM daemon), [`Worker`]s (one worker
//!   process each, commands answered with typed [`Notification`]s), and a [`Domain`] that
//!   joins the workers of several processes through an out-of-band collective ([`Oob`]);
//! * worker side: the plugin SDK ([`sdk::UromPlugin`] + [`export_plugin!`]) to write plugins
//!   in Rust with the C plugin ABI;
//! * host helpers for the `worker_graph` sample plugin: [`graph`] (loopback). (The
//!   `worker_sandbox` plugin's host side lives in its own crate, `plugins/worker_sandbox`.)
//!
//! ## Quick start
//!
//! A host process asks a worker running the `worker_graph` plugin to echo a value. It needs
//! a running daemon (`doca_urom_daemon` of `doca-soft`, or the DPU's UROM service) and
//! `DOCA_UROM_SERVICE_FILE` naming it for this host and the device's PCI address.
//!
//! ```no_run
//! use doca_urom::graph::Graph;
//! use doca_urom::{Device, Service, Worker};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // The DPU-facing device: PCI address, interface or IB device name.
//!     let dev = Device::open("mlx5_0")?;
//!     let service = Service::builder(&dev).max_workers(4).start()?; // RUNNING
//!     for p in service.plugins()? {
//!         println!("plugin {} (id {:#x}, version {})", p.name, p.id, p.version);
//!     }
//!     let graph = Graph::find(&service)?;
//!     // Spawns a worker process with the plugin; progresses until it is RUNNING.
//!     let worker = Worker::builder(&service)
//!         .gid(7)
//!         .plugins(graph.plugin.id)
//!         .start()?;
//!     assert_eq!(graph.loopback(&worker, 42)?, 42);
//!     // Raw commands: bytes in, the plugin's notification out.
//!     let n = worker.command(graph.plugin.id, &doca_urom::graph::loopback_cmd(5))?;
//!     assert_eq!(doca_urom::graph::parse_loopback(&n), Ok(5));
//!     println!("gid 7: workers {:?}", service.workers_by_gid(7)?);
//!     worker.stop()?; // or just drop it
//!     Ok(())
//! }
//! ```
//!
//! A plugin is a `cdylib` crate implementing [`sdk::UromPlugin`]; the daemon finds it in
//! `UROM_PLUGIN_PATH`:
//!
//! ```
//! use doca_urom::sdk::{Command, PluginContext, Reply, UromPlugin};
//! use doca_urom::DocaError;
//!
//! struct Echo;
//!
//! impl UromPlugin for Echo {
//!     fn open(_ctx: &PluginContext) -> Result<Self, DocaError> {
//!         Ok(Echo)
//!     }
//!     fn command(&mut self, _ctx: &PluginContext, cmd: Command<'_>, out: &mut Vec<Reply>) {
//!         out.push(cmd.reply(Ok(()), cmd.payload.to_vec()));
//!     }
//! }
//!
//! doca_urom::export_plugin!(Echo); // urom_plugin_get_iface + urom_plugin_get_version
//!
//! fn main() {
//!     let mut version = 0u64;
//!     // SAFETY: a valid out-pointer.
//!     assert_eq!(unsafe { urom_plugin_get_version(&mut version) }, 0);
//!     assert_eq!(version, 0x01);
//! }
//! ```
//!
//! ## Deployment
//!
//! With the software runtime a host program needs three things besides itself: a running
//! daemon, a service file naming it, and plugins in the daemon's plugin directories.
//!
//! ### The daemon
//!
//! `cargo build -p doca-soft --bins` builds `doca_urom_daemon` and `doca_urom_worker` (the
//! daemon spawns one worker process per worker id; it looks for the worker next to itself,
//! else `--worker-bin` or `DOCA_UROM_WORKER_BIN`). Start it with the plugin directories and
//! the address hosts reach it on:
//!
//! ```sh
//! UROM_PLUGIN_PATH='/opt/urom/plugins;/home/me/plugins' doca_urom_daemon --listen 10.0.0.2:4242
//! ```
//!
//! Its first line on stdout is `doca_urom_daemon listening on IP:PORT`; then one line per
//! plugin it offers and one per file it skipped, with the reason (not a shared library,
//! no plugin symbols, a probe that crashed, a duplicate name), so a wrong or empty
//! directory shows at once. `doca_urom_daemon --help` lists the rest (message size, CPU
//! set, which environment variables hosts may give workers).
//!
//! ### The service file
//!
//! A host finds its service through the file `DOCA_UROM_SERVICE_FILE` names: one service
//! per line, `<app_hostname> <service_type> <dev_hostname> <dev_pci_addr> <net_devs>`, `#`
//! starting a comment. The line used is the one whose first column equals this host's name
//! (what `hostname` prints), whose type is `dpu`, and whose PCI address is the device's
//! given to [`Service::builder`] (`Device::open`; the `devices` example lists them). With
//! the software runtime the third column is the daemon's `host:port`:
//!
//! ```text
//! # app host   type  daemon          device PCI    net devices
//! myhost       dpu   10.0.0.2:4242   0000:3b:00.0  ens1f0
//! ```
//!
//! A missing file, no line for this host name, or no line for the device fails the
//! service's start, and the log names the file, the host name and PCI address looked for,
//! and the lines the file holds instead.
//!
//! ### The plugin directory
//!
//! The daemon offers every `.so` of the `UROM_PLUGIN_PATH` directories (`;`-separated,
//! scanned in order) that exports the plugin symbols; each is probed in a child process
//! first, so one that crashes costs only itself. A plugin's name (what
//! [`Service::plugin`] looks for, `PluginInfo::name`) is its file name without `.so`, as
//! DOCA's daemon has it; the soft daemon also offers cargo's `lib<crate>.so` as `<crate>`
//! (see [`sdk`]). [`Service::plugin`] names the plugin it did not find and the ones offered.
//!
//! ### A plugin built from a Rust crate
//!
//! The plugin crate is a `cdylib` (`crate-type = ["cdylib"]`, plus `"rlib"` when a host
//! side lives in the same crate, as in `plugins/worker_sandbox`) calling
//! [`export_plugin!`]. Cargo names the library `lib<crate>.so`; the soft daemon offers it as
//! `<crate>` (see [`sdk`]), DOCA's daemon by its file name without `.so`, so rename it there.
//!
//! A plugin library should export the plugin ABI and nothing else:
//! `urom_plugin_get_iface` and `urom_plugin_get_version` (DOCA's plugin interface), and the
//! two doca-soft extensions the macro adds, `doca_soft_urom_plugin_name` and
//! `doca_soft_urom_plugin_arm`. rustc, however, exports from a `cdylib` every `#[no_mangle]`
//! function of every crate linked in, and with the `soft` backend that includes the whole
//! software runtime (about 600 `doca_*` functions, through `doca-sys` -> `doca-soft`),
//! listed in a version script rustc writes itself (so a version script of the plugin's
//! cannot take them back). Give the plugin crate a `build.rs` that keeps the symbols of
//! linked archives (every rlib is one) out of the dynamic table:
//!
//! ```no_run
//! // In `main` of build.rs of a plugin crate:
//! if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
//!     println!("cargo:rustc-cdylib-link-arg=-Wl,--exclude-libs,ALL");
//! }
//! ```
//!
//! `nm -D --defined-only lib<crate>.so` then lists the four symbols above and nothing else
//! (measured with LLD, rustc's default linker on x86_64 Linux: 611 symbols before, 607 of
//! them the runtime's, and 4 after; GNU ld gives the same 4; `tests/plugin_exports.rs` checks the sample plugins, allowing
//! only the boundary and init/fini symbols some linkers add by themselves: `_edata`,
//! `_end`, `__bss_start`, `_init`, `_fini`). The runtime's code stays linked into the
//! plugin and the plugin calls it directly; it is only no longer offered to the worker
//! process or to other plugins, which therefore cannot bind to the plugin's copy by
//! accident. (Not linking the runtime into the plugin at all, resolving `doca_*` from the
//! worker process as DOCA's plugins resolve them from `libdoca_urom.so`, would need a
//! `doca-sys` mode that links no backend and a worker binary that exports the runtime
//! (`-rdynamic`); the linker option above gives the same exported interface with neither.)
//! With the `sdk` backend the runtime is DOCA's shared library and nothing of it is
//! exported either way.
//!
//! ## Backends
//!
//! The C API comes from `doca-sys`, generated over the selected backend's headers, so this
//! crate compiles unchanged against either:
//!
//! * `soft` (default): `doca-soft`, the software runtime linked into your program. Its
//!   daemon `doca_urom_daemon` spawns `doca_urom_worker` processes on this or another host;
//!   no DPU is needed.
//! * `sdk`: an installed NVIDIA DOCA 3.3 SDK (talking to the DPU's UROM service).
//!
//! The features are additive: when both are on, `sdk` wins (and `DOCA_RS_BACKEND` can force
//! either; see `doca-sys`). `doca_urom.h` includes a UCX header, so building needs UCX's
//! headers either way: `UCX_HOME`, or pkg-config's `ucx`. This crate depends on
//! `doca-common` and `doca-sys` only: no CUDA crate comes with it.
//!
//! ## Library dependency
//!
//! With `soft`, the runtime uses UCX (>= 1.15, `libucp.so.0`). On x86-64 Linux `ucx-sys`
//! loads it at run time, from the directory the build found it in (recorded as an absolute
//! path), unless the process has a UCX already or `LD_LIBRARY_PATH` names one: any binary
//! depending on this crate, or only on the `doca` facade, runs with the UCX it was built
//! against, without an rpath or `LD_LIBRARY_PATH`. When an older UCX is loaded anyway (an
//! `LD_LIBRARY_PATH` naming Debian's 1.13, say), the first worker start fails and the log
//! says `UCX 1.13.1 is loaded from <file> (...), but this program was built against UCX
//! 1.22 and needs at least that`. Building needs UCX's headers: `UCX_HOME`,
//! `HPCX_UCX_DIR` or pkg-config's `ucx` (the build names what it found where when none
//! fits). On other targets UCX is linked at build time; there a build script can add an
//! rpath from the metadata `doca-soft` publishes to its direct dependants:
//!
//! ```no_run
//! // In `main` of build.rs of a crate with `doca-soft` among its dependencies:
//! if let Ok(dir) = std::env::var("DEP_DOCA_SOFT_UCX_LIBDIR") {
//!     println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
//! }
//! ```
//!
//! ## Shared types
//!
//! [`Device`], [`ProgressEngine`], [`DocaError`] and [`Error`] are `doca-common`'s
//! (re-exported), the same types `doca-gpunetio` re-exports, so one device or engine serves
//! both crates and an error passes between them unchanged. [`Error`] names the failed
//! operation (`"doca_urom_worker_set_id failed: ..."`) and keeps the [`DocaError`]
//! ([`Error::doca_code`]), or the message of a problem found before DOCA was called (a
//! device that does not exist: `"not found: no DOCA device ... \"mlx5_0\""`). Every handle
//! offers `as_raw()` for the calls this crate does not wrap (see `doca-sys`).
//!
//! ## Thread safety
//!
//! Decided per backend (the cfg `doca_backend`, from the backend `doca-sys` binds):
//!
//! | type | `soft` | `sdk` |
//! |---|---|---|
//! | [`Service`] | `Send + Sync` | `Send + Sync` |
//! | [`Worker`] | `Send + Sync` | `Send` |
//! | [`Domain`] | `Send` | neither |
//! | [`Device`], [`ProgressEngine`], [`DomainBuffer`] | `Send + Sync` | `Send + Sync` |
//!
//! Workers are usually created and driven on their own threads while one thread progresses
//! the service (which serves worker spawn and teardown), as in DOCA's multi-worker sample:
//! services are handed out as `Arc`s and shared. The service serializes every call this
//! crate makes on it (and the worker calls that post requests to it) with a re-entrant
//! lock, since DOCA does not promise that a service may be used by two threads at once.
//! The software runtime's worker and domain contexts lock their state internally, so with
//! `soft` a worker may also take commands from several threads; DOCA makes no such promise
//! for its own, so with `sdk` a worker (and a domain, which holds workers) stays with the
//! thread that drives it. A progress engine serializes its own `progress` calls. Command
//! callbacks run inside the progress call of the worker's engine, on that thread; they must
//! not progress the same engine again.
//!
//! ## Ownership and cleanup
//!
//! Each child holds an `Arc` of its parent (a worker its service and engine, a domain its
//! workers and its out-of-band collective, a service its device), so handles can be stored
//! together and are destroyed in a valid order. Dropping a [`Worker`] stops it, progressing
//! its engine and the service's until IDLE (bounded), then destroys it; services and
//! domains stop synchronously. `Drop` never panics; call [`Worker::stop`] to see a stop
//! error.

#![warn(missing_docs)]

pub mod domain;
pub mod error;
pub mod graph;
pub mod sdk;
mod serial;
pub mod service;
mod state;
pub mod thread_oob;
pub mod worker;

/// The crate these shared types come from (also re-exported by `doca-gpunetio`).
pub use doca_common as common;
pub use doca_common::{Device, DocaError, Error, ProgressEngine, Result};
pub use domain::{Domain, DomainBuffer, Oob};
pub use service::{CpuSet, PluginInfo, Service};
pub use thread_oob::ThreadOob;
pub use worker::{Notification, NotificationRef, Worker, WORKER_ID_ANY};
