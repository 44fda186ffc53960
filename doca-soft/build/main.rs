//! Build script of doca-soft: each concern in its own module.
//!
//! * `flow`: bindgen over the DOCA Flow headers in include/, for the Flow implementation.
//! * `urom`: bindgen over `include/doca_urom_plugin.h`, the plugin ABI the UROM worker
//!   runtime speaks.
//! * `ucx`: the rpath to the UCX that `ucx-sys` found, on this crate's binaries.

mod flow;
mod ucx;
mod urom;

fn main() {
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=include");
    // Dependants (doca-sys) find our headers through DEP_DOCA_SOFT_INCLUDE.
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    println!("cargo:include={}", include.display());
    flow::generate();
    urom::generate();
    ucx::rpath();
}
