//! The UROM host library: the service (the connection to the daemon), worker contexts
//! (one connection per worker process, command tasks), domains (workers of several hosts
//! joined through an out-of-band exchange). The C functions over them are in
//! `capi::doca_urom`.

pub(crate) mod buf;
pub(crate) mod domain;
pub(crate) mod link;
pub(crate) mod service;
pub(crate) mod service_file;
pub(crate) mod wake;
pub(crate) mod worker;
