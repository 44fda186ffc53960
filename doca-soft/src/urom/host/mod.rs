//! The UROM host library: the service (the connection to the daemon), worker contexts
//! (one connection per worker process, command tasks), domains (workers of several hosts
//! joined through an out-of-band exchange). The C functions over them are in
//! `capi::doca_urom`.

pub mod buf;
pub mod domain;
pub mod link;
pub mod service;
pub mod service_file;
pub mod worker;
