//! Compiling C and C++ against doca-soft's `include/` the way programs written for DOCA 3.3
//! are built: gcc/g++ (or `$CC`/`$CXX`), `-Wall -Wextra -Werror`, DOCA's experimental API
//! enabled, `-I include`, and rdma-core's headers from the system or doca-soft's compat
//! subset. [`compile`] builds a program; [`strict`] and [`must_succeed`] serve the header
//! tests that assemble their own command lines.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Warnings the sample programs are built with.
pub const WARNINGS: &[&str] = &["-Wall", "-Wextra", "-Werror"];

/// One source language: compiler (variable and default), standard and `-x` name.
#[derive(Clone, Copy, Debug)]
pub struct Lang {
    /// The variable naming the compiler (`CC`, `CXX`).
    pub env_var: &'static str,
    /// The compiler without the variable.
    pub default: &'static str,
    /// The `-std=` flag.
    pub std: &'static str,
    /// The `-x` language name.
    pub x: &'static str,
}

/// C (gnu11).
pub const C: Lang = Lang {
    env_var: "CC",
    default: "cc",
    std: "-std=gnu11",
    x: "c",
};

/// C++17.
pub const CXX: Lang = Lang {
    env_var: "CXX",
    default: "c++",
    std: "-std=c++17",
    x: "c++",
};

impl Lang {
    /// The compiler: the variable's value, else the default.
    pub fn compiler(&self) -> String {
        std::env::var(self.env_var).unwrap_or_else(|_| self.default.to_owned())
    }
}

/// Where rdma-core's headers (infiniband/*.h, rdma/rdma_cma.h) come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rdma {
    /// Only `-I include`, the flag consumers pass: the headers pick the installed rdma-core
    /// headers where the compiler finds them and doca-soft's compat subset otherwise
    /// (`__has_include`, include/README.md "rdma-core headers").
    Plain,
    /// doca-soft's compat subset even where rdma-core is installed (`-I include/compat` puts
    /// it first), so the subset itself is exercised on machines that have the real headers.
    CompatOnly,
}

/// doca-soft's headers.
pub fn include_dir() -> PathBuf {
    crate::workspace::doca_soft_src_dir().join("include")
}

/// doca-soft's rdma-core compat subset.
pub fn compat_dir() -> PathBuf {
    include_dir().join("compat")
}

/// The include flags for a mode.
pub fn include_flags(rdma: Rdma) -> Vec<String> {
    let mut flags = vec![format!("-I{}", include_dir().display())];
    if rdma == Rdma::CompatOnly {
        flags.push(format!("-I{}", compat_dir().display()));
    }
    flags
}

/// What to make of the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Parse and check only.
    SyntaxOnly,
    /// Compile and link an executable.
    Executable,
}

/// Compiles `source` (a file) with the standard flags plus `extra`; Err holds the command and
/// the compiler's output.
pub fn compile(
    lang: Lang,
    source: &Path,
    output: &Path,
    kind: Output,
    rdma: Rdma,
    extra: &[&str],
) -> Result<(), String> {
    let mut cmd = Command::new(lang.compiler());
    cmd.arg("-x")
        .arg(lang.x)
        .arg(lang.std)
        .args(WARNINGS)
        .arg("-DDOCA_ALLOW_EXPERIMENTAL_API")
        .args(include_flags(rdma))
        .arg(source)
        // After the source, so that libraries (-l) resolve its references.
        .args(extra);
    match kind {
        Output::SyntaxOnly => {
            cmd.arg("-fsyntax-only");
        }
        Output::Executable => {
            cmd.arg("-o").arg(output);
        }
    }
    run(&mut cmd)
}

/// Runs a compiler (or linker) command; Err holds the command and its output when it cannot
/// run or fails.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// doca-soft's `tests/c/<name>`.
pub fn c_source(name: &str) -> PathBuf {
    crate::workspace::doca_soft_src_dir()
        .join("tests/c")
        .join(name)
}

/// `compiler` with `std`, the strict warnings ([`WARNINGS`]) and doca-soft's headers
/// (`-I include`); the caller adds the source and what to make of it.
pub fn strict(compiler: &str, std: &str) -> Command {
    let mut cmd = Command::new(compiler);
    cmd.arg(std).args(WARNINGS).arg("-I").arg(include_dir());
    cmd
}

/// Runs a compiler command; panics with `what`, the command and the compiler's output when
/// it cannot run or fails.
pub fn must_succeed(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {cmd:?}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `nvcc` with C++17, warnings as errors on both the device and the host side, `args` (the
/// target architectures, defines) and doca-soft's headers; the caller adds the source and
/// what to make of it.
fn nvcc_cmd(nvcc: &Path, args: &[String]) -> Command {
    let mut cmd = Command::new(nvcc);
    cmd.args(["-std=c++17", "-Werror", "all-warnings"])
        .args(["-Xcompiler", "-Wall,-Wextra,-Werror"])
        .args(args)
        .arg("-I")
        .arg(include_dir());
    cmd
}

fn write_source(dir: &Path, name: &str, src: &str) -> PathBuf {
    let cu = dir.join(format!("{name}.cu"));
    std::fs::write(&cu, src).unwrap_or_else(|e| panic!("writing {}: {e}", cu.display()));
    cu
}

/// Writes `src` to `dir/<name>.cu` and compiles it with `nvcc` into `dir/<name>.o`: C++17,
/// warnings are errors on both the device and the host side, doca-soft's headers, and
/// `args` (the target architectures, defines); panics with nvcc's output when it fails.
pub fn nvcc_strict(nvcc: &Path, dir: &Path, name: &str, src: &str, args: &[String]) {
    let cu = write_source(dir, name, src);
    let obj = dir.join(format!("{name}.o"));
    must_succeed(
        nvcc_cmd(nvcc, args).arg("-c").arg(&cu).arg("-o").arg(&obj),
        &format!("nvcc {name} ({args:?})"),
    );
    assert!(obj.exists(), "{name}: no object file");
}

/// `-L` for the folder of nvcc's toolkit that holds the static CUDA runtime, when there is
/// one (a pip-installed toolkit keeps it beside `bin/`, not where nvcc looks).
fn cudart_dir(nvcc: &Path) -> Vec<String> {
    let root = nvcc.parent().and_then(Path::parent).map(Path::to_path_buf);
    root.into_iter()
        .flat_map(|r| [r.join("lib"), r.join("lib64")])
        .filter(|d| d.join("libcudart_static.a").exists())
        .flat_map(|d| ["-L".to_string(), d.display().to_string()])
        .collect()
}

/// Writes `src` (a host program with device code) to `dir/<name>.cu`, builds it with the
/// flags of [`nvcc_strict`] and the CUDA runtime into `dir/<name>`, runs it and returns
/// what it printed; panics with nvcc's output when the build fails and with the exit
/// status when the program fails.
pub fn nvcc_run_program(nvcc: &Path, dir: &Path, name: &str, src: &str, args: &[String]) -> String {
    let cu = write_source(dir, name, src);
    let exe = dir.join(name);
    must_succeed(
        nvcc_cmd(nvcc, args)
            .args(cudart_dir(nvcc))
            .arg(&cu)
            .arg("-o")
            .arg(&exe),
        &format!("nvcc {name} ({args:?})"),
    );
    let run = Command::new(&exe)
        .output()
        .unwrap_or_else(|e| panic!("running {name}: {e}"));
    assert!(run.status.success(), "{name} exit {:?}", run.status);
    String::from_utf8(run.stdout).unwrap_or_else(|e| panic!("{name}: output not UTF-8: {e}"))
}
