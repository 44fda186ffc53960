//! Every `kernels/*.cu` into `$OUT_DIR/kernels.fatbin` with doca-build's recipe. The DOCA
//! header directories come from `doca`'s `links` metadata (`DEP_DOCA_RS_INCLUDE`): depending
//! on `doca` is enough, no direct dependency on doca-sys is needed.

fn main() {
    println!("cargo:rerun-if-changed=kernels");
    if let Err(e) = doca_build::Fatbin::new()
        .dir("kernels")
        .and_then(|f| f.doca_includes().compile("kernels"))
    {
        // The message says what is missing (nvcc, the DOCA headers) and how to get it.
        panic!("own-kernel: {e}");
    }
}
