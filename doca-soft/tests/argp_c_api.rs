//! Builds tests/c/argp_null_name.c (a program that calls `doca_argp_init(NULL, &cfg)` as
//! DOCA 3.3 programs do) against include/ and libdoca_soft.so: the NULL name is accepted,
//! and the usage names the program after `argv[0]`.

mod cdylib;

use std::process::Command;

fn run(exe: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .args(args)
        .output()
        .expect("running argp_null_name")
}

#[test]
fn null_program_name_takes_argv0_in_usage() {
    let dir = tempfile::tempdir().unwrap();
    let exe = cdylib::build_c_program("argp_null_name", "gnu11", dir.path());
    let argv0 = exe.to_str().unwrap();

    let ok = run(&exe, &["-p", "4791"]);
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "exit {:?}, stderr: {}",
        ok.status,
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(stdout.trim(), "port 4791");

    let help = run(&exe, &["-h"]);
    assert_eq!(help.status.code(), Some(0));
    let usage = String::from_utf8_lossy(&help.stdout);
    assert!(
        usage.starts_with(&format!("Usage: {argv0} ")),
        "usage does not name argv[0] ({argv0}): {usage}"
    );
    assert!(usage.contains("--port <num>"), "{usage}");

    // A missing mandatory flag: usage (with argv[0]) on stderr, INVALID_VALUE.
    let bad = run(&exe, &[]);
    assert_eq!(bad.status.code(), Some(3));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains(&format!("Usage: {argv0} ")), "{err}");
    assert!(err.contains("DOCA_ERROR_INVALID_VALUE"), "{err}");
}
