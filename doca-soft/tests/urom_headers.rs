//! doca_urom.h and doca_urom_plugin.h compile alone in C and C++ with -Wall -Wextra
//! -Werror, and their structs have the layouts of the facts.

use std::path::Path;
use std::process::Command;

const LAYOUT: &str = r#"
#include "doca_urom.h"
#include <stddef.h>
_Static_assert(sizeof(struct urom_plugin_iface) == 56, "iface");
_Static_assert(offsetof(struct urom_plugin_iface, notif_pack) == 48, "notif_pack");
_Static_assert(sizeof(struct urom_domain_lookups_iface) == 32, "lookups");
_Static_assert(sizeof(struct urom_worker_ctx) == 96, "ctx");
_Static_assert(offsetof(struct urom_worker_ctx, domain_iface) == 56, "domain_iface");
_Static_assert(offsetof(struct urom_worker_ctx, plugin_ctx) == 88, "plugin_ctx");
_Static_assert(sizeof(struct urom_worker_cmd) == 24, "cmd");
_Static_assert(offsetof(struct urom_worker_cmd_desc, dest_id) == 16, "cmd dest");
_Static_assert(offsetof(struct urom_worker_cmd_desc, worker_cmd) == 24, "cmd desc");
_Static_assert(sizeof(struct urom_worker_notify) == 32, "notify");
_Static_assert(offsetof(struct urom_worker_notify, status) == 24, "status");
_Static_assert(offsetof(struct urom_worker_notif_desc, worker_notif) == 24, "notif desc");
_Static_assert(sizeof(struct doca_urom_service_plugin_info) == 64, "plugin info");
_Static_assert(offsetof(struct doca_urom_service_plugin_info, plugin_name) == 16, "name");
_Static_assert(sizeof(struct doca_urom_domain_oob_coll) == 40, "oob");
_Static_assert(offsetof(struct doca_urom_domain_oob_coll, coll_info) == 24, "coll_info");
_Static_assert(offsetof(struct doca_urom_domain_oob_coll, oob_index) == 36, "oob_index");
_Static_assert(sizeof(doca_cpu_set_t) == 128, "cpuset");
_Static_assert(DOCA_UROM_WORKER_ID_ANY == 0xffffffffffffffffULL, "ANY");
_Static_assert(DOCA_UROM_PLUGIN_NAME_MAX_LEN == 48, "name max");
int main(void) { doca_cpu_set_t s; DOCA_CPU_ZERO(&s); DOCA_CPU_SET(3, &s); return doca_cpu_is_set(3, &s) ? 0 : 1; }
"#;

fn compile(compiler: &str, lang: &str, src: &str, out: &Path, link: bool) -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ucx = std::env::var("UCX_HOME").expect("UCX_HOME (source .tools/env.sh)");
    let mut c = Command::new(compiler);
    c.args([
        "-x",
        lang,
        "-Wall",
        "-Wextra",
        "-Werror",
        "-DDOCA_ALLOW_EXPERIMENTAL_API",
    ])
    .arg(format!("-I{}", root.join("include").display()))
    .arg(format!("-I{ucx}/include"));
    if !link {
        c.arg("-fsyntax-only");
    }
    let mut child = c
        .arg("-")
        .arg("-o")
        .arg(out)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("run compiler");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(src.as_bytes())
        .unwrap();
    child.wait().unwrap().success()
}

#[test]
fn urom_headers_compile_alone_in_c_and_cpp() {
    let dir = tempfile::tempdir().unwrap();
    for h in ["doca_urom.h", "doca_urom_plugin.h"] {
        let src = format!("#include \"{h}\"\n");
        assert!(
            compile("cc", "c", &src, &dir.path().join("a.o"), false),
            "{h} in C"
        );
        assert!(
            compile("c++", "c++", &src, &dir.path().join("a.o"), false),
            "{h} in C++"
        );
    }
}

#[test]
fn urom_header_layouts_match_the_facts() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("layout");
    assert!(
        compile("cc", "c", LAYOUT, &exe, true),
        "layout asserts hold"
    );
    assert!(
        Command::new(&exe).status().unwrap().success(),
        "cpu set macros work"
    );
}
