//! The samples' command lines: the shared module (examples/common/cli.rs) on its own, and
//! every example binary of the facade. DOCA's general flags are accepted everywhere, help
//! and version exit 0, bad input exits 2 with a message (the old hand-written parsers
//! failed on --help in the UROM samples and exited 2 for it).

#[path = "../examples/common/cli.rs"]
mod cli;
mod support;

use clap::error::ErrorKind;
use clap::Parser;
use cli::General;
use std::process::Command;
use support::example;

/// A sample-like command line: short, long and inline forms, a mandatory option, a flag.
#[derive(Parser, Debug)]
#[command(name = "t")]
struct Args {
    #[arg(short = 'g', long)]
    gpu: String,
    #[arg(short = 'e', long = "exec-scope", default_value_t = 2)]
    exec_scope: u32,
    #[arg(long)]
    verbose: bool,
    #[command(flatten)]
    general: General,
}

fn parse(args: &[&str]) -> Result<Args, clap::Error> {
    cli::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
}

#[test]
fn short_long_and_inline_forms_give_the_same_values() {
    for args in [
        &["-g", "17:00.0", "-e", "1"][..],
        &["--gpu", "17:00.0", "--exec-scope", "1"],
        &["--gpu=17:00.0", "--exec-scope=1"],
        &["-g17:00.0", "-e1"],
    ] {
        let a = parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(a.gpu, "17:00.0", "{args:?}");
        assert_eq!(a.exec_scope, 1, "{args:?}");
        assert!(!a.verbose);
        assert_eq!(a.general.log_level, None);
    }
    let a = parse(&["-g", "0", "--verbose"]).unwrap();
    assert!(a.verbose);
    assert_eq!(a.exec_scope, 2);
}

#[test]
fn general_flags_take_doca_levels_by_number_or_name() {
    let a = parse(&["-g", "0", "-l", "60", "--sdk-log-level", "warning"]).unwrap();
    assert_eq!(a.general.log_level, Some(60));
    assert_eq!(a.general.sdk_log_level, Some(40));
    let a = parse(&["-g", "0", "--log-level=TRACE"]).unwrap();
    assert_eq!(a.general.log_level, Some(70));
    for bad in ["15", "80", "0", "loud", ""] {
        let e = parse(&["-g", "0", "-l", bad]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ValueValidation, "-l {bad:?}");
        assert!(e.to_string().contains("no DOCA log level"), "{e}");
    }
    assert_eq!(cli::log_level("critical"), Ok(20));
    assert_eq!(cli::log_level("10"), Ok(10));
}

#[test]
fn help_and_version_are_displays_and_bad_input_is_an_error() {
    let e = parse(&["-h"]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DisplayHelp);
    assert_eq!(e.exit_code(), 0);
    let help = e.to_string();
    for f in [
        "--gpu",
        "--log-level",
        "--sdk-log-level",
        "-v, --version",
        "-h, --help",
    ] {
        assert!(help.contains(f), "help lacks {f}:\n{help}");
    }
    for v in ["-v", "--version"] {
        let e = parse(&[v]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DisplayVersion, "{v}");
        assert_eq!(e.exit_code(), 0);
        assert!(e.to_string().contains(cli::version()), "{e}");
    }
    // clap's own -V is gone: -v is DOCA's.
    assert_eq!(
        parse(&["-V"]).unwrap_err().kind(),
        ErrorKind::UnknownArgument
    );
    let e = parse(&["-e", "1"]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingRequiredArgument);
    assert_eq!(e.exit_code(), 2);
    let e = parse(&["-g", "0", "-e", "x"]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueValidation);
}

#[test]
fn the_version_names_the_backend_and_the_urom_default_device_exists() {
    assert!(cli::version().starts_with(env!("CARGO_PKG_VERSION")));
    assert!(cli::version().contains(doca::sys::BACKEND) || doca::sys::BACKEND == "sdk");
    if doca::sys::BACKEND == "soft" {
        // With the software runtime every Linux interface is a device; lo always exists.
        assert_eq!(cli::default_urom_device(), "lo");
        assert!(doca::common::Device::open(cli::default_urom_device()).is_ok());
    } else {
        assert_eq!(cli::default_urom_device(), "mlx5_0");
    }
}

/// The facade's example binaries (cargo test builds them).
/// (gpu_packet_processing takes them too, with the original's exit status 1 for bad input:
/// tests/gpu_packet_processing.rs.)
const EXAMPLES: [&str; 9] = [
    "devices",
    "gpunetio_dma_memcpy",
    "gpunetio_rdma_client_server_write",
    "pktgen",
    "send_wait_time",
    "simple_receive",
    "simple_send",
    "urom_multi_workers_bootstrap",
    "urom_async",
];

use doca_test_support::process::describe as show;

#[test]
fn every_example_takes_the_general_flags() {
    for name in EXAMPLES {
        let Some(bin) = example(name) else { return };
        let run = |args: &[&str]| Command::new(&bin).args(args).output().expect("run");
        for flag in ["-h", "--help"] {
            let out = run(&[flag]);
            assert_eq!(out.status.code(), Some(0), "{name} {flag}: {}", show(&out));
            let text = String::from_utf8_lossy(&out.stdout);
            for f in ["--log-level", "--sdk-log-level", "--version", "--help"] {
                assert!(text.contains(f), "{name} {flag}: no {f} in\n{text}");
            }
        }
        for flag in ["-v", "--version"] {
            let out = run(&[flag]);
            assert_eq!(out.status.code(), Some(0), "{name} {flag}: {}", show(&out));
            assert!(
                String::from_utf8_lossy(&out.stdout).starts_with(&format!("{name} 0.")),
                "{name} {flag}: {}",
                show(&out)
            );
        }
        for bad in [&["--bogus"][..], &["-l", "42"]] {
            let out = run(bad);
            assert_eq!(out.status.code(), Some(2), "{name} {bad:?}: {}", show(&out));
            assert!(!out.stderr.is_empty(), "{name} {bad:?}: no message");
        }
    }
}

#[test]
fn the_urom_sample_defaults_to_a_device_that_exists() {
    let Some(bin) = example("urom_multi_workers_bootstrap") else {
        return;
    };
    let out = Command::new(bin).arg("--help").output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    let want = format!("[default: {}]", cli::default_urom_device());
    assert!(text.contains(&want), "no {want} in\n{text}");
}
