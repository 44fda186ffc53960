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
