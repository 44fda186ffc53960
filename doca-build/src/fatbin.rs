//! The one recipe: `.cu` files to a fatbin.
//!
//! SASS for sm_80 and sm_90 and PTX for compute_80: Ampere and Hopper run the machine code
//! directly, and any newer GPU JIT-compiles the PTX. Built with nvcc 13.0, whose PTX the
//! CUDA 13.0 driver accepts (PTX from a newer nvcc is refused by an older driver, while
//! SASS is not). Several sources compile as one translation unit, so kernels may share
//! `static` device helpers and headers are parsed once.

use crate::arch::gencode_args;
use crate::older_driver::{self, OlderDriver};
use crate::{nvcc, Error, Nvcc};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The `links` metadata variables carrying the DOCA header directories, in the order
/// [`Fatbin::doca_includes`] reads them: `doca-sys`'s (`links = "doca"`) and the facade
/// `doca`'s (`links = "doca-rs"`, which passes doca-sys's on). Cargo hands such metadata only
/// to the build scripts of *direct* dependants, so a crate depending on `doca` alone finds
/// the headers through the second.
pub const DOCA_INCLUDE_VARS: [&str; 2] = ["DEP_DOCA_INCLUDE", "DEP_DOCA_RS_INCLUDE"];

/// The DOCA header directories from the first of [`DOCA_INCLUDE_VARS`] that is set.
fn doca_include_dirs(env: &dyn Fn(&str) -> Option<OsString>) -> Option<Vec<PathBuf>> {
    DOCA_INCLUDE_VARS
        .iter()
        .find_map(|v| env(v).filter(|v| !v.is_empty()))
        .map(|v| std::env::split_paths(&v).collect())
}

/// Flags every compile uses besides the architectures, includes and output.
const BASE_FLAGS: [&str; 4] = ["-fatbin", "-std=c++17", "-O3", "-Xcompiler=-Wall"];

/// Compiles `.cu` files into one fatbin with the recipe of this crate.
///
/// In a build script the defaults do the right thing: the fatbin goes to `OUT_DIR`, and
/// `cargo:rerun-if-changed` / `rerun-if-env-changed` lines are printed for the sources,
/// the include directories and the variables that choose nvcc.
#[derive(Clone, Debug, Default)]
pub struct Fatbin {
    sources: Vec<PathBuf>,
    includes: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    flags: Vec<OsString>,
    nvcc: Option<Nvcc>,
    out_dir: Option<PathBuf>,
    cargo_metadata: Option<bool>,
    doca_includes_missing: bool,
    docs_rs: Option<bool>,
    /// `None`: read the environment; `Some(None)`: the default recipe even if it is set.
    older_driver: Option<Option<OlderDriver>>,
}

impl Fatbin {
    /// An empty recipe (add sources with [`Fatbin::file`]).
    pub fn new() -> Fatbin {
        Fatbin::default()
    }

    /// Adds one source file.
    pub fn file(mut self, path: impl Into<PathBuf>) -> Fatbin {
        self.sources.push(path.into());
        self
    }

    /// Adds source files.
    pub fn files<P: Into<PathBuf>>(mut self, paths: impl IntoIterator<Item = P>) -> Fatbin {
        self.sources.extend(paths.into_iter().map(Into::into));
        self
    }

    /// Adds every `*.cu` file directly inside `dir`, in name order (a reproducible build).
    pub fn dir(mut self, dir: impl AsRef<Path>) -> Result<Fatbin, Error> {
        let dir = dir.as_ref();
        let io = |source| Error::Io {
            what: format!("listing {}", dir.display()),
            source,
        };
        let mut found = Vec::new();
        for e in std::fs::read_dir(dir).map_err(io)? {
            let p = e.map_err(io)?.path();
            if p.extension().is_some_and(|x| x == "cu") {
                found.push(p);
            }
        }
        found.sort();
        self.sources.extend(found);
        Ok(self)
    }

    /// Adds an include directory (`-I`).
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Fatbin {
        self.includes.push(dir.into());
        self
    }

    /// Adds the DOCA header directories (host and device headers) of the backend the build
    /// binds. Cargo passes them to the build scripts of packages that depend directly on
    /// `doca` (`DEP_DOCA_RS_INCLUDE`) or on `doca-sys` (`DEP_DOCA_INCLUDE`); see
    /// [`DOCA_INCLUDE_VARS`]. Without either [`Fatbin::compile`] fails, saying to add `doca`
    /// to `[dependencies]`.
    pub fn doca_includes(mut self) -> Fatbin {
        match doca_include_dirs(&|k| std::env::var_os(k)) {
            Some(dirs) => self.includes.extend(dirs),
            None => self.doca_includes_missing = true,
        }
        self
    }

    /// Defines a preprocessor macro (`-DNAME` or `-DNAME=VALUE`).
    pub fn define(mut self, name: &str, value: Option<&str>) -> Fatbin {
        self.defines
            .push((name.to_string(), value.map(ToString::to_string)));
        self
    }

    /// Adds one more nvcc argument after the recipe's own (e.g. `-lineinfo`, `-rdc=true`).
    pub fn flag(mut self, arg: impl Into<OsString>) -> Fatbin {
        self.flags.push(arg.into());
        self
    }

    /// Uses this nvcc instead of searching for one.
    pub fn nvcc(mut self, nvcc: Nvcc) -> Fatbin {
        self.nvcc = Some(nvcc);
        self
    }

    /// Where the fatbin is written (default: `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Fatbin {
        self.out_dir = Some(dir.into());
        self
    }

    /// Whether to print `cargo:` lines (default: when `OUT_DIR` is set, i.e. in a build
    /// script).
    pub fn cargo_metadata(mut self, on: bool) -> Fatbin {
        self.cargo_metadata = Some(on);
        self
    }

    /// Whether this is a documentation build on docs.rs (default: whether `DOCS_RS` is set),
    /// where [`Fatbin::compile`] writes an empty fatbin instead of running nvcc.
    pub fn docs_rs(mut self, on: bool) -> Fatbin {
        self.docs_rs = Some(on);
        self
    }

    /// Builds a fatbin that drivers older than nvcc's also load (`Some`), or the default
    /// recipe whatever the environment says (`None`); see [`crate::older_driver`]. Without
    /// this call [`Fatbin::compile`] follows `DOCA_BUILD_PTX_ISA` and `DOCA_BUILD_PTXAS`.
    pub fn older_driver(mut self, od: Option<OlderDriver>) -> Fatbin {
        self.older_driver = Some(od);
        self
    }

    /// The nvcc arguments that compile `unit` into `out` (what [`Fatbin::compile`] runs).
    pub fn args(&self, unit: &Path, out: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = BASE_FLAGS.iter().map(OsString::from).collect();
        a.extend(gencode_args().into_iter().map(OsString::from));
        a.extend(self.unit_args(unit, out));
        a
    }

    /// nvcc's arguments writing the PTX of `arch` for `unit` into `out` (the first step of
    /// the older-driver recipe), for drivers of `od`'s ISA.
    fn ptx_args(&self, arch: u32, od: &OlderDriver, unit: &Path, out: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["-ptx".into(), format!("-arch=compute_{arch}").into()];
        a.extend(BASE_FLAGS[1..].iter().map(OsString::from));
        if let Some(v) = od.isa().cuda_target() {
            a.push(format!("-D{}={v}", older_driver::CUDA_TARGET_MACRO).into());
        }
        a.extend(self.unit_args(unit, out));
        a
    }

    /// Includes, defines, extra flags, then `-o out unit`.
    fn unit_args(&self, unit: &Path, out: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        for inc in &self.includes {
            let mut s = OsString::from("-I");
            s.push(inc);
            a.push(s);
        }
        for (name, value) in &self.defines {
            a.push(match value {
                Some(v) => format!("-D{name}={v}").into(),
                None => format!("-D{name}").into(),
            });
        }
        a.extend(self.flags.iter().cloned());
        a.push("-o".into());
        a.push(out.into());
        a.push(unit.into());
        a
    }

    /// Compiles the sources into `<out_dir>/<name>.fatbin` and returns that path.
    ///
    /// Several sources become one translation unit (`<out_dir>/<name>.cu`, which
    /// `#include`s each of them).
    ///
    /// Under `DOCS_RS` (docs.rs has no nvcc) nothing is compiled: the fatbin is written
    /// empty, so that `include_bytes!` of it compiles and the crate's documentation builds.
    /// Loading an empty fatbin fails; no documentation build runs it.
    pub fn compile(&self, name: &str) -> Result<PathBuf, Error> {
        let metadata = self
            .cargo_metadata
            .unwrap_or_else(|| std::env::var_os("OUT_DIR").is_some());
        if metadata {
            nvcc::rerun_if_env_changed();
            let vars = [
                older_driver::PTX_ISA_VAR,
                older_driver::PTXAS_VAR,
                "DOCS_RS",
            ];
            for var in DOCA_INCLUDE_VARS.iter().chain(&vars) {
                println!("cargo:rerun-if-env-changed={var}");
            }
            for p in self.sources.iter().chain(&self.includes) {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        let out = out_dir.join(format!("{name}.fatbin"));
        let docs_rs = self
            .docs_rs
            .unwrap_or_else(|| std::env::var_os("DOCS_RS").is_some());
        if docs_rs {
            std::fs::write(&out, []).map_err(|source| Error::Io {
                what: format!("writing the empty fatbin {}", out.display()),
                source,
            })?;
            return Ok(out);
        }
        if self.doca_includes_missing {
            return Err(Error::NoDocaIncludes);
        }
        if self.sources.is_empty() {
            return Err(Error::NoSources);
        }
        let nvcc = match &self.nvcc {
            Some(n) => n.clone(),
            None => Nvcc::find()?,
        };
        let unit = match self.sources.as_slice() {
            [one] => one.clone(),
            many => write_unit(&out_dir.join(format!("{name}.cu")), many)?,
        };
        let od = match &self.older_driver {
            Some(chosen) => chosen.clone(),
            None => OlderDriver::from_env()?,
        };
        match od {
            None => {
                older_driver::run(nvcc.path(), &self.args(&unit, &out)).map_err(Error::into_nvcc)?
            }
            Some(od) => {
                let ptx_args = |arch, ptx: &Path| self.ptx_args(arch, &od, &unit, ptx);
                older_driver::compile(&nvcc, &ptx_args, &od, &out_dir, name, &out)?
            }
        }
        Ok(out)
    }
}

/// Writes a translation unit that includes every source (absolute paths, so the unit may
/// live anywhere).
fn write_unit(unit: &Path, sources: &[PathBuf]) -> Result<PathBuf, Error> {
    let mut text =
        String::from("// Generated by doca-build: every source, one translation unit.\n");
    for s in sources {
        let abs = std::path::absolute(s).map_err(|source| Error::Io {
            what: format!("resolving {}", s.display()),
            source,
        })?;
        text.push_str(&format!("#include \"{}\"\n", abs.display()));
    }
    std::fs::write(unit, text).map_err(|source| Error::Io {
        what: format!("writing {}", unit.display()),
        source,
    })?;
    Ok(unit.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recipe_is_sass_80_and_90_plus_ptx_80() {
        assert_eq!(
            gencode_args(),
            [
                "-gencode",
                "arch=compute_80,code=sm_80",
                "-gencode",
                "arch=compute_90,code=sm_90",
                "-gencode",
                "arch=compute_80,code=compute_80",
            ]
        );
    }

    #[test]
    fn args_put_flags_includes_defines_then_output_and_unit() {
        let f = Fatbin::new()
            .include("/inc/a")
            .define("N", Some("4"))
            .define("FLAG", None)
            .flag("-lineinfo");
        let a: Vec<String> = f
            .args(Path::new("k.cu"), Path::new("/out/k.fatbin"))
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        assert_eq!(&a[..4], BASE_FLAGS);
        assert_eq!(&a[4..10], gencode_args());
        assert_eq!(
            &a[10..],
            [
                "-I/inc/a",
                "-DN=4",
                "-DFLAG",
                "-lineinfo",
                "-o",
                "/out/k.fatbin",
                "k.cu"
            ]
        );
    }

    #[test]
    fn missing_inputs_are_clear_errors() {
        let t = tempfile::tempdir().unwrap();
        let no_src = Fatbin::new()
            .out_dir(t.path())
            .cargo_metadata(false)
            .docs_rs(false);
        assert!(matches!(no_src.compile("x"), Err(Error::NoSources)));
        let no_out = Fatbin::new().file("k.cu").cargo_metadata(false);
        if std::env::var_os("OUT_DIR").is_none() {
            assert!(matches!(no_out.compile("x"), Err(Error::NoOutDir)));
        }
        let mut no_doca = Fatbin::new()
            .file("k.cu")
            .out_dir(t.path())
            .cargo_metadata(false)
            .docs_rs(false);
        no_doca.doca_includes_missing = true;
        let e = no_doca.compile("x").unwrap_err();
        assert!(e.to_string().contains("`doca`"), "{e}");
    }

    #[test]
    fn doca_headers_come_from_doca_sys_or_else_the_facade() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let both = env(&[
            ("DEP_DOCA_INCLUDE", "/sys/a:/sys/b"),
            ("DEP_DOCA_RS_INCLUDE", "/facade"),
        ]);
        assert_eq!(
            doca_include_dirs(&both),
            Some(vec![PathBuf::from("/sys/a"), PathBuf::from("/sys/b")])
        );
        let facade = env(&[("DEP_DOCA_INCLUDE", ""), ("DEP_DOCA_RS_INCLUDE", "/facade")]);
        assert_eq!(
            doca_include_dirs(&facade),
            Some(vec![PathBuf::from("/facade")])
        );
        assert_eq!(doca_include_dirs(&env(&[])), None);
    }

    #[test]
    fn docs_rs_writes_an_empty_fatbin_without_nvcc() {
        let t = tempfile::tempdir().unwrap();
        // No sources, no DOCA headers and an nvcc that does not exist: none is needed.
        let mut f = Fatbin::new()
            .nvcc(Nvcc::at("/nonexistent/nvcc"))
            .out_dir(t.path())
            .cargo_metadata(false)
            .docs_rs(true);
        f.doca_includes_missing = true;
        let out = f.compile("k").unwrap();
        assert_eq!(out, t.path().join("k.fatbin"));
        assert_eq!(std::fs::read(&out).unwrap(), b"");
    }

    #[test]
    fn dir_lists_cu_files_in_name_order() {
        let t = tempfile::tempdir().unwrap();
        for n in ["b.cu", "a.cu", "c.cuh", "notes.txt"] {
            std::fs::write(t.path().join(n), "").unwrap();
        }
        let f = Fatbin::new().dir(t.path()).unwrap();
        assert_eq!(f.sources, [t.path().join("a.cu"), t.path().join("b.cu")]);
        assert!(Fatbin::new().dir(t.path().join("none")).is_err());
    }

    #[test]
    fn several_sources_become_one_unit_including_each() {
        let t = tempfile::tempdir().unwrap();
        let unit = write_unit(
            &t.path().join("all.cu"),
            &[t.path().join("a.cu"), t.path().join("b.cu")],
        )
        .unwrap();
        let text = std::fs::read_to_string(unit).unwrap();
        let includes: Vec<&str> = text.lines().filter(|l| l.starts_with("#include")).collect();
        assert_eq!(
            includes,
            [
                format!("#include \"{}\"", t.path().join("a.cu").display()),
                format!("#include \"{}\"", t.path().join("b.cu").display()),
            ]
        );
    }
}
