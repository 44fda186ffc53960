//! libdoca_soft.so as a C library: the pkg-config files written by
//! `doca_soft::pkgconfig` give the flags, a C program built with them links and runs, and
//! its checks (devices, progress engine, error strings, NULL arguments, log levels,
//! version) hold.

mod common;

mod cdylib;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use doca_soft::pkgconfig;

/// Groups of checks smoke.c reports as "ok: <group>"; each must be there, so a group that
/// silently stopped running fails the test.
const SMOKE_GROUPS: &[&str] = &[
    "standard log backend",
    "error strings",
    "null arguments",
    "pe",
    "devinfo",
    "dev open/close",
    "unknown pci",
    "log levels",
    "gpu arguments",
    "version",
];

fn library_dir() -> PathBuf {
    cdylib::library_dir()
}

fn c_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name)
}

/// `PATH`-like value with `first` in front of what the variable already holds.
fn prepend(var: &str, first: &Path) -> OsString {
    let mut value = OsString::from(first);
    if let Some(old) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        value.push(":");
        value.push(old);
    }
    value
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Writes the .pc files into `dir` and returns the flags pkg-config gives for `packages`.
fn pkg_config_flags(dir: &Path, packages: &[&str]) -> Vec<String> {
    let written = pkgconfig::write_pc_files(dir, &library_dir(), &pkgconfig::default_include_dir())
        .expect("write .pc files");
    assert_eq!(written.len(), pkgconfig::TEMPLATES.len());
    let out = Command::new("pkg-config")
        .arg("--cflags")
        .arg("--libs")
        .args(packages)
        .env("PKG_CONFIG_PATH", prepend("PKG_CONFIG_PATH", dir))
        .output()
        .expect("pkg-config runs");
    assert!(
        out.status.success(),
        "pkg-config {packages:?} failed: {}",
        text(&out)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Builds a C program with the sample programs' warning flags and the given flags.
fn build_c(source: &Path, exe: &Path, flags: &[String]) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let out = Command::new(&cc)
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror"])
        .arg(source)
        .arg("-o")
        .arg(exe)
        .args(flags)
        .output()
        .expect("C compiler runs");
    assert!(
        out.status.success(),
        "{} does not build: {}",
        source.display(),
        text(&out)
    );
}

fn run_with_library(exe: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args).env(
        "LD_LIBRARY_PATH",
        prepend("LD_LIBRARY_PATH", &library_dir()),
    );
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run C program")
}

/// `cargo test` itself builds the cdylib (into deps/, next to this test binary).
#[test]
fn cargo_test_builds_the_shared_library() {
    let lib = cdylib::library();
    assert!(
        lib.is_file(),
        "{} is missing: cargo test did not build the cdylib",
        lib.display()
    );
    let exe = std::env::current_exe().unwrap();
    assert_eq!(library_dir(), exe.parent().unwrap());
}

/// The installer binary writes every .pc file with the directories it is given, defaults
/// the library directory to its own, and refuses bad command lines.
#[test]
fn pkgconfig_binary_writes_the_files() {
    let bin = env!("CARGO_BIN_EXE_doca_soft_pkgconfig");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin)
        .args(["--out"])
        .arg(dir.path().join("given"))
        .args([
            "--libdir",
            "/opt/doca-soft/lib",
            "--includedir",
            "/opt/doca-soft/include",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    for (name, _) in pkgconfig::TEMPLATES {
        let pc =
            std::fs::read_to_string(dir.path().join("given").join(format!("{name}.pc"))).unwrap();
        assert!(pc.contains("libdir=/opt/doca-soft/lib\n"), "{name}: {pc}");
        assert!(
            pc.contains("includedir=/opt/doca-soft/include\n"),
            "{name}: {pc}"
        );
    }

    let out = Command::new(bin)
        .arg("--out")
        .arg(dir.path().join("defaults"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let pc = std::fs::read_to_string(dir.path().join("defaults/doca-common.pc")).unwrap();
    let own_dir = Path::new(bin).parent().unwrap();
    assert!(
        pc.contains(&format!("libdir={}\n", own_dir.display())),
        "{pc}"
    );
    assert!(
        pc.contains(&format!(
            "includedir={}\n",
            pkgconfig::default_include_dir().display()
        )),
        "{pc}"
    );

    for bad in [&[][..], &["--out"][..], &["--bogus", "x"][..]] {
        let out = Command::new(bin).args(bad).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{bad:?} was accepted: {}",
            text(&out)
        );
    }
}

#[test]
fn pkg_config_files_give_include_and_link_flags() {
    let dir = tempfile::tempdir().unwrap();
    let flags = pkg_config_flags(
        dir.path(),
        &[
            "doca-common",
            "doca-gpunetio",
            "doca-eth",
            "doca-flow",
            "doca-argp",
        ],
    );
    let include = format!("-I{}", pkgconfig::default_include_dir().display());
    let libdir = format!("-L{}", library_dir().display());
    for expected in [
        include.as_str(),
        "-DDOCA_ALLOW_EXPERIMENTAL_API",
        libdir.as_str(),
        "-ldoca_soft",
    ] {
        assert!(
            flags.iter().any(|f| f == expected),
            "{expected} missing from {flags:?}"
        );
    }
}

#[test]
fn c_smoke_program_passes() {
    let dir = tempfile::tempdir().unwrap();
    let flags = pkg_config_flags(&dir.path().join("pc"), &["doca-common", "doca-gpunetio"]);
    let exe = dir.path().join("smoke");
    build_c(&c_source("smoke.c"), &exe, &flags);
    let out = run_with_library(&exe, &[], &[]);
    let output = text(&out);
    assert!(
        out.status.success(),
        "smoke exited with {:?}:\n{output}",
        out.status
    );
    assert!(output.contains("smoke: all checks passed"), "{output}");
    for group in SMOKE_GROUPS {
        assert!(
            output.contains(&format!("ok: {group}\n")),
            "group {group:?} did not report ok:\n{output}"
        );
    }
}

/// A program written like the NVIDIA samples (argp flags with callbacks, log backends,
/// open-by-PCI helper, representors, buffer inventory, version check) builds with
/// -Werror from the pkg-config flags and runs against the library.
#[test]
fn sample_like_program_runs() {
    let dir = tempfile::tempdir().unwrap();
    let flags = pkg_config_flags(&dir.path().join("pc"), &["doca-common", "doca-argp"]);
    let exe = dir.path().join("sample_like");
    build_c(&c_source("sample_like.c"), &exe, &flags);
    // The sample command line names the NIC by PCI address; map one onto `lo`.
    let map = [("DOCA_SOFT_PCI_MAP", "17:00.0=lo")];

    let out = run_with_library(&exe, &["-p", "17:00.0", "-c", "3", "-d"], &map);
    let output = text(&out);
    assert!(
        out.status.success(),
        "sample_like exited with {:?}:\n{output}",
        out.status
    );
    for expected in [
        "version: headers 3.3.0, runtime 3.3",
        "opened 17:00.0 (lo)",
        "representors: ",
        "  buffer 2 at offset 128",
        "buffers: 3 carved and chained",
        "Sample finished successfully",
    ] {
        assert!(
            output.contains(expected),
            "{expected:?} missing from:\n{output}"
        );
    }
    assert!(
        !output.contains("  buffer 3 "),
        "more buffers than asked for:\n{output}"
    );

    // Usage lists the registered flags and exits successfully.
    let out = run_with_library(&exe, &["-h"], &map);
    let output = text(&out);
    assert!(out.status.success(), "-h failed:\n{output}");
    for flag in ["--pci-addr", "--count", "--dump"] {
        assert!(
            output.contains(flag),
            "{flag} missing from usage:\n{output}"
        );
    }

    let out = run_with_library(&exe, &["-c", "3"], &map);
    assert!(
        !out.status.success(),
        "missing mandatory -p was accepted:\n{}",
        text(&out)
    );

    let out = run_with_library(&exe, &["-p", "fe:1f.7"], &map);
    let output = text(&out);
    assert!(
        !out.status.success(),
        "unknown PCI address was accepted:\n{output}"
    );
    assert!(
        output.contains("No usable device at PCI address fe:1f.7"),
        "{output}"
    );

    let out = run_with_library(&exe, &["-p", "17:00.0", "-c", "99"], &map);
    assert!(
        !out.status.success(),
        "callback's refusal of -c 99 was ignored:\n{}",
        text(&out)
    );
}

/// Every function a public header declares (DOCA_STABLE / DOCA_EXPERIMENTAL) is exported
/// by libdoca_soft.so: a program taking the address of each one links. Headers added by
/// other parts of the runtime are covered too.
#[test]
fn every_declared_function_is_exported() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = String::new();
    let mut names = Vec::new();
    // Declared but not implemented yet (tests/pending_exports.rs keeps that list exact).
    let pending: Vec<String> = common::pending_exports()
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    for header in common::headers() {
        source.push_str(&format!("#include <{}>\n", common::file_name(&header)));
        let text = std::fs::read_to_string(&header).unwrap();
        for name in common::declared_functions(&text) {
            if !names.contains(&name) && !pending.contains(&name) {
                names.push(name);
            }
        }
    }
    assert!(
        names.len() > 100,
        "only {} declarations found: {names:?}",
        names.len()
    );
    // void (*)(void) is the function pointer type every other one converts to silently.
    source.push_str(
        "#include <stdio.h>\ntypedef void (*any_fn)(void);\nstatic const any_fn fns[] = {\n",
    );
    for name in &names {
        source.push_str(&format!("\t(any_fn){name},\n"));
    }
    source.push_str(
        "};\nint main(void)\n{\n\tsize_t i, n = 0;\n\tfor (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)\n\
         \t\tn += fns[i] != NULL;\n\tprintf(\"%zu functions\\n\", n);\n\treturn 0;\n}\n",
    );
    let c_file = dir.path().join("all_functions.c");
    std::fs::write(&c_file, source).unwrap();
    let exe = dir.path().join("all_functions");
    let cc = doca_test_support::cc::C.compiler();
    let out = doca_test_support::cc::strict(&cc, "-std=gnu11")
        .arg("-DDOCA_ALLOW_EXPERIMENTAL_API")
        .args(common::ucx_cflags())
        .arg(&c_file)
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", library_dir().display()))
        .arg("-ldoca_soft")
        .output()
        .expect("C compiler runs");
    let output = text(&out);
    let mut missing: Vec<&str> = output
        .lines()
        .filter_map(|l| l.split("undefined reference to `").nth(1))
        .filter_map(|rest| rest.split('\'').next())
        .collect();
    missing.sort_unstable();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "{} declared functions are not exported: {missing:#?}",
        missing.len()
    );
    assert!(
        out.status.success(),
        "program taking every function's address does not build:\n{output}"
    );
    let run = run_with_library(&exe, &[], &[]);
    assert!(
        run.status.success() && text(&run).contains(&format!("{} functions", names.len())),
        "{}",
        text(&run)
    );
}
