//! Builds tests/c/flow_smoke.c against include/ and libdoca_soft.so and runs it on a wire
//! port named through DOCA_SOFT_PORTS: C objects reach the `_v1` symbols and the structs
//! cross the ABI as the header lays them out.

mod cdylib;

use std::path::Path;
use std::process::Command;

#[test]
fn c_program_drives_flow_through_libdoca_soft() {
    if Command::new("cc").arg("--version").output().is_err() {
        {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "SKIP: no C compiler (cc)");
        };
        return;
    }
    let so = cdylib::library();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("flow_smoke");
    let libdir = so.parent().unwrap();
    let out = Command::new("cc")
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DDOCA_ALLOW_EXPERIMENTAL_API",
        ])
        .arg(format!("-I{}", root.join("include").display()))
        .arg(root.join("tests/c/flow_smoke.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-ldoca_soft")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "compile: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .arg("smokewire1")
        .env("DOCA_SOFT_PORTS", "wire:smokewire")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "flow_smoke failed: {}{}",
        stdout,
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("flow smoke ok"));
}
