//! The public C headers in `include/`: every one compiles alone as C and as C++ without
//! warnings, carries an include guard and C++ linkage, contains no third-party licence
//! text, and the core ones carry the values of the reference facts.
//!
//! The header list is read at run time, so headers added by other parts of the runtime
//! are checked too.

mod common;

use std::path::Path;
use std::process::Command;

use common::{declared_functions, file_name, headers, include_dir, ucx_cflags};

/// Warnings the sample programs are built with; every header must pass them.
const WARNINGS: &[&str] = &["-Wall", "-Wextra", "-Werror"];

/// Headers this crate's core must provide (the others come from the queue, flow and UROM
/// parts of the runtime).
const CORE_HEADERS: &[&str] = &[
    "doca_argp.h",
    "doca_bitfield.h",
    "doca_buf.h",
    "doca_buf_array.h",
    "doca_buf_inventory.h",
    "doca_build_config.h",
    "doca_compat.h",
    "doca_config.h",
    "doca_ctx.h",
    "doca_dev.h",
    "doca_dma.h",
    "doca_error.h",
    "doca_gpunetio.h",
    "doca_gpunetio_verbs_def.h",
    "doca_log.h",
    "doca_mmap.h",
    "doca_pe.h",
    "doca_rdma.h",
    "doca_rdma_bridge.h",
    "doca_types.h",
    "doca_uar.h",
    "doca_umem.h",
    "doca_verbs.h",
    "doca_verbs_bridge.h",
    "doca_version.h",
];

/// A C or C++ compiler invocation: program, language standard flag and `-x` language.
#[derive(Clone, Copy)]
struct Lang {
    env_var: &'static str,
    default: &'static str,
    std: &'static str,
    x: &'static str,
    ext: &'static str,
}

const C: Lang = Lang {
    env_var: "CC",
    default: "cc",
    std: "-std=gnu11",
    x: "c",
    ext: "c",
};
const CXX: Lang = Lang {
    env_var: "CXX",
    default: "c++",
    std: "-std=c++17",
    x: "c++",
    ext: "cpp",
};

impl Lang {
    fn compiler(&self) -> String {
        std::env::var(self.env_var).unwrap_or_else(|_| self.default.to_owned())
    }
}

/// Compiles (and with `output = Some`, links) `source`; Err carries the compiler's output.
fn compile(
    lang: Lang,
    source: &Path,
    output: &Path,
    link: bool,
    extra: &[String],
) -> Result<(), String> {
    let mut cmd = Command::new(lang.compiler());
    cmd.arg(lang.std)
        .args(WARNINGS)
        .arg("-I")
        .arg(include_dir())
        .args(ucx_cflags());
    cmd.args(extra)
        .arg("-x")
        .arg(lang.x)
        .arg(source)
        .arg("-o")
        .arg(output);
    if !link {
        cmd.arg("-c");
    }
    doca_test_support::cc::run(&mut cmd)
}

#[test]
fn core_headers_are_present() {
    let names: Vec<String> = headers().iter().map(|p| file_name(p)).collect();
    let missing: Vec<&&str> = CORE_HEADERS
        .iter()
        .filter(|h| !names.iter().any(|n| n == **h))
        .collect();
    assert!(
        missing.is_empty(),
        "missing headers: {missing:?} (found {names:?})"
    );
}

#[test]
fn every_header_compiles_alone_as_c_and_cpp() {
    let dir = tempfile::tempdir().unwrap();
    let experimental = vec!["-DDOCA_ALLOW_EXPERIMENTAL_API".to_owned()];
    let mut failures = Vec::new();
    let mut compiled = 0;
    for header in headers() {
        let name = file_name(&header);
        for lang in [C, CXX] {
            let tu = dir
                .path()
                .join(format!("only_{}.{}", name.replace('.', "_"), lang.ext));
            std::fs::write(&tu, format!("#include <{name}>\n")).unwrap();
            match compile(lang, &tu, &tu.with_extension("o"), false, &experimental) {
                Ok(()) => compiled += 1,
                Err(e) => failures.push(format!("--- {name} as {}:\n{e}", lang.x)),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} header compilations failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(compiled, 2 * headers().len());
}

#[test]
fn headers_carry_no_third_party_licence_text() {
    let mut offenders = Vec::new();
    for header in headers() {
        let text = std::fs::read_to_string(&header).unwrap().to_lowercase();
        // Spelled in pieces so that this file does not itself carry the phrases.
        for banned in [
            concat!("all rights ", "reserved"),
            concat!("propri", "etary"),
        ] {
            if text.contains(banned) {
                offenders.push(format!("{}: contains {banned:?}", file_name(&header)));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// Whether the header has code besides comments and preprocessor lines (a macro-only
/// header needs no `extern "C"`).
fn declares_anything(text: &str) -> bool {
    let mut code = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        rest = rest[start + 2..]
            .split_once("*/")
            .map_or("", |(_, after)| after);
    }
    code.push_str(rest);
    let mut continued = false;
    code.lines().any(|line| {
        let line = line.split("//").next().unwrap_or("").trim();
        let is_directive = continued || line.starts_with('#');
        continued = is_directive && line.ends_with('\\');
        !is_directive && !line.is_empty()
    })
}

/// The first two preprocessor directives are `#ifndef G` / `#define G`, the last is
/// `#endif`, and C++ sees C linkage.
#[test]
fn headers_have_include_guards_and_c_linkage() {
    let mut problems = Vec::new();
    for header in headers() {
        let name = file_name(&header);
        let text = std::fs::read_to_string(&header).unwrap();
        let directives: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with('#'))
            .collect();
        let guard = directives
            .first()
            .and_then(|d| d.strip_prefix("#ifndef "))
            .map(str::trim);
        let defined = directives
            .get(1)
            .and_then(|d| d.strip_prefix("#define "))
            .map(str::trim);
        match (guard, defined) {
            (Some(g), Some(d)) if g == d => {}
            _ => problems.push(format!("{name}: no include guard as its first directives")),
        }
        if !directives.last().is_some_and(|d| d.starts_with("#endif")) {
            problems.push(format!("{name}: last directive is not the guard's #endif"));
        }
        if declares_anything(&text) && !text.contains("extern \"C\"") {
            problems.push(format!(
                "{name}: declarations without an extern \"C\" block for C++"
            ));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Enum values, sizes and macros match the reference facts, in C and in C++, and the
/// header-only helpers behave when run.
#[test]
fn core_headers_match_the_facts() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/header_facts.c");
    for lang in [C, CXX] {
        let exe = dir.path().join(format!("facts_{}", lang.ext));
        if let Err(e) = compile(
            lang,
            &source,
            &exe,
            true,
            &["-DDOCA_ALLOW_EXPERIMENTAL_API".to_owned()],
        ) {
            panic!("header_facts.c does not build as {}:\n{e}", lang.x);
        }
        let out = Command::new(&exe).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("header facts: all checks passed"),
            "header_facts ({}) failed: {}\n{}",
            lang.x,
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Experimental calls need the opt-in macro: without it, calling one is a warning (an error
/// under -Werror) that names the macro; with it, the same code is clean.
#[test]
fn experimental_calls_need_the_opt_in() {
    let dir = tempfile::tempdir().unwrap();
    let tu = dir.path().join("experimental.c");
    std::fs::write(
        &tu,
        "#include <doca_gpunetio.h>\n\
         doca_error_t open_gpu(struct doca_gpu **gpu);\n\
         doca_error_t open_gpu(struct doca_gpu **gpu) { return doca_gpu_create(\"17:00.0\", gpu); }\n",
    )
    .unwrap();
    let obj = dir.path().join("experimental.o");
    let err = compile(C, &tu, &obj, false, &[])
        .expect_err("experimental call compiled without the opt-in");
    assert!(
        err.contains("DOCA_ALLOW_EXPERIMENTAL_API"),
        "diagnostic does not name the opt-in:\n{err}"
    );
    compile(
        C,
        &tu,
        &obj,
        false,
        &["-DDOCA_ALLOW_EXPERIMENTAL_API".to_owned()],
    )
    .expect("experimental call with the opt-in");
}

/// The declaration scanner used by c_smoke.rs finds what it should.
#[test]
fn declared_function_scanner_reads_the_core_headers() {
    let text = std::fs::read_to_string(include_dir().join("doca_buf_inventory.h")).unwrap();
    let names = declared_functions(&text);
    assert!(
        names.contains(&"doca_buf_inventory_create".to_owned()),
        "{names:?}"
    );
    assert!(
        names.contains(&"doca_buf_inventory_buf_get_by_args".to_owned()),
        "{names:?}"
    );
    // The static inline helper is not a library symbol.
    assert!(
        !names.contains(&"doca_buf_inventory_buf_get_by_addr".to_owned()),
        "{names:?}"
    );
    let text = std::fs::read_to_string(include_dir().join("doca_pe.h")).unwrap();
    let names = declared_functions(&text);
    for expected in [
        "doca_pe_progress",
        "doca_task_get_user_data",
        "doca_task_get_ctx",
        "doca_task_free",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} not found in {names:?}"
        );
    }
}

/// The logging macros work at file scope and in functions, in C and C++, under the
/// samples' warning flags, and their format strings are checked like printf's.
#[test]
fn log_macros_compile_and_check_formats() {
    let dir = tempfile::tempdir().unwrap();
    let good = "#include <doca_log.h>\n\
                DOCA_LOG_REGISTER(MACRO_TEST);\n\
                int log_all(int n, const char *s);\n\
                int log_all(int n, const char *s)\n{\n\
                \tDOCA_LOG_CRIT(\"no arguments\");\n\
                \tDOCA_LOG_ERR(\"%d %s\", n, s);\n\
                \tDOCA_LOG_WARN(\"%s\", s);\n\
                \tDOCA_LOG_INFO(\"%d\", n);\n\
                \tDOCA_LOG_DBG(\"x\");\n\
                \tDOCA_LOG_TRC(\"%u\", 1u);\n\
                \tDOCA_LOG_RATE_LIMIT_ERR(\"%d\", n);\n\
                \treturn (int)doca_log(DOCA_LOG_LEVEL_INFO, log_source, __FILE__, __LINE__, __func__, \"%s\", s);\n}\n";
    let scoped = "#include <doca_log.h>\n\
                  DOCA_LOG_REGISTER(APP::MAIN);\n\
                  void log_scoped(void);\n\
                  void log_scoped(void) { DOCA_LOG_INFO(\"scoped\"); }\n";
    let bad = "#include <doca_log.h>\n\
               DOCA_LOG_REGISTER(MACRO_TEST);\n\
               void log_wrong(void);\n\
               void log_wrong(void) { DOCA_LOG_INFO(\"%s\", 42); }\n";
    for lang in [C, CXX] {
        let src = dir.path().join(format!("log_good.{}", lang.ext));
        std::fs::write(&src, good).unwrap();
        if let Err(e) = compile(lang, &src, &src.with_extension("o"), false, &[]) {
            panic!("log macros do not compile as {}:\n{e}", lang.x);
        }
        let src = dir.path().join(format!("log_scoped.{}", lang.ext));
        std::fs::write(&src, scoped).unwrap();
        if let Err(e) = compile(lang, &src, &src.with_extension("o"), false, &[]) {
            panic!(
                "DOCA_LOG_REGISTER(APP::MAIN) does not compile as {}:\n{e}",
                lang.x
            );
        }
        let src = dir.path().join(format!("log_bad.{}", lang.ext));
        std::fs::write(&src, bad).unwrap();
        let err = compile(lang, &src, &src.with_extension("o"), false, &[])
            .expect_err("a wrong format argument compiled cleanly");
        assert!(
            err.contains("-Wformat") || err.contains("=format"),
            "not a format diagnostic ({}):\n{err}",
            lang.x
        );
    }
}
