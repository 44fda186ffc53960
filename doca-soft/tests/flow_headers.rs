//! The Flow headers compile alone, in C and in C++, with -Wall -Wextra -Werror, and the
//! sample-style uses (`fwd.rss.queues_array`, `fwd.next_pipe`, `outer.udp.l4_port`) work.

use doca_test_support::cc;

use std::path::Path;
use std::process::Command;

const USE: &str = r#"
#include <doca_bitfield.h>
#include <doca_flow.h>
#include <doca_soft_port.h>
int use_flow(struct doca_flow_pipe *next);
int use_flow(struct doca_flow_pipe *next)
{
	static uint16_t q[1] = {0};
	struct doca_flow_match m = {0};
	struct doca_flow_fwd fwd = {0};
	struct doca_flow_fwd to_pipe = {0};
	struct doca_flow_monitor mon = {0};
	struct doca_flow_resource_query st = {0};
	m.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
	m.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
	m.outer.eth.type = DOCA_HTOBE16(DOCA_FLOW_ETHER_TYPE_IPV4);
	m.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	m.outer.ip4.next_proto = DOCA_FLOW_PROTO_UDP;
	m.outer.udp.l4_port.dst_port = DOCA_HTOBE16(53);
	m.outer.tcp.flags = DOCA_FLOW_MATCH_TCP_FLAG_SYN;
	fwd.type = DOCA_FLOW_FWD_RSS;
	fwd.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.rss.queues_array = q;
	fwd.rss.nr_queues = 1;
	fwd.rss.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP;
	to_pipe.type = DOCA_FLOW_FWD_PIPE;
	to_pipe.next_pipe = next;
	mon.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	return (int)(st.counter.total_pkts + m.outer.l3_type + fwd.type + to_pipe.type + mon.counter_type);
}
"#;

fn compile(compiler: &str, lang: &str, src: &str, tag: &str) -> Result<(), String> {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join(format!("{tag}.c"));
    std::fs::write(&file, src).map_err(|e| e.to_string())?;
    let out = Command::new(compiler)
        .args(["-x", lang, "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
        .arg(format!("-I{}", include.display()))
        .arg(&file)
        .output()
        .map_err(|e| format!("{compiler}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn flow_headers_compile_alone_in_c_and_cpp() {
    if !doca_test_support::require_tool("cc", doca_test_support::GET_A_C_COMPILER) {
        return;
    }
    for h in [
        "doca_flow.h",
        "doca_flow_net.h",
        "doca_flow_crypto.h",
        "doca_flow_definitions.h",
        "doca_soft_port.h",
    ] {
        let src = format!("#include <{h}>\n");
        compile("cc", "c", &src, "alone").unwrap_or_else(|e| panic!("{h} (C): {e}"));
        if Command::new("c++").arg("--version").output().is_ok() {
            compile("c++", "c++", &src, "alone").unwrap_or_else(|e| panic!("{h} (C++): {e}"));
        }
    }
    compile("cc", "c", USE, "use").unwrap_or_else(|e| panic!("sample-style use (C): {e}"));
}

#[test]
fn public_names_map_to_v1_symbols() {
    if !doca_test_support::require_tool("cc", doca_test_support::GET_A_C_COMPILER) {
        return;
    }
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let out = Command::new("cc")
        .args(["-E", "-P", "-x", "c", "-"])
        .arg(format!("-I{}", include.display()))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(b"#include <doca_flow.h>\nMARK doca_flow_init doca_flow_pipe_create struct doca_flow_match\n")?;
            c.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("MARK"))
        .expect("marker line");
    assert_eq!(
        line,
        "MARK doca_flow_init_v1 doca_flow_pipe_create_v1 struct doca_flow_match_v1"
    );
}

/// Compiles (and with `run`, links and runs) a C or C++ snippet against include/; Err holds
/// the compiler's (or the program's) output.
fn build(
    compiler: &str,
    lang: &str,
    src: &str,
    flags: &[&str],
    run: bool,
) -> Result<String, String> {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("t.c");
    let exe = dir.path().join("t");
    std::fs::write(&file, src).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(compiler);
    cmd.args(["-x", lang, "-Wall", "-Wextra", "-Werror"])
        .args(flags)
        .arg(format!("-I{}", include.display()))
        .arg(&file);
    if run {
        cmd.arg("-o").arg(&exe);
    } else {
        cmd.arg("-fsyntax-only");
    }
    let out = cmd.output().map_err(|e| format!("{compiler}: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    if !run {
        return Ok(String::new());
    }
    let r = Command::new(&exe).output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&r.stdout).into_owned();
    if r.status.success() {
        Ok(stdout)
    } else {
        Err(stdout)
    }
}

/// Both forms exist, as in 3.3: a unit that includes only doca_flow_net.h sees the plain
/// tags; after doca_flow.h every plain name means its `_v1` twin, of the same layout; an
/// application's LIB_FLOW_VERSION is replaced by 1.
#[test]
fn plain_and_versioned_tags_coexist() {
    const SRC: &str = r#"
#define LIB_FLOW_VERSION 7
#include <doca_flow_net.h>
static struct doca_flow_header_ip4 plain_ip4;
static struct doca_flow_tun plain_tun;
#include <doca_flow.h>
#ifdef __cplusplus
#define SA static_assert
#else
#define SA _Static_assert
#endif
SA(LIB_FLOW_VERSION == 1, "version 1 whatever the application said");
SA(sizeof(plain_ip4) == sizeof(struct doca_flow_header_ip4_v1), "same layout");
SA(sizeof(plain_tun) == 272 && sizeof(struct doca_flow_tun) == 272, "tun");
SA(sizeof(struct doca_flow_match) == 536 && sizeof(struct doca_flow_match_v1) == 536, "match");
SA(sizeof(struct doca_flow_actions) == 1024, "actions");
int use(struct doca_flow_match_v1 *m);
int use(struct doca_flow_match *m) { return (int)m->outer.l3_type + plain_ip4.ttl + (int)plain_tun.type; }
"#;
    if !doca_test_support::require_tool("cc", doca_test_support::GET_A_C_COMPILER) {
        return;
    }
    build("cc", "c", SRC, &[], false).unwrap_or_else(|e| panic!("C: {e}"));
    if doca_test_support::have_tool("c++") {
        build("c++", "c++", SRC, &[], false).unwrap_or_else(|e| panic!("C++: {e}"));
    }
}

/// The DOCA_FLOW_STRUCT_*_INIT initialisers set the members they take (arrays zeroed),
/// through the _INIT_mid/_versioned/_V1 chain, in C and C++.
#[test]
fn struct_initialisers_set_their_members() {
    const SRC: &str = r#"
#include <stdio.h>
#include <doca_flow.h>
int main(void)
{
	uint32_t key[8] = {1};
	uint16_t queues[2] = {3, 4};
	struct doca_flow_header_eth eth = DOCA_FLOW_STRUCT_HEADER_ETH_INIT(0x0008);
	struct doca_flow_header_ip4 ip4 = DOCA_FLOW_STRUCT_HEADER_IP4_INIT(1, 2, 0x45, 0, 0, 0, 0, 17, 64);
	struct doca_flow_header_ip6 ip6 = DOCA_FLOW_STRUCT_HEADER_IP6_INIT(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 6, 255);
	struct doca_flow_resource_rss_cfg rss =
		DOCA_FLOW_STRUCT_RESOURCE_RSS_CFG_INIT(DOCA_FLOW_RSS_IPV4, 0, queues, 2, DOCA_FLOW_RSS_HASH_FUNCTION_TOEPLITZ);
	struct doca_flow_fwd fwd = DOCA_FLOW_STRUCT_FWD_INIT(DOCA_FLOW_FWD_DROP);
	struct doca_flow_monitor mon =
		DOCA_FLOW_STRUCT_MONITOR_INIT(DOCA_FLOW_RESOURCE_TYPE_NONE, DOCA_FLOW_RESOURCE_TYPE_NON_SHARED, 5);
	struct doca_flow_crypto_key_cfg kc = DOCA_FLOW_STRUCT_CRYPTO_KEY_CFG_INIT(DOCA_FLOW_CRYPTO_KEY_256, key);
	struct doca_flow_tun tun = DOCA_FLOW_STRUCT_TUN_INIT(DOCA_FLOW_TUN_GTPU);
	struct doca_flow_shared_resource_cfg src = DOCA_FLOW_STRUCT_SHARED_RESOURCE_CFG_INIT();
	struct doca_flow_resource_query q = DOCA_FLOW_STRUCT_RESOURCE_QUERY_INIT();
	union doca_flow_geneve_option opt;
	opt.data = 0xffffffffu;
	DOCA_FLOW_UNION_GENEVE_OPTION_INIT(opt, type, 7);
	if (eth.type != 0x0008 || eth.src_mac[0] != 0 || ip4.next_proto != 17 || ip4.ttl != 64 ||
	    ip4.dst_ip != 2 || ip6.src_ip[3] != 4 || ip6.dst_ip[0] != 5 || ip6.hop_limit != 255 ||
	    rss.nr_queues != 2 || rss.queues_array != queues || fwd.type != DOCA_FLOW_FWD_DROP ||
	    mon.counter_type != DOCA_FLOW_RESOURCE_TYPE_NON_SHARED || mon.aging_sec != 5 ||
	    kc.key != key || tun.type != DOCA_FLOW_TUN_GTPU || src.rss_cfg.nr_queues != 0 ||
	    q.counter.total_pkts != 0 || opt.type != 7 || opt.class_id != 0 || opt.length != 0) {
		printf("initialisers wrong\n");
		return 1;
	}
	printf("initialisers ok\n");
	return 0;
}
"#;
    if !doca_test_support::require_tool("cc", doca_test_support::GET_A_C_COMPILER) {
        return;
    }
    let out = build("cc", "c", SRC, &["-DDOCA_ALLOW_EXPERIMENTAL_API"], true)
        .unwrap_or_else(|e| panic!("C: {e}"));
    assert!(out.contains("initialisers ok"));
    if doca_test_support::have_tool("c++") {
        // C++ warns about the members a designated initialiser leaves out.
        let flags = [
            "-DDOCA_ALLOW_EXPERIMENTAL_API",
            "-Wno-missing-field-initializers",
        ];
        let out = build("c++", "c++", SRC, &flags, true).unwrap_or_else(|e| panic!("C++: {e}"));
        assert!(out.contains("initialisers ok"));
    }
}

/// The `_v1` names carry 3.3's attributes: doca_flow_init stays stable, while
/// doca_flow_pipe_cfg_set_match (stable as a plain name) is experimental as `_v1`, so
/// calling it without DOCA_ALLOW_EXPERIMENTAL_API fails under -Werror.
#[test]
fn versioned_calls_carry_their_attributes() {
    if !doca_test_support::require_tool("cc", doca_test_support::GET_A_C_COMPILER) {
        return;
    }
    let stable = "#include <doca_flow.h>\nint f(struct doca_flow_cfg *c);\nint f(struct doca_flow_cfg *c) { return (int)doca_flow_init(c); }\n";
    build("cc", "c", stable, &[], false).unwrap_or_else(|e| panic!("stable call: {e}"));
    let experimental = "#include <doca_flow.h>\nint f(struct doca_flow_pipe_cfg *c);\nint f(struct doca_flow_pipe_cfg *c) { return (int)doca_flow_pipe_cfg_set_match(c, 0, 0); }\n";
    let err =
        build("cc", "c", experimental, &[], false).expect_err("experimental without the opt-in");
    assert!(err.contains("doca_flow_pipe_cfg_set_match_v1"), "{err}");
    build(
        "cc",
        "c",
        experimental,
        &["-DDOCA_ALLOW_EXPERIMENTAL_API"],
        false,
    )
    .unwrap_or_else(|e| panic!("with the opt-in: {e}"));
}

/// doca_flow.h's include graph is 3.3's, in order: the system headers, doca_compat.h,
/// doca_error.h, doca_flow_net.h, doca_flow_crypto.h; inside extern "C" the ctsd compat
/// versions first and doca_ctsd_flow.h last.
#[test]
fn include_graph_of_doca_flow_h() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/doca_flow.h"))
            .unwrap();
    let includes: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#include "))
        .map(|s| s.trim_matches(|c| c == '<' || c == '>' || c == '"'))
        .collect();
    assert_eq!(
        includes,
        [
            "stdio.h",
            "stdint.h",
            "stdbool.h",
            "doca_compat.h",
            "doca_error.h",
            "doca_flow_net.h",
            "doca_flow_crypto.h",
            "doca_ctsd_compat_versions.h",
            "doca_ctsd_flow.h",
        ]
    );
    let extern_c = text.find("extern \"C\"").unwrap();
    assert!(text.find("doca_ctsd_compat_versions.h").unwrap() > extern_c);
    let last_decl = text.rfind("doca_flow_mpls_label_decode").unwrap();
    assert!(text.rfind("#include \"doca_ctsd_flow.h\"").unwrap() > last_decl);
}

/// include/doca_ctsd_flow.h is what tests/gen/ctsd_flow.py makes of the current headers.
#[test]
fn versioned_header_is_generated_from_the_plain_one() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gen/ctsd_flow.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--check")
        .output()
        .expect("python3 runs (needed to check the generated header)");
    assert!(
        out.status.success(),
        "doca_ctsd_flow.h is stale; run `python3 doca-soft/tests/gen/ctsd_flow.py`:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("include/doca_ctsd_flow.h"),
    )
    .unwrap();
    assert_eq!(
        text.matches("_versioned_mid(VERSION)").count(),
        69,
        "44 tags and 25 calls"
    );
    assert_eq!(text.matches("_INIT_V1(").count(), 44);
}

/// Every prototype of the fact sheet (110: doca_flow.h, doca_flow_crypto.h,
/// doca_flow_definitions.h), redeclared after our headers by tests/c/flow_prototypes.c,
/// compiles as C and as C++: same return and parameter types, and declared at all.
#[test]
fn every_prototype_of_3_3_is_declared_identically() {
    let src = cc::c_source("flow_prototypes.c");
    let text = std::fs::read_to_string(&src).unwrap();
    assert_eq!(text.matches("\t(flow_any_fn)").count(), 110);
    for lang in [cc::C, cc::CXX] {
        if !doca_test_support::require_tool(&lang.compiler(), doca_test_support::GET_A_C_COMPILER) {
            continue;
        }
        cc::compile(
            lang,
            &src,
            Path::new("/dev/null"),
            cc::Output::SyntaxOnly,
            cc::Rdma::Plain,
            &[],
        )
        .unwrap_or_else(|e| panic!("flow_prototypes.c as {}:\n{e}", lang.x));
    }
}

/// Without DOCA_ALLOW_EXPERIMENTAL_API, taking the address of exactly the functions the
/// sheet marks E (DOCA_EXPERIMENTAL, for versioned calls their `_v1` form's attribute) is
/// diagnosed as deprecated; the S ones (DOCA_STABLE) are not.
#[test]
fn every_call_carries_the_attribute_of_3_3() {
    let text = std::fs::read_to_string(cc::c_source("flow_prototypes.c")).unwrap();
    let mut want: Vec<(String, bool)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("\t(flow_any_fn)") {
            let name = rest.split(',').next().unwrap().to_owned();
            want.push((name, rest.ends_with("/* E */")));
        }
    }
    assert_eq!(want.len(), 110);
    for (compiler, lang) in [("cc", "c"), ("c++", "c++")] {
        if !doca_test_support::have_tool(compiler) {
            continue;
        }
        let stderr = compile(compiler, lang, &text, "attrs")
            .err()
            .unwrap_or_default();
        // "'doca_flow_x' is deprecated" (C) or "'doca_error_t doca_flow_x_v1(...)' is
        // deprecated" (C++, reported where the rename macro is defined): the name, without
        // its version suffix.
        let deprecated: Vec<String> = stderr
            .lines()
            .filter_map(|l| {
                l.split(" is deprecated")
                    .next()
                    .filter(|_| l.contains(" is deprecated"))
            })
            .filter_map(|before| before.rsplit(['\u{2018}', '\'']).next())
            .filter_map(|quoted| quoted.split('(').next()?.split_whitespace().last())
            .map(|n| {
                n.trim_end_matches(['\u{2019}', '\''])
                    .trim_end_matches("_v1")
                    .to_owned()
            })
            .collect();
        for (name, experimental) in &want {
            assert_eq!(
                deprecated.contains(name),
                *experimental,
                "{name} ({lang}): deprecated without DOCA_ALLOW_EXPERIMENTAL_API should be {experimental}"
            );
        }
    }
}

/// tests/c/flow_prototypes.c is what tests/gen/flow_prototypes.py makes of the sheet now.
#[test]
fn generated_prototypes_are_current() {
    doca_test_support::workspace::assert_generated_current(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gen/flow_prototypes.py"),
        "flow-3.3-layout.md",
        "the prototypes of tests/c/flow_prototypes.c",
    );
}
