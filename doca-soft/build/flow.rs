//! Flow bindings (owned by the Flow implementation): bindgen over `include/doca_flow.h`,
//! limited to the DOCA Flow structs and enums the runtime reads. Enums are plain consts
//! (an unknown value from C must not be UB); layout tests stay on.

use std::path::{Path, PathBuf};

pub fn generate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = root.join("include");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let bindings = bindgen::Builder::default()
        .header(include.join("doca_flow.h").to_string_lossy())
        .clang_arg(format!("-I{}", include.display()))
        .clang_arg("-DDOCA_ALLOW_EXPERIMENTAL_API")
        .allowlist_type("doca_flow_.*")
        .allowlist_type("doca_rss_type")
        .allowlist_var("DOCA_FLOW_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .generate_comments(false)
        .derive_default(true)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen over include/doca_flow.h failed: {e}"));
    bindings
        .write_to_file(out.join("flow_bindings.rs"))
        .expect("cannot write flow_bindings.rs");
}
