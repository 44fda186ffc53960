//! Build script of the facade `doca`:
//!
//! * the backend doca-sys chose (its `links` metadata `DEP_DOCA_BACKEND`) becomes the cfg
//!   `doca_backend = "soft" | "sdk"`, so the examples read the software runtime's queue
//!   counters only when it is the backend and build unchanged against an installed SDK;
//! * doca-sys's metadata is passed on as this crate's (`links = "doca-rs"`): cargo gives
//!   `links` metadata only to direct dependants, so a crate that depends on `doca` alone
//!   reads the DOCA header directories as `DEP_DOCA_RS_INCLUDE` (doca-build's
//!   `Fatbin::doca_includes` looks there), and `DEP_DOCA_RS_BACKEND`,
//!   `DEP_DOCA_RS_API_VERSION` as doca-sys's dependants read them.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(doca_backend, values(\"soft\", \"sdk\"))");
    for (var, key) in [
        ("DEP_DOCA_INCLUDE", "include"),
        ("DEP_DOCA_BACKEND", "backend"),
        ("DEP_DOCA_API_VERSION", "api_version"),
    ] {
        println!("cargo:rerun-if-env-changed={var}");
        if let Ok(value) = std::env::var(var) {
            println!("cargo:{key}={value}");
        }
    }
    if let Ok(backend) = std::env::var("DEP_DOCA_BACKEND") {
        println!("cargo:rustc-cfg=doca_backend=\"{backend}\"");
    }
}
