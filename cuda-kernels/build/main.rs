//! Build script of cuda-kernels: find nvcc, compile every `kernels/*.cu` (as one
//! translation unit) into a fatbin with SASS for sm_80 and sm_90 and PTX for compute_80,
//! and leave it in OUT_DIR for `include_bytes!`.

mod find_nvcc;

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-changed=build");

    let nvcc = find_nvcc::find(&manifest).unwrap_or_else(|tried| {
        panic!(
            "cuda-kernels: nvcc was not found (tried: {}).\n\
             Run scripts/setup from the repository root: it installs the pinned nvcc 13.0 \
             wheels into .tools/ (no GPU needed). Or set NVCC=/path/to/nvcc or CUDA_HOME.",
            tried.join(", ")
        )
    });

    let kernels = list_kernels(&manifest.join("kernels"));
    let unit = out.join("all_kernels.cu");
    let mut text = String::from("// Generated: every kernel source, one translation unit.\n");
    for k in &kernels {
        text.push_str(&format!("#include \"{}\"\n", k.display()));
    }
    std::fs::write(&unit, text).expect("write all_kernels.cu");

    let fatbin = out.join("kernels.fatbin");
    let mut cmd = Command::new(&nvcc);
    cmd.arg("-fatbin")
        .arg("-std=c++17")
        .arg("-O3")
        .arg("-Xcompiler=-Wall")
        .args(["-gencode", "arch=compute_80,code=sm_80"])
        .args(["-gencode", "arch=compute_90,code=sm_90"])
        .args(["-gencode", "arch=compute_80,code=compute_80"])
        .arg("-o")
        .arg(&fatbin)
        .arg(&unit);
    for inc in doca_include_dirs() {
        // The kernels include the device headers: rebuild when they change.
        println!("cargo:rerun-if-changed={}", inc.display());
        cmd.arg(format!("-I{}", inc.display()));
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cuda-kernels: running {}: {e}", nvcc.display()));
    assert!(
        status.success(),
        "cuda-kernels: nvcc failed ({status}) compiling {}",
        unit.display()
    );
    println!("cargo:rustc-env=CUDA_KERNELS_NVCC={}", nvcc.display());
}

/// `kernels/*.cu`, sorted so the build is reproducible.
fn list_kernels(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("cuda-kernels/kernels exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    v.sort();
    v
}

/// The DOCA header directories doca-sys publishes (`links = "doca"` metadata).
fn doca_include_dirs() -> Vec<PathBuf> {
    println!("cargo:rerun-if-env-changed=DEP_DOCA_INCLUDE");
    std::env::var_os("DEP_DOCA_INCLUDE")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default()
}
