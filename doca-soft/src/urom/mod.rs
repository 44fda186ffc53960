//! DOCA UROM in the software runtime: the wire protocol shared by the host library, the
//! daemon (`doca_urom_daemon`) and the worker processes (`doca_urom_worker`).

pub mod buf;
pub mod daemon;
pub mod domain;
pub mod host_worker;
pub mod link;
pub mod plugin_abi;
pub mod service;
pub mod service_file;
pub mod stop;
pub mod transport;
pub mod wire;
pub mod worker;
