//! The texts the build stops with when it finds no usable UCX. Plain functions of what was
//! found, so a test of the crate can check them (`tests/build_messages.rs` includes this
//! file).

/// Oldest UCX accepted (major, minor).
pub const MIN_VERSION: (u32, u32) = (1, 15);

/// How to point the build at a UCX, for every message below.
pub fn how_to_point() -> String {
    format!(
        "Point the build at a UCX >= {}.{} with one of:\n\
         \x20 * UCX_HOME=<prefix> (the directory holding include/ucp/api/ucp.h and lib/libucp.so);\n\
         \x20 * pkg-config: PKG_CONFIG_PATH=<prefix>/lib/pkgconfig (its ucx.pc);\n\
         \x20 * HPC-X: source hpcx-init.sh and run hpcx_load (sets HPCX_UCX_DIR, which this build reads);\n\
         \x20 * Spack: UCX_HOME=$(spack location -i ucx), or `spack load ucx` (sets PKG_CONFIG_PATH);\n\
         \x20 * in the doca-rs repository: scripts/setup installs the pinned UCX 1.22 and `. .tools/env.sh` sets UCX_HOME.",
        MIN_VERSION.0, MIN_VERSION.1
    )
}

/// No UCX with headers of a recent enough version: `findings` lists what was looked at
/// and what was there (one line each).
pub fn not_found(findings: &[String]) -> String {
    let mut s = format!(
        "ucx-sys: no UCX >= {}.{} with headers was found.\nLooked at:\n",
        MIN_VERSION.0, MIN_VERSION.1
    );
    for f in findings {
        s.push_str("  - ");
        s.push_str(f);
        s.push('\n');
    }
    s.push_str(&how_to_point());
    s
}

/// A UCX was found but is older than [`MIN_VERSION`].
pub fn too_old(version: (u32, u32), include: &str, via: &str) -> String {
    format!(
        "ucx-sys: UCX {}.{} found through {via} (headers in {include}) is too old: UROM's plugins \
         need UCX >= {}.{} (Debian 12 ships 1.13).\n{}",
        version.0,
        version.1,
        MIN_VERSION.0,
        MIN_VERSION.1,
        how_to_point()
    )
}
