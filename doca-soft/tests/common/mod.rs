//! Helpers shared by the tests that compile C against `include/`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crate's public C headers.
pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// Every `*.h` in include/, sorted by name (read at run time, so headers added by other
/// parts of the runtime are covered).
pub fn headers() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(include_dir())
        .expect("include/ is readable")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "h"))
        .collect();
    found.sort();
    found
}

/// File name of a path, as text.
pub fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Include flags for UCX (the UROM headers include UCX headers): pkg-config first, then
/// `$UCX_HOME/include`.
pub fn ucx_cflags() -> Vec<String> {
    if let Ok(out) = Command::new("pkg-config")
        .args(["--cflags", "ucx"])
        .output()
    {
        if out.status.success() {
            return String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(str::to_owned)
                .collect();
        }
    }
    match std::env::var("UCX_HOME") {
        Ok(home) => vec![format!("-I{home}/include")],
        Err(_) => Vec::new(),
    }
}

/// Names of the library functions a header declares: the declarations marked with
/// DOCA_STABLE / DOCA_EXPERIMENTAL (static inline helpers carry no marker).
pub fn declared_functions(header_text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut pending: Option<String> = None;
    for line in header_text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if let Some(decl) = pending.as_mut() {
            decl.push(' ');
            decl.push_str(line);
        } else if let Some(rest) = ["DOCA_STABLE", "DOCA_EXPERIMENTAL", "__DOCA_EXPERIMENTAL"]
            .iter()
            .find_map(|marker| {
                line.strip_prefix(marker)
                    .filter(|r| r.is_empty() || r.starts_with(' '))
            })
        {
            pending = Some(rest.to_owned());
        }
        if pending.as_deref().is_some_and(|d| d.contains('(')) {
            let decl = pending.take().unwrap();
            let before = decl.split('(').next().unwrap_or("");
            let name: String = before
                .trim_end()
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// `(header, function)` pairs of `tests/pending_exports.txt`: functions the headers declare
/// that the library does not export yet (the implementers' work list).
#[allow(dead_code)]
pub fn pending_exports() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pending_exports.txt");
    let text = std::fs::read_to_string(&path).expect("tests/pending_exports.txt is readable");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (header, function) = l.split_once(' ').unwrap_or_else(|| {
                panic!("pending_exports.txt: `header function` expected, got {l:?}")
            });
            (header.to_owned(), function.trim().to_owned())
        })
        .collect()
}
