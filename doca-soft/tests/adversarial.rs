//! The adversarial suite: one C program per family of exported functions
//! (`tests/c/adversarial_*.c`), built like DOCA programs (`-Wall -Wextra -Werror`) against
//! this run's `libdoca_soft.so`. Each case runs in a forked child with a time bound
//! (`tests/c/adversarial.h`): a crash, an abort or a hang fails the case, and so does a
//! call that returns anything but its documented code.

mod cdylib;

use std::process::Command;

/// Each program and the fewest cases it must report (a case that silently stopped
/// running fails the test).
const FAMILIES: &[(&str, usize)] = &[
    ("adversarial_buf", 11),
    ("adversarial_argp", 6),
    ("adversarial_core", 6),
    ("adversarial_eth", 6),
];

fn run_family(name: &str, min_cases: usize) {
    let dir = tempfile::tempdir().unwrap();
    let exe = cdylib::build_c_program(name, "gnu11", dir.path());
    let out = Command::new(&exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .env("DOCA_SOFT_PORTS", "wire:adv")
        // The runtime's error lines go to stderr; the verdicts are on stdout.
        .output()
        .expect("run the adversarial program");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let passed = stdout.lines().filter(|l| l.starts_with("PASS ")).count();
    let failed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(failed.is_empty(), "{name}: {failed:#?}\n{report}");
    assert!(
        stdout.contains(&format!("cases: {passed} failed: 0")),
        "{name}: no summary line\n{report}"
    );
    assert!(
        passed >= min_cases,
        "{name}: {passed} cases ran, expected at least {min_cases}\n{report}"
    );
    assert!(
        out.status.success(),
        "{name}: exit {:?}\n{report}",
        out.status
    );
}

#[test]
fn memory_family_gives_documented_codes() {
    run_family(FAMILIES[0].0, FAMILIES[0].1);
}

#[test]
fn argp_family_gives_documented_codes() {
    run_family(FAMILIES[1].0, FAMILIES[1].1);
}

#[test]
fn core_family_gives_documented_codes() {
    run_family(FAMILIES[2].0, FAMILIES[2].1);
}

#[test]
fn eth_and_gpu_family_gives_documented_codes() {
    run_family(FAMILIES[3].0, FAMILIES[3].1);
}
