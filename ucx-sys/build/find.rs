//! Finding UCX.
//!
//! The pinned UCX (the `libucx-cu13` wheel that `scripts/setup` installs) is found through
//! `UCX_HOME` (`.tools/env.sh` sets it); otherwise pkg-config's `ucx` module. Either way the
//! headers must be at least [`MIN_VERSION`]: Debian 12 ships 1.13, too old for DOCA-style
//! plugins.
//!
//! Linking is dynamic (`libucp.so`, `libucs.so`): UCX loads its transport modules relative
//! to `libucs.so`, which a static build breaks. Binaries must find the same UCX at run time
//! (an rpath to `DEP_UCP_LIBDIR`, or `LD_LIBRARY_PATH`); `check_version` in the crate catches
//! an older one loaded anyway.

use std::path::{Path, PathBuf};

/// Oldest UCX accepted (major, minor).
pub const MIN_VERSION: (u32, u32) = (1, 15);

/// Where UCX is and which version its headers are.
pub struct Ucx {
    pub include: PathBuf,
    pub libdir: PathBuf,
    pub version: (u32, u32),
}

/// `UCP_API_MAJOR`/`UCP_API_MINOR` of `include/ucp/api/ucp_version.h`.
fn header_version(include: &Path) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string(include.join("ucp/api/ucp_version.h")).ok()?;
    let define = |name: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name))
                .then(|| w.next()?.parse().ok())
                .flatten()
        })
    };
    Some((define("UCP_API_MAJOR")?, define("UCP_API_MINOR")?))
}

fn from_home(home: &Path) -> Ucx {
    let include = home.join("include");
    let version = header_version(&include).unwrap_or_else(|| {
        panic!(
            "UCX_HOME={}: no ucp/api/ucp_version.h under include/ (not a UCX installation)",
            home.display()
        )
    });
    Ucx {
        include,
        libdir: home.join("lib"),
        version,
    }
}

fn from_pkg_config() -> Option<Ucx> {
    let min = format!("{}.{}", MIN_VERSION.0, MIN_VERSION.1);
    let lib = pkg_config::Config::new()
        .atleast_version(&min)
        .cargo_metadata(false)
        .probe("ucx")
        .ok()?;
    let include = lib
        .include_paths
        .iter()
        .find(|p| p.join("ucp/api/ucp.h").is_file())?
        .clone();
    let libdir = lib
        .link_paths
        .iter()
        .find(|p| p.join("libucp.so").exists())
        .cloned()
        .unwrap_or_else(|| include.parent().unwrap_or(&include).join("lib"));
    let version = header_version(&include)?;
    Some(Ucx {
        include,
        libdir,
        version,
    })
}

/// Finds UCX or stops the build with what to do.
pub fn find_ucx() -> Ucx {
    println!("cargo:rerun-if-env-changed=UCX_HOME");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let ucx = match std::env::var_os("UCX_HOME") {
        Some(h) => from_home(Path::new(&h)),
        None => from_pkg_config().unwrap_or_else(|| {
            panic!(
                "UCX >= {}.{} not found: run scripts/setup, then `. .tools/env.sh` (sets UCX_HOME), \
                 or point PKG_CONFIG_PATH at a ucx.pc",
                MIN_VERSION.0, MIN_VERSION.1
            )
        }),
    };
    if ucx.version < MIN_VERSION {
        panic!(
            "UCX {}.{} at {} is too old: UROM needs >= {}.{} (run scripts/setup for the pinned one)",
            ucx.version.0,
            ucx.version.1,
            ucx.include.display(),
            MIN_VERSION.0,
            MIN_VERSION.1
        );
    }
    ucx
}

/// Link lines for this crate and metadata for dependants.
pub fn emit_link(ucx: &Ucx) {
    println!("cargo:rustc-link-search=native={}", ucx.libdir.display());
    println!("cargo:rustc-link-lib=dylib=ucp");
    println!("cargo:rustc-link-lib=dylib=ucs");
    // This crate's own test binaries find the same UCX at run time.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", ucx.libdir.display());
    println!("cargo:include={}", ucx.include.display());
    println!("cargo:libdir={}", ucx.libdir.display());
    println!("cargo:version={}.{}", ucx.version.0, ucx.version.1);
    println!("cargo:min_version={}.{}", MIN_VERSION.0, MIN_VERSION.1);
    // One source for the floor: the crate's `MIN_VERSION` is generated from this one.
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    std::fs::write(
        out.join("min_version.rs"),
        format!(
            "/// The oldest UCX the build accepts (the build script refuses older headers).\n\
             pub const MIN_VERSION: Version = Version {{ major: {}, minor: {}, release: 0 }};\n",
            MIN_VERSION.0, MIN_VERSION.1
        ),
    )
    .expect("write min_version.rs");
}
