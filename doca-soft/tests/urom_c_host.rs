//! A C host program against doca_urom.h, linked with libdoca_soft.so, end to end.

mod cdylib;
mod urom_support;

use std::path::Path;
use std::process::Command;
use urom_support::*;

#[test]
fn c_host_program_drives_a_worker() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let libdir = cdylib::library_dir();
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let exe = dir.path().join("urom_host_smoke");
    let ucx = std::env::var("UCX_HOME").expect("UCX_HOME (source .tools/env.sh)");
    let st = Command::new("cc")
        .args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DDOCA_ALLOW_EXPERIMENTAL_API",
        ])
        .arg(format!("-I{}", root.join("doca-soft/include").display()))
        .arg(format!("-I{ucx}/include"))
        .arg(root.join("doca-urom/tests/c/urom_host_smoke.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", libdir.display()))
        .arg("-ldoca_soft")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .status()
        .expect("run cc");
    assert!(
        st.success(),
        "the C host program compiles warning-free and links"
    );
    let d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    let svc_file = dir.path().join("services");
    let host = doca_soft::testing::urom::local_hostname();
    // The lo device's PCI address, as the runtime lists it.
    let pci = doca_soft::testing::pci_of("lo").expect("lo is listed");
    std::fs::write(&svc_file, format!("{host} dpu {} {pci} lo\n", d.addr)).unwrap();
    let out = Command::new(&exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .arg("lo")
        .env("DOCA_UROM_SERVICE_FILE", &svc_file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("c host: ok"));
}
