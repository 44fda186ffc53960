//! pkg-config files for `libdoca_soft.so` (the C library, built by the doca-soft-capi
//! package from this crate), named like the DOCA SDK's (`doca-common`,
//! `doca-gpunetio`, ...), so C programs written for DOCA build against this runtime with
//! `pkg-config --cflags --libs doca-gpunetio`.
//!
//! The templates live in `pkgconfig/*.pc.in`; [`write_pc_files`] fills in the library and
//! include directories. Used by the `doca_soft_pkgconfig` binary and by the C smoke test.

use std::io;
use std::path::{Path, PathBuf};

/// DOCA API version the headers describe (`DOCA_VERSION_STRING` in `doca_version.h`).
pub const DOCA_API_VERSION: &str = "3.3.0";

/// (package name, template text) for every `.pc` file written.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "doca-common",
        include_str!("../pkgconfig/doca-common.pc.in"),
    ),
    (
        "doca-gpunetio",
        include_str!("../pkgconfig/doca-gpunetio.pc.in"),
    ),
    ("doca-eth", include_str!("../pkgconfig/doca-eth.pc.in")),
    ("doca-flow", include_str!("../pkgconfig/doca-flow.pc.in")),
    ("doca-urom", include_str!("../pkgconfig/doca-urom.pc.in")),
    ("doca-argp", include_str!("../pkgconfig/doca-argp.pc.in")),
];

/// The crate's C header directory (`include/`).
pub fn default_include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// pkg-config splits values on whitespace and expands `$`: such paths cannot be written
/// unquoted, so they are refused rather than written broken.
fn check_path(what: &str, path: &Path) -> io::Result<String> {
    let text = path.to_str().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} is not UTF-8: {path:?}"),
        )
    })?;
    if text.is_empty()
        || text
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '$' | '"' | '\'' | '\\'))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} {text:?} is empty or has characters pkg-config cannot take unquoted"),
        ));
    }
    Ok(text.to_owned())
}

/// One template with its placeholders replaced.
pub fn render(template: &str, libdir: &Path, includedir: &Path) -> io::Result<String> {
    let libdir = check_path("library directory", libdir)?;
    let includedir = check_path("include directory", includedir)?;
    Ok(template
        .replace("@LIBDIR@", &libdir)
        .replace("@INCLUDEDIR@", &includedir)
        .replace("@VERSION@", DOCA_API_VERSION))
}

/// Writes every `.pc` file into `out` (created if missing); returns the paths written.
pub fn write_pc_files(out: &Path, libdir: &Path, includedir: &Path) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out)?;
    let mut written = Vec::with_capacity(TEMPLATES.len());
    for (name, template) in TEMPLATES {
        let path = out.join(format!("{name}.pc"));
        std::fs::write(&path, render(template, libdir, includedir)?)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_fills_every_placeholder() {
        for (name, template) in TEMPLATES {
            let text = render(template, Path::new("/opt/lib"), Path::new("/opt/inc")).unwrap();
            assert!(!text.contains('@'), "{name}: placeholder left:\n{text}");
            assert!(text.contains("libdir=/opt/lib\n"), "{name}");
            assert!(text.contains("includedir=/opt/inc\n"), "{name}");
            assert!(text.contains(&format!("Name: {name}\n")), "{name}");
            assert!(text.contains("Libs: -L${libdir} -ldoca_soft"), "{name}");
            assert!(
                text.contains("Cflags: -I${includedir} -DDOCA_ALLOW_EXPERIMENTAL_API"),
                "{name}"
            );
            assert_eq!(
                text.contains("Requires: ucx"),
                *name == "doca-urom",
                "{name}"
            );
        }
    }

    #[test]
    fn render_refuses_paths_pkg_config_would_split() {
        let err = render(TEMPLATES[0].1, Path::new("/my libs"), Path::new("/inc")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let err = render(TEMPLATES[0].1, Path::new("/lib"), Path::new("/$HOME/inc")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn write_pc_files_writes_one_file_per_package() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pc");
        let written = write_pc_files(&out, Path::new("/l"), Path::new("/i")).unwrap();
        assert_eq!(written.len(), TEMPLATES.len());
        for (name, _) in TEMPLATES {
            let text = std::fs::read_to_string(out.join(format!("{name}.pc"))).unwrap();
            assert!(text.contains(&format!("Name: {name}")));
        }
    }
}
