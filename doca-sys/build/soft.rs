//! The software backend: headers come from doca-soft, whose build script publishes its
//! include directory as `links` metadata; its symbols are linked through the Rust dependency.

use crate::Found;
use std::path::PathBuf;

pub fn probe() -> Found {
    let include = std::env::var_os("DEP_DOCA_SOFT_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../doca-soft/include"));
    Found {
        include_dirs: vec![include],
        api_version: "3.3".into(),
    }
}

/// The directories bindgen searches before the runtime's headers: doca-soft's subset of
/// rdma-core (`include/compat`, with `infiniband/` and `rdma/`). The runtime's headers take
/// an installed rdma-core when the compiler finds one and the subset otherwise, so without
/// this the bindings would change with the machine's packages (libibverbs-dev and
/// librdmacm-dev turn the opaque CM id into librdmacm's whole struct, sockets included).
/// The subset has rdma-core's layouts (doca-soft's `rdma_compat` test compares them). Only
/// bindgen gets these directories: the `include` metadata for dependants leaves them out, so
/// their C code still prefers an installed rdma-core.
pub fn bindgen_first_dirs(found: &Found) -> Vec<PathBuf> {
    found
        .include_dirs
        .iter()
        .map(|d| d.join("compat"))
        .filter(|d| d.is_dir())
        .collect()
}
