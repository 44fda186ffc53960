//! The UROM host library: the service (the connection to the daemon), worker contexts
//! (one connection per worker process, command tasks), domains (workers of several hosts
//! joined through an out-of-band exchange). The C functions over them are in
//! `capi::doca_urom`.
//!
//! A worker context's commands travel over a UCX endpoint made from the worker's address
//! once attached: on shared memory when host and worker run on one machine, TCP or RDMA
//! otherwise; `DOCA_SOFT_UROM_UCX_WATCH=always` keeps it on TCP or RDMA (see
//! `urom::transport`). The TCP connection the attach went over stays open and tells a
//! worker that went away at once, whatever carries the commands.

pub(crate) mod buf;
pub(crate) mod domain;
pub(crate) mod link;
pub(crate) mod service;
pub(crate) mod service_file;
pub(crate) mod wake;
pub(crate) mod worker;
