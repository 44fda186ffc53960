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

mod cc;
mod cdylib;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cc::{Output, Rdma, C};
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

fn build(source_name: &str, source: &Path, dir: &Path) -> PathBuf {
    let exe = dir.join(source_name.trim_end_matches(".c"));
    let libdir = cdylib::library_dir();
    let link = [
        format!("-L{}", libdir.display()),
        format!("-Wl,-rpath,{}", libdir.display()),
        "-ldoca_soft".to_owned(),
    ];
    let link: Vec<&str> = link.iter().map(String::as_str).collect();
    cc::compile(C, source, &exe, Output::Executable, Rdma::Plain, &link)
        .unwrap_or_else(|e| panic!("{source_name}:\n{e}"));
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
fn run_phase(exe: &Path, phase: &str, n: usize) -> Vec<Outcome> {
    let mut out = vec![Outcome::NotRun; n];
    let mut first = 0;
    while first < n {
        let mut child = Command::new(exe)
            .args([phase, &first.to_string()])
            .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
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
        let outcomes = run_phase(&exe, phase, protos.len());
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
        if Command::new(lang.compiler())
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("SKIP: no {} compiler", lang.x);
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("flow_bad_enums");
        let libdir = cdylib::library_dir();
        let link = [
            format!("-L{}", libdir.display()),
            format!("-Wl,-rpath,{}", libdir.display()),
            "-ldoca_soft".to_owned(),
        ];
        let link: Vec<&str> = link.iter().map(String::as_str).collect();
        cc::compile(
            lang,
            &cc::c_source("flow_bad_enums.c"),
            &exe,
            Output::Executable,
            Rdma::Plain,
            &link,
        )
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
