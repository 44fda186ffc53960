//! The C API: every exported `doca_*` function, one file per DOCA header, all written the
//! same way (see `toolkit`: a panic never crosses the C boundary, a NULL handle is
//! INVALID_VALUE). The engine behind them is crate-private.
//!
//! This module is public because it *is* the C API as Rust functions: `libdoca_soft.so`
//! exports these symbols to C programs, and Rust code (the crate's own tests, programs
//! that drive the runtime directly) calls them here, with the handle types each header
//! declares (`Dev`, `Mmap`, `EthRxq`, ...), which are opaque: only the functions of their
//! header reach inside.
//!
//! # Safety
//!
//! Every function taking pointers is `unsafe`, with the contract of its C declaration:
//! each handle argument is NULL or a live handle from the matching create call (not yet
//! destroyed), each out-parameter is NULL or writable storage of its type, each string is
//! NULL or NUL-terminated. NULL, where the header does not allow it, is an error code.

pub mod doca_argp;
pub mod doca_buf;
pub mod doca_buf_array;
pub mod doca_buf_inventory;
pub mod doca_ctx;
pub mod doca_dev;
pub mod doca_dma;
pub mod doca_error;
pub mod doca_eth_rxq;
pub mod doca_eth_rxq_gpu_data_path;
pub mod doca_eth_txq;
pub mod doca_eth_txq_gpu_data_path;
pub mod doca_flow;
pub mod doca_flow_crypto;
pub mod doca_flow_definitions;
pub mod doca_gpunetio;
pub mod doca_log;
pub mod doca_mmap;
pub mod doca_pe;
pub mod doca_rdma;
pub mod doca_rdma_bridge;
pub mod doca_soft_port;
pub mod doca_soft_queue;
pub mod doca_soft_verbs;
pub mod doca_types;
pub mod doca_uar;
pub mod doca_umem;
pub mod doca_verbs;
pub mod doca_verbs_bridge;
pub mod doca_version;

pub(crate) mod toolkit;

pub mod doca_urom;
