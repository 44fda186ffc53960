//! Build script of doca-gpunetio: turns the backend doca-sys chose (its `links` metadata
//! `DEP_DOCA_BACKEND`) into the cfg `doca_backend = "soft" | "sdk"`, so the `soft` module
//! (doca-soft extensions) exists exactly when the software runtime is the backend.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(doca_backend, values(\"soft\", \"sdk\"))");
    println!("cargo:rerun-if-env-changed=DEP_DOCA_BACKEND");
    if let Ok(backend) = std::env::var("DEP_DOCA_BACKEND") {
        println!("cargo:rustc-cfg=doca_backend=\"{backend}\"");
    }
}
