//! `scripts/install` lays out a prefix shaped like the DOCA SDK's, from the library this test
//! run built: every `libdoca_<lib>.so.3` carries its SONAME and names `libdoca_soft.so` as its
//! filtee, pkg-config gives a working command line for the DOCA modules, a C program built with
//! that line records the per-library SONAMEs and runs with every symbol bound in
//! `libdoca_soft.so`, `lib64` leads to the same files, and `scripts/build-external` builds a
//! meson tree (its `meson.build.public` in place of its `meson.build`) and a make tree against
//! the prefix without writing to them.
//!
//! The prefix is installed once per test binary, without the device library (that needs nvcc
//! and minutes); `device_library_is_relocatable_device_code` installs one with it when `NVCC`
//! names a compiler. Tests skip, saying why, where gcc, pkg-config, readelf or python3 is
//! missing (and meson and ninja, or make, for the external trees).

mod cdylib;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Every library the prefix has, as in `libdoca_<lib>.so`.
const LIBRARIES: &[&str] = &[
    "common",
    "argp",
    "dma",
    "eth",
    "flow",
    "gpunetio",
    "rdma",
    "verbs",
    "urom",
    "dpdk_bridge",
];

/// The modules the C program is built with (doca-urom is left out: it requires UCX's module).
const MODULES: &[&str] = &[
    "doca-common",
    "doca-flow",
    "doca-gpunetio",
    "doca-eth",
    "doca-rdma",
    "doca-dma",
    "doca-verbs",
    "doca-argp",
];

/// File-name suffix of each library file and its SONAME's, as scripts/install writes them.
const FULL_VERSION: &str = "3.3.0109";
const SONAME_VERSION: &str = "3";

/// One function of each library the C program calls or takes the address of, so that the
/// static linker records that library and the dynamic linker must bind the function.
const ONE_FUNCTION_EACH: &[(&str, &str)] = &[
    ("common", "doca_error_get_name"),
    ("argp", "doca_argp_init"),
    ("dma", "doca_dma_create"),
    ("eth", "doca_eth_rxq_create"),
    ("flow", "doca_flow_port_start"),
    ("gpunetio", "doca_gpu_create"),
    ("rdma", "doca_rdma_create"),
    ("verbs", "doca_verbs_qp_create"),
];

/// The C program: prints two runtime values, then, for each function of
/// [`ONE_FUNCTION_EACH`], the file its address lies in (dladdr), which must be the filtee.
const PROGRAM: &str = r#"#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include <doca_argp.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_eth_rxq.h>
#include <doca_flow.h>
#include <doca_gpunetio.h>
#include <doca_rdma.h>
#include <doca_verbs.h>
#include <doca_version.h>

static void where(const char *name, void *addr)
{
	Dl_info info;

	if (dladdr(addr, &info) == 0 || info.dli_fname == NULL)
		printf("%s in ?\n", name);
	else
		printf("%s in %s\n", name, info.dli_fname);
}

int main(void)
{
	printf("name %s\n", doca_error_get_name(DOCA_ERROR_NOT_SUPPORTED));
	printf("runtime %s\n", doca_version_runtime());
	where("doca_error_get_name", (void *)doca_error_get_name);
	where("doca_argp_init", (void *)doca_argp_init);
	where("doca_dma_create", (void *)doca_dma_create);
	where("doca_eth_rxq_create", (void *)doca_eth_rxq_create);
	where("doca_flow_port_start", (void *)doca_flow_port_start);
	where("doca_gpu_create", (void *)doca_gpu_create);
	where("doca_rdma_create", (void *)doca_rdma_create);
	where("doca_verbs_qp_create", (void *)doca_verbs_qp_create);
	return 0;
}
"#;

/// The repository root (scripts/ lives there).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("doca-soft sits in the workspace")
        .to_path_buf()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether `tool --version` runs.
fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The first of `tools` that is missing, as a skip reason.
fn missing(tools: &[&str]) -> Option<String> {
    tools
        .iter()
        .find(|t| !have(t))
        .map(|t| format!("SKIPPED: {t} is not installed"))
}

/// Runs scripts/install into `prefix` with this run's library; `device` keeps the device
/// library (otherwise `--no-device-lib`). Panics with the script's output when it fails.
fn install(prefix: &Path, device: bool) {
    let mut cmd = Command::new("python3");
    cmd.arg(repo_root().join("scripts/install"))
        .arg("--prefix")
        .arg(prefix)
        .arg("--lib")
        .arg(cdylib::library());
    if !device {
        cmd.arg("--no-device-lib");
    }
    let out = cmd.output().expect("python3 runs scripts/install");
    assert!(
        out.status.success(),
        "scripts/install failed: {}",
        text(&out)
    );
}

/// The prefix, installed once for all tests of this binary next to the library
/// (`target/<profile>/install-prefix-test`, replaced each run), or why the tests skip.
fn prefix() -> Result<&'static Path, &'static str> {
    static PREFIX: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let made = PREFIX.get_or_init(|| {
        if let Some(why) = missing(&["python3", "gcc", "pkg-config", "readelf"]) {
            return Err(why);
        }
        let dir = cdylib::library_dir()
            .parent()
            .expect("deps/ has a parent")
            .join("install-prefix-test");
        install(&dir, false);
        Ok(dir)
    });
    match made {
        Ok(dir) => Ok(dir.as_path()),
        Err(why) => Err(why.as_str()),
    }
}

/// The prefix, or `None` after printing why the test skips.
fn prefix_or_skip() -> Option<&'static Path> {
    prefix().map_err(|why| eprintln!("{why}")).ok()
}

/// `lib/<multiarch>` of `prefix`: the one directory under `lib/` holding the libraries.
fn library_dir(prefix: &Path) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(prefix.join("lib"))
        .expect("prefix has lib/")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.join("libdoca_common.so").exists())
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one library directory under lib/: {found:?}"
    );
    found.into_iter().next().unwrap()
}

fn pkg_config_dir(prefix: &Path) -> PathBuf {
    library_dir(prefix).join("pkgconfig")
}

/// `readelf` with `args` on `file`, its output as text.
fn readelf(args: &[&str], file: &Path) -> String {
    let out = Command::new("readelf")
        .args(args)
        .arg(file)
        .output()
        .expect("readelf runs");
    assert!(
        out.status.success(),
        "readelf {args:?} {}: {}",
        file.display(),
        text(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `PATH`-like value with `first` in front of what the variable already holds.
fn prepend(var: &str, first: &Path) -> std::ffi::OsString {
    let mut dirs = vec![first.to_path_buf()];
    if let Some(cur) = std::env::var_os(var) {
        dirs.extend(std::env::split_paths(&cur));
    }
    std::env::join_paths(dirs).expect("paths without ':'")
}

/// `pkg-config --cflags --libs MODULES` with the prefix's modules first.
fn pkg_config_line(prefix: &Path) -> Vec<String> {
    let out = Command::new("pkg-config")
        .args(["--cflags", "--libs"])
        .args(MODULES)
        .env(
            "PKG_CONFIG_PATH",
            prepend("PKG_CONFIG_PATH", &pkg_config_dir(prefix)),
        )
        .output()
        .expect("pkg-config runs");
    assert!(
        out.status.success(),
        "pkg-config {MODULES:?}: {}",
        text(&out)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[test]
fn each_library_has_its_soname_links_and_filtee() {
    let Some(prefix) = prefix_or_skip() else {
        return;
    };
    let libdir = library_dir(prefix);
    for lib in LIBRARIES {
        let base = format!("libdoca_{lib}.so");
        let soname = format!("{base}.{SONAME_VERSION}");
        let real = format!("{base}.{FULL_VERSION}");
        let link = |name: &str| std::fs::read_link(libdir.join(name)).ok();
        assert_eq!(link(&base), Some(PathBuf::from(&soname)), "{base} links");
        assert_eq!(link(&soname), Some(PathBuf::from(&real)), "{soname} links");
        assert!(libdir.join(&real).is_file(), "{real} is a file");

        let dynamic = readelf(&["-d", "-W"], &libdir.join(&soname));
        for entry in [
            format!("Library soname: [{soname}]"),
            "Filter library: [libdoca_soft.so]".to_owned(),
            "Library runpath: [$ORIGIN]".to_owned(),
        ] {
            assert!(
                dynamic.contains(&entry),
                "{soname} lacks {entry}:\n{dynamic}"
            );
        }
    }
    // Each library exports its own functions (and not another library's).
    for (lib, function) in ONE_FUNCTION_EACH {
        let symbols = readelf(
            &["--dyn-syms", "-W"],
            &libdir.join(format!("libdoca_{lib}.so")),
        );
        let defines = |name: &str| {
            symbols.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() >= 8 && f[6] != "UND" && f[7] == name
            })
        };
        assert!(defines(function), "libdoca_{lib}.so lacks {function}");
        if *lib != "common" {
            assert!(
                !defines("doca_error_get_name"),
                "libdoca_{lib}.so also defines doca-common's doca_error_get_name"
            );
        }
    }
}

#[test]
fn pkg_config_gives_the_prefix_for_every_module() {
    let Some(prefix) = prefix_or_skip() else {
        return;
    };
    let line = pkg_config_line(prefix);
    let include = format!("-I{}", prefix.join("include").display());
    let libs = format!("-L{}", library_dir(prefix).display());
    for flag in [
        include.as_str(),
        libs.as_str(),
        "-DDOCA_ALLOW_EXPERIMENTAL_API",
    ] {
        assert!(line.iter().any(|f| f == flag), "{flag} not in {line:?}");
    }
    for module in MODULES {
        let lib = format!("-l{}", module.replace('-', "_"));
        assert!(line.contains(&lib), "{lib} not in {line:?}");
    }
}

#[test]
fn c_program_links_per_library_sonames_and_binds_in_the_filtee() {
    let Some(prefix) = prefix_or_skip() else {
        return;
    };
    let libdir = library_dir(prefix);
    let tmp = tempfile::tempdir().expect("temp dir");
    let (src, exe) = (tmp.path().join("prefix.c"), tmp.path().join("prefix"));
    std::fs::write(&src, PROGRAM).expect("write the C program");
    let out = Command::new("gcc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .args(pkg_config_line(prefix))
        .output()
        .expect("gcc runs");
    assert!(out.status.success(), "gcc: {}", text(&out));

    // The program records the SDK's SONAMEs, never the implementation's file.
    let dynamic = readelf(&["-d", "-W"], &exe);
    for (lib, _) in ONE_FUNCTION_EACH {
        let needed = format!("Shared library: [libdoca_{lib}.so.{SONAME_VERSION}]");
        assert!(dynamic.contains(&needed), "no {needed}:\n{dynamic}");
    }
    assert!(
        !dynamic.contains("[libdoca_soft.so]"),
        "the program needs libdoca_soft.so directly:\n{dynamic}"
    );

    // LD_BIND_NOW binds every symbol at load time: one the filtee lacked would fail here.
    let run = Command::new(&exe)
        .env("LD_LIBRARY_PATH", prepend("LD_LIBRARY_PATH", &libdir))
        .env("LD_BIND_NOW", "1")
        .output()
        .expect("run the C program");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "the program failed: {}", text(&run));
    assert!(
        stdout.contains("name DOCA_ERROR_NOT_SUPPORTED\n"),
        "{stdout}"
    );
    assert!(stdout.contains("runtime 3.3.0\n"), "{stdout}");
    let filtee = libdir.join("libdoca_soft.so");
    for (_, function) in ONE_FUNCTION_EACH {
        let line = format!("{function} in ");
        let file = stdout
            .lines()
            .find_map(|l| l.strip_prefix(&line))
            .unwrap_or_else(|| panic!("no line for {function}: {stdout}"));
        assert_eq!(
            std::fs::canonicalize(file).ok(),
            std::fs::canonicalize(&filtee).ok(),
            "{function} is bound in {file}, not in the prefix's libdoca_soft.so"
        );
    }
}

#[test]
fn lib64_leads_to_the_same_files() {
    let Some(prefix) = prefix_or_skip() else {
        return;
    };
    let libdir = library_dir(prefix);
    let lib64 = prefix.join("lib64");
    let canonical = |p: &Path| std::fs::canonicalize(p).expect("path resolves");
    assert_eq!(canonical(&lib64), canonical(&libdir));
    let mut names = vec!["libdoca_soft.so".to_owned(), "pkgconfig".to_owned()];
    names.extend(LIBRARIES.iter().map(|l| format!("libdoca_{l}.so")));
    for name in names {
        assert_eq!(
            canonical(&lib64.join(&name)),
            canonical(&libdir.join(&name)),
            "lib64/{name}"
        );
    }
}

#[test]
fn device_library_is_relocatable_device_code() {
    let Some(nvcc) = std::env::var_os("NVCC").filter(|n| Path::new(n).is_file()) else {
        return eprintln!("SKIPPED: NVCC does not name nvcc (. .tools/env.sh sets it)");
    };
    if let Some(why) = missing(&["python3", "gcc", "ar"]) {
        return eprintln!("{why}");
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    install(tmp.path(), true);
    let archive = library_dir(tmp.path()).join("libdoca_gpunetio_device.a");
    assert!(archive.is_file(), "{} is missing", archive.display());
    let members = Command::new("ar")
        .arg("t")
        .arg(&archive)
        .output()
        .expect("ar runs");
    assert_eq!(
        String::from_utf8_lossy(&members.stdout).trim(),
        "doca_gpunetio_device.o"
    );
    // cuobjdump, next to nvcc, lists the device ELF images of the object.
    let cuobjdump = Path::new(&nvcc).with_file_name("cuobjdump");
    if cuobjdump.is_file() {
        let out = Command::new(&cuobjdump)
            .arg("--list-elf")
            .arg(&archive)
            .output()
            .expect("cuobjdump runs");
        let listing = text(&out);
        assert!(
            listing.contains("sm_90"),
            "no sm_90 image in the archive:\n{listing}"
        );
    }
}

/// The C file of the external trees: prints the name of one error code.
const EXTERNAL_MAIN: &str = r#"#include <stdio.h>

#include <doca_error.h>

int main(void)
{
	printf("%s\n", doca_error_get_name(DOCA_ERROR_NOT_SUPPORTED));
	return 0;
}
"#;

/// Runs `scripts/build-external SRC PREFIX BUILD` and returns its output; asserts it succeeds
/// and leaves `src` as it was.
fn build_external(src: &Path, prefix: &Path, build: &Path) -> String {
    let listing = |dir: &Path| {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .expect("source tree readable")
            .map(|e| e.expect("directory entry").file_name())
            .collect();
        names.sort();
        names
    };
    let before = listing(src);
    let out = Command::new("python3")
        .arg(repo_root().join("scripts/build-external"))
        .args([src, prefix, build])
        .output()
        .expect("python3 runs scripts/build-external");
    let said = text(&out);
    assert!(out.status.success(), "scripts/build-external: {said}");
    assert_eq!(listing(src), before, "the source tree changed");
    said
}

/// Runs a program built against the prefix; returns its standard output.
fn run_built(exe: &Path, prefix: &Path) -> String {
    let run = Command::new(exe)
        .env(
            "LD_LIBRARY_PATH",
            prepend("LD_LIBRARY_PATH", &library_dir(prefix)),
        )
        .output()
        .expect("run the built program");
    assert!(run.status.success(), "{}: {}", exe.display(), text(&run));
    String::from_utf8_lossy(&run.stdout).into_owned()
}

#[test]
fn build_external_builds_a_meson_tree_with_its_public_build_file() {
    let Some(prefix) = prefix_or_skip() else {
        return;
    };
    if let Some(why) = missing(&["meson", "ninja"]) {
        return eprintln!("{why} (scripts/build-external says how to install it)");
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let (src, build) = (tmp.path().join("src"), tmp.path().join("build"));
    std::fs::create_dir(&src).expect("source dir");
    std::fs::write(src.join("main.c"), EXTERNAL_MAIN).expect("write main.c");
    // As in NVIDIA's sample trees: the in-tree build file next to the public one, which wins.
    std::fs::write(
        src.join("meson.build"),
        "error('the in-tree build file ran')\n",
    )
    .expect("write meson.build");
    std::fs::write(
        src.join("meson.build.public"),
        "project('external', 'c')\n\
         executable('errname', 'main.c', dependencies: dependency('doca-common'))\n",
    )
    .expect("write meson.build.public");

    let said = build_external(&src, prefix, &build);
    assert!(said.contains("1 of 1 targets built"), "{said}");
    let out = run_built(&build.join("build/errname"), prefix);
    assert_eq!(out, "DOCA_ERROR_NOT_SUPPORTED\n");
}

#[test]
fn build_external_builds_a_make_tree() {
    let Some(prefix) = prefix_or_skip() else {
        return;
    };
    if let Some(why) = missing(&["make"]) {
        return eprintln!("{why}");
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let (src, build) = (tmp.path().join("src"), tmp.path().join("build"));
    std::fs::create_dir(&src).expect("source dir");
    std::fs::write(src.join("main.c"), EXTERNAL_MAIN).expect("write main.c");
    std::fs::write(
        src.join("Makefile"),
        "errname: main.c\n\
         \t$(CC) -Wall -Werror -o $@ main.c $(shell pkg-config --cflags --libs doca-common)\n",
    )
    .expect("write Makefile");

    let said = build_external(&src, prefix, &build);
    assert!(said.contains("executable errname"), "{said}");
    let out = run_built(&build.join("src/errname"), prefix);
    assert_eq!(out, "DOCA_ERROR_NOT_SUPPORTED\n");
}
