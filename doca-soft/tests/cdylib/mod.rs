//! Where the freshly built `libdoca_soft.so` is, for tests that link C programs against it.
//!
//! The library is the package doca-soft-capi (a cdylib linking this crate), a
//! dev-dependency of doca-soft: `cargo test` builds it into `target/<profile>/deps/`, next to
//! the test binaries,
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
        "libdoca_soft.so is not in {} although cargo test builds doca-soft-capi's cdylib there",
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

/// Compiles `source` in `lang` with doca-test-support's flags (strict warnings, `include/`,
/// plain rdma-core headers) into the program `exe`, linked with this run's library; Err
/// holds the command and the compiler's output.
#[allow(dead_code)]
pub fn compile_linked(
    lang: doca_test_support::cc::Lang,
    source: &std::path::Path,
    exe: &std::path::Path,
) -> Result<(), String> {
    use doca_test_support::cc::{self, Output, Rdma};
    let libdir = library_dir();
    let link = [
        format!("-L{}", libdir.display()),
        format!("-Wl,-rpath,{}", libdir.display()),
        "-ldoca_soft".to_owned(),
    ];
    let link: Vec<&str> = link.iter().map(String::as_str).collect();
    cc::compile(lang, source, exe, Output::Executable, Rdma::Plain, &link)
}

/// Compiles `tests/c/<name>.c` warning-free (`-Wall -Wextra -Werror`, C standard `std`)
/// against `include/`, linked with this run's library, into `dir/<name>`. Panics with the
/// compiler's output when it fails.
#[allow(dead_code)]
pub fn build_c_program(name: &str, std: &str, dir: &std::path::Path) -> PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let libdir = library_dir();
    let exe = dir.join(name);
    let out = std::process::Command::new("cc")
        .arg(format!("-std={std}"))
        .args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DDOCA_ALLOW_EXPERIMENTAL_API",
        ])
        .arg(format!("-I{}", root.join("include").display()))
        .arg(root.join("tests/c").join(format!("{name}.c")))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-ldoca_soft")
        .output()
        .expect("running cc");
    assert!(
        out.status.success(),
        "compile {name}.c: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs `exe PORT` with `DOCA_SOFT_PORTS=wire:WIRE` (ports WIRE0 and WIRE1) and this run's
/// library first on the path; returns its standard output. Panics when it fails.
#[allow(dead_code)]
pub fn run_on_wire(exe: &std::path::Path, wire: &str, port: &str) -> String {
    let run = std::process::Command::new(exe)
        .env("LD_LIBRARY_PATH", ld_library_path())
        .env("DOCA_SOFT_PORTS", format!("wire:{wire}"))
        .arg(port)
        .output()
        .expect("run the C program");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{} failed: {}{}",
        exe.display(),
        stdout,
        String::from_utf8_lossy(&run.stderr)
    );
    stdout
}
