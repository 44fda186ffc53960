//! Build script of the facade `doca`: the one thing it needs is the backend doca-sys chose
//! (its `links` metadata `DEP_DOCA_BACKEND`) as the cfg `doca_backend = "soft" | "sdk"`, so
//! the examples read the software runtime's queue counters only when it is the backend and
//! build unchanged against an installed SDK.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(doca_backend, values(\"soft\", \"sdk\"))");
    println!("cargo:rerun-if-env-changed=DEP_DOCA_BACKEND");
    if let Ok(backend) = std::env::var("DEP_DOCA_BACKEND") {
        println!("cargo:rustc-cfg=doca_backend=\"{backend}\"");
    }
}
