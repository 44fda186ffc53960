//! UROM plugin ABI bindings (owned by the UROM implementation): bindgen over
//! `include/doca_urom_plugin.h`, the one definition of the interface between the worker
//! runtime and its plugins (the doca-urom SDK binds the same header through doca-sys).
//! The header includes `<ucs/datastruct/list.h>`: UCX's include directory comes from
//! ucx-sys (`DEP_UCP_INCLUDE`). Enums are plain consts; bindgen's layout assertions stay on
//! (the generated structs are checked against clang's view of the header at compile time).

use std::path::{Path, PathBuf};

pub fn generate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = root.join("include");
    let ucx_include = std::env::var("DEP_UCP_INCLUDE")
        .expect("DEP_UCP_INCLUDE: set by the ucx-sys build script (links = \"ucp\")");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let bindings = bindgen::Builder::default()
        .header(include.join("doca_urom_plugin.h").to_string_lossy())
        .clang_arg(format!("-I{}", include.display()))
        .clang_arg(format!("-I{ucx_include}"))
        .allowlist_type("urom_.*")
        .allowlist_type("ucs_list_link_t")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .generate_comments(false)
        .derive_default(true)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen over include/doca_urom_plugin.h failed: {e}"));
    bindings
        .write_to_file(out.join("urom_plugin_bindings.rs"))
        .expect("cannot write urom_plugin_bindings.rs");
}
