//! Build script of doca-soft: each concern in its own module.
//!
//! * `flow`: bindgen over the DOCA Flow headers in include/, for the Flow implementation.
//! * `ucx`: finds and links UCX (>= 1.15) and generates the UCX bindings.

mod flow;
mod ucx;

fn main() {
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=include");
    // Dependants (doca-sys) find our headers through DEP_DOCA_SOFT_INCLUDE.
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    println!("cargo:include={}", include.display());
    flow::generate();
    ucx::build_ucx();
}
