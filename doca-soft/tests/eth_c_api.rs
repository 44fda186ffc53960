//! Builds tests/c/eth_queues.c against include/ and libdoca_soft.so and runs it on a wire
//! port named through DOCA_SOFT_PORTS: the Ethernet queue host API from C, with the ABI the
//! headers declare.

mod cdylib;

use std::path::Path;
use std::process::Command;

#[test]
fn c_program_drives_eth_queues_through_libdoca_soft() {
    let so = cdylib::library();
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
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
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
