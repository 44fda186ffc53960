//! The backend selection of doca-sys, exercised through nested `cargo check` runs:
//!
//! * feature `sdk` with `DOCA_INCLUDE_DIR` pointing at a copy of the soft headers: bindgen
//!   runs over them as it would over an installed SDK, and the output compiles (no library
//!   is needed for `cargo check`);
//! * neither feature, and both features: a compile error that says what to do.
//!
//! The nested builds use their own target directory, so they never wait on this one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn check(target_dir: &Path, args: &[&str], envs: &[(&str, &Path)]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root())
        .args(["check", "--locked", "--quiet", "-p", "doca-sys"])
        .args(args)
        .arg("--target-dir")
        .arg(target_dir)
        .env_remove("DOCA_INCLUDE_DIR")
        .env_remove("DOCA_LIB_DIR");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run cargo check")
}

/// The newest file named `name` under `<target>/debug/build/doca-sys-*/out/`.
fn generated(target_dir: &Path, name: &str) -> String {
    let build = target_dir.join("debug/build");
    let newest = std::fs::read_dir(&build)
        .expect("build dir exists after a successful check")
        .filter_map(Result::ok)
        .map(|e| e.path().join("out").join(name))
        .filter(|p| p.is_file())
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| panic!("no {name} under {}", build.display()));
    std::fs::read_to_string(newest).unwrap()
}

#[test]
fn sdk_backend_binds_headers_from_doca_include_dir() {
    let headers = tempfile::tempdir().unwrap();
    let src = workspace_root().join("doca-soft/include");
    let mut copied = 0;
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "h") {
            std::fs::copy(&p, headers.path().join(p.file_name().unwrap())).unwrap();
            copied += 1;
        }
    }
    assert!(
        copied > 10,
        "expected the soft headers in {}",
        src.display()
    );

    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("doca-sys-sdk-check");
    let out = check(
        &target,
        &["--no-default-features", "--features", "sdk"],
        &[
            ("DOCA_INCLUDE_DIR", headers.path()),
            ("DOCA_LIB_DIR", headers.path()),
        ],
    );
    assert!(
        out.status.success(),
        "sdk check failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bindings = generated(&target, "bindings.rs");
    for f in [
        "doca_gpu_mem_alloc",
        "doca_devinfo_create_list",
        "doca_ctx_start",
        "doca_pe_progress",
    ] {
        assert!(
            bindings.contains(&format!("pub fn {f}(")),
            "{f} missing from the sdk bindings"
        );
    }
}

#[test]
fn missing_or_doubled_backend_is_a_compile_error_with_advice() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("doca-sys-feature-check");
    let none = check(&target, &["--no-default-features"], &[]);
    assert!(!none.status.success(), "no backend must not compile");
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(
        err.contains("enable one backend"),
        "unhelpful error:\n{err}"
    );

    let both = check(&target, &["--features", "sdk"], &[]);
    assert!(!both.status.success(), "two backends must not compile");
    let err = String::from_utf8_lossy(&both.stderr);
    assert!(err.contains("are exclusive"), "unhelpful error:\n{err}");
}
