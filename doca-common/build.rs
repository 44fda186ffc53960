//! Build script of doca-common: reads what doca-sys bound (its `links` metadata) and sets
//! * `doca_backend = "soft" | "sdk"`, the backend;
//! * `doca_pe_notification` when the bound `doca_pe.h` declares the progress engine's
//!   notification calls (`doca_pe_get_notification_handle`, `doca_pe_request_notification`,
//!   `doca_pe_clear_notification`): then futures wait on the engine's event descriptor
//!   instead of polling with a backoff (see `ProgressWaiter`).

const NOTIFICATION_CALLS: [&str; 3] = [
    "doca_pe_get_notification_handle",
    "doca_pe_request_notification",
    "doca_pe_clear_notification",
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(doca_backend, values(\"soft\", \"sdk\"))");
    println!("cargo::rustc-check-cfg=cfg(doca_pe_notification)");
    println!("cargo:rerun-if-env-changed=DEP_DOCA_BACKEND");
    println!("cargo:rerun-if-env-changed=DEP_DOCA_INCLUDE");
    if let Ok(backend) = std::env::var("DEP_DOCA_BACKEND") {
        println!("cargo:rustc-cfg=doca_backend=\"{backend}\"");
    }
    let Some(dirs) = std::env::var_os("DEP_DOCA_INCLUDE") else {
        return;
    };
    for dir in std::env::split_paths(&dirs) {
        let header = dir.join("doca_pe.h");
        let Ok(text) = std::fs::read_to_string(&header) else {
            continue;
        };
        println!("cargo:rerun-if-changed={}", header.display());
        if NOTIFICATION_CALLS.iter().all(|f| declares(&text, f)) {
            println!("cargo:rustc-cfg=doca_pe_notification");
        }
        return;
    }
}

/// Whether `text` declares function `name` (the name followed by an opening parenthesis).
fn declares(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let after = text[at + name.len()..].trim_start();
        let before = text[..at].chars().next_back();
        after.starts_with('(') && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}
