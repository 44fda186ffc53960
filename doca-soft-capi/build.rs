//! The rpath to the UCX that doca-soft was built against (doca-soft's `links` metadata,
//! `DEP_DOCA_SOFT_UCX_LIBDIR`), on the library: where UCX is linked rather than loaded at run
//! time, the library must not pick up an older UCX of the same soname (see doca-soft's
//! build/ucx.rs). doca-soft's own rpath reaches only its own binaries.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_DOCA_SOFT_UCX_LIBDIR");
    if let Ok(libdir) = std::env::var("DEP_DOCA_SOFT_UCX_LIBDIR") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,{libdir}");
    }
}
