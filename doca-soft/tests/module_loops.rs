//! The folders of `src/` import one another without a loop: the graph whose nodes are the
//! top-level modules (a file `x.rs` or a folder `x/`) and whose edges are the `crate::x`
//! paths their non-test code names has no cycle. Test code (`#[cfg(test)]` items and
//! `tests.rs` files) is left out: a test may drive a module through the C API above it.
//!
//! The layering this keeps: `capi` and `testing` on top; the engine below them; `types` at
//! the bottom. Below this crate, and so below every module here, are the engine crates
//! (Cargo keeps crates free of loops; the test below checks their order): doca-soft-urom
//! and doca-soft-nic, then doca-soft-packet, then doca-soft-base.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("reading src") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to (`None` for `lib.rs` and `bin/`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    match first.as_str() {
        "lib.rs" | "bin" => None,
        f => Some(f.trim_end_matches(".rs").to_owned()),
    }
}

/// The non-test lines of a Rust file: everything but the item that follows a
/// `#[cfg(test)]` attribute (a `use` up to its `;`, a `mod` block up to its closing brace).
fn non_test_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            out.push(lines[i]);
            i += 1;
            continue;
        }
        i += 1;
        while i < lines.len() && lines[i].trim_start().starts_with("#[") {
            i += 1;
        }
        let Some(item) = lines.get(i) else { break };
        if item.trim_end().ends_with('{') {
            let mut depth = 0i32;
            while i < lines.len() {
                depth += lines[i].matches('{').count() as i32;
                depth -= lines[i].matches('}').count() as i32;
                i += 1;
                if depth <= 0 {
                    break;
                }
            }
        } else {
            while i < lines.len() && !lines[i].contains(';') {
                i += 1;
            }
            i += 1;
        }
    }
    out
}

/// Names the crate root re-exports as modules (`pub(crate) use ctx::task;`): an alias
/// stands for the module it names.
fn root_aliases(src: &Path) -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("reading lib.rs");
    let mut m = BTreeMap::new();
    for line in lib.lines() {
        let l = line.trim();
        let Some(rest) = l
            .strip_prefix("pub(crate) use ")
            .or_else(|| l.strip_prefix("use "))
        else {
            continue;
        };
        let path = rest.trim_end_matches(';').trim_start_matches("crate::");
        let parts: Vec<&str> = path.split("::").collect();
        if parts.len() >= 2
            && parts
                .iter()
                .all(|p| p.chars().all(|c| c.is_alphanumeric() || c == '_'))
        {
            m.insert(parts[parts.len() - 1].to_owned(), parts[0].to_owned());
        }
    }
    m
}

/// Edges `from -> to` between top-level modules.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = src_dir();
    let aliases = root_aliases(&src);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        if f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let Some(from) = module_of(&src, &f) else {
            continue;
        };
        let text = std::fs::read_to_string(&f).expect("reading a source file");
        let node = g.entry(from.clone()).or_default();
        for line in non_test_lines(&text) {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("crate::") {
                let name: String = code[i + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let to = aliases.get(&name).cloned().unwrap_or(name);
                if !to.is_empty() && to != from {
                    node.insert(to);
                }
            }
        }
    }
    g
}

/// A cycle of `g`, if there is one (depth-first search with colours).
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_owned(), 1);
        stack.push(n.to_owned());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|x| x == m).unwrap_or(0);
                    let mut c = stack[start..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_folders_of_src_import_each_other_without_a_loop() {
    let g = import_graph();
    let map: Vec<String> = g
        .iter()
        .map(|(k, v)| {
            format!(
                "{k} -> {}",
                v.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    if let Some(c) = find_cycle(&g) {
        panic!(
            "import loop: {}\nthe graph:\n{}",
            c.join(" -> "),
            map.join("\n")
        );
    }
}

#[test]
fn the_layers_sit_where_the_design_puts_them() {
    let g = import_graph();
    let uses = |a: &str, b: &str| g.get(a).is_some_and(|s| s.contains(b));
    assert!(g.contains_key("capi"), "a capi/ folder exists");
    for m in g
        .keys()
        .filter(|m| !["capi", "testing"].contains(&m.as_str()))
    {
        assert!(!uses(m, "testing"), "{m} must not import testing");
    }
}

/// The workspace crates a crate's manifest depends on (normal dependencies only).
fn crate_deps(dir: &str) -> BTreeSet<String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(dir)
        .join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("reading a manifest");
    let deps = text
        .split("\n[dependencies]\n")
        .nth(1)
        .expect("a [dependencies] table")
        .split("\n[")
        .next()
        .unwrap_or_default();
    deps.lines()
        .filter_map(|l| l.split(['.', ' ', '=']).next())
        .filter(|n| n.starts_with("doca-"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_engine_crates_depend_downwards_only() {
    let base = crate_deps("doca-soft-base");
    assert!(base.is_empty(), "doca-soft-base depends on {base:?}");
    let packet = crate_deps("doca-soft-packet");
    assert!(packet.is_empty(), "doca-soft-packet depends on {packet:?}");
    let nic = crate_deps("doca-soft-nic");
    assert_eq!(
        nic,
        ["doca-soft-base", "doca-soft-packet"]
            .map(String::from)
            .into(),
        "the NIC model sits on the packet engine and the base only"
    );
    let urom = crate_deps("doca-soft-urom");
    assert_eq!(
        urom,
        ["doca-soft-base"].map(String::from).into(),
        "the UROM service needs neither the NIC model nor the packet engine"
    );
    let soft = crate_deps("doca-soft");
    for c in [
        "doca-soft-base",
        "doca-soft-packet",
        "doca-soft-nic",
        "doca-soft-urom",
    ] {
        assert!(soft.contains(c), "doca-soft builds on {c}: {soft:?}");
    }
}

#[test]
fn the_checker_finds_a_loop_it_is_shown() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert!(find_cycle(&g).is_none());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&g).unwrap(),
        ["a", "b", "c", "a"].map(String::from).to_vec()
    );
    let text = "use crate::x;\n#[cfg(test)]\nmod tests {\n    use crate::y;\n}\n#[cfg(test)]\nuse crate::z;\nuse crate::w;\n";
    let kept = non_test_lines(text).join("\n");
    assert!(kept.contains("crate::x") && kept.contains("crate::w"));
    assert!(!kept.contains("crate::y") && !kept.contains("crate::z"));
}
