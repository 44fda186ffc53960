//! # doca-soft-packet: the packet engine of the software DOCA runtime
//!
//! Frames as the soft NIC sees them, below the ports and DOCA Flow: the parser (total: any
//! byte string parses or is malformed), the classification tables that Flow pipes are
//! compiled into, the RSS hash, the checksums a NIC computes on send, and the one codec of
//! the mlx5 formats (WQE segments and CQEs) that the Ethernet rings and the RDMA engine
//! hold. Nothing here knows about ports, queues or the C structs.
//!
//! * Owns: [`parser`], [`classify`] (tables, lookups), [`key`] (match keys), [`actions`]
//!   (header rewrites), [`rss`], [`checksum`], [`mlx5`] (WQE/CQE bytes), and, with the
//!   feature `testing`, `frames` (test traffic builders).
//! * May call: the standard library only.
//! * Called by: `doca-soft-nic` (ports classify received frames; the RDMA engine reads
//!   and writes mlx5 WQEs and CQEs) and `doca-soft` (DOCA Flow compiles pipes into tables;
//!   the Ethernet rings). Applications never use it directly.
//!
//! ## Quick start
//!
//! ```
//! use doca_soft_packet::checksum::internet_checksum;
//! use doca_soft_packet::parser::parse;
//!
//! // The Internet checksum of an IPv4 header whose checksum field is zero.
//! let hdr = [0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
//! let c = internet_checksum(&hdr);
//! assert_ne!(c, 0);
//! // The parser accepts any bytes: a runt is malformed, not a panic.
//! assert!(parse(&[0u8; 3]).is_err());
//! ```

pub mod actions;
pub mod checksum;
pub mod classify;
pub mod key;
pub mod mlx5;
pub mod parser;
pub mod rss;

#[cfg(any(test, feature = "testing"))]
pub mod frames;
