//! Helpers shared by the sample programs (included with `#[path]`).

#![allow(dead_code)]

pub mod cli;
pub mod gpu;
pub mod packet;
pub mod queue_stats;
pub mod raw_socket;
pub mod signal;
pub mod txq;
