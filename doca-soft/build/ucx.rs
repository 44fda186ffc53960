//! UCX for this crate's own binaries.
//!
//! `ucx-sys` finds UCX (>= 1.15: the pinned `libucx-cu13` wheel through `UCX_HOME`, or
//! pkg-config); its metadata says where (`DEP_UCP_LIBDIR`). On x86-64 Linux ucx-sys loads
//! that UCX itself at run time (from the directory recorded at build time, unless the
//! process has a UCX already or `LD_LIBRARY_PATH` names one), so every binary linking
//! doca-soft runs with it, whatever its crate depends on; elsewhere UCX is linked, and the
//! daemon, the worker and `libdoca_soft.so` need this rpath to avoid an older UCX of the
//! same soname. The directory is re-exported (`DEP_DOCA_SOFT_UCX_LIBDIR`) for build
//! scripts of other targets. Either way the runtime checks the version it runs with when
//! it first starts UCX (`ucx_sys::check_version`).

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
