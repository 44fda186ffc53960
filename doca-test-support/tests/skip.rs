//! The skip facility prints one line naming the test and the reason, and returns: each
//! case runs as a child test (ignored in normal runs) of this binary, and the parent reads
//! what it printed.

use doca_test_support::{cuda_driver_present, require_cuda, skip_if};
use std::process::Command;

/// Set for the children this binary spawns.
const CHILD: &str = "DOCA_TEST_SUPPORT_SKIP_CHILD";

/// Runs test `name` of this binary as a child; its exit status and stderr.
fn run_child(name: &str) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 passed"), "{name} ran: {stdout}");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn skipped_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("skipped: "))
        .collect()
}

#[test]
#[ignore = "a child of skip_if_prints_one_line_and_returns"]
fn child_skip_if() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    skip_if!(1 + 1 == 2, "reason {}", 42);
    panic!("skip_if! did not return");
}

#[test]
#[ignore = "a child of require_cuda_skips_exactly_when_there_is_no_driver"]
fn child_require_cuda() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    doca_test_support::require_cuda!("probe");
    eprintln!("REACHED GPU CODE");
}

#[test]
fn skip_if_prints_one_line_and_returns() {
    let (ok, err) = run_child("child_skip_if");
    assert!(ok, "{err}");
    assert_eq!(
        skipped_lines(&err),
        ["skipped: child_skip_if: reason 42"],
        "{err}"
    );
}

#[test]
fn require_cuda_skips_exactly_when_there_is_no_driver() {
    let (ok, err) = run_child("child_require_cuda");
    assert!(ok, "{err}");
    if cuda_driver_present() {
        assert!(err.contains("REACHED GPU CODE"), "{err}");
        assert!(skipped_lines(&err).is_empty(), "{err}");
    } else {
        assert_eq!(
            skipped_lines(&err),
            [format!(
                "skipped: child_require_cuda: {}",
                doca_test_support::no_cuda_reason("probe")
            )],
            "{err}"
        );
        assert!(!err.contains("REACHED"), "{err}");
    }
}

#[test]
fn the_function_form_agrees_with_the_driver_check() {
    assert_eq!(require_cuda("function form"), cuda_driver_present());
}
