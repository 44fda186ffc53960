//! Paths of this workspace, and nested cargo builds of its binaries.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The workspace root (where this crate was built from).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("doca-test-support sits in the workspace root")
        .to_path_buf()
}

/// doca-soft's C headers (`doca-soft/include`), for C programs and plugins tests compile.
pub fn doca_soft_include_dir() -> PathBuf {
    workspace_root().join("doca-soft/include")
}

/// doca-soft's source directory: `DOCA_SOFT_SRC_DIR`, else where it was built, else
/// `./doca-soft` (a built test binary run from the repository root on another machine);
/// the first that holds `include/doca_gpunetio.h`.
pub fn doca_soft_src_dir() -> PathBuf {
    let mut candidates = Vec::new();
    if let Ok(d) = std::env::var("DOCA_SOFT_SRC_DIR") {
        candidates.push(PathBuf::from(d));
    }
    candidates.push(workspace_root().join("doca-soft"));
    candidates.push(PathBuf::from("doca-soft"));
    candidates
        .iter()
        .find(|d| d.join("include/doca_gpunetio.h").exists())
        .cloned()
        .unwrap_or_else(|| candidates[0].clone())
}

/// Where the fact sheets are: `$DOCA_FACTS_DIR`, else a `shared/reference` above the
/// workspace that holds `sheet`.
pub fn facts_dir(sheet: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCA_FACTS_DIR") {
        return Some(PathBuf::from(dir));
    }
    workspace_root()
        .ancestors()
        .map(|a| a.join("shared/reference"))
        .find(|d| d.join(sheet).is_file())
}

/// Checks that what the generator `script` (a Python script, run with `--check --facts
/// DIR`) makes of the fact sheets is what is committed; `what` names the generated files
/// in the failure. Skips, saying how to point at the sheets, when they are not found.
pub fn assert_generated_current(script: &Path, sheet: &str, what: &str) {
    let Some(facts) = facts_dir(sheet) else {
        crate::skip("fact sheets not found; set DOCA_FACTS_DIR to the reference directory");
        return;
    };
    let out = Command::new("python3")
        .arg(script)
        .arg("--check")
        .arg("--facts")
        .arg(&facts)
        .output()
        .unwrap_or_else(|e| panic!("python3 runs (needed to check {what}): {e}"));
    assert!(
        out.status.success(),
        "{what} are stale; run `python3 {}`:\n{}{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The cargo target directory the running test binary was built in (the binary sits in
/// `<target>/<profile>/deps`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    exe.ancestors()
        .nth(3)
        .expect("the test binary sits in <target>/<profile>/deps")
        .to_path_buf()
}

/// Runs `cargo build <args>` at the workspace root with `CARGO_TARGET_DIR=target_dir`, once
/// per process for the same directory and arguments (later calls return the first result;
/// concurrent callers wait for it).
///
/// Nested builds get a target directory of their own: they select other packages than the
/// `cargo test` running the caller, so features unify differently and libraries get
/// rebuilt; in the outer target directory that would replace the cdylibs (the plugins',
/// `libdoca_soft.so`: no hash in their names) under the outer build's feet.
pub fn cargo_build(target_dir: &Path, args: &[&str]) -> Result<(), String> {
    type Done = Vec<((PathBuf, Vec<String>), Result<(), String>)>;
    static DONE: Mutex<Done> = Mutex::new(Vec::new());
    let key = (
        target_dir.to_path_buf(),
        args.iter().map(ToString::to_string).collect::<Vec<_>>(),
    );
    let mut done = DONE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, r)) = done.iter().find(|(k, _)| *k == key) {
        return r.clone();
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let r = Command::new(&cargo)
        .current_dir(workspace_root())
        .env("CARGO_TARGET_DIR", target_dir)
        .arg("build")
        .args(args)
        .status()
        .map_err(|e| format!("running {cargo}: {e}"))
        .and_then(|st| {
            st.success().then_some(()).ok_or_else(|| {
                format!(
                    "cargo build {} (target dir {}) failed: {st}",
                    args.join(" "),
                    target_dir.display()
                )
            })
        });
    done.push((key, r.clone()));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_point_into_this_checkout() {
        let root = workspace_root();
        assert!(root.join("Cargo.toml").is_file());
        assert!(doca_soft_include_dir().join("doca_gpunetio.h").is_file());
        let t = target_dir();
        assert!(
            std::env::current_exe().unwrap().starts_with(&t),
            "{}",
            t.display()
        );
    }
}
