//! The bindings committed in `src/bindings/soft.rs`: bindgen's output over the software
//! runtime's headers (with UCX's, so UROM is in), made by `scripts/regen-bindings` on
//! x86_64 Linux. They let the crate build where bindgen cannot run:
//!
//! * under `DOCS_RS` (docs.rs has no libclang, UCX or DOCA): always, for either backend (the
//!   SDK's API has the same names; only the `doca_soft_*` extensions are extra);
//! * when libclang cannot be loaded and the backend is soft (with a warning);
//! * when `DOCA_SYS_BINDINGS=committed` asks for them (soft backend only).
//!
//! The layout assertions bindgen writes stay in, so on a target whose C layouts differ
//! from x86_64 Linux the build fails rather than binding wrong layouts. CI regenerates the
//! file and fails when it drifts from what the build script generates
//! (`scripts/regen-bindings --check`).

use std::path::{Path, PathBuf};

/// Where the committed bindings are, relative to the crate.
pub const FILE: &str = "src/bindings/soft.rs";

/// The variable that chooses between bindgen and the committed bindings.
pub const ENV: &str = "DOCA_SYS_BINDINGS";

/// What `DOCA_SYS_BINDINGS` asks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wanted {
    /// Unset: bindgen when libclang loads, else the committed bindings (soft backend).
    Auto,
    /// `committed`: the committed bindings, without trying libclang.
    Committed,
    /// `bindgen`: bindgen, failing when libclang does not load (no fallback).
    Bindgen,
}

pub fn wanted() -> Wanted {
    println!("cargo:rerun-if-env-changed={ENV}");
    match std::env::var(ENV).as_deref().map(str::trim) {
        Err(_) | Ok("") => Wanted::Auto,
        Ok("committed") => Wanted::Committed,
        Ok("bindgen") => Wanted::Bindgen,
        Ok(other) => panic!(
            "doca-sys: {ENV}={other:?} is not understood; use `committed` or `bindgen` (or unset it)"
        ),
    }
}

/// Whether this is a docs.rs build (which has neither libclang nor any DOCA library).
pub fn docs_rs() -> bool {
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    std::env::var_os("DOCS_RS").is_some()
}

/// Copies the committed bindings to `OUT_DIR/bindings.rs` (where `src/lib.rs` includes them
/// from, as it does bindgen's output), derives the Flow aliases from them, and records why.
pub fn install(reason: &str) {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let committed = manifest.join(FILE);
    println!("cargo:rerun-if-changed={}", committed.display());
    let out = out_dir();
    let bindings = out.join("bindings.rs");
    std::fs::copy(&committed, &bindings).unwrap_or_else(|e| {
        panic!(
            "doca-sys: cannot copy the committed bindings {}: {e}",
            committed.display()
        )
    });
    crate::bindings::write_flow_aliases(&bindings, &out.join("flow_aliases.rs"));
    record(&format!("committed\nreason={reason}\n"));
}

/// Writes `OUT_DIR/bindings-source.txt`: `bindgen` or `committed`, then `key=value` lines
/// (scripts/regen-bindings and the crate's tests read it).
pub fn record(text: &str) {
    let path = out_dir().join("bindings-source.txt");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn out_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"))
}

/// Whether the committed file exists (a packaged crate always has it).
pub fn available() -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE).is_file()
}
