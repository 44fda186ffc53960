//! UCX discovery and bindings (owned by the UROM implementation).
//!
//! UROM needs UCX >= 1.15 (Debian 12 ships 1.13). We use the pinned `libucx-cu13` wheel that
//! `scripts/setup` installs, found through `UCX_HOME` (set by `.tools/env.sh`) or pkg-config.
//!
//! Linking decision: dynamic, against the wheel's `libucp.so`/`libucs.so`, with an rpath to
//! the wheel's lib directory on every binary this crate builds (the daemon and the worker), so
//! they never pick Debian's same-soname 1.13 libraries. The wheel's static archives were not
//! used: UCX loads its transport modules relative to `libucs.so`, which a static build breaks,
//! and the cdylib needs position-independent objects. Other binaries that link doca-soft
//! (tests, examples) get the same rpath through the `DEP_DOCA_SOFT_UCX_LIBDIR` metadata or
//! `LD_LIBRARY_PATH` from `.tools/env.sh`.

use std::path::{Path, PathBuf};

fn ucx_home() -> Option<PathBuf> {
    println!("cargo:rerun-if-env-changed=UCX_HOME");
    if let Ok(h) = std::env::var("UCX_HOME") {
        return Some(PathBuf::from(h));
    }
    let lib = pkg_config::Config::new()
        .atleast_version("1.15")
        .cargo_metadata(false)
        .probe("ucx")
        .ok()?;
    lib.include_paths
        .first()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
}

/// Links UCX and writes `$OUT_DIR/ucx_bindings.rs`.
pub fn build_ucx() {
    let home = ucx_home().unwrap_or_else(|| {
        panic!("UCX >= 1.15 not found: run scripts/setup, then `. .tools/env.sh` (sets UCX_HOME)")
    });
    let include = home.join("include");
    let libdir = home.join("lib");
    println!("cargo:rustc-link-search=native={}", libdir.display());
    println!("cargo:rustc-link-lib=dylib=ucp");
    println!("cargo:rustc-link-lib=dylib=ucs");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", libdir.display());
    println!("cargo:ucx_libdir={}", libdir.display());
    println!("cargo:ucx_include={}", include.display());

    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let header = out.join("ucx_wrapper.h");
    std::fs::write(&header, "#include <ucp/api/ucp.h>\n").expect("write ucx wrapper");
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg(format!("-I{}", include.display()))
        .allowlist_function("ucp_(init_version|cleanup|config_read|config_release|config_modify|get_version_string)")
        .allowlist_function("ucp_worker_(create|destroy|progress|get_efd|arm|wait|signal|query|get_address|release_address)")
        .allowlist_function("ucp_listener_(create|destroy|query|reject)")
        .allowlist_function("ucp_conn_request_query")
        .allowlist_function("ucp_ep_(create|close_nbx)")
        .allowlist_function("ucp_stream_(send_nbx|recv_data_nb|data_release)")
        .allowlist_function("ucp_tag_(send_nbx|recv_nbx|recv_request_test)")
        .allowlist_function("ucp_request_(check_status|free|cancel)")
        .allowlist_function("ucp_mem_(map|unmap)")
        .allowlist_function("ucs_status_string")
        .allowlist_type("ucp_.*")
        .allowlist_type("ucs_cpu_set_t")
        .allowlist_var("UCP_.*")
        .allowlist_var("UCS_.*")
        .generate_comments(false)
        .layout_tests(false)
        .derive_default(true)
        .generate()
        .expect("bindgen over ucp/api/ucp.h");
    bindings
        .write_to_file(out.join("ucx_bindings.rs"))
        .expect("write ucx bindings");
}
