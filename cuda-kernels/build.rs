//! Build script of cuda-kernels: every `kernels/*.cu`, as one translation unit, into
//! `$OUT_DIR/kernels.fatbin` (embedded by `src/lib.rs`) with doca-build's recipe: SASS for
//! sm_80 and sm_90, PTX for compute_80, the DOCA headers doca-sys publishes. Under `DOCS_RS`
//! (docs.rs has no nvcc) doca-build writes an empty fatbin instead, so the documentation
//! builds; `FATBIN` is then empty and `Kernels::load` fails.

use std::path::Path;

fn main() {
    let kernels = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    // The whole folder: headers shared by the kernels (sample_frames.cuh) count too.
    println!("cargo:rerun-if-changed={}", kernels.display());
    let built = doca_build::Fatbin::new()
        .dir(&kernels)
        .and_then(|f| f.doca_includes().compile("kernels"));
    if let Err(e) = built {
        panic!("cuda-kernels: {e}");
    }
}
