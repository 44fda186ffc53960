//! Bad input on every DOCA Flow function, from C.
//!
//! 1. NULL everywhere: a C program generated from the prototypes of `doca_flow.h`,
//!    `doca_flow_crypto.h` and `doca_flow_definitions.h` calls each function with every
//!    pointer NULL and every number 0, one function per process (a crash or a hang is a
//!    failure, not a lost test run), once before `doca_flow_init` and once after. A
//!    function returning `doca_error_t` that takes a pointer must answer INVALID_VALUE
//!    (before init BAD_STATE is also right: the wrong state may be noticed first).
//! 2. Out-of-range enums: tests/c/flow_bad_enums.c (built as C and as C++) hands every
//!    function taking an enum, and every call reading an enum member of a struct (match
//!    and action selectors, parser types, descriptor, monitor, forward, RSS and hash-map
//!    kinds, entry flags, queue numbers), live objects and a value past the enum's last
//!    one; each must answer INVALID_VALUE, and a valid value right after is accepted.

use doca_test_support::cc;
mod cdylib;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cc::C;
use doca_soft::capi::doca_error::DocaError;

const HEADERS: &[&str] = &[
    "doca_flow.h",
    "doca_flow_crypto.h",
    "doca_flow_definitions.h",
];

/// How long one call may take before it counts as a hang.
const LIMIT: Duration = Duration::from_secs(10);

/// One prototype: return type, name, parameter declarations.
#[derive(Debug)]
struct Proto {
    ret: String,
    name: String,
    params: Vec<String>,
}

impl Proto {
    fn returns_error(&self) -> bool {
        self.ret == "doca_error_t"
    }

    fn takes_pointer(&self) -> bool {
        self.params.iter().any(|p| p.contains('*'))
    }

    /// Whether the call takes a port, pipe or entry handle.
    fn takes_handle(&self) -> bool {
        self.params
            .iter()
            .any(|p| stale_arg(p).is_some_and(|a| a.starts_with("s.")))
    }

    /// The call with the setup's handles (stale ports, pipes and entries; live
    /// configurations), zeroed scratch memory for other pointers and 0 for numbers.
    fn stale_call(&self) -> String {
        let args: Vec<String> = self
            .params
            .iter()
            .filter(|p| p.as_str() != "void" && !p.is_empty())
            .map(|p| stale_arg(p).unwrap_or_else(|| "0".to_owned()))
            .collect();
        format!("{}({})", self.name, args.join(", "))
    }

    /// The call with every pointer NULL and every number 0.
    fn null_call(&self) -> String {
        let args: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.as_str() != "void" && !p.is_empty())
            .map(|p| if p.contains('*') { "NULL" } else { "0" })
            .collect();
        format!("{}({})", self.name, args.join(", "))
    }
}

/// The argument the stale-handle program passes for a pointer parameter (None: a number).
fn stale_arg(param: &str) -> Option<String> {
    if !param.contains('*') {
        return None;
    }
    let ty = param.trim_start_matches("const ");
    let one = |t: &str| ty.starts_with(&format!("{t} *")) && !ty.contains("**");
    Some(
        if one("struct doca_flow_port") {
            "s.port"
        } else if one("struct doca_flow_pipe") {
            "s.pipe"
        } else if one("struct doca_flow_pipe_entry") {
            "s.entry"
        } else if one("struct doca_flow_pipe_cfg") {
            "c.pipe_cfg"
        } else if one("struct doca_flow_cfg") {
            "c.cfg"
        } else if one("struct doca_flow_port_cfg") {
            "c.port_cfg"
        } else if one("struct doca_flow_tune_cfg") {
            "c.tune"
        } else if ty.starts_with("FILE *") {
            "stdout"
        } else if ty.starts_with("struct doca_flow_crypto_psp_spi_key_bulk")
            || ty.starts_with("struct doca_flow_parser")
            || ty.starts_with("struct doca_flow_definitions")
        {
            // Objects the runtime never creates: no live one to pass.
            "NULL"
        } else {
            "(void *)scratch"
        }
        .to_owned(),
    )
}

/// Strips `/* */` comments and preprocessor lines.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    out.push_str(rest);
    out.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The prototypes a header declares (DOCA_STABLE / DOCA_EXPERIMENTAL).
fn prototypes(header: &str) -> Vec<Proto> {
    let text = std::fs::read_to_string(cc::include_dir().join(header)).unwrap();
    let code = code_of(&text);
    let mut out = Vec::new();
    for decl in code.split(';') {
        let decl = decl.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(at) = ["DOCA_STABLE ", "DOCA_EXPERIMENTAL "]
            .iter()
            .filter_map(|m| decl.find(m).map(|i| i + m.len()))
            .min()
        else {
            continue;
        };
        let decl = &decl[at..];
        let (head, params) = decl.split_once('(').expect("a prototype has parameters");
        let params = params
            .trim_end()
            .strip_suffix(')')
            .expect("closing parenthesis");
        let head = head.trim_end();
        let split = head
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .expect("return type before the name");
        out.push(Proto {
            ret: head[..=split].trim().to_owned(),
            name: head[split + 1..].to_owned(),
            params: params.split(',').map(|p| p.trim().to_owned()).collect(),
        });
    }
    out
}

fn all_prototypes() -> Vec<Proto> {
    let mut all: Vec<Proto> = Vec::new();
    for h in HEADERS {
        for p in prototypes(h) {
            if !all.iter().any(|q| q.name == p.name) {
                all.push(p);
            }
        }
    }
    all
}

/// The generated program: `prog before|init <first>` runs the cases from `first` on, in
/// order, printing `case I` before and `rc I CODE` after each (flushed, so a crash or a
/// hang is pinned on its case). In `init` mode each case gets a fresh `doca_flow_init`.
fn null_program(protos: &[Proto]) -> String {
    let mut s = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
         #include <doca_flow.h>\n#include <doca_flow_definitions.h>\n\n\
         static long run_case(int i)\n{\n\tswitch (i) {\n",
    );
    for (i, p) in protos.iter().enumerate() {
        let call = p.null_call();
        let line = match p.ret.as_str() {
            "void" => format!("\t\t{call};\n\t\treturn 0;\n"),
            r if r.ends_with('*') => format!("\t\treturn {call} != NULL;\n"),
            _ => format!("\t\treturn (long){call};\n"),
        };
        s.push_str(&format!("\tcase {i}:\n{line}"));
    }
    s.push_str(&format!(
        "\t}}\n\treturn -1;\n}}\n\n\
         static int init_flow(void)\n{{\n\
         \tstruct doca_flow_cfg *cfg;\n\tint rc;\n\n\
         \tif (doca_flow_cfg_create(&cfg) != DOCA_SUCCESS)\n\t\treturn 1;\n\
         \trc = doca_flow_cfg_set_pipe_queues(cfg, 1) != DOCA_SUCCESS ||\n\
         \t     doca_flow_cfg_set_mode_args(cfg, \"vnf,hws\") != DOCA_SUCCESS ||\n\
         \t     doca_flow_init(cfg) != DOCA_SUCCESS;\n\
         \tdoca_flow_cfg_destroy(cfg);\n\treturn rc;\n}}\n\n\
         int main(int argc, char **argv)\n{{\n\
         \tint init, i;\n\n\
         \tif (argc < 3)\n\t\treturn 2;\n\
         \tinit = strcmp(argv[1], \"init\") == 0;\n\
         \tfor (i = atoi(argv[2]); i < {n}; i++) {{\n\
         \t\tif (init && init_flow() != 0)\n\t\t\treturn 3;\n\
         \t\tprintf(\"case %d\\n\", i);\n\t\tfflush(stdout);\n\
         \t\tprintf(\"rc %d %ld\\n\", i, run_case(i));\n\t\tfflush(stdout);\n\
         \t\tif (init)\n\t\t\tdoca_flow_destroy();\n\
         \t}}\n\treturn 0;\n}}\n",
        n = protos.len()
    ));
    s
}

/// The stale-handle program: `prog stopped|destroyed <first>`. Each case gets a port
/// with a pipe and an entry, which it then stops (and, for `destroyed`, Flow with it),
/// and calls the function with those handles (see [`stale_arg`]). Prints as
/// [`null_program`] does. The live configurations are left behind (a case may have
/// destroyed them: destroying one twice is the caller's error, as in DOCA).
fn stale_program(protos: &[Proto]) -> String {
    let mut s = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
         #include <doca_dev.h>\n#include <doca_flow.h>\n#include <doca_flow_definitions.h>\n\n\
         struct stale { struct doca_flow_port *port; struct doca_flow_pipe *pipe; struct doca_flow_pipe_entry *entry; };\n\
         struct live { struct doca_flow_cfg *cfg; struct doca_flow_port_cfg *port_cfg; struct doca_flow_tune_cfg *tune; struct doca_flow_pipe_cfg *pipe_cfg; };\n\
         static _Alignas(64) unsigned char scratch[65536];\n\n\
         static long run_case(int i, struct stale s, struct live c)\n{\n\
         \t(void)s;\n\t(void)c;\n\tswitch (i) {\n",
    );
    for (i, p) in protos.iter().enumerate() {
        let call = p.stale_call();
        let line = match p.ret.as_str() {
            "void" => format!("\t\t{call};\n\t\treturn 0;\n"),
            r if r.ends_with('*') => format!("\t\treturn {call} != NULL;\n"),
            _ => format!("\t\treturn (long){call};\n"),
        };
        s.push_str(&format!("\tcase {i}:\n{line}"));
    }
    s.push_str(&format!(
        "\t}}\n\treturn -1;\n}}\n\n\
         static struct doca_dev *open_dev(const char *iface)\n{{\n\
         \tstruct doca_devinfo **list;\n\tstruct doca_dev *dev = NULL;\n\
         \tchar name[DOCA_DEVINFO_IFACE_NAME_SIZE];\n\tuint32_t n, i;\n\n\
         \tif (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)\n\t\treturn NULL;\n\
         \tfor (i = 0; i < n && dev == NULL; i++)\n\
         \t\tif (doca_devinfo_get_iface_name(list[i], name, sizeof(name)) == DOCA_SUCCESS && strcmp(name, iface) == 0)\n\
         \t\t\tdoca_dev_open(list[i], &dev);\n\
         \tdoca_devinfo_destroy_list(list);\n\treturn dev;\n}}\n\n\
         /* Flow, a port with a BASIC pipe (its configuration kept) and one entry. */\n\
         static int setup(struct doca_dev *dev, struct stale *s, struct live *c)\n{{\n\
         \tstruct doca_flow_cfg *cfg;\n\tstruct doca_flow_port_cfg *pcfg;\n\
         \tstruct doca_flow_match match;\n\tstruct doca_flow_fwd fwd;\n\tint bad;\n\n\
         \tif (doca_flow_cfg_create(&cfg) != DOCA_SUCCESS)\n\t\treturn 1;\n\
         \tbad = doca_flow_cfg_set_pipe_queues(cfg, 1) != DOCA_SUCCESS ||\n\
         \t      doca_flow_cfg_set_mode_args(cfg, \"vnf,hws\") != DOCA_SUCCESS || doca_flow_init(cfg) != DOCA_SUCCESS;\n\
         \tdoca_flow_cfg_destroy(cfg);\n\
         \tif (bad || doca_flow_port_cfg_create(&pcfg) != DOCA_SUCCESS)\n\t\treturn 2;\n\
         \tbad = doca_flow_port_cfg_set_port_id(pcfg, 0) != DOCA_SUCCESS || doca_flow_port_cfg_set_dev(pcfg, dev) != DOCA_SUCCESS ||\n\
         \t      doca_flow_port_start(pcfg, &s->port) != DOCA_SUCCESS;\n\
         \tdoca_flow_port_cfg_destroy(pcfg);\n\
         \tif (bad || doca_flow_pipe_cfg_create(&c->pipe_cfg, s->port) != DOCA_SUCCESS)\n\t\treturn 3;\n\
         \tmemset(&match, 0, sizeof(match));\n\tmemset(&fwd, 0, sizeof(fwd));\n\
         \tmatch.outer.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP;\n\tmatch.outer.udp.l4_port.dst_port = 0xffff;\n\
         \tfwd.type = DOCA_FLOW_FWD_DROP;\n\
         \tif (doca_flow_pipe_cfg_set_name(c->pipe_cfg, \"P\") != DOCA_SUCCESS ||\n\
         \t    doca_flow_pipe_cfg_set_type(c->pipe_cfg, DOCA_FLOW_PIPE_BASIC) != DOCA_SUCCESS ||\n\
         \t    doca_flow_pipe_cfg_set_match(c->pipe_cfg, &match, NULL) != DOCA_SUCCESS ||\n\
         \t    doca_flow_pipe_create(c->pipe_cfg, &fwd, NULL, &s->pipe) != DOCA_SUCCESS)\n\t\treturn 4;\n\
         \tmatch.outer.udp.l4_port.dst_port = 53;\n\
         \tif (doca_flow_pipe_basic_add_entry(0, s->pipe, &match, 0, NULL, NULL, NULL, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &s->entry) != DOCA_SUCCESS ||\n\
         \t    doca_flow_entries_process(s->port, 0, 0, 0) != DOCA_SUCCESS)\n\t\treturn 5;\n\
         \tif (doca_flow_cfg_create(&c->cfg) != DOCA_SUCCESS || doca_flow_port_cfg_create(&c->port_cfg) != DOCA_SUCCESS ||\n\
         \t    doca_flow_tune_cfg_create(&c->tune) != DOCA_SUCCESS)\n\t\treturn 6;\n\
         \treturn doca_flow_port_stop(s->port) != DOCA_SUCCESS ? 7 : 0;\n}}\n\n\
         int main(int argc, char **argv)\n{{\n\
         \tstruct doca_dev *dev;\n\tstruct stale s;\n\tstruct live c;\n\tint destroyed, i, rc;\n\n\
         \tif (argc < 3 || (dev = open_dev(getenv(\"FLOW_STALE_IFACE\"))) == NULL)\n\t\treturn 2;\n\
         \tdestroyed = strcmp(argv[1], \"destroyed\") == 0;\n\
         \tfor (i = atoi(argv[2]); i < {n}; i++) {{\n\
         \t\tmemset(&s, 0, sizeof(s));\n\t\tmemset(&c, 0, sizeof(c));\n\t\tmemset(scratch, 0, sizeof(scratch));\n\
         \t\trc = setup(dev, &s, &c);\n\
         \t\tif (rc != 0) {{\n\t\t\tprintf(\"setup %d\\n\", rc);\n\t\t\treturn 3;\n\t\t}}\n\
         \t\tif (destroyed)\n\t\t\tdoca_flow_destroy();\n\
         \t\tprintf(\"case %d\\n\", i);\n\t\tfflush(stdout);\n\
         \t\tprintf(\"rc %d %ld\\n\", i, run_case(i, s, c));\n\t\tfflush(stdout);\n\
         \t\tdoca_flow_destroy(); /* again when destroyed: a case may have called doca_flow_init */\n\
         \t}}\n\tdoca_dev_close(dev);\n\treturn 0;\n}}\n",
        n = protos.len()
    ));
    s
}

fn build(source_name: &str, source: &Path, dir: &Path) -> PathBuf {
    let exe = dir.join(source_name.trim_end_matches(".c"));
    cdylib::compile_linked(C, source, &exe).unwrap_or_else(|e| panic!("{source_name}:\n{e}"));
    exe
}

/// What each case did: its return code, or why there is none.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Code(i64),
    Crashed(String),
    Hung,
    NotRun,
}

/// Runs the program over every case of a phase, restarting after a case that crashed or
/// hung.
fn run_phase(exe: &Path, phase: &str, n: usize, envs: &[(&str, &str)]) -> Vec<Outcome> {
    let mut out = vec![Outcome::NotRun; n];
    let mut first = 0;
    while first < n {
        let mut child = Command::new(exe)
            .args([phase, &first.to_string()])
            .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
            .envs(envs.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run the generated program");
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut { stdout }, &mut text);
            text
        });
        // The whole rest of the phase may take LIMIT per case before it counts as a hang.
        let deadline = Instant::now() + LIMIT.max(Duration::from_millis(100 * n as u64));
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let text = reader.join().unwrap();
        let mut last_started = None;
        for line in text.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.as_slice() {
                ["case", i] => last_started = i.parse::<usize>().ok(),
                ["rc", i, code] => {
                    let i: usize = i.parse().unwrap();
                    out[i] = Outcome::Code(code.parse().unwrap());
                    last_started = None;
                }
                _ => {}
            }
        }
        match (last_started, status) {
            (Some(i), None) => {
                out[i] = Outcome::Hung;
                first = i + 1;
            }
            (Some(i), Some(s)) => {
                out[i] = Outcome::Crashed(format!("{s:?}"));
                first = i + 1;
            }
            (None, Some(s)) if s.success() => first = n,
            (None, s) => {
                panic!("{phase} from {first}: the program stopped outside a case: {s:?}\n{text}")
            }
        }
    }
    out
}

#[test]
fn every_flow_function_survives_null_arguments() {
    let protos = all_prototypes();
    assert!(
        protos.len() >= 110,
        "only {} Flow prototypes parsed",
        protos.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("flow_null_args.c");
    std::fs::write(&src, null_program(&protos)).unwrap();
    let exe = build("flow_null_args.c", &src, dir.path());

    let invalid = i64::from(DocaError::INVALID_VALUE.0);
    let bad_state = i64::from(DocaError::BAD_STATE.0);
    let not_supported = i64::from(DocaError::NOT_SUPPORTED.0);
    let mut failures = Vec::new();
    let mut checked = 0;
    for phase in ["before", "init"] {
        let outcomes = run_phase(&exe, phase, protos.len(), &[]);
        for (p, o) in protos.iter().zip(outcomes) {
            let Outcome::Code(rc) = o else {
                failures.push(format!("{} ({phase} init): {o:?}", p.null_call()));
                continue;
            };
            if !(p.returns_error() && p.takes_pointer()) {
                continue;
            }
            checked += 1;
            let ok = rc == invalid
                || (phase == "before" && rc == bad_state)
                // The configuration may be NULL (a shared counter needs none); type 0 is
                // METER, which is refused as such.
                || (p.name == "doca_flow_shared_resource_set_cfg" && rc == not_supported);
            if !ok {
                let name = format!("{:?} ({rc})", DocaError(rc as u32));
                failures.push(format!("{} ({phase} init): {name}", p.null_call()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        protos.len() * 2,
        failures.join("\n")
    );
    assert!(checked >= 200, "only {checked} error codes checked");
}

/// Every function taking a port, pipe or entry, handed ones whose port was stopped (and
/// then ones whose Flow was destroyed), fails with an error code: no crash, no hang, no
/// success on a dead object. The others run in the same state without crashing.
#[test]
fn every_flow_function_refuses_stale_handles() {
    let protos = all_prototypes();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("flow_stale_handles.c");
    std::fs::write(&src, stale_program(&protos)).unwrap();
    let exe = build("flow_stale_handles.c", &src, dir.path());
    let wire = format!("fsh{}", std::process::id());
    let iface = format!("{wire}0");
    let ports = format!("wire:{wire}");
    let envs = [
        ("DOCA_SOFT_PORTS", ports.as_str()),
        ("FLOW_STALE_IFACE", iface.as_str()),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for phase in ["stopped", "destroyed"] {
        let outcomes = run_phase(&exe, phase, protos.len(), &envs);
        for (p, o) in protos.iter().zip(outcomes) {
            let Outcome::Code(rc) = o else {
                failures.push(format!("{} ({phase}): {o:?}", p.stale_call()));
                continue;
            };
            if !p.takes_handle() {
                continue;
            }
            checked += 1;
            // Pointer results are 1 when non-NULL: a dead port has no data or switch.
            let wrong = match p.ret.as_str() {
                "doca_error_t" => rc == 0,
                r if r.ends_with('*') => rc != 0,
                _ => false,
            };
            if wrong {
                failures.push(format!("{} ({phase}): succeeded ({rc})", p.stale_call()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        protos.len() * 2,
        failures.join("\n")
    );
    assert!(checked >= 70, "only {checked} handle-taking calls checked");
}

/// The checks tests/c/flow_bad_enums.c must report, each as "ok <check>".
const ENUM_CHECKS: &[&str] = &[
    "cfg_set_resource_mode",
    "cfg_set_nr_shared_resource",
    "tune_cfg_set_profile",
    "port_cfg_set_nr_resources",
    "port_cfg_set_operation_state",
    "port_operation_state_modify",
    "port_update_default_miss",
    "get_target",
    "shared_resource_set_cfg",
    "shared_resources_bind",
    "shared_resources_query",
    "pipe_cfg_set_type",
    "pipe_cfg_set_domain",
    "match parser_meta.outer_l3_type",
    "match outer.l4_type_ext",
    "match tun.type",
    "actions outer.l3_type",
    "action_desc type",
    "monitor counter_type",
    "fwd type",
    "fwd rss_type",
    "entry flags",
    "entry queue",
    "entries_process queue",
    "fwd hash_pipe.algorithm",
    "port_shared_resource_get",
    "port_shared_resource_set_cfg",
    "port_shared_resources_query",
    "port_shared_resource_put",
    "entry valid",
    "port_shared_resource_put valid",
];

#[test]
fn out_of_range_enums_are_refused_from_c_and_cpp() {
    for lang in [C, cc::CXX] {
        if !doca_test_support::require_tool(&lang.compiler(), doca_test_support::GET_A_C_COMPILER) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("flow_bad_enums");
        cdylib::compile_linked(lang, &cc::c_source("flow_bad_enums.c"), &exe)
            .unwrap_or_else(|e| panic!("flow_bad_enums.c as {}:\n{e}", lang.x));
        let wire = format!("fbe{}", std::process::id());
        let out = Command::new(&exe)
            .arg(format!("{wire}0"))
            .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
            .env("DOCA_SOFT_PORTS", format!("wire:{wire}"))
            .output()
            .expect("run flow_bad_enums");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("\n0 failures"),
            "{} ({}): {stdout}\n{}",
            exe.display(),
            lang.x,
            String::from_utf8_lossy(&out.stderr)
        );
        for check in ENUM_CHECKS {
            assert!(
                stdout.lines().any(|l| l == format!("ok {check}")),
                "no \"ok {check}\" ({}): {stdout}",
                lang.x
            );
        }
    }
}
