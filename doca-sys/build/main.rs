//! Build script of doca-sys: pick the backend, find its headers and libraries, run bindgen.
//!
//! * `backend`: which backend the features and `DOCA_RS_BACKEND` select (any combination
//!   builds: `DOCA_RS_BACKEND` first, then `sdk` over `soft`, then soft).
//! * `soft`: headers from the doca-soft crate (its `links` metadata), symbols from doca-soft.
//! * `sdk`: an installed DOCA SDK, through pkg-config or DOCA_INCLUDE_DIR / DOCA_LIB_DIR.
//! * `bindings`: bindgen over wrapper.h, plus plain-name aliases for DOCA Flow's `_v1` names;
//!   `flow_versions` lists those names (the plain declarations are left out).
//! * `committed`: the bindings committed in `src/bindings/soft.rs`, used under `DOCS_RS`,
//!   and for the soft backend where libclang cannot be loaded (or `DOCA_SYS_BINDINGS=committed`).
//! * `ucx`: include directories for UCX, which doca_urom.h needs.

mod backend;
mod bindings;
mod committed;
mod flow_versions;
mod sdk;
mod soft;
mod ucx;

use backend::Backend;
use committed::Wanted;

fn main() {
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo::rustc-check-cfg=cfg(doca_backend, values(\"soft\", \"sdk\"))");
    println!("cargo::rustc-check-cfg=cfg(doca_api_3_3)");

    let selection = backend::select();
    let backend = selection.backend;
    if committed::docs_rs() {
        // docs.rs: no libclang, UCX or DOCA there, and nothing is linked. Probe nothing.
        committed::install("DOCS_RS is set (documentation build)");
        let found = soft::probe();
        emit_metadata(backend, &found);
        return;
    }
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
    let mut include_dirs = match backend {
        Backend::Soft => soft::bindgen_first_dirs(&found),
        Backend::Sdk => Vec::new(),
    };
    include_dirs.extend(found.include_dirs.iter().cloned());
    let ucx = ucx::include_dirs();
    let with_ucx = !ucx.is_empty();
    include_dirs.extend(ucx);

    let wanted = committed::wanted();
    let libclang = match wanted {
        Wanted::Committed => Err(format!("{}=committed", committed::ENV)),
        Wanted::Auto | Wanted::Bindgen => bindings::libclang(),
    };
    match (libclang, backend) {
        (Ok(clang), _) => bindings::generate(&include_dirs, &clang, with_ucx),
        (Err(why), Backend::Soft) if wanted != Wanted::Bindgen && committed::available() => {
            if wanted == Wanted::Auto {
                println!(
                    "cargo:warning=doca-sys: libclang cannot be loaded ({why}), so bindgen \
                     cannot run: using the bindings committed in {} (generated over the \
                     same headers on x86_64 Linux). Install libclang (Debian: libclang-dev) \
                     or set LIBCLANG_PATH to generate them here.",
                    committed::FILE
                );
            }
            committed::install(&format!("no bindgen: {why}"));
        }
        (Err(why), Backend::Sdk) => panic!(
            "doca-sys (backend sdk): bindgen must run over the installed SDK's headers, and \
             libclang cannot be loaded ({why}). Install libclang (Debian: libclang-dev) or \
             set LIBCLANG_PATH to the directory holding libclang.so. (The committed bindings \
             are the software runtime's and serve only the soft backend and docs.rs.)"
        ),
        (Err(why), Backend::Soft) => panic!(
            "doca-sys: libclang cannot be loaded ({why}) and {} asks for bindgen (or the \
             committed bindings are missing). Install libclang (Debian: libclang-dev) or set \
             LIBCLANG_PATH.",
            committed::ENV
        ),
    }
    emit_metadata(backend, &found);
}

/// Metadata for dependants (DEP_DOCA_INCLUDE, DEP_DOCA_BACKEND, DEP_DOCA_API_VERSION) and
/// the backend cfgs of this crate.
fn emit_metadata(backend: Backend, found: &Found) {
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
