//! UCX headers: doca_urom.h includes <ucs/type/cpu_set.h>.

use std::path::PathBuf;

/// Include directories of UCX: UCX_HOME, else pkg-config `ucx`, else none (the UROM
/// bindings are then skipped by wrapper.h).
pub fn include_dirs() -> Vec<PathBuf> {
    println!("cargo:rerun-if-env-changed=UCX_HOME");
    if let Some(home) = std::env::var_os("UCX_HOME") {
        return vec![PathBuf::from(home).join("include")];
    }
    pkg_config::Config::new()
        .cargo_metadata(false)
        .env_metadata(false)
        .probe("ucx")
        .map(|l| l.include_paths)
        .unwrap_or_default()
}
