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
pub mod cabi;
pub mod ctx;
pub mod dev;
pub mod error;
pub mod gpu;
pub mod pe;
pub mod task;
pub mod types;
pub mod ucx;
pub mod urom;
pub mod version;
