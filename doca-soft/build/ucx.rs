//! UCX for this crate's own binaries.
//!
//! `ucx-sys` finds UCX (>= 1.15: the pinned `libucx-cu13` wheel through `UCX_HOME`, or
//! pkg-config) and links it dynamically; its metadata says where (`DEP_UCP_LIBDIR`). The
//! daemon, the worker and `libdoca_soft.so` get an rpath to that directory, so they never
//! pick Debian's older UCX of the same soname; other binaries that link doca-soft (tests,
//! examples) get it from `LD_LIBRARY_PATH` (`.tools/env.sh`) or from an rpath of their own,
//! built from `DEP_DOCA_SOFT_UCX_LIBDIR` (re-exported below). Either way the runtime checks
//! the version it loaded when it first starts UCX (`ucx_sys::check_version`).

/// Emits the rpath and re-exports the UCX library directory to dependants.
pub fn rpath() {
    let libdir = std::env::var("DEP_UCP_LIBDIR")
        .expect("DEP_UCP_LIBDIR: set by the ucx-sys build script (links = \"ucp\")");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{libdir}");
    println!("cargo:ucx_libdir={libdir}");
    if let Ok(include) = std::env::var("DEP_UCP_INCLUDE") {
        println!("cargo:ucx_include={include}");
    }
}
