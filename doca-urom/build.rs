//! Build script of doca-urom: turns the backend doca-sys chose (its `links` metadata
//! `DEP_DOCA_BACKEND`) into the cfg `doca_backend = "soft" | "sdk"`, which decides the
//! thread-safety claims of the handles (see the crate docs, "Thread safety").

fn main() {
    println!("cargo::rustc-check-cfg=cfg(doca_backend, values(\"soft\", \"sdk\"))");
    println!("cargo:rerun-if-env-changed=DEP_DOCA_BACKEND");
    if let Ok(backend) = std::env::var("DEP_DOCA_BACKEND") {
        println!("cargo:rustc-cfg=doca_backend=\"{backend}\"");
    }
}
