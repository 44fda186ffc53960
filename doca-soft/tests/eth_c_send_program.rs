//! A GPUNetIO send program written as DOCA 3.3 programs are (tests/c/gpunetio_send_like.c,
//! host, plus tests/cuda/gpunetio_send_like.cu, kernels): the host half builds as C with
//! gcc and as C++ with g++ under `-Wall -Wextra -Werror` relying on the DOCA headers'
//! includes, the device half builds with nvcc against the 3.3 device API, nvcc links both
//! with libdoca_soft.so, and the program runs unchanged.
//!
//! Without nvcc the build test prints "SKIPPED: ..." after the gcc/g++ checks; without a
//! CUDA driver the run test prints "SKIPPED: no CUDA driver". On a GPU machine the run test
//! sends 4 rounds of 32 frames over an in-process wire port in each of the program's three
//! modes (device send with warp scope, the low-level WQE helpers, wait-on-time bursts) and
//! checks the program's report: every frame sent, one completion per round, no error, and
//! the timed bursts held until their times.

mod cc;
mod cdylib;

use std::path::{Path, PathBuf};
use std::process::Command;

use cc::{Lang, Output, Rdma, C, CXX};

const HOST: &str = "gpunetio_send_like.c";
const DEVICE: &str = "tests/cuda/gpunetio_send_like.cu";

fn nvcc() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("NVCC") {
        if Path::new(&p).exists() {
            return Some(p.into());
        }
    }
    if let Ok(out) = Command::new("sh").args(["-c", "command -v nvcc"]).output() {
        let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !p.is_empty() {
            return Some(p.into());
        }
    }
    let p = Path::new("/usr/local/cuda/bin/nvcc");
    p.exists().then(|| p.to_path_buf())
}

fn run_cmd(cmd: &mut Command) -> Result<(), String> {
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

/// The host half as an object file, built by `lang`'s compiler with the samples' flags.
fn host_object(lang: Lang, rdma: Rdma, dir: &Path) -> PathBuf {
    let obj = dir.join(format!("host_{}.o", lang.x.replace('+', "x")));
    cc::compile(
        lang,
        &cc::c_source(HOST),
        &obj,
        Output::Executable,
        rdma,
        &["-c"],
    )
    .unwrap_or_else(|e| panic!("host half as {}:\n{e}", lang.x));
    obj
}

/// The device half as an object file (SASS for sm_80 and sm_90, PTX for compute_80, so it
/// runs on any GPU from sm_80 on). No -Werror here: nvcc's generated host stubs are not the
/// program's code, and their warnings vary with the host compiler.
fn device_object(nvcc: &Path, dir: &Path) -> PathBuf {
    let obj = dir.join("device.o");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    run_cmd(
        Command::new(nvcc)
            .args(["-std=c++17", "-DDOCA_ALLOW_EXPERIMENTAL_API"])
            .args(["-gencode", "arch=compute_80,code=[sm_80,compute_80]"])
            .args(["-gencode", "arch=compute_90,code=sm_90"])
            .args(cc::include_flags(Rdma::Plain))
            .arg("-c")
            .arg(root.join(DEVICE))
            .arg("-o")
            .arg(&obj),
    )
    .unwrap_or_else(|e| panic!("device half with nvcc:\n{e}"));
    obj
}

/// nvcc links the two halves with libdoca_soft.so (and the CUDA runtime, statically).
fn link(nvcc: &Path, objs: &[&Path], exe: &Path) {
    let libdir = cdylib::library_dir();
    let mut cmd = Command::new(nvcc);
    cmd.args(objs).arg("-o").arg(exe);
    // The CUDA runtime beside nvcc: `lib64` in a toolkit, `lib` in the pip wheels.
    if let Some(bin) = nvcc.parent() {
        for d in ["lib64", "lib"] {
            let p = bin.join("..").join(d);
            if p.is_dir() {
                cmd.arg(format!("-L{}", p.display()));
            }
        }
    }
    cmd.arg(format!("-L{}", libdir.display()))
        .arg("-ldoca_soft")
        .arg("-Xlinker")
        .arg(format!("-rpath={}", libdir.display()));
    run_cmd(&mut cmd).unwrap_or_else(|e| panic!("link with nvcc:\n{e}"));
}

/// Builds the program (host half as `lang`) into `dir`; None (with the reason printed)
/// without nvcc.
fn build(lang: Lang, dir: &Path) -> Option<PathBuf> {
    let host = host_object(lang, Rdma::Plain, dir);
    let Some(nvcc) = nvcc() else {
        eprintln!("SKIPPED: no nvcc to build and link the device half");
        return None;
    };
    let dev = device_object(&nvcc, dir);
    let exe = dir.join(format!("gpunetio_send_like_{}", lang.x.replace('+', "x")));
    link(&nvcc, &[&host, &dev], &exe);
    Some(exe)
}

fn run(exe: &Path, wire: &str, args: &[&str]) -> std::process::Output {
    Command::new(exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .env("DOCA_SOFT_PORTS", format!("wire:{wire}"))
        .args(args)
        .output()
        .expect("running gpunetio_send_like")
}

/// The host half compiles as C and C++ with the consumers' flags and with the rdma-core
/// compat subset; with nvcc, both link with the device half and parse their flags as DOCA
/// programs do (usage named after argv[0], a missing mandatory flag refused).
#[test]
fn send_program_builds_as_c_cpp_and_cuda_and_parses_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    for lang in [C, CXX] {
        let compat = dir.path().join("compat");
        std::fs::create_dir_all(&compat).unwrap();
        host_object(lang, Rdma::CompatOnly, &compat);
    }
    for lang in [C, CXX] {
        let Some(exe) = build(lang, dir.path()) else {
            return;
        };
        let argv0 = exe.to_str().unwrap();
        let help = run(&exe, "sendlikeh", &["-h"]);
        assert_eq!(help.status.code(), Some(0), "{help:?}");
        let usage = String::from_utf8_lossy(&help.stdout);
        assert!(
            usage.starts_with(&format!("Usage: {argv0} ")),
            "usage does not name argv[0]: {usage}"
        );
        for flag in [
            "--gpu <PCI>",
            "--nic <PCI>",
            "--mode <0|1|2>",
            "--interval <ns>",
        ] {
            assert!(usage.contains(flag), "usage lacks {flag}: {usage}");
        }
        // -n is mandatory: refused before any device is touched.
        let bad = run(&exe, "sendlikeh", &["-g", "0000:00:00.0"]);
        assert_eq!(bad.status.code(), Some(1), "{bad:?}");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains("doca_argp_start"), "{err}");
        // A bad mode is refused by its callback.
        let bad = run(&exe, "sendlikeh", &["-g", "x", "-n", "y", "-m", "7"]);
        assert_eq!(bad.status.code(), Some(1), "{bad:?}");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains("mode 7 is not 0, 1 or 2"), "{err}");
    }
}

/// The GPU's PCI bus id, or None (with the reason printed) without a usable CUDA driver.
fn gpu_bus_id() -> Option<String> {
    use cudarc::driver::sys;
    if !doca_soft::testing::cuda_available() {
        eprintln!("SKIPPED: no CUDA driver");
        return None;
    }
    // SAFETY: plain driver calls with valid out-pointers.
    unsafe {
        if sys::cuInit(0) != sys::CUresult::CUDA_SUCCESS {
            eprintln!("SKIPPED: cuInit failed");
            return None;
        }
        let mut dev: sys::CUdevice = 0;
        if sys::cuDeviceGet(&mut dev, 0) != sys::CUresult::CUDA_SUCCESS {
            eprintln!("SKIPPED: no CUDA device");
            return None;
        }
        let mut buf = [0 as std::ffi::c_char; 32];
        assert_eq!(
            sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as i32, dev),
            sys::CUresult::CUDA_SUCCESS
        );
        Some(
            std::ffi::CStr::from_ptr(buf.as_ptr())
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// On a GPU: each mode sends 4 x 32 frames of 256 bytes on wire port 0 and reports every
/// frame sent, 4 completions and no error; the timed mode is held until its last burst's
/// time (1 ms + 3 x 2 ms after the start).
#[test]
fn send_program_sends_every_frame_from_the_gpu() {
    let Some(bus) = gpu_bus_id() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build(C, dir.path()) else {
        return;
    };
    for mode in ["0", "1", "2"] {
        let wire = format!("sendlike{mode}");
        let nic = format!("{wire}0");
        let out = run(
            &exe,
            &wire,
            &[
                "-g", &bus, "-n", &nic, "-m", mode, "-r", "4", "-s", "256", "-i", "2000000",
            ],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "mode {mode}: exit {:?}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines = stdout.lines();
        assert_eq!(
            lines.next(),
            Some("sent 128 completions 4 errors 0"),
            "mode {mode}: {stdout}"
        );
        if mode == "2" {
            let held: u64 = lines
                .next()
                .and_then(|l| l.strip_prefix("held "))
                .and_then(|l| l.strip_suffix(" ns"))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no held line: {stdout}"));
            assert!(held >= 7_000_000, "timed bursts left early: {held} ns");
        }
    }
}
