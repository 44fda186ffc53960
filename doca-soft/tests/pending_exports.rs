//! `tests/pending_exports.txt` lists the functions the headers declare that libdoca_soft.so
//! does not export yet. The list stays exact: every entry is declared by the header it names,
//! appears once, and is really missing from the library (so implementing one fails this test
//! until its line is deleted, and the list never hides a function that exists).

mod cdylib;
// Only some of the shared helpers are needed here.
#[allow(dead_code)]
mod common;

use std::collections::BTreeSet;

#[test]
fn pending_entries_are_declared_by_their_header() {
    let pending = common::pending_exports();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (header, function) in &pending {
        if !seen.insert(function.clone()) {
            problems.push(format!("{function} is listed twice"));
        }
        let path = common::include_dir().join(header);
        let Ok(text) = std::fs::read_to_string(&path) else {
            problems.push(format!("{function}: no header {header}"));
            continue;
        };
        if !common::declared_functions(&text).contains(function) {
            problems.push(format!("{function} is not declared by {header}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Links a program that takes the address of every pending function against this run's
/// library: each one must come back as an undefined reference.
#[test]
fn pending_entries_are_not_exported_yet() {
    let pending = common::pending_exports();
    if pending.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let headers: BTreeSet<&String> = pending.iter().map(|(h, _)| h).collect();
    let mut source: String = headers
        .iter()
        .map(|h| format!("#include <{h}>\n"))
        .collect();
    source.push_str("typedef void (*any_fn)(void);\nstatic const any_fn fns[] = {\n");
    for (_, f) in &pending {
        source.push_str(&format!("\t(any_fn){f},\n"));
    }
    source.push_str("};\nint main(void)\n{\n\treturn fns[0] == (any_fn)0;\n}\n");
    let c_file = dir.path().join("pending.c");
    std::fs::write(&c_file, source).unwrap();
    let cc = doca_test_support::cc::C.compiler();
    let out = doca_test_support::cc::strict(&cc, "-std=gnu11")
        .arg("-DDOCA_ALLOW_EXPERIMENTAL_API")
        .arg(&c_file)
        .arg("-o")
        .arg(dir.path().join("pending"))
        .arg(format!("-L{}", cdylib::library_dir().display()))
        .arg("-ldoca_soft")
        .output()
        .expect("C compiler runs");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "every pending function links: delete them from tests/pending_exports.txt\n{output}"
    );
    let undefined: BTreeSet<&str> = output
        .lines()
        .filter_map(|l| l.split("undefined reference to `").nth(1))
        .filter_map(|rest| rest.split('\'').next())
        .collect();
    assert!(
        !undefined.is_empty(),
        "the program failed to build for another reason than missing symbols:\n{output}"
    );
    let now_exported: Vec<&String> = pending
        .iter()
        .map(|(_, f)| f)
        .filter(|f| !undefined.contains(f.as_str()))
        .collect();
    assert!(
        now_exported.is_empty(),
        "exported now, delete from tests/pending_exports.txt: {now_exported:#?}"
    );
}
