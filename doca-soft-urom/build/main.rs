//! Build script of doca-soft-urom: each concern in its own module.
//!
//! * `urom`: the plugin ABI bindings. In the workspace, bindgen over doca-soft's
//!   `include/doca_urom_plugin.h` (the one definition of the ABI); where that header or
//!   libclang is not at hand (a packaged crate, docs.rs, `DOCA_SOFT_BINDINGS=committed`),
//!   the copy committed in `src/bindings/urom_plugin.rs`, which CI holds to bindgen's
//!   output (`scripts/regen-bindings --check`).
//! * `ucx`: the rpath to the UCX that `ucx-sys` found, on the daemon and worker binaries.

mod urom;

fn main() {
    println!("cargo:rerun-if-changed=build");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    if std::env::var_os("DOCS_RS").is_some() {
        urom::install_committed(&out);
        return;
    }
    urom::bindings(&out);
    let libdir = std::env::var("DEP_UCP_LIBDIR")
        .expect("DEP_UCP_LIBDIR: set by the ucx-sys build script (links = \"ucp\")");
    println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{libdir}");
}
