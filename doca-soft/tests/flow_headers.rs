//! The Flow headers compile alone, in C and in C++, with -Wall -Wextra -Werror, and the
//! sample-style uses (`fwd.rss.queues_array`, `fwd.next_pipe`, `outer.udp.l4_port`) work.

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
    if Command::new("cc").arg("--version").output().is_err() {
        {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "SKIP: no C compiler (cc)");
        };
        return;
    }
    for h in ["doca_flow.h", "doca_flow_net.h", "doca_soft_port.h"] {
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
    if Command::new("cc").arg("--version").output().is_err() {
        {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "SKIP: no C compiler (cc)");
        };
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
