//! Build script of doca-sys: pick the backend, find its headers and libraries, run bindgen.
//!
//! * `backend`: which backend the features and `DOCA_RS_BACKEND` select (any combination
//!   builds: `DOCA_RS_BACKEND` first, then `sdk` over `soft`, then soft).
//! * `soft`: headers from the doca-soft crate (its `links` metadata), symbols from doca-soft.
//! * `sdk`: an installed DOCA SDK, through pkg-config or DOCA_INCLUDE_DIR / DOCA_LIB_DIR.
//! * `bindings`: bindgen over wrapper.h, plus plain-name aliases for DOCA Flow's `_v1` names;
//!   `flow_versions` lists those names (the plain declarations are left out).
//! * `ucx`: include directories for UCX, which doca_urom.h needs.

mod backend;
mod bindings;
mod flow_versions;
mod sdk;
mod soft;
mod ucx;

use backend::Backend;

fn main() {
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo::rustc-check-cfg=cfg(doca_backend, values(\"soft\", \"sdk\"))");
    println!("cargo::rustc-check-cfg=cfg(doca_api_3_3)");

    let selection = backend::select();
    let backend = selection.backend;
    if backend == Backend::Soft && !selection.soft_runtime_linked {
        println!(
            "cargo:warning=doca-sys: backend soft ({}) without the feature `soft`: the \
             runtime's headers are bound, its symbols are not linked by this crate (enable \
             `soft`, or link libdoca_soft.so yourself)",
            selection.reason
        );
    }
    let found = match backend {
        Backend::Soft => soft::probe(),
        Backend::Sdk => sdk::probe(),
    };
    let mut include_dirs = found.include_dirs.clone();
    include_dirs.extend(ucx::include_dirs());

    bindings::generate(&include_dirs);

    // Metadata for dependants (DEP_DOCA_INCLUDE, DEP_DOCA_BACKEND, DEP_DOCA_API_VERSION).
    let joined = std::env::join_paths(&found.include_dirs).expect("include dirs are valid paths");
    println!("cargo:include={}", joined.to_string_lossy());
    println!("cargo:backend={}", backend.name());
    println!("cargo:api_version={}", found.api_version);
    println!("cargo:rustc-cfg=doca_backend=\"{}\"", backend.name());
    if found.api_version.starts_with("3.3") {
        println!("cargo:rustc-cfg=doca_api_3_3");
    }
}

/// What a backend probe found.
pub struct Found {
    /// Directories holding the DOCA headers.
    pub include_dirs: Vec<std::path::PathBuf>,
    /// DOCA API version, "major.minor".
    pub api_version: String,
}
