//! Builds tests/c/eth_queues.c against include/ and libdoca_soft.so and runs it on a wire
//! port named through DOCA_SOFT_PORTS: the Ethernet queue host API from C, with the ABI the
//! headers declare.

use std::path::{Path, PathBuf};
use std::process::Command;

/// target/<profile>/libdoca_soft.so, next to this test's deps/ directory.
fn cdylib() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let so = exe.parent()?.parent()?.join("libdoca_soft.so");
    so.exists().then_some(so)
}

#[test]
fn c_program_drives_eth_queues_through_libdoca_soft() {
    let Some(so) = cdylib() else {
        println!("SKIPPED: libdoca_soft.so not built (run `cargo build -p doca-soft` first)");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("eth_queues");
    let libdir = so.parent().unwrap();
    let out = Command::new("cc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror"])
        .arg("-DDOCA_ALLOW_EXPERIMENTAL_API")
        .arg(format!("-I{}", root.join("include").display()))
        .arg(root.join("tests/c/eth_queues.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-ldoca_soft")
        .output()
        .expect("running cc");
    assert!(
        out.status.success(),
        "compile: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .arg("ethcwire0")
        .env("DOCA_SOFT_PORTS", "wire:ethcwire")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "eth_queues failed: {}{}",
        stdout,
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("eth queues c smoke ok"));
}
