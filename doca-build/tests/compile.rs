//! The recipe with the real nvcc (building this workspace needs nvcc anyway: cuda-kernels
//! compiles its kernels at build time): the fatbin holds exactly SASS for sm_80 and sm_90
//! and PTX for compute_80, several sources share one translation unit, compile errors come
//! back with nvcc's message, and the command-line tool builds the same thing.

mod common;

use common::entries;
use doca_build::{Error, Fatbin, Nvcc};
use std::path::Path;
use std::process::Command;

const KERNEL: &str = r#"
extern "C" __global__ void doca_build_probe(int *out) { *out = 42; }
"#;

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
