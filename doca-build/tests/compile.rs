//! The recipe with the real nvcc (building this workspace needs nvcc anyway: cuda-kernels
//! compiles its kernels at build time): the fatbin holds exactly SASS for sm_80 and sm_90
//! and PTX for compute_80, several sources share one translation unit, compile errors come
//! back with nvcc's message, and the command-line tool builds the same thing.

use doca_build::{Error, Fatbin, Nvcc};
use std::path::Path;
use std::process::Command;

const KERNEL: &str = r#"
extern "C" __global__ void doca_build_probe(int *out) { *out = 42; }
"#;

/// (kind, arch) of every entry of a fatbin: kind 1 is PTX, 2 is an ELF cubin (SASS).
/// Layout: a 16-byte container header (magic 0xba55ed50, version, header size, payload
/// size), then entries, each a header (kind u16 at 0, header size u32 at 4, payload size
/// u64 at 8, arch u32 at 28) followed by its payload.
fn entries(bin: &[u8]) -> Vec<(u16, u32)> {
    let u16_at = |o: usize| u16::from_le_bytes(bin[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(bin[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(bin[o..o + 8].try_into().unwrap());
    assert_eq!(u32_at(0), 0xba55_ed50, "fatbin magic");
    let start = usize::from(u16_at(6));
    let end = start + u64_at(8) as usize;
    let mut v = Vec::new();
    let mut o = start;
    while o < end {
        v.push((u16_at(o), u32_at(o + 28)));
        o += u32_at(o + 4) as usize + u64_at(o + 8) as usize;
    }
    v.sort();
    v
}

fn nvcc() -> Nvcc {
    Nvcc::find().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn one_source_compiles_to_sass_80_90_and_ptx_80() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("probe.cu");
    std::fs::write(&src, KERNEL).unwrap();
    let out = Fatbin::new()
        .file(&src)
        .nvcc(nvcc())
        .out_dir(t.path())
        .cargo_metadata(false)
        .compile("probe")
        .unwrap();
    assert_eq!(out, t.path().join("probe.fatbin"));
    let bin = std::fs::read(&out).unwrap();
    assert_eq!(entries(&bin), [(1, 80), (2, 80), (2, 90)]);
    assert!(String::from_utf8_lossy(&bin).contains("doca_build_probe"));
}

#[test]
fn several_sources_share_one_unit_with_includes_and_defines() {
    let t = tempfile::tempdir().unwrap();
    let inc = t.path().join("inc");
    std::fs::create_dir(&inc).unwrap();
    std::fs::write(
        inc.join("answer.cuh"),
        "static __device__ int answer() { return ANSWER; }\n",
    )
    .unwrap();
    // b.cu uses a helper defined in a.cu: only one translation unit makes that legal.
    std::fs::write(t.path().join("a.cu"), "#include <answer.cuh>\n").unwrap();
    std::fs::write(
        t.path().join("b.cu"),
        "extern \"C\" __global__ void doca_build_two(int *o) { *o = answer(); }\n",
    )
    .unwrap();
    let out = Fatbin::new()
        .dir(t.path())
        .unwrap()
        .include(&inc)
        .define("ANSWER", Some("7"))
        .out_dir(t.path())
        .cargo_metadata(false)
        .compile("two")
        .unwrap();
    let bin = std::fs::read(out).unwrap();
    assert!(String::from_utf8_lossy(&bin).contains("doca_build_two"));
    assert!(t.path().join("two.cu").exists(), "the generated unit");
}

#[test]
fn a_compile_error_returns_nvccs_message_and_command() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("bad.cu");
    std::fs::write(&src, "__global__ void k() { undefined_thing(); }\n").unwrap();
    let e = Fatbin::new()
        .file(&src)
        .out_dir(t.path())
        .cargo_metadata(false)
        .compile("bad")
        .unwrap_err();
    let Error::Nvcc {
        command, output, ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert!(output.contains("undefined_thing"), "{output}");
    assert!(command.contains("arch=compute_90,code=sm_90"), "{command}");
    assert!(!t.path().join("bad.fatbin").exists());
}

#[test]
fn the_command_line_tool_runs_the_same_recipe() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("probe.cu");
    std::fs::write(&src, KERNEL).unwrap();
    let out = t.path().join("sub/probe.fatbin");
    let tool = env!("CARGO_BIN_EXE_doca-fatbin");
    let st = Command::new(tool)
        .arg("-I")
        .arg(t.path())
        .arg("-DUNUSED=1")
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert_eq!(
        entries(&std::fs::read(&out).unwrap()),
        [(1, 80), (2, 80), (2, 90)]
    );
    // Bad usage: status 2 and the usage text.
    for args in [
        &["-o", "x.fatbin"][..],
        &[src.to_str().unwrap()],
        &["--bogus"],
    ] {
        let r = Command::new(tool).args(args).output().unwrap();
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&r.stderr).contains("usage:"),
            "{args:?}"
        );
    }
    // An NVCC that does not exist: status 1, the message names the variable.
    let r = Command::new(tool)
        .env("NVCC", Path::new("/nonexistent/nvcc"))
        .arg("--which")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("NVCC=/nonexistent/nvcc"));
}
