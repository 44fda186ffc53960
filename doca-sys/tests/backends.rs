//! The backend selection of doca-sys, exercised through nested cargo runs of doca-sys alone:
//!
//! * feature `sdk` (alone, or with the default `soft` still on) and `DOCA_INCLUDE_DIR`
//!   pointing at a copy of the soft headers without the `doca_soft_*` extensions: bindgen
//!   runs over them as over an installed SDK, and the output compiles (no library is needed
//!   for `cargo check`);
//! * `DOCA_RS_BACKEND` forces either backend whatever the features say;
//! * neither feature: builds, binding the software runtime's headers.
//!
//! Which backend a run chose is read from the build script's cfgs in cargo's JSON messages,
//! and confirmed by what the generated bindings contain. The nested runs share one target
//! directory of their own, so they never wait on this one; they take turns (runs with the
//! same features share doca-sys's OUT_DIR, which each rerun of the build script rewrites).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

static TURN: Mutex<()> = Mutex::new(());

/// Held by a test for all its runs and reads.
fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// What a nested run reported.
struct Run {
    ok: bool,
    /// stdout (JSON messages) and stderr.
    output: String,
    /// The backend in doca-sys's build-script cfgs, if its build script ran.
    backend: Option<String>,
    /// doca-sys's OUT_DIR.
    out_dir: Option<PathBuf>,
}

impl Run {
    fn bindings(&self) -> String {
        let dir = self.out_dir.as_ref().expect("the build script ran");
        std::fs::read_to_string(dir.join("bindings.rs")).expect("bindings.rs generated")
    }
}

/// `cargo <cmd> -p doca-sys <args>` with `envs` set (and DOCA_* unset otherwise).
fn cargo(cmd: &str, args: &[&str], envs: &[(&str, &std::ffi::OsStr)]) -> Run {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("backend-runs");
    let mut c = Command::new(cargo);
    c.current_dir(workspace_root())
        .args([cmd, "--locked", "--message-format=json", "-p", "doca-sys"])
        .args(args)
        .arg("--target-dir")
        .arg(&target);
    for var in ["DOCA_INCLUDE_DIR", "DOCA_LIB_DIR", "DOCA_RS_BACKEND"] {
        c.env_remove(var);
    }
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().expect("run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let script = stdout
        .lines()
        .find(|l| l.contains(r#""reason":"build-script-executed""#) && l.contains("/doca-sys#"));
    let backend = script.and_then(|l| {
        ["soft", "sdk"]
            .into_iter()
            .find(|b| l.contains(&format!(r#""doca_backend=\"{b}\"""#)))
            .map(str::to_owned)
    });
    let out_dir = script
        .and_then(|l| json_str(l, "out_dir"))
        .map(PathBuf::from);
    Run {
        ok: out.status.success(),
        output: format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr)),
        backend,
        out_dir,
    }
}

/// The string value of `"key":"..."` in one JSON line (paths here hold no quotes).
fn json_str(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!(r#""{key}":""#))? + key.len() + 4;
    let end = line[at..].find('"')?;
    Some(line[at..at + end].to_owned())
}

/// A copy of the soft headers as an SDK would ship them: without the `doca_soft_*`
/// extension headers that no DOCA header includes.
fn sdk_like_headers() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = workspace_root().join("doca-soft/include");
    let mut copied = 0;
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        if name == "doca_soft_port.h" || name == "doca_soft_queue.h" {
            continue;
        }
        if name.ends_with(".h") {
            std::fs::copy(&p, dir.path().join(&name)).unwrap();
            copied += 1;
        }
    }
    assert!(
        copied > 10,
        "expected the soft headers in {}",
        src.display()
    );
    // The rdma-core stand-ins the RDMA and verbs headers include where rdma-core's own
    // headers are absent (on an SDK machine rdma-core provides them).
    copy_tree(&src.join("compat"), &dir.path().join("compat"));
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn sdk_env(headers: &Path) -> [(&'static str, &std::ffi::OsStr); 2] {
    [
        ("DOCA_INCLUDE_DIR", headers.as_os_str()),
        ("DOCA_LIB_DIR", headers.as_os_str()),
    ]
}

/// Bindings made over the SDK-like copy: the DOCA API, none of the soft extensions.
fn assert_sdk_bindings(run: &Run) {
    let b = run.bindings();
    for f in [
        "doca_gpu_mem_alloc",
        "doca_devinfo_create_list",
        "doca_ctx_start",
        "doca_pe_progress",
    ] {
        assert!(
            b.contains(&format!("pub fn {f}(")),
            "{f} missing from the sdk bindings"
        );
    }
    assert!(
        !b.contains("pub fn doca_soft_port_get_counters("),
        "the sdk bindings came from the soft headers"
    );
}

#[test]
fn sdk_alone_binds_headers_from_doca_include_dir() {
    let _turn = turn();
    let headers = sdk_like_headers();
    let run = cargo(
        "check",
        &["--no-default-features", "--features", "sdk"],
        &sdk_env(headers.path()),
    );
    assert!(run.ok, "sdk check failed:\n{}", run.output);
    assert_eq!(run.backend.as_deref(), Some("sdk"), "{}", run.output);
    assert_sdk_bindings(&run);
}

#[test]
fn both_features_build_and_pick_sdk() {
    let _turn = turn();
    let headers = sdk_like_headers();
    // `soft` stays on as the default feature.
    let run = cargo("check", &["--features", "sdk"], &sdk_env(headers.path()));
    assert!(run.ok, "soft+sdk check failed:\n{}", run.output);
    assert_eq!(run.backend.as_deref(), Some("sdk"), "{}", run.output);
    assert_sdk_bindings(&run);
}

#[test]
fn environment_variable_forces_either_backend() {
    let _turn = turn();
    // soft over both features (where sdk would win), with no SDK anywhere.
    let run = cargo(
        "check",
        &["--features", "sdk"],
        &[("DOCA_RS_BACKEND", "soft".as_ref())],
    );
    assert!(run.ok, "DOCA_RS_BACKEND=soft check failed:\n{}", run.output);
    assert_eq!(run.backend.as_deref(), Some("soft"), "{}", run.output);
    assert!(run
        .bindings()
        .contains("pub fn doca_soft_port_get_counters("));

    // sdk over the default feature `soft` alone.
    let headers = sdk_like_headers();
    let [inc, lib] = sdk_env(headers.path());
    let run = cargo(
        "check",
        &[],
        &[inc, lib, ("DOCA_RS_BACKEND", "sdk".as_ref())],
    );
    assert!(run.ok, "DOCA_RS_BACKEND=sdk check failed:\n{}", run.output);
    assert_eq!(run.backend.as_deref(), Some("sdk"), "{}", run.output);
    assert_sdk_bindings(&run);

    // A value naming no backend stops the build and says what is accepted.
    let run = cargo("check", &[], &[("DOCA_RS_BACKEND", "cuda".as_ref())]);
    assert!(!run.ok, "DOCA_RS_BACKEND=cuda must not build");
    assert!(
        run.output
            .contains("DOCA_RS_BACKEND=\"cuda\" names no backend"),
        "unhelpful error:\n{}",
        run.output
    );
}

#[test]
fn no_backend_feature_builds_against_the_soft_headers() {
    let _turn = turn();
    let run = cargo("build", &["--no-default-features"], &[]);
    assert!(run.ok, "build without features failed:\n{}", run.output);
    assert_eq!(run.backend.as_deref(), Some("soft"), "{}", run.output);
    assert!(run.bindings().contains("pub fn doca_ctx_start("));
    assert!(
        run.output.contains("its symbols are not linked"),
        "no warning about the unlinked runtime:\n{}",
        run.output
    );
}

/// The bindings committed for builds where bindgen cannot run (src/bindings/soft.rs).
fn committed_bindings() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bindings/soft.rs");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// How a run's build script got its bindings (`bindings-source.txt` in its OUT_DIR).
fn bindings_source(run: &Run) -> String {
    let dir = run.out_dir.as_ref().expect("the build script ran");
    std::fs::read_to_string(dir.join("bindings-source.txt")).expect("bindings-source.txt")
}

#[test]
fn docs_rs_uses_the_committed_bindings_and_probes_nothing() {
    let _turn = turn();
    // The sdk backend with no SDK, no UCX and no pkg-config path: any probe would fail the
    // build, so success shows that nothing was probed.
    let run = cargo(
        "check",
        &["--no-default-features", "--features", "sdk"],
        &[
            ("DOCS_RS", "1".as_ref()),
            ("PKG_CONFIG_PATH", "/nonexistent".as_ref()),
            ("UCX_HOME", "/nonexistent".as_ref()),
        ],
    );
    assert!(run.ok, "DOCS_RS check failed:\n{}", run.output);
    assert_eq!(run.backend.as_deref(), Some("sdk"), "{}", run.output);
    assert!(
        run.bindings() == committed_bindings(),
        "DOCS_RS did not use the committed bindings"
    );
    let source = bindings_source(&run);
    assert!(source.starts_with("committed\n"), "{source}");
    assert!(source.contains("DOCS_RS"), "{source}");
}

#[test]
fn committed_bindings_serve_the_soft_backend_only() {
    let _turn = turn();
    let committed = [("DOCA_SYS_BINDINGS", "committed".as_ref())];
    let run = cargo("check", &["--no-default-features"], &committed);
    assert!(
        run.ok,
        "soft with committed bindings failed:\n{}",
        run.output
    );
    assert_eq!(run.backend.as_deref(), Some("soft"), "{}", run.output);
    assert!(
        run.bindings() == committed_bindings(),
        "not the committed bindings"
    );
    assert!(bindings_source(&run).starts_with("committed\n"));

    // The sdk backend must bind the installed SDK's own headers: a clear error instead.
    let headers = sdk_like_headers();
    let [inc, lib] = sdk_env(headers.path());
    let run = cargo(
        "check",
        &["--no-default-features", "--features", "sdk"],
        &[inc, lib, committed[0]],
    );
    assert!(
        !run.ok,
        "the sdk backend built from the committed soft bindings"
    );
    assert!(
        run.output.contains("backend sdk") && run.output.contains("libclang"),
        "unhelpful error:\n{}",
        run.output
    );

    let run = cargo(
        "check",
        &["--no-default-features"],
        &[("DOCA_SYS_BINDINGS", "maybe".as_ref())],
    );
    assert!(!run.ok, "DOCA_SYS_BINDINGS=maybe must not build");
    assert!(
        run.output
            .contains("DOCA_SYS_BINDINGS=\"maybe\" is not understood"),
        "unhelpful error:\n{}",
        run.output
    );
}

/// The libclang version recorded for the committed file (src/bindings/README.md).
fn committed_clang() -> Option<String> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bindings/README.md");
    let text = std::fs::read_to_string(readme).ok()?;
    text.lines()
        .filter_map(|l| l.strip_prefix("* "))
        .find(|l| l.contains("clang version"))
        .map(str::to_owned)
}

#[test]
fn committed_bindings_match_what_bindgen_generates_here() {
    // This crate's own build: bindgen's output when it ran, over the soft headers and UCX's.
    let source = include_str!(concat!(env!("OUT_DIR"), "/bindings-source.txt"));
    let generated = include_str!(concat!(env!("OUT_DIR"), "/bindings.rs"));
    if !source.starts_with("bindgen\n") || !source.contains("\nucx=yes\n") {
        skip(&format!(
            "this build did not run bindgen over the soft and UCX headers ({source:?})"
        ));
        return;
    }
    let clang = source
        .lines()
        .find_map(|l| l.strip_prefix("clang="))
        .unwrap_or("");
    let recorded = committed_clang().expect("src/bindings/README.md records the libclang");
    if clang != recorded {
        skip(&format!(
            "libclang here is {clang:?}, the committed bindings were made with {recorded:?} \
             (scripts/regen-bindings --check compares them where CI pins libclang)"
        ));
        return;
    }
    let committed = committed_bindings();
    if generated != committed {
        let line = generated
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .map_or(
                generated.lines().count().min(committed.lines().count()),
                |i| i,
            );
        panic!(
            "doca-sys/src/bindings/soft.rs drifted from bindgen's output (first difference at \
             line {}): run scripts/regen-bindings and commit it",
            line + 1
        );
    }
}

/// A skip with its reason printed, in the form the project's tests use (doca-test-support
/// is not a dependency of this crate).
fn skip(reason: &str) {
    eprintln!("skipped: committed_bindings_match_what_bindgen_generates_here: {reason}");
}
