//! Where nvcc is looked for, in order: `NVCC`, `CUDA_HOME/bin`, `PATH`, then the pip wheel
//! location that scripts/setup installs (`<repo>/.tools/py/nvidia/cu13/bin`).

use std::path::{Path, PathBuf};

/// The nvcc to use, or the list of places tried.
pub fn find(manifest_dir: &Path) -> Result<PathBuf, Vec<String>> {
    for var in ["NVCC", "CUDA_HOME", "PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let mut tried = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("NVCC") {
        candidates.push(PathBuf::from(p));
    }
    if let Some(h) = std::env::var_os("CUDA_HOME") {
        candidates.push(PathBuf::from(h).join("bin/nvcc"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("nvcc")));
    }
    candidates.push(manifest_dir.join("../.tools/py/nvidia/cu13/bin/nvcc"));
    candidates.push(PathBuf::from("/usr/local/cuda/bin/nvcc"));
    for c in candidates {
        if c.is_file() {
            return Ok(c);
        }
        tried.push(c.display().to_string());
    }
    Err(tried)
}
