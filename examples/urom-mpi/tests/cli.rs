//! urom_ping_pong's command line: help and version exit 0 without touching MPI (the old
//! hand-written parser failed on --help), DOCA's general flags are taken, bad input exits 2.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_urom_ping_pong");

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run urom_ping_pong")
}

use doca_test_support::process::describe as show;

#[test]
fn help_and_version_exit_0() {
    for flag in ["-h", "--help"] {
        let out = run(&[flag]);
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", show(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        for f in [
            "--device",
            "--message",
            "--log-level",
            "--sdk-log-level",
            "--version",
        ] {
            assert!(text.contains(f), "{flag}: help lacks {f}: {text}");
        }
        // The default device exists with the software runtime.
        assert!(text.contains("[default: lo]"), "{text}");
    }
    for flag in ["-v", "--version"] {
        let out = run(&[flag]);
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with("urom_ping_pong 0."),
            "{}",
            show(&out)
        );
    }
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let long = "x".repeat(100);
    for args in [
        &["--bogus"][..],
        &["-l", "15"],
        &["--sdk-log-level", "loud"],
        &["-m", &long],
        &["-d"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        assert!(!out.stderr.is_empty(), "{args:?}: no message");
    }
}
