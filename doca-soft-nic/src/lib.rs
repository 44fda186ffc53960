//! # doca-soft-nic: the NIC model of the software DOCA runtime
//!
//! What a ConnectX does in hardware, played by CPU threads:
//!
//! * [`dev`]: the devices a DOCA program sees: every Linux network interface, the extra
//!   ports of `DOCA_SOFT_PORTS`, their PCI addresses (`DOCA_SOFT_PCI_MAP`), opened devices
//!   and representor lists;
//! * [`eth`]: the Ethernet queues' rings in DOCA 3.3's mlx5 formats and the RX/TX proxies
//!   that play the NIC between those rings and a port (checksum offload, wait-on-time
//!   sends, completions);
//! * [`port`]: one soft NIC port per opened device: the backends that move frames
//!   (AF_PACKET, AF_XDP, pcap file pairs, an in-memory wire), the receive lanes that
//!   classify each frame with the port's Flow tables and hand it to its queue's
//!   [`port::RxSink`], sending, and per-port counters with drops split by reason.
//! * [`rdma`]: the RDMA engine: a proxy thread per device that executes the mlx5 work
//!   requests GPU kernels (or the CPU) write into send queues, between processes and hosts
//!   over UCX, and writes the CQEs they poll; memory keys, connections, receive queues.
//!
//! * Owns: the device list, ports and their threads, the Ethernet proxies, the RDMA engine,
//!   its UCX workers and key registry.
//! * May call: `doca-soft-packet` (parsing, classification tables, mlx5 formats),
//!   `doca-soft-base` (error codes, logging, locks), `ucx-sys`, libc.
//! * Called by: `doca-soft`, whose DOCA objects (Ethernet queues, Flow ports, RDMA and
//!   verbs contexts, mmaps) drive these engines. Applications never use it directly: they
//!   use DOCA's C API (`doca-soft`) or the safe crates.
//!
//! ## Quick start
//!
//! ```
//! use doca_soft_nic::port::{Port, PortSpec};
//!
//! // Two ports joined by an in-process wire: what one sends, the other receives.
//! let a = Port::for_spec(&PortSpec::Wire { name: "docwire".into(), side: 0 }).unwrap();
//! let b = Port::for_spec(&PortSpec::Wire { name: "docwire".into(), side: 1 }).unwrap();
//! assert_eq!(a.counters().sent, 0);
//! drop((a, b));
//! ```

#[macro_use]
extern crate doca_soft_base;

// The runtime's shared pieces, under the names the engine's modules use.
pub(crate) use doca_soft_base::{error, sync};

pub mod dev;
pub mod eth;
pub mod port;
pub mod rdma;
