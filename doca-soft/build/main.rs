//! Build script of doca-soft: each concern in its own module.
//!
//! * `flow`: bindgen over the DOCA Flow headers in include/, for the Flow implementation.
//! * `committed`: the same bindings committed in `src/bindings/`, used under `DOCS_RS`
//!   (docs.rs has neither libclang nor UCX: nothing is probed or linked then) and when
//!   `DOCA_SOFT_BINDINGS=committed`.
//! * `ucx`: the rpath to the UCX that `ucx-sys` found, on this crate's binaries.

mod committed;
mod flow;
mod ucx;

fn main() {
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=include");
    // Dependants (doca-sys) find our headers through DEP_DOCA_SOFT_INCLUDE.
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    println!("cargo:include={}", include.display());
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    if committed::docs_rs() {
        // A documentation build: ucx-sys found no UCX (and was not asked to), nothing links.
        committed::install(&out);
        return;
    }
    if committed::wanted() {
        committed::install(&out);
    } else {
        flow::generate();
    }
    ucx::rpath();
}
