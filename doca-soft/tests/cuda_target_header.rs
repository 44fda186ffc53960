//! `doca_soft_cuda_target.h`: which CUDA release device code may use. With
//! `DOCA_BUILD_CUDA_TARGET` (doca-build's older-driver recipe) the target wins; outside nvcc
//! no feature is assumed. Checked with static assertions compiled as C and C++.

use std::path::Path;
use std::process::Command;

/// Compiles `body` (after including the header) with `compiler` and `defines`; the
/// compiler's output on failure.
fn compile(compiler: &str, lang: &str, defines: &[&str], body: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("t.c");
    std::fs::write(
        &src,
        format!("#include <doca_soft_cuda_target.h>\n{body}\n"),
    )
    .unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let out = Command::new(compiler)
        .args(["-x", lang, "-fsyntax-only", "-Wall", "-Wextra", "-Werror"])
        .arg(if lang == "c++" {
            "-std=c++17"
        } else {
            "-std=c11"
        })
        .arg("-I")
        .arg(&include)
        .args(defines)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("{compiler}: {e}"));
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn the_build_target_wins_and_plain_compilers_get_no_feature() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[],
            "_Static_assert(!DOCA_SOFT_CUDA_AT_LEAST(12, 0), \"no nvcc\");",
        ),
        (
            &["-DDOCA_BUILD_CUDA_TARGET=12000"],
            "_Static_assert(DOCA_SOFT_CUDA_AT_LEAST(12, 0), \"12.0\");\n\
             _Static_assert(!DOCA_SOFT_CUDA_AT_LEAST(12, 2), \"not 12.2\");",
        ),
        (
            &["-DDOCA_BUILD_CUDA_TARGET=12020"],
            "_Static_assert(DOCA_SOFT_CUDA_AT_LEAST(12, 2), \"12.2\");\n\
             _Static_assert(!DOCA_SOFT_CUDA_AT_LEAST(12, 8), \"not 12.8\");",
        ),
        // nvcc's own version, when no target is given (the macros nvcc defines).
        (
            &["-D__CUDACC_VER_MAJOR__=13", "-D__CUDACC_VER_MINOR__=0"],
            "_Static_assert(DOCA_SOFT_CUDA_AT_LEAST(12, 8), \"13.0 has 12.8\");\n\
             _Static_assert(!DOCA_SOFT_CUDA_AT_LEAST(13, 1), \"not 13.1\");",
        ),
        // A target below nvcc's version wins over it.
        (
            &[
                "-D__CUDACC_VER_MAJOR__=13",
                "-D__CUDACC_VER_MINOR__=0",
                "-DDOCA_BUILD_CUDA_TARGET=12000",
            ],
            "_Static_assert(!DOCA_SOFT_CUDA_AT_LEAST(12, 2), \"target 12.0 wins\");",
        ),
    ];
    for (defines, body) in cases {
        for (compiler, lang) in [("gcc", "c"), ("g++", "c++")] {
            let body = if lang == "c++" {
                body.replace("_Static_assert", "static_assert")
            } else {
                body.to_string()
            };
            compile(compiler, lang, defines, &body)
                .unwrap_or_else(|e| panic!("{compiler} {defines:?}:\n{e}"));
        }
    }
    // The assertions can fail: a wrong claim is a compile error.
    assert!(compile(
        "gcc",
        "c",
        &["-DDOCA_BUILD_CUDA_TARGET=12000"],
        "_Static_assert(DOCA_SOFT_CUDA_AT_LEAST(12, 2), \"wrong\");"
    )
    .is_err());
}
