//! doca-soft's rdma-core subset (`include/compat/infiniband/`) against the real rdma-core.
//!
//! Every struct field and every constant the compat headers define is read out of the
//! headers themselves, so a field added there is checked without touching this test. A
//! probe prints size, alignment, offset and member size of each, and each constant's value;
//! it is compiled once against the installed rdma-core and once against doca-soft's subset
//! (forced with `DOCA_SOFT_FORCE_COMPAT_MLX5`), and the two outputs must be identical.
//! Without rdma-core (no `<infiniband/mlx5dv.h>`) the comparison prints why it skips; the
//! subset is still compiled and checked against the values the facts give.
//!
//! Also: doca_soft_mlx5.h picks the compat subset by itself on a system without rdma-core
//! (simulated with a copy of the system include directories that leaves out `infiniband/`
//! and librdmacm's headers in `rdma/`), and `-idirafter include/compat` serves programs that
//! include `<infiniband/mlx5dv.h>` directly there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

fn compat_dir() -> PathBuf {
    include_dir().join("compat/infiniband")
}

/// Prints the skip line for a check that needs rdma-core's own headers, saying how to get them.
fn skip_without_rdma_core(what: &str) {
    doca_test_support::skip(&format!(
        "no rdma-core headers (<infiniband/mlx5dv.h>): {what}; install them (Debian/Ubuntu: apt-get install libibverbs-dev)"
    ));
}

/// One struct member as the probe addresses it (`a.b` for members of named nested
/// aggregates; members of anonymous ones are addressed directly, as in C).
#[derive(Debug, Clone, PartialEq)]
struct Member {
    aggregate: String,
    path: String,
}

/// What the compat headers define: their aggregates with members, and their constants.
#[derive(Debug, Default)]
struct Defined {
    aggregates: Vec<String>,
    members: Vec<Member>,
    constants: Vec<String>,
}

/// Reads the aggregates, members and enum constants of a compat header. The headers are
/// written in one regular style (one member per line, `struct name {` openers), which this
/// reader relies on; `reader_finds_what_the_headers_define` guards it.
fn scan(text: &str) -> Defined {
    let mut d = Defined::default();
    let mut top: Option<String> = None;
    // One frame per open aggregate: the member paths found in it so far.
    let mut frames: Vec<Vec<String>> = Vec::new();
    let mut in_enum = false;
    for raw in text.lines() {
        let line = raw.split("/*").next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('*') {
            continue;
        }
        if in_enum {
            if line.starts_with('}') {
                in_enum = false;
            } else if let Some((name, _)) = line.split_once('=') {
                d.constants.push(name.trim().to_string());
            }
            continue;
        }
        if line.starts_with("enum") && line.ends_with('{') {
            in_enum = true;
            continue;
        }
        let Some(agg) = top.clone() else {
            for kw in ["struct ", "union "] {
                if let Some(name) = line.strip_prefix(kw).and_then(|r| r.strip_suffix('{')) {
                    let full = format!("{kw}{}", name.trim());
                    d.aggregates.push(full.clone());
                    top = Some(full);
                    frames.push(Vec::new());
                }
            }
            continue;
        };
        if line == "struct {" || line == "union {" {
            frames.push(Vec::new());
        } else if let Some(rest) = line.strip_prefix('}') {
            let done = frames.pop().unwrap();
            match frames.last_mut() {
                None => {
                    d.members.extend(done.into_iter().map(|path| Member {
                        aggregate: agg.clone(),
                        path,
                    }));
                    top = None;
                }
                Some(parent) => {
                    // `} name;` names the member aggregate; `};` is anonymous.
                    let name = rest.trim().trim_end_matches(';').trim();
                    if !name.is_empty() {
                        parent.push(name.to_string());
                    }
                    for p in done {
                        parent.push(if name.is_empty() {
                            p
                        } else {
                            format!("{name}.{p}")
                        });
                    }
                }
            }
        } else if let Some(decl) = line.strip_suffix(';') {
            let name = decl
                .split_whitespace()
                .last()
                .unwrap()
                .split('[')
                .next()
                .unwrap()
                .trim_start_matches('*')
                .to_string();
            frames.last_mut().unwrap().push(name);
        }
    }
    d
}

fn defined() -> Defined {
    let mut all = Defined::default();
    for file in ["verbs.h", "mlx5dv.h"] {
        let text = std::fs::read_to_string(compat_dir().join(file)).unwrap();
        let d = scan(&text);
        all.aggregates.extend(d.aggregates);
        all.members.extend(d.members);
        all.constants.extend(d.constants);
    }
    all
}

/// The probe: one line per fact, `key<TAB>value`.
fn probe_source(d: &Defined) -> String {
    let mut s = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <doca_soft_mlx5.h>\n\
         int main(void) {\n\
         #ifdef DOCA_SOFT_COMPAT_INFINIBAND_MLX5DV_H_\n\
         printf(\"source\\tcompat\\n\");\n\
         #else\n\
         printf(\"source\\trdma-core\\n\");\n\
         #endif\n",
    );
    for a in &d.aggregates {
        s += &format!("printf(\"{a}\\tsize %zu align %zu\\n\", sizeof({a}), _Alignof({a}));\n");
    }
    for m in &d.members {
        let (a, p) = (&m.aggregate, &m.path);
        s += &format!(
            "printf(\"{a}.{p}\\toffset %zu size %zu\\n\", offsetof({a}, {p}), sizeof((({a} *)0)->{p}));\n"
        );
    }
    for c in &d.constants {
        s += &format!("printf(\"{c}\\t%lld\\n\", (long long){c});\n");
    }
    s += "return 0;\n}\n";
    s
}

/// Compiles and runs the probe; returns its lines as key -> value.
fn run_probe(src: &str, extra: &[&str]) -> BTreeMap<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("probe.c");
    let exe = dir.path().join("probe");
    std::fs::write(&c, src).unwrap();
    let out = Command::new("gcc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror"])
        .args(extra)
        .arg("-I")
        .arg(include_dir())
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("running gcc");
    assert!(
        out.status.success(),
        "probe ({extra:?}) does not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().expect("running the probe");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('\t').expect("probe line: key TAB value");
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn has_rdma_core() -> bool {
    // The same test the shim makes: can the compiler find <infiniband/mlx5dv.h>?
    let out = Command::new("sh")
        .args([
            "-c",
            "echo '#include <infiniband/mlx5dv.h>' | gcc -fsyntax-only -x c - 2>/dev/null",
        ])
        .status()
        .expect("running gcc");
    out.success()
}

#[test]
fn reader_finds_what_the_headers_define() {
    let d = defined();
    for a in [
        "struct mlx5_cqe64",
        "struct mlx5_wqe_ctrl_seg",
        "struct mlx5_wqe_data_seg",
        "struct mlx5_wqe_raddr_seg",
        "struct mlx5_wqe_atomic_seg",
        "struct mlx5_err_cqe",
        "union ibv_gid",
    ] {
        assert!(d.aggregates.iter().any(|x| x == a), "{a} not found");
    }
    let has = |a: &str, p: &str| d.members.iter().any(|m| m.aggregate == a && m.path == p);
    assert!(has("struct mlx5_cqe64", "op_own"));
    assert!(has("struct mlx5_cqe64", "wqe_id")); // anonymous struct in an anonymous union
    assert!(has("struct mlx5_cqe64", "tmh")); // member of an anonymous union
    assert!(has("struct mlx5_wqe_av", "key.qkey.qkey")); // named nested aggregates
    assert!(has("struct mlx5_wqe_av", "key.dc_key"));
    assert!(has("union ibv_gid", "global.interface_id"));
    assert!(has("struct mlx5_wqe_ctrl_seg", "fm_ce_se"));
    for c in [
        "MLX5_OPCODE_RDMA_WRITE",
        "MLX5_CQE_INVALID",
        "MLX5_CQE_OWNER_MASK",
        "MLX5_WQE_CTRL_CQ_UPDATE",
        "MLX5_INLINE_SCATTER_32",
        "MLX5_SND_DBR",
        "IBV_ACCESS_RELAXED_ORDERING",
    ] {
        assert!(d.constants.iter().any(|x| x == c), "{c} not found");
    }
    assert!(d.members.len() > 60, "only {} members", d.members.len());
    assert!(
        d.constants.len() > 70,
        "only {} constants",
        d.constants.len()
    );
}

#[test]
fn compat_subset_has_the_values_and_layouts_of_the_facts() {
    let d = defined();
    let got = run_probe(&probe_source(&d), &["-DDOCA_SOFT_FORCE_COMPAT_MLX5"]);
    assert_eq!(got["source"], "compat");
    // Independent of any rdma-core: the facts (reference §2.7, §3.1, §3.12).
    for (k, v) in [
        ("struct mlx5_cqe64", "size 64 align 8"),
        ("struct mlx5_cqe64.srqn_uidx", "offset 32 size 4"),
        ("struct mlx5_cqe64.imm_inval_pkey", "offset 36 size 4"),
        ("struct mlx5_cqe64.byte_cnt", "offset 44 size 4"),
        ("struct mlx5_cqe64.timestamp", "offset 48 size 8"),
        ("struct mlx5_cqe64.sop_drop_qpn", "offset 56 size 4"),
        ("struct mlx5_cqe64.wqe_counter", "offset 60 size 2"),
        ("struct mlx5_cqe64.op_own", "offset 63 size 1"),
        ("struct mlx5_wqe_ctrl_seg", "size 16 align 4"),
        ("struct mlx5_wqe_ctrl_seg.fm_ce_se", "offset 11 size 1"),
        ("struct mlx5_wqe_ctrl_seg.imm", "offset 12 size 4"),
        ("struct mlx5_wqe_data_seg", "size 16 align 8"),
        ("struct mlx5_wqe_data_seg.addr", "offset 8 size 8"),
        ("struct mlx5_wqe_raddr_seg.rkey", "offset 8 size 4"),
        ("struct mlx5_wqe_atomic_seg.compare", "offset 8 size 8"),
        ("MLX5_OPCODE_RDMA_WRITE", "8"),
        ("MLX5_OPCODE_RDMA_READ", "16"),
        ("MLX5_OPCODE_ATOMIC_FA", "18"),
        ("MLX5_OPCODE_SEND_IMM", "11"),
        ("MLX5_CQE_INVALID", "15"),
        ("MLX5_CQE_REQ_ERR", "13"),
        ("MLX5_CQE_RESP_ERR", "14"),
        ("MLX5_CQE_RESP_SEND_IMM", "3"),
        ("MLX5_CQE_OWNER_MASK", "1"),
        ("MLX5_INLINE_SCATTER_32", "4"),
        ("MLX5_WQE_CTRL_CQ_UPDATE", "8"),
        ("MLX5_INLINE_SEG", "2147483648"),
        ("IBV_ACCESS_LOCAL_WRITE", "1"),
        ("IBV_ACCESS_REMOTE_ATOMIC", "8"),
        ("IBV_ACCESS_RELAXED_ORDERING", "1048576"),
    ] {
        assert_eq!(got.get(k).map(String::as_str), Some(v), "{k}");
    }
}

#[test]
fn compat_subset_matches_the_installed_rdma_core() {
    if !has_rdma_core() {
        skip_without_rdma_core("nothing to compare the compat subset with");
        return;
    }
    let d = defined();
    let src = probe_source(&d);
    let real = run_probe(&src, &[]);
    let ours = run_probe(&src, &["-DDOCA_SOFT_FORCE_COMPAT_MLX5"]);
    assert_eq!(
        real["source"], "rdma-core",
        "the shim must prefer rdma-core"
    );
    assert_eq!(ours["source"], "compat");
    let keys = d.aggregates.len() + d.members.len() + d.constants.len() + 1;
    assert_eq!(real.len(), keys, "probe lines (real)");
    let diffs: Vec<String> = real
        .iter()
        .filter(|(k, v)| *k != "source" && ours.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}: rdma-core {v}, compat {:?}", ours.get(k)))
        .collect();
    assert!(diffs.is_empty(), "compat differs:\n{}", diffs.join("\n"));
}

/// The headers librdmacm (rdma-core) installs into `rdma/`, a directory it shares with the
/// kernel's UAPI headers (linux-libc-dev): a system without rdma-core still has `rdma/`, but
/// not these.
const LIBRDMACM_HEADERS: [&str; 4] = ["rdma_cma.h", "rdma_cma_abi.h", "rdma_verbs.h", "rsocket.h"];

/// Symlinks in `copy` to every entry of `dir` except those named in `leave_out`.
fn link_entries(dir: &Path, copy: &Path, leave_out: &[&str]) {
    std::fs::create_dir_all(copy).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if leave_out.iter().any(|l| name == *l) {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), copy.join(&name)).unwrap();
    }
}

/// A copy of the compiler's system include directories as a system without rdma-core has
/// them (symlinks): no `infiniband/`, and `rdma/` without librdmacm's headers; plus the flags
/// that make gcc use it instead of the real ones.
fn sysroot_without_rdma_core(tmp: &Path) -> Vec<String> {
    let out = Command::new("sh")
        .args(["-c", "gcc -xc -E -v /dev/null 2>&1 >/dev/null"])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let dirs: Vec<PathBuf> = text
        .lines()
        .skip_while(|l| !l.starts_with("#include <...> search starts here:"))
        .skip(1)
        .take_while(|l| !l.starts_with("End of search list."))
        .map(|l| PathBuf::from(l.trim()))
        .collect();
    assert!(!dirs.is_empty(), "gcc -v printed no search list:\n{text}");
    let mut flags = vec!["-nostdinc".to_string()];
    for (i, d) in dirs.iter().enumerate() {
        let copy = tmp.join(format!("sys{i}"));
        link_entries(d, &copy, &["infiniband", "rdma"]);
        if d.join("rdma").is_dir() {
            link_entries(&d.join("rdma"), &copy.join("rdma"), &LIBRDMACM_HEADERS);
        }
        flags.push("-isystem".into());
        flags.push(copy.display().to_string());
    }
    flags
}

#[test]
fn without_rdma_core_the_shim_and_idirafter_find_the_compat_subset() {
    let tmp = tempfile::tempdir().unwrap();
    let sysroot = sysroot_without_rdma_core(tmp.path());
    let flags: Vec<&str> = sysroot.iter().map(String::as_str).collect();

    // The installed rdma-core (if any) is out of sight: a direct include fails...
    let direct = tmp.path().join("direct.c");
    std::fs::write(&direct, "#include <infiniband/mlx5dv.h>\nint x;\n").unwrap();
    let out = Command::new("gcc")
        .args(&flags)
        .args(["-fsyntax-only"])
        .arg(&direct)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the sysroot copy still has rdma-core"
    );

    // ...doca-soft's headers still compile, with the compat subset (C and C++)...
    let d = defined();
    let got = run_probe(&probe_source(&d), &flags);
    assert_eq!(got["source"], "compat");
    assert_eq!(got["struct mlx5_cqe64"], "size 64 align 8");
    for (cc, ext) in [("gcc", "c"), ("g++", "cpp")] {
        let f = tmp.path().join(format!("v.{ext}"));
        std::fs::write(
            &f,
            "#include <doca_gpunetio_verbs_def.h>\n\
             int check[sizeof(struct doca_gpu_dev_verbs_qp) == 312 ? 1 : -1];\n",
        )
        .unwrap();
        let out = Command::new(cc)
            .args(&flags)
            .args(["-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
            .arg(include_dir())
            .arg(&f)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cc}: verbs_def.h without rdma-core:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // ...and a program's own #include <infiniband/...> (or <rdma/rdma_cma.h>, for
    // doca_rdma.h) works with -idirafter compat, in C and C++.
    let cm = tmp.path().join("cm.c");
    std::fs::write(
        &cm,
        "#include <rdma/rdma_cma.h>\n#include <infiniband/verbs.h>\n\
         struct rdma_cm_id *id_of(struct ibv_pd *pd);\n\
         int x[sizeof(union ibv_gid) == 16 ? 1 : -1];\n",
    )
    .unwrap();
    for (cc, lang) in [("gcc", "c"), ("g++", "c++")] {
        for file in [&direct, &cm] {
            let out = Command::new(cc)
                .args(&flags)
                .args([
                    "-x",
                    lang,
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-fsyntax-only",
                    "-idirafter",
                ])
                .arg(include_dir().join("compat"))
                .arg(file)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{cc} -idirafter compat {}:\n{}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn idirafter_never_hides_an_installed_rdma_core() {
    if !has_rdma_core() {
        skip_without_rdma_core("nothing that -idirafter could hide");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("p.c");
    std::fs::write(
        &f,
        "#include <infiniband/mlx5dv.h>\n\
         #ifdef DOCA_SOFT_COMPAT_INFINIBAND_MLX5DV_H_\n#error compat chosen over rdma-core\n#endif\n\
         int x;\n",
    )
    .unwrap();
    let out = Command::new("gcc")
        .args(["-fsyntax-only", "-idirafter"])
        .arg(include_dir().join("compat"))
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
