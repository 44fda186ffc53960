//! The logging macros as DOCA 3.3 has them, run against the library: `DOCA_LOG` takes the
//! level value, and `DOCA_LOG_TRC` (with its arguments) exists only in programs that define
//! `DOCA_LOGGING_ALLOW_TRACE`.

use doca_test_support::cc;
mod cdylib;

use std::path::Path;
use std::process::Command;

use cc::{Output, Rdma, C, CXX};

/// Builds tests/c/log_trace.c (with `extra` flags) against this run's library and returns
/// its standard output.
fn run_log_program(lang: cc::Lang, dir: &Path, tag: &str, extra: &[&str]) -> String {
    let exe = dir.join(format!("log_trace_{tag}"));
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
        &cc::c_source("log_trace.c"),
        &exe,
        Output::Executable,
        Rdma::Plain,
        &flags,
    )
    .unwrap_or_else(|e| panic!("log_trace.c ({tag}) does not build:\n{e}"));
    let out = Command::new(&exe)
        .env("LD_LIBRARY_PATH", cdylib::ld_library_path())
        .output()
        .expect("run log_trace");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "log_trace ({tag}) exited with {:?}:\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
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
