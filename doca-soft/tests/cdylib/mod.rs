//! Where the freshly built `libdoca_soft.so` is, for tests that link C programs against it.
//!
//! `cargo test` builds the cdylib into `target/<profile>/deps/`, next to the test binaries,
//! and copies it up to `target/<profile>/` only on `cargo build`, so the copy up there can be
//! stale (or absent on a clean checkout): the one in `deps/` is the one to link.

use std::path::PathBuf;

/// The `deps/` directory holding the library this test run built. Panics with a clear message
/// when it is missing: a C test must never pass without linking anything.
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("test binary directory").to_path_buf();
    assert!(
        deps.join("libdoca_soft.so").is_file(),
        "libdoca_soft.so is not in {} although cargo test builds the doca-soft cdylib there",
        deps.display()
    );
    deps
}

/// The library file itself.
#[allow(dead_code)]
pub fn library() -> PathBuf {
    library_dir().join("libdoca_soft.so")
}

/// `LD_LIBRARY_PATH` for running a linked C program: this run's library first. Cargo puts
/// `target/<profile>/` on the path of test processes too, where a stale copy may sit, and
/// `LD_LIBRARY_PATH` wins over the program's RUNPATH.
#[allow(dead_code)]
pub fn ld_library_path() -> std::ffi::OsString {
    let mut dirs = vec![library_dir()];
    if let Some(cur) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&cur));
    }
    std::env::join_paths(dirs).expect("library paths without ':'")
}
