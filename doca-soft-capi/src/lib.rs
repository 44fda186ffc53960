//! `libdoca_soft.so`: the software DOCA runtime of [`doca-soft`] as a C shared library.
//!
//! This crate holds no code of its own. It links `doca-soft`, and rustc exports every
//! `#[no_mangle] extern "C"` function of a crate linked into a `cdylib`: the library
//! defines the same DOCA 3.3 C API that `doca-soft`'s headers (`doca-soft/include`)
//! declare. Unmodified C programs compile against those headers and link
//! `-ldoca_soft`; `doca_soft_pkgconfig` (a binary of `doca-soft`) writes pkg-config files
//! named like the SDK's for them.
//!
//! ## Quick start
//!
//! ```text
//! cargo build -p doca-soft-capi -p doca-soft   # libdoca_soft.so, doca_soft_pkgconfig
//! target/debug/doca_soft_pkgconfig --out /tmp/doca-pc
//! cc app.c $(PKG_CONFIG_PATH=/tmp/doca-pc pkg-config --cflags --libs doca-gpunetio) -o app
//! ```
//!
//! Rust programs do not need this crate: they link the runtime through `doca-sys`'s
//! feature `soft` (or the safe crates).
//!
//! [`doca-soft`]: https://docs.rs/doca-soft

// Linked (not merely named as a dependency) so that its exported functions end up in the
// library.
extern crate doca_soft as _;
