//! Links the plugin so that its library exports the plugin ABI only (see doca-urom's crate
//! docs, "Deployment: a plugin built from a Rust crate").
//!
//! rustc exports every `#[no_mangle]` item of every crate linked into a `cdylib`: through
//! doca-urom -> doca-sys -> doca-soft that is the whole runtime (about 600 `doca_*`
//! functions), and rustc lists them in a version script of its own, which one of ours cannot
//! take back. `--exclude-libs,ALL` keeps the symbols that come from archives (every rlib is
//! one) out of the dynamic symbol table; what this crate's own objects export (the symbols
//! `export_plugin!` defines) stays. The runtime's code is still linked in and called
//! directly, it is only no longer offered to the worker process or to other plugins.
fn main() {
    // An option of the ELF linkers (GNU ld, gold, LLD); DOCA runs on Linux only.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--exclude-libs,ALL");
    }
}
