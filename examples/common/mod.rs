//! Helpers shared by the sample programs (included with `#[path]`).

pub mod cli;
pub mod packet;
pub mod raw_socket;
pub mod signal;
