//! Finding UCX at build time.
//!
//! Looked at in order, the first with headers wins: `UCX_HOME`, `HPCX_UCX_DIR` (HPC-X's
//! own variable), then pkg-config's `ucx`. The headers must be at least
//! [`MIN_VERSION`](crate::message::MIN_VERSION): Debian 12 ships 1.13, too old for
//! DOCA-style plugins. When nothing fits, the build stops naming every place it looked,
//! the version it found there (the system's run-time library too, read by loading it), and
//! how to point it at another UCX (`message.rs`).
//!
//! The library directory found here is where the program loads UCX from at run time (see
//! `src/sys/loader.rs`); on targets without the loader it is linked the usual way (`-lucp
//! -lucs`, an rpath for this crate's own binaries).

use crate::message::{self, MIN_VERSION};
use std::path::{Path, PathBuf};

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

fn from_prefix(var: &str, home: &Path) -> Result<Ucx, String> {
    let include = home.join("include");
    let version = header_version(&include).ok_or_else(|| {
        format!(
            "{var}={}: no include/ucp/api/ucp_version.h there (not a UCX installation prefix)",
            home.display()
        )
    })?;
    let libdir = ["lib", "lib64"]
        .iter()
        .map(|d| home.join(d))
        .find(|d| d.join("libucp.so").exists() || d.join("libucp.so.0").exists())
        .unwrap_or_else(|| home.join("lib"));
    Ok(Ucx {
        include,
        libdir,
        version,
    })
}

fn from_pkg_config() -> Result<Ucx, String> {
    let lib = pkg_config::Config::new()
        .cargo_metadata(false)
        .probe("ucx")
        .map_err(|_| {
            format!(
                "pkg-config: no ucx.pc (PKG_CONFIG_PATH={})",
                std::env::var("PKG_CONFIG_PATH").unwrap_or_else(|_| "<unset>".into())
            )
        })?;
    let include = lib
        .include_paths
        .iter()
        .find(|p| p.join("ucp/api/ucp.h").is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "pkg-config: ucx {} names no directory holding ucp/api/ucp.h",
                lib.version
            )
        })?;
    let libdir = lib
        .link_paths
        .iter()
        .find(|p| p.join("libucp.so").exists())
        .cloned()
        .unwrap_or_else(|| include.parent().unwrap_or(&include).join("lib"));
    let version = header_version(&include).ok_or_else(|| {
        format!(
            "pkg-config: ucx {}: no ucp/api/ucp_version.h in {}",
            lib.version,
            include.display()
        )
    })?;
    Ok(Ucx {
        include,
        libdir,
        version,
    })
}

/// The version of the system's run-time `libucp.so.0`, read by loading it (a machine can
/// have the library without its headers: Debian's `libucx0`).
fn system_runtime() -> Option<String> {
    // SAFETY: loading the system's UCX runs its initialisers, as any program using it does;
    // only its version function is called, then it is unloaded.
    unsafe {
        let h = libc::dlopen(c"libucp.so.0".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if h.is_null() {
            return None;
        }
        let f = libc::dlsym(h, c"ucp_get_version".as_ptr());
        let mut text = String::from("a run-time libucp.so.0 without headers");
        if !f.is_null() {
            let get: unsafe extern "C" fn(*mut u32, *mut u32, *mut u32) = std::mem::transmute(f);
            let (mut a, mut b, mut c) = (0, 0, 0);
            get(&mut a, &mut b, &mut c);
            text = format!("UCX {a}.{b}.{c}: {text}");
        }
        let mut info: libc::Dl_info = std::mem::zeroed();
        if !f.is_null() && libc::dladdr(f, &mut info) != 0 && !info.dli_fname.is_null() {
            let path = std::ffi::CStr::from_ptr(info.dli_fname).to_string_lossy();
            text = format!("{text} ({path})");
        }
        libc::dlclose(h);
        Some(format!("the system library search: {text}"))
    }
}

/// Finds UCX or stops the build saying what it found and what to do.
pub fn find_ucx() -> Ucx {
    println!("cargo:rerun-if-env-changed=UCX_HOME");
    println!("cargo:rerun-if-env-changed=HPCX_UCX_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let mut findings = Vec::new();
    let mut found = None;
    for var in ["UCX_HOME", "HPCX_UCX_DIR"] {
        match std::env::var_os(var) {
            Some(h) => match from_prefix(var, Path::new(&h)) {
                Ok(u) => {
                    found = Some((u, format!("{var}={}", Path::new(&h).display())));
                    break;
                }
                Err(e) => findings.push(e),
            },
            None => findings.push(format!("{var}: not set")),
        }
    }
    if found.is_none() {
        match from_pkg_config() {
            Ok(u) => found = Some((u, "pkg-config's ucx".to_string())),
            Err(e) => findings.push(e),
        }
    }
    let Some((ucx, via)) = found else {
        findings.push(
            system_runtime()
                .unwrap_or_else(|| "the system library search: no libucp.so.0".to_string()),
        );
        panic!("{}", message::not_found(&findings));
    };
    if ucx.version < MIN_VERSION {
        panic!(
            "{}",
            message::too_old(ucx.version, &ucx.include.display().to_string(), &via)
        );
    }
    ucx
}

/// Whether this target loads UCX at run time (`src/sys/loader.rs`) instead of linking it.
pub fn loads_at_run_time() -> bool {
    std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64")
        && std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
}

/// Link lines (targets without the loader), the loader's recorded directory, and metadata
/// for dependants.
pub fn emit_link(ucx: &Ucx) {
    if !loads_at_run_time() {
        println!("cargo:rustc-link-search=native={}", ucx.libdir.display());
        println!("cargo:rustc-link-lib=dylib=ucp");
        println!("cargo:rustc-link-lib=dylib=ucs");
        // This crate's own test binaries find the same UCX at run time.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", ucx.libdir.display());
    }
    // Absolute, so the loader finds it from any working directory.
    let libdir = std::fs::canonicalize(&ucx.libdir).unwrap_or_else(|_| ucx.libdir.clone());
    write_build_libdir(&libdir.display().to_string());
    println!("cargo:include={}", ucx.include.display());
    println!("cargo:libdir={}", libdir.display());
    println!("cargo:version={}.{}", ucx.version.0, ucx.version.1);
    write_min_version();
}

/// What a documentation build (`DOCS_RS`) writes instead of [`emit_link`]: the generated
/// constants, with no library directory (the loader never runs in a documentation build),
/// and no link lines or `include`/`libdir` metadata (dependants skip UCX there too).
pub fn emit_unlinked() {
    write_build_libdir("");
    write_min_version();
}

fn write_build_libdir(libdir: &str) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    std::fs::write(
        out.join("build_libdir.rs"),
        format!(
            "/// The UCX library directory found at build time.\n\
             pub const BUILD_LIBDIR: &str = {libdir:?};\n"
        ),
    )
    .expect("write build_libdir.rs");
}

fn write_min_version() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    println!("cargo:min_version={}.{}", MIN_VERSION.0, MIN_VERSION.1);
    // One source for the floor: the crate's `MIN_VERSION` is generated from this one.
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
