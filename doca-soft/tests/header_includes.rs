//! The include graph of the public headers is DOCA 3.3's: each header includes the system
//! headers its 3.3 counterpart includes, so a program that uses `calloc`, `memcpy`,
//! `assert`, `FILE`, `bool`, `va_list`, `htons`, `PRIu64` or `__u32` after including only
//! DOCA headers compiles (as C and C++, `-Wall -Wextra -Werror`) and runs.

use doca_test_support::cc;

use std::collections::BTreeSet;
use std::process::Command;

use cc::{Lang, Output, Rdma, C, CXX};

/// The sections of tests/c/header_includes.c: one per header whose 3.3 system includes are
/// known, and ALL (every public header in one translation unit).
const SECTIONS: &[&str] = &[
    "COMPAT", "PE", "ARGP", "BITFIELD", "FLOW", "FLOW_NET", "GPUNETIO", "ETH_DEF", "LOG", "TYPES",
    "VERSION", "ALL",
];

/// The system headers each DOCA 3.3 header includes (the facts of the include-graph issue).
const SYSTEM_INCLUDES_3_3: &[(&str, &[&str])] = &[
    (
        "doca_compat.h",
        &["assert.h", "stdint.h", "stdlib.h", "string.h"],
    ),
    ("doca_pe.h", &["stdint.h", "stdlib.h"]),
    ("doca_argp.h", &["stdarg.h"]),
    ("doca_bitfield.h", &["arpa/inet.h"]),
    ("doca_flow.h", &["stdbool.h", "stdint.h", "stdio.h"]),
    ("doca_flow_net.h", &["stdbool.h", "stdint.h"]),
    ("doca_gpunetio.h", &["inttypes.h", "stddef.h"]),
    (
        "doca_gpunetio_eth_def.h",
        &["stdio.h", "stdint.h", "infiniband/mlx5dv.h", "assert.h"],
    ),
    ("doca_log.h", &["stddef.h", "stdint.h", "stdio.h"]),
    ("doca_types.h", &["linux/types.h", "stdint.h"]),
    ("doca_version.h", &["stddef.h"]),
];

/// Headers whose system includes are exactly 3.3's. The others include more, for reasons
/// given in the header: doca_gpunetio_eth_def.h keeps the headers its ring structs need, and
/// doca_bitfield.h falls back to <stdint.h> off Linux.
const EXACT: &[&str] = &[
    "doca_compat.h",
    "doca_pe.h",
    "doca_argp.h",
    "doca_flow.h",
    "doca_flow_net.h",
    "doca_gpunetio.h",
    "doca_log.h",
    "doca_types.h",
    "doca_version.h",
];

/// DOCA headers each header includes in 3.3 (and so must ours).
const DOCA_INCLUDES_3_3: &[(&str, &[&str])] = &[
    (
        "doca_compat.h",
        &["doca_config.h", "doca_build_config.h", "doca_version.h"],
    ),
    (
        "doca_flow.h",
        &["doca_compat.h", "doca_error.h", "doca_flow_net.h"],
    ),
    ("doca_flow_net.h", &["doca_types.h"]),
    (
        "doca_gpunetio.h",
        &["doca_dev.h", "doca_ctx.h", "doca_gpunetio_verbs_def.h"],
    ),
    ("doca_argp.h", &["doca_log.h"]),
];

/// `#include <x>` and `#include "x"` targets of a header, split into system (<>) and local ("").
fn includes(header: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(cc::include_dir().join(header))
        .unwrap_or_else(|e| panic!("read {header}: {e}"));
    let mut system = BTreeSet::new();
    let mut local = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("#include") else {
            continue;
        };
        let rest = rest.trim();
        if let Some(name) = rest.strip_prefix('<').and_then(|r| r.split('>').next()) {
            system.insert(name.to_owned());
        } else if let Some(name) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
            // doca-soft's shim stands for rdma-core's header (the installed one, or the
            // compat subset where there is none).
            if name == "doca_soft_mlx5.h" {
                system.insert("infiniband/mlx5dv.h".to_owned());
            }
            local.insert(name.to_owned());
        }
    }
    (system, local)
}

#[test]
fn headers_include_the_system_headers_of_3_3() {
    let mut problems = Vec::new();
    for (header, expected) in SYSTEM_INCLUDES_3_3 {
        let (system, _) = includes(header);
        let expected: BTreeSet<String> = expected.iter().map(|s| (*s).to_owned()).collect();
        let missing: Vec<&String> = expected.difference(&system).collect();
        if !missing.is_empty() {
            problems.push(format!("{header}: does not include {missing:?}"));
        }
        let extra: Vec<&String> = system.difference(&expected).collect();
        if EXACT.contains(header) && !extra.is_empty() {
            problems.push(format!("{header}: includes {extra:?} beyond DOCA 3.3's"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn headers_include_the_doca_headers_of_3_3() {
    let mut problems = Vec::new();
    for (header, expected) in DOCA_INCLUDES_3_3 {
        let (_, local) = includes(header);
        for name in *expected {
            if !local.contains(*name) {
                problems.push(format!("{header}: does not include {name}"));
            }
            if !cc::include_dir().join(name).is_file() {
                problems.push(format!("{header}: includes {name}, which is not shipped"));
            }
        }
    }
    // 3.3's doca_flow.h includes neither doca_dev.h nor doca_bitfield.h (it forward-declares
    // struct doca_dev), so programs must not come to rely on them through it.
    let (_, flow) = includes("doca_flow.h");
    for absent in ["doca_dev.h", "doca_bitfield.h"] {
        if flow.contains(absent) {
            problems.push(format!(
                "doca_flow.h: includes {absent}, which 3.3's does not"
            ));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

fn build_and_run(lang: Lang, section: &str, rdma: Rdma) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let exe = dir
        .path()
        .join(format!("includes_{section}_{}", lang.x.replace('+', "x")));
    let define = format!("-DSECTION_{section}");
    let extra: Vec<&str> = if section == "ALL" {
        Vec::new()
    } else {
        vec![define.as_str()]
    };
    cc::compile(
        lang,
        &cc::c_source("header_includes.c"),
        &exe,
        Output::Executable,
        rdma,
        &extra,
    )?;
    let out = Command::new(&exe)
        .output()
        .map_err(|e| format!("run {}: {e}", exe.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} exited with {:?}: a check on what the headers bring in failed\n{}",
            exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn run_all(rdma: Rdma) {
    let mut failures = Vec::new();
    let mut passed = 0;
    for section in SECTIONS {
        for lang in [C, CXX] {
            match build_and_run(lang, section, rdma) {
                Ok(()) => passed += 1,
                Err(e) => failures.push(format!("--- {section} as {}:\n{e}", lang.x)),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} builds failed:\n{}",
        failures.len(),
        2 * SECTIONS.len(),
        failures.join("\n")
    );
    assert_eq!(passed, 2 * SECTIONS.len());
}

/// With the consumers' flags (`-I include`): the installed rdma-core headers where there are
/// any, the compat subset otherwise.
#[test]
fn programs_relying_on_the_headers_includes_build_and_run() {
    run_all(Rdma::Plain);
}

/// With doca-soft's compat subset in place of rdma-core's headers, as on a machine without
/// rdma-core.
#[test]
fn programs_relying_on_the_headers_includes_build_with_the_compat_subset() {
    run_all(Rdma::CompatOnly);
}

/// The test program really depends on the headers: without any DOCA header, the section
/// that uses `htons` does not compile.
#[test]
fn the_include_program_fails_without_the_doca_header() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("no_doca.c");
    std::fs::write(&src, "int main(void) { return htons(1) == 256 ? 0 : 1; }\n").unwrap();
    let err = cc::compile(
        C,
        &src,
        &dir.path().join("no_doca"),
        Output::Executable,
        Rdma::Plain,
        &[],
    )
    .expect_err("htons compiled without any header");
    assert!(err.contains("htons"), "{err}");
}
