//! # doca-soft: a software DOCA runtime
//!
//! The DOCA 3.3 C API (`include/`), implemented in Rust and exported with the C ABI, so
//! that programs written for DOCA run without a ConnectX NIC or a BlueField DPU. Linux
//! network ports play the NIC, CUDA memory is real GPU memory, and UROM workers are real
//! processes reached over UCX.
//!
//! Rust users normally reach this crate through `doca-sys` (feature `soft`, the default)
//! and the safe crates `doca-gpunetio` and `doca-urom`; C users link `libdoca_soft.so`
//! through its pkg-config files.
//!
//! ## Quick start
//!
//! The devices a DOCA program sees are the Linux interfaces (plus the ports of
//! `DOCA_SOFT_PORTS`). Every C function is also a Rust function of [`capi`], one module
//! per header, so the runtime can be driven from Rust the way a C program drives it:
//!
//! ```
//! use doca_soft::capi::doca_dev::*;
//! use doca_soft::capi::doca_error::DocaError;
//! use doca_soft::capi::doca_soft_port::*;
//!
//! // List the devices and find `lo` by name (any device also matches its PCI address).
//! let mut list = std::ptr::null_mut();
//! let mut n = 0u32;
//! // SAFETY: valid out-pointers.
//! assert_eq!(unsafe { doca_devinfo_create_list(&mut list, &mut n) }, 0);
//! // SAFETY: the list holds `n` live entries until it is destroyed.
//! let infos = unsafe { std::slice::from_raw_parts(list, n as usize) };
//! let lo = *infos
//!     .iter()
//!     .find(|&&i| {
//!         let mut eq = 0u8;
//!         // SAFETY: a live entry, a NUL-terminated name, a valid out-pointer.
//!         let rc = unsafe { doca_devinfo_is_equal_pci_addr(i, c"lo".as_ptr(), &mut eq) };
//!         rc == 0 && eq == 1
//!     })
//!     .expect("lo");
//! let mut pci = [0 as std::ffi::c_char; 13];
//! // SAFETY: a live entry; a buffer of DOCA_DEVINFO_PCI_ADDR_SIZE bytes.
//! assert_eq!(unsafe { doca_devinfo_get_pci_addr_str(lo, pci.as_mut_ptr()) }, 0);
//! // SAFETY: the call wrote a NUL-terminated string.
//! println!("lo is {:?}", unsafe { std::ffi::CStr::from_ptr(pci.as_ptr()) });
//!
//! // Open it and read its port counters (a doca-soft extension).
//! let mut dev = std::ptr::null_mut();
//! // SAFETY: a live list entry; a valid out-pointer.
//! assert_eq!(unsafe { doca_dev_open(lo, &mut dev) }, 0);
//! let mut counters = PortCountersSnapshot::default();
//! // SAFETY: an open device; valid storage of the C layout.
//! assert_eq!(unsafe { doca_soft_port_get_counters(dev, &mut counters) }, 0);
//! println!("lo: {} frames received, {} sent", counters.received, counters.sent);
//! // Bad input is an error code, never a crash.
//! // SAFETY: NULL is rejected before use.
//! let rc = unsafe { doca_soft_port_get_counters(dev, std::ptr::null_mut()) };
//! assert_eq!(rc, DocaError::INVALID_VALUE.0);
//! // SAFETY: opened above and closed once; the list is destroyed once.
//! unsafe {
//!     assert_eq!(doca_dev_close(dev), 0);
//!     assert_eq!(doca_devinfo_destroy_list(list), 0);
//! }
//! ```
//!
//! ## Module map
//!
//! Public:
//!
//! * [`capi`]: the C API, one module per header (`capi::doca_dev`, `capi::doca_eth_rxq`,
//!   `capi::doca_flow`, `capi::doca_soft_port`, ...): every exported function of
//!   `libdoca_soft.so`, with the handle types (opaque) and C structs of its header, all
//!   written one way (a panic is caught at the boundary, logged and returned as
//!   `DOCA_ERROR_UNEXPECTED`; a NULL handle is `DOCA_ERROR_INVALID_VALUE`).
//! * [`pkgconfig`]: the `.pc` files `doca_soft_pkgconfig` writes.
//! * `testing` (cargo feature `testing`, off by default): the hooks benches and tests use
//!   (CPU consumers and producers of the rings, ports and rings driven directly, frame
//!   builders, ring layouts); nothing in the runtime calls it.
//! * `urom`, `ucx`: the UROM host library, daemon and worker, and the UCX bindings.
//!
//! The DOCA objects behind the C API are crate-private. From the top down (a folder never
//! imports one above it; `tests/module_loops.rs` derives the import graph and checks it):
//!
//! * `eth/`: Ethernet RX/TX queue contexts (they own the rings and start the proxies).
//! * `flow/`: the DOCA Flow objects behind the C handles, their registry (stale handles are
//!   errors), and the translation of the C match and forward structs into tables.
//! * `rdma/`, `verbs/`, `gpuqp/`, `dma/`: the RDMA, GPU verbs and DMA contexts and the GPU
//!   queue pairs they place; `urom/`: the UROM host library (service, worker, domain).
//! * `buf/` (buffers, inventories, GPU buffer arrays), `mmap`, `gpu` (GPU handle, memory,
//!   allocation registry), `semaphore`.
//! * `ctx/`: the context state machine, the progress engine and the task header that every
//!   context kind shares.
//! * `argp`, `version`, `types`: the command-line parser, the runtime version, types the
//!   headers share.
//!
//! What this crate owns, may call, and is called by:
//!
//! * Owns: the DOCA objects above and the C ABI (`capi`).
//! * May call: the engine crates below it: `doca-soft-nic` (the device list, ports, the
//!   Ethernet rings and their RX/TX proxies, the RDMA engine), `doca-soft-packet` (parser,
//!   classification tables, RSS, checksums, the mlx5 codec), `doca-soft-urom` (the UROM
//!   service's wire protocol and transport), `doca-soft-base` (error codes, logging,
//!   locks); `doca-cuda-driver` and `ucx-sys`.
//! * Called by: `doca-soft-capi` (`libdoca_soft.so`, for C programs) and `doca-sys`
//!   (feature `soft`, for the safe crates).
//!
//! ## C programs: pkg-config
//!
//! `doca_soft_pkgconfig` writes `.pc` files named like the DOCA SDK's (`doca-common`,
//! `doca-gpunetio`, `doca-eth`, `doca-flow`, `doca-urom`, `doca-argp`), pointing at this
//! crate's headers and at `libdoca_soft.so` (by default the directory of the binary, where
//! cargo puts the library). The library is the package `doca-soft-capi`, a `cdylib` that
//! links this crate and exports its C functions (this crate is a Rust library only):
//!
//! ```text
//! cargo build -p doca-soft -p doca-soft-capi  # doca_soft_pkgconfig, libdoca_soft.so
//! target/debug/doca_soft_pkgconfig --out /tmp/doca-pc   # [--libdir DIR] [--includedir DIR]
//! export PKG_CONFIG_PATH=/tmp/doca-pc:$PKG_CONFIG_PATH  # doca-urom also needs ucx.pc
//! cc app.c $(pkg-config --cflags --libs doca-gpunetio doca-flow) \
//!    -Wl,-rpath,$(pkg-config --variable=libdir doca-common) -o app
//! ```
//!
//! The `Cflags` define `DOCA_ALLOW_EXPERIMENTAL_API`. DOCA GPUNetIO kernels include the
//! `doca_gpunetio_dev_*.cuh` headers from the same include directory (nvcc).
//!
//! ## Environment
//!
//! * `DOCA_SOFT_PORTS`: extra ports, `;`-separated: `pcap:IN,OUT` (frames read from the
//!   capture file IN, sent frames written to OUT; ports `pcap0`, `pcap1`, ...),
//!   `wire:NAME` (two ports `NAME0` and `NAME1` joined by an in-process wire) and
//!   `xdp:IFACE` (the interface IFACE carried by AF_XDP instead of AF_PACKET: an XDP program
//!   the port attaches, through a BPF link that goes with the port, hands the interface's
//!   frames to one AF_XDP socket per receive queue; copy mode and generic XDP by default,
//!   `xdp:IFACE,native` attaches in driver mode, `xdp:IFACE,zerocopy` also asks for
//!   zero-copy sockets and keeps copy mode when the driver refuses. Needs CAP_NET_ADMIN
//!   and CAP_BPF (root) and Linux >= 5.9; where AF_XDP cannot be used the port says why in
//!   one log line and uses AF_PACKET).
//! * `DOCA_SOFT_PCI_MAP`: fixed PCI addresses for named ports, `17:00.0=eth1;18:00.0=lo`.
//!   Other ports get a synthetic address derived from their name, the same on every run
//!   and machine. Devices match a PCI address, an interface name or an ibdev name
//!   (`soft_<iface>`).
//! * `DOCA_UROM_SERVICE_FILE`: how a UROM host finds its daemon. One line per service:
//!   `<host name> dpu <daemon host:port> <device PCI address> <net devices>`; the line of
//!   this host's name and the PCI address of the device given to
//!   `doca_urom_service_set_dev` wins.
//! * `UROM_PLUGIN_PATH` (daemon): `;`-separated directories scanned in order for plugin
//!   `.so` files; plugin `i` in scan order gets id `1 << i`.
//! * `DOCA_UROM_WORKER_BIN` (daemon): the worker program (default: `doca_urom_worker` next
//!   to the daemon binary).
//! * `DOCA_SOFT_RX_LANES`: the most receive lanes (dispatcher threads, each with its own
//!   source: an AF_PACKET socket in the port's fanout group, or a wire input queue) a port
//!   runs, 1 to 64; default the CPU count. A port adds a lane per registered RX queue up to
//!   this cap.
//! * `DOCA_SOFT_AF_PACKET_RING_KB`: the receive ring of each lane of an AF_PACKET port, in
//!   KiB (1 to 4194304; default 4096, at least 2048 frame slots).
//! * `DOCA_SOFT_UROM_SPIN_US` (workers, blocking host commands): how long to keep polling
//!   after the last activity before sleeping, in microseconds (default 100, 0 = always
//!   sleep, at most 1 s).
//! * `DOCA_SOFT_UROM_UCX_WATCH` (hosts and workers): `auto` (default) makes the UCX
//!   endpoint between a host and a worker of one machine without UCX's peer failure
//!   detection, so UCX may carry it over shared memory (the TCP connection beside it still
//!   tells a dead peer at once); `always` keeps every endpoint watched (TCP or RDMA), for
//!   processes that share an address but not IPC namespaces. Either end asking `always`
//!   decides.
//! * `DOCA_SOFT_TX_TRACE`: when set (not `0`), TX queues print to stderr, for each
//!   wait-on-time send, how late the WAIT was passed and how late the first frame behind it
//!   left.
//!
//! The UROM binaries (package `doca-soft-urom`): `doca_urom_daemon` (prints `doca_urom_daemon listening on HOST:PORT`,
//! spawns one `doca_urom_worker` process per worker id) and `doca_urom_worker`.
//!
//! ## Extensions (not part of DOCA)
//!
//! * `doca_soft_port.h`: `doca_soft_port_get_counters(dev, &counters)`, per-port frame
//!   counts with drops split by reason ([`capi::doca_soft_port::doca_soft_port_get_counters`]).
//! * `doca_soft_queue.h`: `doca_soft_eth_rxq_get_counters` and
//!   `doca_soft_eth_txq_get_counters`, per-queue counters.
//! * `doca_soft_ring.h`: the cache-line counter doca-soft's own rings share (the GPU DMA
//!   ring). The Ethernet rings are DOCA 3.3's mlx5 rings (see "Ethernet ring formats").
//! * `doca_devinfo_is_equal_pci_addr` also matches interface and ibdev names, so sample
//!   command lines such as `-n lo` work.
//!
//! ## Ethernet ring formats
//!
//! The Ethernet queues hold DOCA 3.3's rings, byte for byte, as the GPU verbs queues do:
//! the public GPU-side structs of `doca_gpunetio_eth_def.h` (`doca_gpu_eth_rxq` 232 bytes,
//! `doca_gpu_eth_txq` 176, `doca_gpu_eth_mcst_qp` 112), RX completions as `mlx5_cqe64`
//! (byte count, `sec << 32 | ns` timestamp, the packet slot in `wqe_counter`, owner bit),
//! sends as 64-byte mlx5 WQEs (control, Ethernet with checksum flags, data, wait-on-time
//! and enhanced multi-packet WQEs) with `mlx5_cqe64` completions, doorbell records and a
//! CPU proxy producer slot. Kernels that use the low-level device helpers or read ring
//! fields see what they see on hardware; the RX and TX proxies play the ConnectX, with
//! the encodings of one module (`mlx5`). The byte tables, what doca-soft does where a NIC
//! cannot (producers wait for room, the RX proxy reads the 64-bit `cqe_ci`), and the
//! measured cost of the change are in `include/README.md`, "Ethernet ring formats".
//!
//! ## Library dependency
//!
//! UCX >= 1.15 (`libucp.so`, `libucs.so`) is linked dynamically; the `ucx-sys` crate finds it
//! through `UCX_HOME` or pkg-config's `ucx`, and the runtime checks the loaded version when it
//! first starts UCX. `libdoca_soft.so`, the daemon and the worker carry an rpath to it. Rust
//! binaries that link this crate find it through `LD_LIBRARY_PATH`, or an rpath their build
//! script adds from `DEP_DOCA_SOFT_UCX_LIBDIR` (visible to crates that depend on `doca-soft`
//! directly). The CUDA driver is loaded at run time (by `doca-cuda-driver`, whose `result`
//! layer names each failed call in the log), only when a GPU is used, so CPU-only programs
//! run on machines without one.
//!
//! ## Thread safety
//!
//! Handles follow DOCA's rules: a context is configured from one thread, and the contexts
//! of a progress engine are progressed through that engine. The runtime keeps its shared
//! state (device list, ports, engines, contexts) behind locks, so calls from several
//! threads are serialized rather than racing; UROM workers and services may live on
//! different threads.
//!
//! ## Cargo feature `testing`
//!
//! Builds the `testing` module, the only surface besides [`capi`] that benches and the
//! tests of this and other crates use (`doca-soft = { ..., features = ["testing"] }` in
//! their dev-dependencies). The runtime itself never needs it.
//!
//! ## Cleanup
//!
//! Objects are destroyed by their `*_destroy` / `*_close` calls in reverse order of
//! creation, contexts after they are stopped (IDLE). Destroying an object still in use
//! returns an error code instead of freeing it (`IN_USE` for a device a queue still uses,
//! or an engine with connected contexts). Ports are shared by reference count: a port's
//! socket or capture files close when the last object using it is gone.

#![allow(clippy::missing_safety_doc)]
// With the test hooks built, every `pub` item is reachable from `capi` or `testing`:
// anything else is `pub(crate)`.
#![cfg_attr(feature = "testing", warn(unreachable_pub))]

// First: the `sdk_*!` logging macros (doca-soft-base) are used everywhere below.
#[macro_use]
extern crate doca_soft_base;

// The public surface: the C API as Rust functions, the pkg-config writer of
// `doca_soft_pkgconfig`, and (feature `testing`) the test hooks.
pub mod capi;
pub mod pkgconfig;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

// The engine behind the C API (see the module map above).
pub(crate) mod argp;
pub(crate) mod buf;
pub(crate) mod ctx;
pub(crate) mod dma;
pub(crate) mod eth;
pub(crate) mod flow;
pub(crate) mod gpu;
pub(crate) mod gpuqp;
pub(crate) mod mmap;
pub(crate) mod rdma;
pub(crate) mod semaphore;
pub(crate) mod types;
pub(crate) mod verbs;
pub(crate) mod version;

// The engines of the crates below, under the names the modules here use: error codes,
// logging and locks (doca-soft-base), the packet engine and mlx5 codec (doca-soft-packet),
// the ports (doca-soft-nic).
pub(crate) use doca_soft_base::{error, log, sync};
pub(crate) use doca_soft_nic::{dev, port};
pub(crate) use doca_soft_packet as packet;
// The mlx5 codec, for the test hooks that build and check ring bytes.
#[cfg(any(test, feature = "testing"))]
pub(crate) use doca_soft_packet::mlx5;

// The UROM code names the task header `crate::task` (until its C functions move to capi).
pub(crate) use ctx::task;

pub mod urom;
