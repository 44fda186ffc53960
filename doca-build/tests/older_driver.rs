//! The older-driver recipe with the real tools: nvcc 13.0 and CUDA 12.2's ptxas (both
//! installed by scripts/setup; no GPU needed). The fatbin carries the same entries as the
//! default recipe with its PTX at the lowered ISA, an instruction the ISA lacks fails with
//! ptxas's message and the advice to raise it, and every kernel doca-rs ships assembles at
//! ISA 8.0 (CUDA 12.0), so that every CUDA 12 driver can load it.

mod common;

use common::{entries, ptx_texts};
use doca_build::{Error, Fatbin, OlderDriver, PtxIsa};
use std::path::{Path, PathBuf};

/// The workspace root (doca-build is one of its members).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// CUDA 12.2's ptxas from the pinned wheel.
fn ptxas_12_2() -> PathBuf {
    let tools = std::env::var_os("DOCA_RS_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".tools"));
    let p = tools.join("py12/nvidia/cuda_nvcc/bin/ptxas");
    assert!(
        p.is_file(),
        "{} is missing: run scripts/setup (it installs CUDA 12.2's ptxas)",
        p.display()
    );
    p
}

fn isa(text: &str) -> PtxIsa {
    PtxIsa::parse(text).unwrap()
}

/// Compiles `sources` with the older-driver recipe at `isa` into `dir`.
fn build(dir: &Path, sources: &[PathBuf], isa_text: &str) -> Result<PathBuf, Error> {
    Fatbin::new()
        .files(sources.iter().cloned())
        .include(workspace().join("doca-soft/include"))
        .older_driver(Some(OlderDriver::new(isa(isa_text), ptxas_12_2())))
        .out_dir(dir)
        .cargo_metadata(false)
        .compile("k")
}

#[test]
fn the_fatbin_has_the_default_entries_with_ptx_at_the_lowered_isa() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("probe.cu");
    std::fs::write(
        &src,
        "extern \"C\" __global__ void doca_build_old(int *o) { *o = 12; }\n",
    )
    .unwrap();
    let out = build(t.path(), &[src], "8.2").unwrap();
    let bin = std::fs::read(&out).unwrap();
    assert_eq!(entries(&bin), [(1, 80), (2, 80), (2, 90)]);
    let ptx = ptx_texts(&bin);
    assert_eq!(ptx.len(), 1);
    assert!(ptx[0].contains("\n.version 8.2\n"), "{}", &ptx[0][..200]);
    assert!(!ptx[0].contains(".version 9"), "no ISA 9 left");
    assert!(ptx[0].contains("doca_build_old"));
    // The intermediates stay next to the fatbin, for inspection.
    for f in [
        "k.compute_80.ptx",
        "k.compute_90.ptx",
        "k.sm_80.cubin",
        "k.sm_90.cubin",
    ] {
        assert!(t.path().join(f).is_file(), "{f}");
    }
}

#[test]
fn an_instruction_the_isa_lacks_fails_with_ptxas_message_and_advice() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("mmio.cu");
    // The relaxed MMIO store is PTX ISA 8.2: ptxas 12.2 refuses it under `.version 8.0`.
    std::fs::write(
        &src,
        "extern \"C\" __global__ void doca_build_mmio(unsigned *p) {\n\
         asm volatile(\"st.mmio.relaxed.sys.global.u32 [%0], 1;\" : : \"l\"(p) : \"memory\");\n}\n",
    )
    .unwrap();
    let e = build(t.path(), std::slice::from_ref(&src), "8.0").unwrap_err();
    let Error::Ptxas {
        isa: got, output, ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*got, isa("8.0"));
    assert!(output.contains("mmio"), "{output}");
    let text = e.to_string();
    assert!(text.contains("raise DOCA_BUILD_PTX_ISA"), "{text}");
    assert!(!t.path().join("k.fatbin").exists());
    // At 8.2 the same source builds.
    build(t.path(), &[src], "8.2").unwrap();
}

#[test]
fn every_kernel_of_doca_rs_assembles_at_isa_8_0() {
    let ws = workspace();
    for dir in [
        "cuda-kernels/kernels",
        "examples/own-kernel/kernels",
        "benches/kernels",
    ] {
        let t = tempfile::tempdir().unwrap();
        let f = Fatbin::new()
            .dir(ws.join(dir))
            .unwrap()
            .include(ws.join("doca-soft/include"))
            .older_driver(Some(OlderDriver::new(isa("8.0"), ptxas_12_2())))
            .out_dir(t.path())
            .cargo_metadata(false);
        let out = f.compile("all").unwrap_or_else(|e| panic!("{dir}: {e}"));
        let bin = std::fs::read(out).unwrap();
        assert_eq!(entries(&bin), [(1, 80), (2, 80), (2, 90)], "{dir}");
        assert!(ptx_texts(&bin)[0].contains("\n.version 8.0\n"), "{dir}");
    }
}

#[test]
fn the_default_recipe_ignores_an_older_driver_set_to_none() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("p.cu");
    std::fs::write(&src, "extern \"C\" __global__ void p(int *o) { *o = 1; }\n").unwrap();
    let out = Fatbin::new()
        .file(&src)
        .older_driver(None)
        .out_dir(t.path())
        .cargo_metadata(false)
        .compile("p")
        .unwrap();
    let bin = std::fs::read(out).unwrap();
    assert_eq!(entries(&bin), [(1, 80), (2, 80), (2, 90)]);
    // nvcc's own fatbin: its PTX is compressed (no plain `.version` line) and none of the
    // older-driver steps ran.
    assert!(!ptx_texts(&bin)[0].contains(".version"));
    for f in ["p.compute_80.ptx", "p.sm_80.cubin"] {
        assert!(!t.path().join(f).exists(), "{f}");
    }
}
