//! Code shared by the bench binaries: figures as JSON lines, command-line flags,
//! UDP frames and sockets, and the soft-NIC pipeline pieces, and
//! the UROM daemon/service/worker set-up.
//!
//! Each bench binary includes this module with `mod support;` and uses only part of it.
#![allow(dead_code)]

pub mod args;
pub mod gpu_rx;
pub mod gpu_tx;
pub mod latency;
pub mod netns;
pub mod perftest;
pub mod point;
pub mod report;
pub mod soft;
pub mod tx;
pub mod udp;
pub mod urom;
