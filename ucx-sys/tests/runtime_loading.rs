//! Which UCX a binary of this crate runs with, seen from a child process of the test (the
//! test binary itself, re-run with a chosen environment): the UCX found at build time
//! without any LD_LIBRARY_PATH, and an older UCX named by LD_LIBRARY_PATH refused at start
//! with both versions and the file named.

use std::process::Command;

const CHILD: &str = "UCX_SYS_TEST_CHILD";

/// Runs `child_reports_its_ucx` in a new process with `ld_library_path` (None: unset).
fn child(ld_library_path: Option<&str>) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let mut c = Command::new(exe);
    c.args([
        "--exact",
        "child_reports_its_ucx",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, "1");
    match ld_library_path {
        Some(p) => c.env("LD_LIBRARY_PATH", p),
        None => c.env_remove("LD_LIBRARY_PATH"),
    };
    let out = c.output().expect("run the child");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {text}");
    text
}

/// Not a test of its own: what the child runs (does nothing in the parent).
#[test]
fn child_reports_its_ucx() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    match ucx_sys::library() {
        Ok(l) => println!("LIBRARY {} [{}]", l.path.display(), l.found),
        Err(e) => println!("LIBRARY none: {e}"),
    }
    match ucx_sys::check_version() {
        Ok(()) => println!("CHECK ok {}", ucx_sys::loaded_version().unwrap()),
        Err(e) => println!("CHECK refused: {e}"),
    }
}

#[test]
fn without_ld_library_path_the_ucx_of_the_build_is_loaded() {
    let text = child(None);
    let want = ucx_sys::build_libdir().join("libucp.so.0");
    assert!(
        text.contains(&format!("LIBRARY {} [", want.display())),
        "expected {}: {text}",
        want.display()
    );
    assert!(text.contains("CHECK ok"), "{text}");
}

#[test]
fn an_older_ucx_first_in_ld_library_path_is_refused_naming_both_versions() {
    let debian = "/usr/lib/x86_64-linux-gnu";
    if !std::path::Path::new(debian).join("libucp.so.0").exists() {
        println!("skipped: an_older_ucx_first_in_ld_library_path: no system UCX in {debian}");
        return;
    }
    let text = child(Some(debian));
    let built = ucx_sys::BUILD_VERSION;
    if text.contains("CHECK ok") {
        println!(
            "skipped: an_older_ucx_first_in_ld_library_path: the system UCX is not older: {text}"
        );
        return;
    }
    assert!(text.contains("CHECK refused: UCX 1."), "{text}");
    assert!(
        text.contains(&format!("{debian}/libucp.so.0")),
        "names the file: {text}"
    );
    assert!(
        text.contains("LD_LIBRARY_PATH"),
        "says how it was found: {text}"
    );
    assert!(
        text.contains(&format!(
            "built against UCX {}.{}",
            built.major, built.minor
        )),
        "names the version needed: {text}"
    );
}
