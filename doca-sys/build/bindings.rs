//! bindgen over wrapper.h, and plain-name aliases for DOCA Flow's versioned names.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Loads libclang the way bindgen will (`LIBCLANG_PATH`, `llvm-config`, the system's
/// library directories) and returns its version, or why it cannot be loaded. bindgen itself
/// panics without libclang; asking first lets the soft backend fall back to the committed
/// bindings with a clear warning instead.
pub fn libclang() -> Result<String, String> {
    println!("cargo:rerun-if-env-changed=LIBCLANG_PATH");
    clang_sys::load()?;
    // Loaded: bindgen finds it the same way (and keeps it loaded for this thread).
    Ok(bindgen::clang_version().full)
}

/// Runs bindgen over wrapper.h with `include_dirs` (the DOCA headers, then UCX's when
/// `with_ucx`), writes `OUT_DIR/bindings.rs` and `flow_aliases.rs`, and records how.
pub fn generate(include_dirs: &[PathBuf], clang: &str, with_ucx: bool) {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let mut b = bindgen::Builder::default()
        .header(concat!(env!("CARGO_MANIFEST_DIR"), "/wrapper.h"))
        .clang_arg("-DDOCA_ALLOW_EXPERIMENTAL_API")
        .allowlist_function("doca_.*|urom_.*")
        .allowlist_type("doca_.*|urom_.*|DOCA_.*")
        .allowlist_var("DOCA_.*|UROM_.*")
        // Enums as newtypes with associated consts: a value C hands back that Rust does not
        // know about must not be undefined behaviour.
        .default_enum_style(bindgen::EnumVariation::NewType {
            is_bitfield: false,
            is_global: false,
        })
        .bitfield_enum("doca_access_flag|doca_rss_type|doca_flow_match_tcp_flags")
        .generate_comments(false)
        .layout_tests(true)
        .derive_default(true)
        .derive_debug(true)
        .prepend_enum_name(false)
        .size_t_is_usize(true)
        .use_core()
        .ctypes_prefix("core::ffi")
        .opaque_type("FILE|_IO_FILE")
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for dir in include_dirs {
        b = b.clang_arg(format!("-I{}", dir.display()));
    }
    let bindings = b.generate().unwrap_or_else(|e| {
        panic!("doca-sys: bindgen failed over the DOCA headers in {include_dirs:?}: {e}")
    });
    let path = out.join("bindings.rs");
    bindings.write_to_file(&path).expect("write bindings.rs");
    write_flow_aliases(&path, &out.join("flow_aliases.rs"));
    let ucx = if with_ucx { "yes" } else { "no" };
    crate::committed::record(&format!("bindgen\nclang={clang}\nucx={ucx}\n"));
}

/// DOCA Flow 3.3's public names are macros for `_v1` functions and struct tags. bindgen sees
/// only the `_v1` names; re-export each under its plain name so code reads the same with
/// both backends.
pub fn write_flow_aliases(bindings: &Path, aliases: &Path) {
    let text = std::fs::read_to_string(bindings).expect("read bindings.rs");
    let mut fns = Vec::new();
    let mut types = Vec::new();
    for line in text.lines() {
        let l = line.trim_start();
        if let Some(name) = ident_after(l, "pub fn ") {
            if is_versioned(name) {
                fns.push(name.to_owned());
            }
        } else if let Some(name) =
            ident_after(l, "pub struct ").or_else(|| ident_after(l, "pub union "))
        {
            if is_versioned(name) {
                types.push(name.to_owned());
            }
        }
    }
    fns.sort();
    fns.dedup();
    types.sort();
    types.dedup();
    let defined: std::collections::HashSet<&str> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            ident_after(l, "pub fn ")
                .or_else(|| ident_after(l, "pub struct "))
                .or_else(|| ident_after(l, "pub union "))
                .or_else(|| ident_after(l, "pub type "))
        })
        .collect();
    let mut s = String::from("// Plain-name aliases of DOCA Flow's `_v1` symbols (generated).\n");
    for f in &fns {
        let plain = f.trim_end_matches("_v1");
        if !defined.contains(plain) {
            let _ = writeln!(s, "pub use self::{f} as {plain};");
        }
    }
    for t in &types {
        let plain = t.trim_end_matches("_v1");
        if !defined.contains(plain) {
            let _ = writeln!(s, "pub type {plain} = {t};");
        }
    }
    std::fs::write(aliases, s).expect("write flow_aliases.rs");
}

fn is_versioned(name: &str) -> bool {
    name.starts_with("doca_flow_") && name.ends_with("_v1")
}

fn ident_after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(prefix)?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end]).filter(|s| !s.is_empty())
}
