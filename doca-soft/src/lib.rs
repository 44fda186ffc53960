//! # doca-soft: a software DOCA runtime
//!
//! The DOCA 3.3 C API (`include/`), implemented in Rust and exported with the C ABI, so
//! that programs written for DOCA run without a ConnectX NIC or a BlueField DPU. Linux
//! network ports play the NIC, CUDA memory is real GPU memory, and UROM workers are real
//! processes reached over UCX.
//!
//! Rust users normally reach this crate through `doca-sys` (feature `soft`) and the safe
//! crates; C users link `libdoca_soft.so` through its pkg-config files.

#![allow(clippy::missing_safety_doc)]

#[macro_use]
pub mod log;
pub mod argp;
pub mod buf;
pub mod buf_arr;
pub mod buf_inventory;
pub mod cabi;
pub mod ctx;
pub mod dev;
pub mod error;
pub mod eth;
pub mod flow;
pub mod gpu;
pub mod mmap;
pub mod pe;
pub mod pkgconfig;
pub mod port;
pub mod semaphore;
pub mod task;
pub mod types;
pub mod ucx;
pub mod urom;
pub mod version;
