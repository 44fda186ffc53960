//! The bindings committed in `src/bindings/` (`flow.rs`): bindgen's output
//! over `include/doca_flow.h`, made by
//! `scripts/regen-bindings` on x86_64 Linux. They let the crate build where libclang and UCX
//! are missing:
//!
//! * under `DOCS_RS` (docs.rs): always, and nothing is probed or linked (no UCX headers, no
//!   rpath);
//! * when `DOCA_SOFT_BINDINGS=committed` asks for them (bindgen skipped, the rest as usual).
//!
//! CI regenerates the file and fails when it drifts (`scripts/regen-bindings --check`). The
//! plugin ABI bindings are doca-soft-urom's.

use std::path::{Path, PathBuf};

/// The committed files, relative to the crate, and the `$OUT_DIR` names the sources
/// include them from (where bindgen writes).
pub const FILES: [(&str, &str); 1] = [("src/bindings/flow.rs", "flow_bindings.rs")];

/// The variable that chooses between bindgen and the committed bindings.
pub const ENV: &str = "DOCA_SOFT_BINDINGS";

/// Whether this is a docs.rs build (no UCX, no libclang, nothing linked).
pub fn docs_rs() -> bool {
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    std::env::var_os("DOCS_RS").is_some()
}

/// Whether `DOCA_SOFT_BINDINGS` asks for the committed bindings (`committed`); `bindgen`
/// or unset: bindgen.
pub fn wanted() -> bool {
    println!("cargo:rerun-if-env-changed={ENV}");
    match std::env::var(ENV).as_deref().map(str::trim) {
        Err(_) | Ok("") | Ok("bindgen") => false,
        Ok("committed") => true,
        Ok(other) => panic!(
            "doca-soft: {ENV}={other:?} is not understood; use `committed` or `bindgen` (or unset it)"
        ),
    }
}

/// Copies the committed bindings into `out`, under the names bindgen writes.
pub fn install(out: &Path) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for (file, generated) in FILES {
        let committed = root.join(file);
        println!("cargo:rerun-if-changed={}", committed.display());
        std::fs::copy(&committed, out.join(generated)).unwrap_or_else(|e| {
            panic!(
                "doca-soft: cannot copy the committed bindings {}: {e}",
                committed.display()
            )
        });
    }
}
