//! The bindings committed in `src/sys/bindings/ucx.rs`: bindgen's output over `<ucp/api/ucp.h>`
//! of the pinned UCX, made by `scripts/regen-bindings` on x86_64 Linux. They let the crate
//! build where neither UCX nor libclang is installed:
//!
//! * under `DOCS_RS` (docs.rs): always, and nothing is probed or linked (no `UCX_HOME`, no
//!   pkg-config, no `rustc-link-lib`); the documentation build never runs the loader;
//! * when `UCX_SYS_BINDINGS=committed` asks for them (UCX is still found and recorded for
//!   the run-time loader; only bindgen is skipped).
//!
//! CI regenerates the file and fails when it drifts from what bindgen generates
//! (`scripts/regen-bindings --check`).

use std::path::{Path, PathBuf};

/// Where the committed bindings are, relative to the crate.
pub const FILE: &str = "src/sys/bindings/ucx.rs";

/// The variable that chooses between bindgen and the committed bindings.
pub const ENV: &str = "UCX_SYS_BINDINGS";

/// Whether this is a docs.rs build (no UCX, no libclang, nothing linked).
pub fn docs_rs() -> bool {
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    std::env::var_os("DOCS_RS").is_some()
}

/// Whether `UCX_SYS_BINDINGS` asks for the committed bindings (`committed`); `bindgen` or
/// unset: bindgen.
pub fn wanted() -> bool {
    println!("cargo:rerun-if-env-changed={ENV}");
    match std::env::var(ENV).as_deref().map(str::trim) {
        Err(_) | Ok("") | Ok("bindgen") => false,
        Ok("committed") => true,
        Ok(other) => panic!(
            "ucx-sys: {ENV}={other:?} is not understood; use `committed` or `bindgen` (or unset it)"
        ),
    }
}

/// Copies the committed bindings to `$OUT_DIR/ucx_bindings.rs`, where `src/sys/mod.rs`
/// includes bindgen's output from.
pub fn install(out: &Path) {
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(FILE);
    println!("cargo:rerun-if-changed={}", committed.display());
    std::fs::copy(&committed, out.join("ucx_bindings.rs")).unwrap_or_else(|e| {
        panic!(
            "ucx-sys: cannot copy the committed bindings {}: {e}",
            committed.display()
        )
    });
}
