//! The logging macros as DOCA 3.3 has them, run against the library: `DOCA_LOG` takes the
//! level value, `DOCA_LOG_TRC` (with its arguments) exists only in programs that define
//! `DOCA_LOGGING_ALLOW_TRACE`, and `doca_log` is a function the library exports.

use doca_test_support::cc;
mod cdylib;

use std::path::Path;
use std::process::Command;

use cc::{Output, Rdma, C, CXX};

/// Builds tests/c/`name` (with `extra` flags) against this run's library and returns its
/// standard output and standard error.
fn run_c_program(
    name: &str,
    lang: cc::Lang,
    dir: &Path,
    tag: &str,
    extra: &[&str],
) -> (String, String) {
    let exe = dir.join(format!("{}_{tag}", name.trim_end_matches(".c")));
    let libdir = cdylib::library_dir();
    let link = [
        format!("-L{}", libdir.display()),
        format!("-Wl,-rpath,{}", libdir.display()),
        "-ldoca_soft".to_owned(),
    ];
    let mut flags: Vec<&str> = extra.to_vec();
    flags.extend(link.iter().map(String::as_str));
    cc::compile(
        lang,
        &cc::c_source(name),
        &exe,
        Output::Executable,
        Rdma::Plain,
        &flags,
    )
    .unwrap_or_else(|e| panic!("{name} ({tag}) does not build:\n{e}"));
    let out = Command::new(&exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .output()
        .unwrap_or_else(|e| panic!("run {name}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{name} ({tag}) exited with {:?}:\n{stdout}{stderr}",
        out.status,
    );
    (stdout, stderr)
}

/// tests/c/log_trace.c's standard output.
fn run_log_program(lang: cc::Lang, dir: &Path, tag: &str, extra: &[&str]) -> String {
    run_c_program("log_trace.c", lang, dir, tag, extra).0
}

/// `doca_log` is a function of the library, as in DOCA 3.3: exported, callable through a
/// pointer, and it formats variadic arguments of every class, also those passed on the
/// stack, cuts messages at `DOCA_LOG_MAX_MSG_SIZE`, and refuses a NULL format.
#[test]
fn doca_log_is_an_exported_function() {
    let symbols = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(cdylib::library())
        .output()
        .expect("run nm");
    let symbols = String::from_utf8_lossy(&symbols.stdout);
    assert!(
        symbols
            .lines()
            .any(|l| l.ends_with(" T doca_log") || l.ends_with(" t doca_log")),
        "libdoca_soft.so does not export the function doca_log"
    );
    let dir = tempfile::tempdir().unwrap();
    for lang in [C, CXX] {
        let tag = lang.x.replace('+', "x");
        let (stdout, stderr) = run_c_program("log_function.c", lang, dir.path(), &tag, &[]);
        for check in [
            "through a pointer",
            "doubles",
            "long message",
            "null format",
        ] {
            assert!(
                stdout.contains(&format!("ok: {check}\n")),
                "{}: no `ok: {check}`:\n{stdout}",
                lang.x
            );
        }
        let all = format!("{stdout}{stderr}");
        assert!(
            all.contains("ints -1 123456789012 7 x text 1 2 3 4 5 6 7 8"),
            "{}: integer arguments:\n{all}",
            lang.x
        );
        assert!(
            all.contains("doubles 1.0 2.0 3.0 4.0 5.0 6.0 7.0 8.0 9.0 10.0 2.5e+10 99"),
            "{}: floating-point arguments:\n{all}",
            lang.x
        );
        let long = all
            .lines()
            .find(|l| l.contains("long <"))
            .unwrap_or_else(|| panic!("{}: no long message:\n{all}", lang.x));
        let ls = long.chars().filter(|&c| c == 'L').count();
        assert!(
            (2000..2048).contains(&ls) && !long.contains('>'),
            "{}: the long message was not cut at 2048 bytes ({ls} L):\n{long}",
            lang.x
        );
    }
}

#[test]
fn trace_messages_need_the_opt_in() {
    let dir = tempfile::tempdir().unwrap();
    for lang in [C, CXX] {
        let tag = lang.x.replace('+', "x");
        let without = run_log_program(lang, dir.path(), &format!("{tag}_default"), &[]);
        assert!(without.contains("level-value line 2"), "{without}");
        assert!(
            !without.contains("trace line"),
            "trace printed without the opt-in:\n{without}"
        );
        assert!(
            without.contains("trace arguments evaluated 0 times"),
            "trace arguments were evaluated without the opt-in:\n{without}"
        );

        let with = run_log_program(
            lang,
            dir.path(),
            &format!("{tag}_trace"),
            &["-DDOCA_LOGGING_ALLOW_TRACE"],
        );
        assert!(with.contains("level-value line 2"), "{with}");
        assert!(
            with.contains("trace line 1"),
            "no trace line with the opt-in:\n{with}"
        );
        assert!(with.contains("rate-limited trace line 2"), "{with}");
        assert!(with.contains("trace arguments evaluated 2 times"), "{with}");
    }
}

/// `DOCA_LOG` no longer takes a level suffix: the pre-3.3 spelling `DOCA_LOG(INFO, ...)`
/// does not compile, `DOCA_LOG(DOCA_LOG_LEVEL_INFO, ...)` does.
#[test]
fn doca_log_takes_the_level_value() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, level: &str| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                "#include <doca_log.h>\nDOCA_LOG_REGISTER(LEVELS);\nvoid f(void);\n\
                 void f(void) {{ DOCA_LOG({level}, \"x %d\", 1); }}\n"
            ),
        )
        .unwrap();
        path
    };
    let good = write("good.c", "DOCA_LOG_LEVEL_INFO");
    let suffix = write("suffix.c", "INFO");
    for lang in [C, CXX] {
        cc::compile(
            lang,
            &good,
            Path::new(""),
            Output::SyntaxOnly,
            Rdma::Plain,
            &[],
        )
        .unwrap_or_else(|e| panic!("DOCA_LOG(DOCA_LOG_LEVEL_INFO, ...) as {}:\n{e}", lang.x));
        let err = cc::compile(
            lang,
            &suffix,
            Path::new(""),
            Output::SyntaxOnly,
            Rdma::Plain,
            &[],
        )
        .expect_err("DOCA_LOG(INFO, ...) compiled");
        assert!(err.contains("INFO"), "{}: {err}", lang.x);
    }
}
