//! UROM plugin ABI bindings: bindgen over `doca_urom_plugin.h`, the one definition of the
//! interface between the worker runtime and its plugins (the doca-urom SDK binds the same
//! header through doca-sys). The header lives with the other DOCA headers in doca-soft's
//! `include/` and includes `<ucs/datastruct/list.h>`: UCX's include directory comes from
//! ucx-sys (`DEP_UCP_INCLUDE`). Enums are plain consts; bindgen's layout assertions stay on
//! (the generated structs are checked against clang's view of the header at compile time).

use std::path::{Path, PathBuf};

/// The committed copy, relative to the crate.
const COMMITTED: &str = "src/bindings/urom_plugin.rs";
/// The name the sources include from `$OUT_DIR`.
const GENERATED: &str = "urom_plugin_bindings.rs";
/// The variable that chooses between bindgen and the committed bindings.
const ENV: &str = "DOCA_SOFT_BINDINGS";

/// The header in the workspace (absent from a packaged crate).
fn workspace_header() -> Option<PathBuf> {
    let h = Path::new(env!("CARGO_MANIFEST_DIR")).join("../doca-soft/include/doca_urom_plugin.h");
    h.is_file().then_some(h)
}

/// Whether `DOCA_SOFT_BINDINGS` asks for the committed bindings.
fn committed_wanted() -> bool {
    println!("cargo:rerun-if-env-changed={ENV}");
    match std::env::var(ENV).as_deref().map(str::trim) {
        Err(_) | Ok("") | Ok("bindgen") => false,
        Ok("committed") => true,
        Ok(other) => panic!(
            "doca-soft-urom: {ENV}={other:?} is not understood; use `committed` or `bindgen` (or unset it)"
        ),
    }
}

/// Writes the bindings into `out`: generated where the header is at hand, else committed.
pub fn bindings(out: &Path) {
    match workspace_header() {
        Some(header) if !committed_wanted() => generate(&header, out),
        _ => install_committed(out),
    }
}

/// Copies the committed bindings into `out` under the name bindgen writes.
pub fn install_committed(out: &Path) {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join(COMMITTED);
    println!("cargo:rerun-if-changed={}", committed.display());
    std::fs::copy(&committed, out.join(GENERATED)).unwrap_or_else(|e| {
        panic!(
            "doca-soft-urom: cannot copy the committed bindings {}: {e}",
            committed.display()
        )
    });
}

fn generate(header: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", header.display());
    let include = header.parent().expect("the header has a folder");
    let ucx_include = std::env::var("DEP_UCP_INCLUDE")
        .expect("DEP_UCP_INCLUDE: set by the ucx-sys build script (links = \"ucp\")");
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg(format!("-I{}", include.display()))
        .clang_arg(format!("-I{ucx_include}"))
        .allowlist_type("urom_.*")
        .allowlist_type("ucs_list_link_t")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .generate_comments(false)
        .derive_default(true)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen over {} failed: {e}", header.display()));
    bindings
        .write_to_file(out.join(GENERATED))
        .expect("cannot write urom_plugin_bindings.rs");
}
