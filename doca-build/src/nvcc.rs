//! Finding nvcc.
//!
//! Looked for in this order, first match wins:
//!
//! 1. `NVCC`: the path of nvcc itself (authoritative: a wrong value is an error, not a
//!    reason to look elsewhere);
//! 2. `CUDA_HOME`: `$CUDA_HOME/bin/nvcc`;
//! 3. every directory of `PATH`;
//! 4. the pinned pip wheels that doca-rs's `scripts/setup` installs:
//!    `$DOCA_RS_TOOLS/py/nvidia/cu13/bin/nvcc`, then `.tools/py/nvidia/cu13/bin/nvcc` in the
//!    package being built (`CARGO_MANIFEST_DIR`), the current directory, or any folder
//!    above them;
//! 5. `/usr/local/cuda/bin/nvcc`.

use crate::Error;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variables that change which nvcc [`Nvcc::find`] picks (a build script
/// reruns when one changes: see [`rerun_if_env_changed`]).
pub const ENV_VARS: [&str; 4] = ["NVCC", "CUDA_HOME", "PATH", "DOCA_RS_TOOLS"];

/// Where the pip wheel puts nvcc, relative to the `--target` folder `scripts/setup` uses.
const WHEEL_BIN: &str = "py/nvidia/cu13/bin/nvcc";

/// Which rule of the search order found an nvcc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// The `NVCC` environment variable.
    NvccVar,
    /// `$CUDA_HOME/bin`.
    CudaHome,
    /// A directory of `PATH`.
    Path,
    /// The pip wheels `scripts/setup` installs (`.tools/py/nvidia/cu13/bin`).
    Wheel,
    /// `/usr/local/cuda/bin`.
    UsrLocalCuda,
    /// Given by the caller ([`Nvcc::at`]).
    Given,
}

/// An nvcc executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nvcc {
    path: PathBuf,
    origin: Origin,
}

impl Nvcc {
    /// Finds nvcc (search order in the [module docs](self)). The error lists every place
    /// tried and says how to install nvcc.
    pub fn find() -> Result<Nvcc, Error> {
        let env = |name: &str| std::env::var_os(name);
        Search::of_this_process(&env).find()
    }

    /// An nvcc at a path the caller chose (not checked until it runs).
    pub fn at(path: impl Into<PathBuf>) -> Nvcc {
        Nvcc {
            path: path.into(),
            origin: Origin::Given,
        }
    }

    /// The executable.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Which rule found it.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// A `Command` running this nvcc, with no arguments yet.
    pub fn command(&self) -> Command {
        Command::new(&self.path)
    }

    /// The release nvcc reports (`"13.0"` from `Cuda compilation tools, release 13.0,
    /// V13.0.88`).
    pub fn release(&self) -> Result<String, Error> {
        let out = self
            .command()
            .arg("--version")
            .output()
            .map_err(|source| Error::Spawn {
                program: self.path.clone(),
                source,
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        parse_release(&text).ok_or_else(|| Error::Nvcc {
            command: format!("{} --version", self.path.display()),
            status: out.status,
            output: text.into_owned(),
        })
    }
}

/// Reads one environment variable (a parameter so that tests need not change the process
/// environment).
pub(crate) type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// The inputs of a search: the environment, the folders whose ancestors may hold
/// `.tools`, and the last resort.
struct Search<'a> {
    env: Env<'a>,
    roots: Vec<PathBuf>,
    last_resort: PathBuf,
}

impl<'a> Search<'a> {
    /// The package being built (`CARGO_MANIFEST_DIR`), the current directory and this
    /// crate's own source (a checkout of doca-rs building its own crates).
    fn of_this_process(env: Env<'a>) -> Search<'a> {
        let mut roots: Vec<PathBuf> = Vec::new();
        roots.extend(env("CARGO_MANIFEST_DIR").map(PathBuf::from));
        roots.extend(std::env::current_dir().ok());
        roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
        Search {
            env,
            roots,
            last_resort: PathBuf::from("/usr/local/cuda/bin/nvcc"),
        }
    }

    fn find(&self) -> Result<Nvcc, Error> {
        if let Some(p) = (self.env)("NVCC").filter(|p| !p.is_empty()) {
            let path = PathBuf::from(p);
            return if path.is_file() {
                Ok(Nvcc {
                    path,
                    origin: Origin::NvccVar,
                })
            } else {
                Err(Error::NvccVarInvalid(path))
            };
        }
        let mut tried = Vec::new();
        for (path, origin) in self.candidates() {
            if path.is_file() {
                return Ok(Nvcc { path, origin });
            }
            tried.push(path);
        }
        Err(Error::NvccNotFound { tried })
    }

    /// Rules 2 to 5 of the search order, in order.
    fn candidates(&self) -> Vec<(PathBuf, Origin)> {
        let mut v = Vec::new();
        if let Some(h) = (self.env)("CUDA_HOME").filter(|h| !h.is_empty()) {
            v.push((PathBuf::from(h).join("bin/nvcc"), Origin::CudaHome));
        }
        if let Some(path) = (self.env)("PATH") {
            v.extend(std::env::split_paths(&path).map(|d| (d.join("nvcc"), Origin::Path)));
        }
        for p in self.tools_paths(WHEEL_BIN) {
            if !v.iter().any(|(q, _)| *q == p) {
                v.push((p, Origin::Wheel));
            }
        }
        v.push((self.last_resort.clone(), Origin::UsrLocalCuda));
        v
    }

    /// Where a file `rel` of the pinned wheels may be: `$DOCA_RS_TOOLS/rel`, then
    /// `.tools/rel` in or above one of the roots.
    fn tools_paths(&self, rel: &str) -> Vec<PathBuf> {
        let mut v = Vec::new();
        if let Some(t) = (self.env)("DOCA_RS_TOOLS").filter(|t| !t.is_empty()) {
            v.push(PathBuf::from(t).join(rel));
        }
        for root in &self.roots {
            for dir in root.ancestors() {
                let p = dir.join(".tools").join(rel);
                if !v.contains(&p) {
                    v.push(p);
                }
            }
        }
        v
    }
}

/// Where `scripts/setup`'s file `rel` (relative to `.tools`) may be, in the order the wheel
/// rule of the nvcc search looks (`$DOCA_RS_TOOLS`, then `.tools` in or above the package
/// being built, the current directory and this crate's source).
pub(crate) fn tools_paths(env: Env<'_>, rel: &str) -> Vec<PathBuf> {
    Search::of_this_process(env).tools_paths(rel)
}

/// `release X.Y` out of `nvcc --version`'s text.
pub(crate) fn parse_release(text: &str) -> Option<String> {
    let rest = &text[text.find("release ")? + "release ".len()..];
    let end = rest.find([',', ' ', '\n']).unwrap_or(rest.len());
    let v = &rest[..end];
    (!v.is_empty()).then(|| v.to_string())
}

/// Prints `cargo:rerun-if-env-changed` for every variable of [`ENV_VARS`] (call it from a
/// build script that runs nvcc itself; [`crate::Fatbin::compile`] does).
pub fn rerun_if_env_changed() {
    for v in ENV_VARS {
        println!("cargo:rerun-if-env-changed={v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// An environment of exactly `vars`.
    fn env_of(vars: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> {
        let m: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
            .collect();
        move |k| m.get(k).cloned()
    }

    /// A search confined to `tmp`: roots and last resort inside it.
    fn search<'a>(env: Env<'a>, tmp: &Path, roots: &[PathBuf]) -> Search<'a> {
        Search {
            env,
            roots: roots.to_vec(),
            last_resort: tmp.join("usr-local-cuda/bin/nvcc"),
        }
    }

    /// A file named `nvcc` in `dir` (never run here; discovery only checks it exists).
    fn fake_nvcc(dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join("nvcc");
        std::fs::write(&p, "").unwrap();
        p
    }

    #[test]
    fn release_is_read_from_the_version_text() {
        let text = "nvcc: NVIDIA (R) Cuda compiler driver\n\
                    Cuda compilation tools, release 13.0, V13.0.88\n";
        assert_eq!(parse_release(text).as_deref(), Some("13.0"));
        assert_eq!(parse_release("no version here"), None);
    }

    #[test]
    fn nvcc_variable_wins_and_a_wrong_one_is_an_error() {
        let t = tempfile::tempdir().unwrap();
        let named = fake_nvcc(&t.path().join("named"));
        let home = t.path().join("home");
        fake_nvcc(&home.join("bin"));
        let env = env_of(&[("NVCC", &named), ("CUDA_HOME", &home)]);
        let n = search(&env, t.path(), &[]).find().unwrap();
        assert_eq!((n.path(), n.origin()), (named.as_path(), Origin::NvccVar));

        let missing = t.path().join("nowhere/nvcc");
        let env = env_of(&[("NVCC", &missing), ("CUDA_HOME", &home)]);
        let e = search(&env, t.path(), &[]).find().unwrap_err();
        assert!(
            matches!(&e, Error::NvccVarInvalid(p) if *p == missing),
            "{e:?}"
        );
        assert!(e.to_string().contains("NVCC="), "{e}");
    }

    #[test]
    fn cuda_home_comes_before_path_and_path_before_the_wheels() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let in_home = fake_nvcc(&home.join("bin"));
        let bin = t.path().join("bin");
        let on_path = fake_nvcc(&bin);
        let tools = t.path().join("tools");
        let wheel = fake_nvcc(&tools.join("py/nvidia/cu13/bin"));
        let env = env_of(&[
            ("CUDA_HOME", &home),
            ("PATH", &bin),
            ("DOCA_RS_TOOLS", &tools),
        ]);
        let n = search(&env, t.path(), &[]).find().unwrap();
        assert_eq!(
            (n.path(), n.origin()),
            (in_home.as_path(), Origin::CudaHome)
        );
        let env = env_of(&[("PATH", &bin), ("DOCA_RS_TOOLS", &tools)]);
        let n = search(&env, t.path(), &[]).find().unwrap();
        assert_eq!((n.path(), n.origin()), (on_path.as_path(), Origin::Path));
        let env = env_of(&[("DOCA_RS_TOOLS", &tools)]);
        let n = search(&env, t.path(), &[]).find().unwrap();
        assert_eq!((n.path(), n.origin()), (wheel.as_path(), Origin::Wheel));
    }

    #[test]
    fn a_tools_folder_above_a_root_is_found_before_the_last_resort() {
        let t = tempfile::tempdir().unwrap();
        let wheel = fake_nvcc(&t.path().join(".tools/py/nvidia/cu13/bin"));
        fake_nvcc(&t.path().join("usr-local-cuda/bin"));
        let pkg = t.path().join("crates/mine");
        std::fs::create_dir_all(&pkg).unwrap();
        let env = env_of(&[]);
        let n = search(&env, t.path(), &[pkg]).find().unwrap();
        assert_eq!((n.path(), n.origin()), (wheel.as_path(), Origin::Wheel));
        let n = search(&env, t.path(), &[]).find().unwrap();
        assert_eq!(n.origin(), Origin::UsrLocalCuda);
    }

    #[test]
    fn not_found_lists_every_place_tried_and_names_scripts_setup() {
        let t = tempfile::tempdir().unwrap();
        let empty = t.path().join("empty");
        let env = env_of(&[("PATH", &empty)]);
        let e = search(&env, t.path(), std::slice::from_ref(&empty))
            .find()
            .unwrap_err();
        let Error::NvccNotFound { tried } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(tried[0], empty.join("nvcc"));
        assert!(tried.contains(&empty.join(".tools").join(WHEEL_BIN)));
        assert_eq!(
            tried.last().unwrap(),
            &t.path().join("usr-local-cuda/bin/nvcc")
        );
        let text = e.to_string();
        assert!(
            text.contains(&empty.join("nvcc").display().to_string()),
            "{text}"
        );
        assert!(text.contains("scripts/setup"), "{text}");
        assert!(text.contains("NVCC"), "{text}");
    }

    #[test]
    fn this_process_searches_this_checkout_and_usr_local_cuda_last() {
        let env = env_of(&[]);
        let c = Search::of_this_process(&env).candidates();
        let (last, origin) = c.last().unwrap();
        assert_eq!(*origin, Origin::UsrLocalCuda);
        assert_eq!(last, Path::new("/usr/local/cuda/bin/nvcc"));
        // This crate's checkout is searched (a workspace building its own crates).
        let here = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .join(".tools")
            .join(WHEEL_BIN);
        assert!(c.iter().any(|(p, _)| *p == here), "{c:?}");
    }
}
