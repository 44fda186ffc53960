//! GPUNetIO programs written as DOCA 3.3 programs are, each a host half in C
//! (tests/c/gpunetio_{send,receive}_like.c) and a device half in CUDA
//! (tests/cuda/gpunetio_{send,receive}_like.cu): the host halves build as C with gcc and as
//! C++ with g++ under `-Wall -Wextra -Werror` relying on the DOCA headers' includes (also
//! against the rdma-core compat subset), the device halves build with nvcc against the 3.3
//! device API, nvcc links each pair with libdoca_soft.so, and the programs run unchanged.
//!
//! Without nvcc the build test prints "skipped: <test>: no nvcc ..." after the gcc/g++
//! checks; without a CUDA driver the run tests print "skipped: <test>: no CUDA driver ...".
//! On a GPU machine:
//! * the send program sends 4 rounds of 32 frames over an in-process wire port in each of
//!   its three modes (device send with warp scope, the low-level WQE helpers, wait-on-time
//!   bursts): every frame sent, one completion per round, no error, timed bursts held until
//!   their times;
//! * the receive program, with DOCA Flow steering IPv4/UDP to its queue, receives from a
//!   pcap port replaying 256 UDP frames among 64 others, in each execution scope: exactly
//!   the UDP frames, their total bytes and frame numbers, lengths that match the packets.

use doca_test_support::cc;
mod cdylib;

use std::path::{Path, PathBuf};
use std::process::Command;

use cc::{Lang, Output, Rdma, C, CXX};

const PROGRAMS: [&str; 2] = ["gpunetio_send_like", "gpunetio_receive_like"];

/// The host half of `name` as an object file, built by `lang`'s compiler with the samples'
/// flags.
fn host_object(name: &str, lang: Lang, rdma: Rdma, dir: &Path) -> PathBuf {
    let obj = dir.join(format!("{name}_host_{}.o", lang.x.replace('+', "x")));
    cc::compile(
        lang,
        &cc::c_source(&format!("{name}.c")),
        &obj,
        Output::Executable,
        rdma,
        &["-c"],
    )
    .unwrap_or_else(|e| panic!("host half of {name} as {}:\n{e}", lang.x));
    obj
}

/// The device half as an object file (SASS for sm_80 and sm_90, PTX for compute_80, so it
/// runs on any GPU from sm_80 on). No -Werror here: nvcc's generated host stubs are not the
/// program's code, and their warnings vary with the host compiler.
fn device_object(name: &str, nvcc: &Path, dir: &Path) -> PathBuf {
    let obj = dir.join(format!("{name}_device.o"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    cc::run(
        Command::new(nvcc)
            .args(["-std=c++17", "-DDOCA_ALLOW_EXPERIMENTAL_API"])
            .args(["-gencode", "arch=compute_80,code=[sm_80,compute_80]"])
            .args(["-gencode", "arch=compute_90,code=sm_90"])
            .args(cc::include_flags(Rdma::Plain))
            .arg("-c")
            .arg(root.join("tests/cuda").join(format!("{name}.cu")))
            .arg("-o")
            .arg(&obj),
    )
    .unwrap_or_else(|e| panic!("device half of {name} with nvcc:\n{e}"));
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
    cc::run(&mut cmd).unwrap_or_else(|e| panic!("link with nvcc:\n{e}"));
}

/// Builds program `name` (host half as `lang`) into `dir`; None (with the reason printed)
/// without nvcc.
fn build(name: &str, lang: Lang, dir: &Path) -> Option<PathBuf> {
    let host = host_object(name, lang, Rdma::Plain, dir);
    let nvcc = doca_test_support::require_nvcc()?;
    let dev = device_object(name, nvcc.path(), dir);
    let exe = dir.join(format!("{name}_{}", lang.x.replace('+', "x")));
    link(nvcc.path(), &[&host, &dev], &exe);
    Some(exe)
}

/// Runs `exe` with `DOCA_SOFT_PORTS=ports` and this run's library first on the path.
fn run(exe: &Path, ports: &str, args: &[&str]) -> std::process::Output {
    Command::new(exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .env("DOCA_SOFT_PORTS", ports)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", exe.display()))
}

/// Both host halves compile as C and C++ with the consumers' flags and with the rdma-core
/// compat subset; with nvcc, each links with its device half and parses its flags as DOCA
/// programs do (usage named after argv[0], a missing mandatory flag and a bad value refused
/// before any device is touched).
#[test]
fn programs_build_as_c_cpp_and_cuda_and_parse_their_flags() {
    let dir = tempfile::tempdir().unwrap();
    let compat = dir.path().join("compat");
    std::fs::create_dir_all(&compat).unwrap();
    for name in PROGRAMS {
        for lang in [C, CXX] {
            host_object(name, lang, Rdma::CompatOnly, &compat);
        }
    }
    // (program, its flags in the usage, arguments with a bad value, the callback's complaint)
    let cases: [(&str, &[&str], &[&str], &str); 2] = [
        (
            "gpunetio_send_like",
            &[
                "--gpu <PCI>",
                "--nic <PCI>",
                "--mode <0|1|2>",
                "--interval <ns>",
            ],
            &["-g", "x", "-n", "y", "-m", "7"],
            "mode 7 is not 0, 1 or 2",
        ),
        (
            "gpunetio_receive_like",
            &[
                "--gpu <PCI>",
                "--nic <PCI>",
                "--count <packets>",
                "--exec-scope <0|1|2>",
            ],
            &["-g", "x", "-n", "y", "-c", "1", "-e", "3"],
            "exec scope 3 is not 0, 1 or 2",
        ),
    ];
    for (name, flags, bad_args, complaint) in cases {
        for lang in [C, CXX] {
            let Some(exe) = build(name, lang, dir.path()) else {
                return;
            };
            let argv0 = exe.to_str().unwrap();
            let help = run(&exe, "", &["-h"]);
            assert_eq!(help.status.code(), Some(0), "{name}: {help:?}");
            let usage = String::from_utf8_lossy(&help.stdout);
            assert!(
                usage.starts_with(&format!("Usage: {argv0} ")),
                "{name}: usage does not name argv[0]: {usage}"
            );
            for flag in flags {
                assert!(usage.contains(flag), "{name}: usage lacks {flag}: {usage}");
            }
            // -n is mandatory.
            let bad = run(&exe, "", &["-g", "0000:00:00.0"]);
            assert_eq!(bad.status.code(), Some(1), "{name}: {bad:?}");
            let err = String::from_utf8_lossy(&bad.stderr);
            assert!(err.contains("doca_argp_start"), "{name}: {err}");
            assert!(err.contains("--nic"), "{name}: {err}");
            let bad = run(&exe, "", bad_args);
            assert_eq!(bad.status.code(), Some(1), "{name}: {bad:?}");
            let err = String::from_utf8_lossy(&bad.stderr);
            assert!(err.contains(complaint), "{name}: {err}");
        }
    }
}

/// The GPU's PCI bus id, or None (with the skip line printed) without a usable GPU.
fn gpu_bus_id() -> Option<String> {
    doca_test_support::require_gpu("the GPUNetIO programs").map(|g| g.bus_id_str())
}

/// On a GPU: each mode sends 4 x 32 frames of 256 bytes on wire port 0 and reports every
/// frame sent, 4 completions and no error; the timed mode is held until its last burst's
/// time (1 ms + 3 x 2 ms after the start).
#[test]
fn send_program_sends_every_frame_on_the_gpu() {
    let Some(bus) = gpu_bus_id() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("gpunetio_send_like", C, dir.path()) else {
        return;
    };
    for mode in ["0", "1", "2"] {
        let wire = format!("sendlike{mode}");
        let nic = format!("{wire}0");
        let out = run(
            &exe,
            &format!("wire:{wire}"),
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

/// Frame `k` of the receive test: IPv4/UDP (`udp`) or IPv4/TCP, `len` bytes, IPv4 total
/// length `len - 14`, the frame number at bytes 42..46 (little-endian).
fn frame(k: u32, len: usize, udp: bool) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&[0x10, 0x11, 0x12, 0x13, 0x14, 0x15]);
    f[6..12].copy_from_slice(&[0x20, 0x21, 0x22, 0x23, 0x24, 0x25]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    f[16..18].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    f[22] = 64;
    f[23] = if udp { 17 } else { 6 };
    f[26..34].copy_from_slice(&[192, 0, 2, 1, 192, 0, 2, 2]);
    f[34..38].copy_from_slice(&[0x30, 0x39, 0x12, 0xb7]);
    if udp {
        f[38..40].copy_from_slice(&((len - 34) as u16).to_be_bytes());
    } else {
        f[46] = 0x50; // TCP data offset 5
    }
    f[42..46].copy_from_slice(&k.to_le_bytes());
    f
}

/// On a GPU: a pcap port replays 256 IPv4/UDP frames (60 to 1075 bytes) with a TCP frame
/// after every fourth; in each execution scope the receive program, whose Flow pipe sends
/// UDP to its queue and drops the rest, reports exactly the UDP frames, their bytes, the sum
/// of their numbers (0 + ... + 255) and no length mismatch.
#[test]
fn receive_program_gets_exactly_the_udp_frames_on_the_gpu() {
    use pcap_file::pcap::{PcapPacket, PcapWriter};
    let Some(bus) = gpu_bus_id() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("gpunetio_receive_like", C, dir.path()) else {
        return;
    };
    let input = dir.path().join("in.pcap");
    let mut w = PcapWriter::new(std::fs::File::create(&input).unwrap()).unwrap();
    let mut udp_bytes = 0u64;
    for k in 0..256u32 {
        let len = 60 + (k as usize * 4) % 1016;
        let f = frame(k, len, true);
        udp_bytes += f.len() as u64;
        let ts = std::time::Duration::from_micros(1_000_000 + u64::from(k));
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, &f))
            .unwrap();
        if k % 4 == 3 {
            let t = frame(1_000_000 + k, 80, false);
            w.write_packet(&PcapPacket::new(ts, t.len() as u32, &t))
                .unwrap();
        }
    }
    drop(w);
    let want = format!(
        "received 256 bytes {udp_bytes} number_sum {} bad_length 0",
        255 * 256 / 2
    );
    for scope in ["0", "1", "2"] {
        let output = dir.path().join(format!("out{scope}.pcap"));
        let ports = format!("pcap:{},{}", input.display(), output.display());
        let out = run(
            &exe,
            &ports,
            &[
                "-g", &bus, "-n", "pcap0", "-c", "256", "-e", scope, "-t", "10000",
            ],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "scope {scope}: exit {:?}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(stdout.lines().next(), Some(want.as_str()), "scope {scope}");
    }
}
