//! Sizes, alignments, member offsets and constant values of the public headers equal the ones
//! the DOCA 3.3 fact sheets give. The assertions are generated from the sheets by
//! `tests/gen/layout_facts.py` into `tests/c/layout_facts_*.c` (committed); these tests
//! compile them as C and C++ and check that the committed files are what the generator
//! makes of the current sheets.

use doca_test_support::cc;

use std::path::Path;

use cc::{Output, Rdma, C, CXX};

/// Generated assertions for a file, counted by their macro.
fn assertion_count(name: &str) -> usize {
    std::fs::read_to_string(cc::c_source(name))
        .unwrap()
        .matches("\nLAYOUT_FACT(")
        .count()
}

fn compile_both(name: &str) -> Result<(), String> {
    let source = cc::c_source(name);
    for lang in [C, CXX] {
        cc::compile(
            lang,
            &source,
            Path::new(""),
            Output::SyntaxOnly,
            Rdma::Plain,
            &[],
        )
        .map_err(|e| format!("{name} as {}:\n{e}", lang.x))?;
    }
    Ok(())
}

/// GPUNetIO host, RDMA, Verbs, UAR, doca_types.h and the verbs definitions shared with device
/// code: every value and layout of the sheets holds.
#[test]
fn host_header_layouts_match_the_facts() {
    let n = assertion_count("layout_facts_host.c");
    assert!(n > 200, "only {n} assertions in layout_facts_host.c");
    compile_both("layout_facts_host.c").unwrap_or_else(|e| panic!("{e}"));
}

/// DOCA Flow's values and layouts (doca_flow.h, doca_flow_net.h, doca_flow_crypto.h, through
/// the `_v1` names the plain names stand for).
#[test]
fn flow_layouts_match_the_facts() {
    let n = assertion_count("layout_facts_flow.c");
    assert!(n > 500, "only {n} assertions in layout_facts_flow.c");
    compile_both("layout_facts_flow.c").unwrap_or_else(|e| panic!("{e}"));
}

/// The generated checks can fail: one wrong value appended to the host file is rejected in C
/// and in C++.
#[test]
fn a_wrong_fact_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read_to_string(cc::c_source("layout_facts_host.c")).unwrap();
    text.push_str("LAYOUT_FACT(sizeof(struct doca_rdma_gid) == 17, \"deliberately wrong\");\n");
    let file = dir.path().join("wrong.c");
    std::fs::write(&file, text).unwrap();
    for lang in [C, CXX] {
        let err = cc::compile(
            lang,
            &file,
            Path::new(""),
            Output::SyntaxOnly,
            Rdma::Plain,
            &[],
        )
        .expect_err("a false static assertion compiled");
        assert!(err.contains("deliberately wrong"), "{}: {err}", lang.x);
    }
}

/// The committed files are what the generator makes of the sheets now.
#[test]
fn generated_layout_facts_are_current() {
    doca_test_support::workspace::assert_generated_current(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gen/layout_facts.py"),
        "gpunetio-rdma-verbs-dma.md",
        "the generated layout facts",
    );
}
