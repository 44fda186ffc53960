//! The SDK backend: pkg-config first (also in /opt/mellanox/doca), then the
//! DOCA_INCLUDE_DIR / DOCA_LIB_DIR overrides.

use crate::Found;
use std::path::PathBuf;

/// The SDK's pkg-config modules this crate binds.
const MODULES: &[&str] = &[
    "doca-common",
    "doca-gpunetio",
    "doca-eth",
    "doca-flow",
    "doca-urom",
];

pub fn probe() -> Found {
    for var in ["DOCA_INCLUDE_DIR", "DOCA_LIB_DIR", "PKG_CONFIG_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    if let Some(inc) = std::env::var_os("DOCA_INCLUDE_DIR") {
        return from_overrides(PathBuf::from(inc));
    }
    add_mellanox_pkgconfig_dir();
    let mut include_dirs = Vec::new();
    let mut version = None;
    for m in MODULES {
        match pkg_config::Config::new().cargo_metadata(true).probe(m) {
            Ok(lib) => {
                include_dirs.extend(lib.include_paths);
                version.get_or_insert(lib.version);
            }
            // UROM and Flow are optional parts of an SDK install; the rest is not.
            Err(e) if *m == "doca-urom" || *m == "doca-flow" => {
                println!("cargo:warning=doca-sys: {m} not found ({e}); its bindings are skipped");
            }
            Err(e) => panic!(
                "doca-sys (feature `sdk`): the DOCA SDK module `{m}` was not found by \
                 pkg-config.\n{e}\nInstall the DOCA SDK, add its pkgconfig directory to \
                 PKG_CONFIG_PATH, or set DOCA_INCLUDE_DIR and DOCA_LIB_DIR. To build \
                 without the SDK, use the default feature `soft`."
            ),
        }
    }
    include_dirs.dedup();
    let v = version.unwrap_or_default();
    let api_version = v.split('.').take(2).collect::<Vec<_>>().join(".");
    Found {
        include_dirs,
        api_version,
    }
}

/// DOCA installs its .pc files under /opt/mellanox/doca/lib/<arch>-linux-gnu/pkgconfig.
fn add_mellanox_pkgconfig_dir() {
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let dir = format!("/opt/mellanox/doca/lib/{arch}-linux-gnu/pkgconfig");
    if std::path::Path::new(&dir).is_dir() {
        let cur = std::env::var("PKG_CONFIG_PATH").unwrap_or_default();
        let new = if cur.is_empty() {
            dir
        } else {
            format!("{cur}:{dir}")
        };
        std::env::set_var("PKG_CONFIG_PATH", new);
    }
}

/// DOCA_INCLUDE_DIR (and DOCA_LIB_DIR for linking) given by hand.
fn from_overrides(include: PathBuf) -> Found {
    assert!(
        include.join("doca_error.h").is_file(),
        "doca-sys (feature `sdk`): DOCA_INCLUDE_DIR={} holds no doca_error.h",
        include.display()
    );
    if let Some(lib) = std::env::var_os("DOCA_LIB_DIR") {
        println!(
            "cargo:rustc-link-search=native={}",
            PathBuf::from(lib).display()
        );
    }
    // The libraries of the modules in MODULES, which hold what wrapper.h binds (doca_argp
    // is neither bound nor linked: no crate here calls it).
    for l in ["doca_common", "doca_gpunetio", "doca_eth", "doca_flow"] {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
    if include.join("doca_urom.h").is_file() {
        println!("cargo:rustc-link-lib=dylib=doca_urom");
    }
    let api_version = version_from_header(&include);
    Found {
        include_dirs: vec![include],
        api_version,
    }
}

/// "major.minor" read from doca_version.h, or "3.3" when the header says nothing.
fn version_from_header(include: &std::path::Path) -> String {
    let text = std::fs::read_to_string(include.join("doca_version.h")).unwrap_or_default();
    let grab = |key: &str| {
        text.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("#define ")?
                    .strip_prefix(key)?
                    .split_whitespace()
                    .next()
                    .map(str::to_owned)
            })
            .map(|v| v.trim_matches(|c: char| !c.is_ascii_digit()).to_owned())
    };
    match (grab("DOCA_VER_MAJOR"), grab("DOCA_VER_MINOR")) {
        (Some(a), Some(b)) => format!("{a}.{b}"),
        _ => match (grab("DOCA_VERSION_MAJOR"), grab("DOCA_VERSION_MINOR")) {
            (Some(a), Some(b)) => format!("{a}.{b}"),
            _ => "3.3".into(),
        },
    }
}
