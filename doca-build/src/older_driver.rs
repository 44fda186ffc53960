//! Fatbins that CUDA 12 drivers load too: PTX lowered to an older ISA and assembled by an
//! older ptxas.
//!
//! A driver JIT-compiles only PTX whose ISA version it knows, and nvcc 13.0 writes ISA 9.0,
//! which no CUDA 12 driver knows. With an [`OlderDriver`] the recipe changes to:
//!
//! 1. nvcc 13.0 compiles the sources to PTX, once per architecture (compute_80, compute_90);
//! 2. the `.version` line of each is set to the ISA asked for (8.2 runs on CUDA 12.2 and
//!    newer drivers);
//! 3. the older ptxas (CUDA 12.2's, from the pinned wheel `scripts/setup` installs into
//!    `.tools/py12`) assembles SASS for sm_80 and sm_90 from them. ptxas checks every
//!    instruction against the declared ISA, so a module that builds is PTX of that ISA, not
//!    a relabelled newer one; an instruction the ISA lacks fails the build with ptxas's
//!    message;
//! 4. nvcc 13.0's `fatbinary` packs the two cubins and the compute_80 PTX, as the default
//!    recipe does, but leaves the PTX uncompressed (by default CUDA 13 compresses it with
//!    zstd, which an older driver need not read).
//!
//! In a build script, set `DOCA_BUILD_PTX_ISA=8.2` (and `DOCA_BUILD_PTXAS` when ptxas is
//! not the pinned wheel's), or call [`crate::Fatbin::older_driver`].
//!
//! Headers that choose code by nvcc's version (`__CUDACC_VER_MAJOR__`) would still see
//! 13.0, so nvcc also gets `-DDOCA_BUILD_CUDA_TARGET=<1000 * major + 10 * minor>` of the
//! first CUDA release whose driver knows the ISA (12000 for 8.0, 12020 for 8.2); doca-rs's
//! device headers read it in place of nvcc's version (the relaxed MMIO store of CUDA 12.2,
//! the acquire/release fences of CUDA 12.8), so every kernel doca-rs ships builds down to
//! ISA 8.0, i.e. for every CUDA 12 driver.

use crate::nvcc::{tools_paths, Env};
use crate::{Error, Nvcc};
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

/// The variable naming the PTX ISA to lower to (`8.2`); unset or empty: the default recipe.
pub const PTX_ISA_VAR: &str = "DOCA_BUILD_PTX_ISA";

/// The variable naming the ptxas that assembles the lowered PTX.
pub const PTXAS_VAR: &str = "DOCA_BUILD_PTXAS";

/// The macro the recipe defines: `1000 * major + 10 * minor` of the first CUDA release
/// whose driver JIT-compiles the ISA (12020 for 8.2), so that headers choose code that
/// release has (doca-rs's device headers read it instead of nvcc's own version).
pub const CUDA_TARGET_MACRO: &str = "DOCA_BUILD_CUDA_TARGET";

/// Where `scripts/setup` puts CUDA 12.2's ptxas, relative to `.tools`.
const WHEEL_PTXAS: &str = "py12/nvidia/cuda_nvcc/bin/ptxas";

/// A PTX ISA version (`.version MAJOR.MINOR` at the top of a PTX file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxIsa {
    /// Major version (8 for CUDA 12, 9 for CUDA 13).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

impl PtxIsa {
    /// Reads `"8.2"`.
    pub fn parse(text: &str) -> Result<PtxIsa, Error> {
        let bad = || Error::PtxIsaInvalid(text.to_string());
        let (major, minor) = text.trim().split_once('.').ok_or_else(bad)?;
        Ok(PtxIsa {
            major: major.parse().map_err(|_| bad())?,
            minor: minor.parse().map_err(|_| bad())?,
        })
    }

    /// The first CUDA release whose driver JIT-compiles this ISA (`"12.2"` for 8.2), from
    /// the ISA's release notes; `None` for versions this table does not know.
    pub fn cuda_release(self) -> Option<&'static str> {
        Some(match (self.major, self.minor) {
            (8, 0) => "12.0",
            (8, 1) => "12.1",
            (8, 2) => "12.2",
            (8, 3) => "12.3",
            (8, 4) => "12.4",
            (8, 5) => "12.5",
            (8, 6) => "12.7",
            (8, 7) => "12.8",
            (8, 8) => "12.9",
            (9, 0) => "13.0",
            _ => return None,
        })
    }

    /// The value of [`CUDA_TARGET_MACRO`] for this ISA (`None` for ISAs [`PtxIsa::cuda_release`]
    /// does not know).
    pub fn cuda_target(self) -> Option<u32> {
        let (major, minor) = self.cuda_release()?.split_once('.')?;
        Some(major.parse::<u32>().ok()? * 1000 + minor.parse::<u32>().ok()? * 10)
    }
}

impl fmt::Display for PtxIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The older driver a fatbin must also load on: the ISA to lower the PTX to and the ptxas
/// (of that CUDA release or one close to it) that assembles it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OlderDriver {
    isa: PtxIsa,
    ptxas: PathBuf,
}

impl OlderDriver {
    /// Lowers to `isa`, assembling with the ptxas at `ptxas` (not checked until it runs).
    pub fn new(isa: PtxIsa, ptxas: impl Into<PathBuf>) -> OlderDriver {
        OlderDriver {
            isa,
            ptxas: ptxas.into(),
        }
    }

    /// From [`PTX_ISA_VAR`] and [`PTXAS_VAR`]: `None` when the ISA variable is unset or
    /// empty. Without `DOCA_BUILD_PTXAS` the pinned wheel's ptxas is looked for where the
    /// nvcc search looks for the nvcc wheel (`$DOCA_RS_TOOLS/py12/...`, `.tools/py12/...`).
    pub fn from_env() -> Result<Option<OlderDriver>, Error> {
        let env = |k: &str| std::env::var_os(k);
        from_env_of(&env, &|| tools_paths(&env, WHEEL_PTXAS))
    }

    /// The ISA the PTX is lowered to.
    pub fn isa(&self) -> PtxIsa {
        self.isa
    }

    /// The ptxas that assembles it.
    pub fn ptxas(&self) -> &Path {
        &self.ptxas
    }
}

/// [`OlderDriver::from_env`] over any environment and list of wheel locations (tests pass
/// their own).
fn from_env_of(
    env: Env<'_>,
    wheel_ptxas: &dyn Fn() -> Vec<PathBuf>,
) -> Result<Option<OlderDriver>, Error> {
    let Some(isa) = env(PTX_ISA_VAR).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let isa = PtxIsa::parse(&isa.to_string_lossy())?;
    if let Some(p) = env(PTXAS_VAR).filter(|v| !v.is_empty()) {
        return Ok(Some(OlderDriver::new(isa, p)));
    }
    let tried = wheel_ptxas();
    match tried.iter().find(|p| p.is_file()) {
        Some(p) => Ok(Some(OlderDriver::new(isa, p))),
        None => Err(Error::PtxasNotFound { tried }),
    }
}

/// `ptx` with its `.version` line set to `isa`. Fails when the line is missing or already
/// older than `isa` (raising an ISA would claim instructions nvcc did not choose).
pub(crate) fn lower_ptx(ptx: &str, isa: PtxIsa) -> Result<String, Error> {
    let (start, line) = ptx
        .match_indices(".version ")
        .find(|(i, _)| *i == 0 || ptx.as_bytes()[i - 1] == b'\n')
        .map(|(i, _)| (i, ptx[i..].lines().next().unwrap_or("")))
        .ok_or(Error::PtxVersion {
            found: None,
            wanted: isa,
        })?;
    let written = PtxIsa::parse(line.trim_start_matches(".version ")).ok();
    match written {
        Some(w) if w >= isa => {
            let mut out = String::with_capacity(ptx.len());
            out.push_str(&ptx[..start]);
            out.push_str(&format!(".version {isa}"));
            out.push_str(&ptx[start + line.len()..]);
            Ok(out)
        }
        _ => Err(Error::PtxVersion {
            found: Some(line.to_string()),
            wanted: isa,
        }),
    }
}

/// The architectures whose PTX nvcc writes: each SASS architecture's (ptxas assembles
/// it), plus the one that goes into the fatbin as PTX.
fn ptx_archs() -> Vec<u32> {
    let mut v = crate::arch::SASS_ARCHS.to_vec();
    if !v.contains(&crate::arch::PTX_ARCH) {
        v.push(crate::arch::PTX_ARCH);
    }
    v
}

/// Runs `program args`, turning a failure into [`Error::Tool`].
pub(crate) fn run(program: &Path, args: &[OsString]) -> Result<(), Error> {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .map_err(|source| Error::Spawn {
            program: program.to_path_buf(),
            source,
        })?;
    if out.status.success() {
        return Ok(());
    }
    let command: Vec<String> = std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Err(Error::Tool {
        command: command.join(" "),
        status: out.status,
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        ),
    })
}

/// The older-driver recipe: `ptx_args(arch, ptx_out)` are nvcc's arguments writing the PTX
/// of one architecture; the intermediate files stay in `work` (named after `name`) for
/// inspection; the fatbin goes to `out`.
pub(crate) fn compile(
    nvcc: &Nvcc,
    ptx_args: &dyn Fn(u32, &Path) -> Vec<OsString>,
    od: &OlderDriver,
    work: &Path,
    name: &str,
    out: &Path,
) -> Result<(), Error> {
    let mut images: Vec<OsString> = Vec::new();
    for arch in ptx_archs() {
        let nvcc_ptx = work.join(format!("{name}.compute_{arch}.nvcc.ptx"));
        run(nvcc.path(), &ptx_args(arch, &nvcc_ptx)).map_err(Error::into_nvcc)?;
        let text = read(&nvcc_ptx)?;
        let ptx = work.join(format!("{name}.compute_{arch}.ptx"));
        write(&ptx, &lower_ptx(&text, od.isa)?)?;
        if arch == crate::arch::PTX_ARCH {
            images.push(image("ptx", arch, &ptx));
        }
        if crate::arch::SASS_ARCHS.contains(&arch) {
            let cubin = work.join(format!("{name}.sm_{arch}.cubin"));
            let args: Vec<OsString> = vec![
                format!("-arch=sm_{arch}").into(),
                "-m64".into(),
                ptx.clone().into(),
                "-o".into(),
                cubin.clone().into(),
            ];
            run(&od.ptxas, &args).map_err(|e| e.into_ptxas(od.isa))?;
            images.push(image("elf", arch, &cubin));
        }
    }
    let fatbinary = nvcc.path().with_file_name("fatbinary");
    let mut args: Vec<OsString> = vec![
        {
            let mut s = OsString::from("--create=");
            s.push(out);
            s
        },
        "-64".into(),
        // Uncompressed: CUDA 13's fatbinary compresses PTX by default (zstd), which an
        // older driver need not be able to read; SASS is never compressed by default.
        "--compress=false".into(),
        "--cicc-cmdline=-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1".into(),
    ];
    args.extend(images);
    run(&fatbinary, &args)
}

/// One `--image3=` argument of fatbinary.
fn image(kind: &str, arch: u32, file: &Path) -> OsString {
    let mut s = OsString::from(format!("--image3=kind={kind},sm={arch},file="));
    s.push(file);
    s
}

fn read(p: &Path) -> Result<String, Error> {
    std::fs::read_to_string(p).map_err(|source| Error::Io {
        what: format!("reading {}", p.display()),
        source,
    })
}

fn write(p: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(p, text).map_err(|source| Error::Io {
        what: format!("writing {}", p.display()),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const PTX: &str = "//\n// Generated\n//\n\n.version 9.0\n.target sm_80\n.address_size 64\n";

    #[test]
    fn isa_parses_prints_and_names_its_first_cuda() {
        let isa = PtxIsa::parse("8.2").unwrap();
        assert_eq!(isa, PtxIsa { major: 8, minor: 2 });
        assert_eq!(isa.to_string(), "8.2");
        assert_eq!(isa.cuda_release(), Some("12.2"));
        assert_eq!(PtxIsa::parse("9.0").unwrap().cuda_release(), Some("13.0"));
        assert_eq!(PtxIsa::parse("7.8").unwrap().cuda_release(), None);
        for bad in ["", "8", "8.x", "eight.two", "8.2.1"] {
            let e = PtxIsa::parse(bad).unwrap_err();
            assert!(matches!(e, Error::PtxIsaInvalid(_)), "{bad:?}: {e}");
            assert!(e.to_string().contains(PTX_ISA_VAR), "{e}");
        }
    }

    #[test]
    fn the_cuda_target_is_the_isa_s_first_release_as_a_number() {
        assert_eq!(PtxIsa::parse("8.0").unwrap().cuda_target(), Some(12000));
        assert_eq!(PtxIsa::parse("8.2").unwrap().cuda_target(), Some(12020));
        assert_eq!(PtxIsa::parse("9.0").unwrap().cuda_target(), Some(13000));
        assert_eq!(PtxIsa::parse("7.0").unwrap().cuda_target(), None);
    }

    #[test]
    fn lowering_rewrites_only_the_version_line() {
        let low = lower_ptx(PTX, PtxIsa::parse("8.2").unwrap()).unwrap();
        assert_eq!(low, PTX.replace(".version 9.0", ".version 8.2"));
        // The same ISA is a no-op.
        assert_eq!(lower_ptx(PTX, PtxIsa::parse("9.0").unwrap()).unwrap(), PTX);
    }

    #[test]
    fn raising_the_isa_or_a_missing_version_line_is_refused() {
        let e = lower_ptx(PTX, PtxIsa::parse("9.1").unwrap()).unwrap_err();
        assert!(e.to_string().contains(".version 9.0"), "{e}");
        let e = lower_ptx(".target sm_80\n", PtxIsa::parse("8.2").unwrap()).unwrap_err();
        assert!(matches!(e, Error::PtxVersion { found: None, .. }), "{e}");
        // A `.version` inside a comment line is not the directive.
        let e = lower_ptx("// .version 9.0\n", PtxIsa::parse("8.2").unwrap()).unwrap_err();
        assert!(matches!(e, Error::PtxVersion { found: None, .. }), "{e}");
    }

    fn env_of(vars: Vec<(&'static str, OsString)>) -> impl Fn(&str) -> Option<OsString> {
        let m: HashMap<&str, OsString> = vars.into_iter().collect();
        move |k| m.get(k).cloned()
    }

    /// No wheel anywhere.
    fn no_wheel() -> Vec<PathBuf> {
        vec![PathBuf::from("/nonexistent/.tools").join(WHEEL_PTXAS)]
    }

    #[test]
    fn from_env_is_none_without_the_isa_and_takes_an_explicit_ptxas() {
        assert_eq!(from_env_of(&env_of(vec![]), &no_wheel).unwrap(), None);
        assert_eq!(
            from_env_of(&env_of(vec![(PTX_ISA_VAR, "".into())]), &no_wheel).unwrap(),
            None
        );
        let od = from_env_of(
            &env_of(vec![
                (PTX_ISA_VAR, "8.4".into()),
                (PTXAS_VAR, "/opt/cuda-12.4/bin/ptxas".into()),
            ]),
            &no_wheel,
        )
        .unwrap()
        .unwrap();
        assert_eq!(od.isa(), PtxIsa::parse("8.4").unwrap());
        assert_eq!(od.ptxas(), Path::new("/opt/cuda-12.4/bin/ptxas"));
        let e = from_env_of(&env_of(vec![(PTX_ISA_VAR, "new".into())]), &no_wheel).unwrap_err();
        assert!(matches!(e, Error::PtxIsaInvalid(_)), "{e}");
    }

    #[test]
    fn from_env_takes_the_first_wheel_ptxas_or_lists_where_it_looked() {
        let t = tempfile::tempdir().unwrap();
        let places = vec![
            t.path().join("a").join(WHEEL_PTXAS),
            t.path().join("b").join(WHEEL_PTXAS),
        ];
        let listed = || places.clone();
        let env = env_of(vec![(PTX_ISA_VAR, "8.2".into())]);
        let text = from_env_of(&env, &listed).unwrap_err().to_string();
        for p in &places {
            assert!(text.contains(&p.display().to_string()), "{text}");
        }
        assert!(
            text.contains(PTXAS_VAR) && text.contains("scripts/setup"),
            "{text}"
        );
        std::fs::create_dir_all(places[1].parent().unwrap()).unwrap();
        std::fs::write(&places[1], "").unwrap();
        let od = from_env_of(&env, &listed).unwrap().unwrap();
        assert_eq!(od.ptxas(), places[1]);
    }
}
