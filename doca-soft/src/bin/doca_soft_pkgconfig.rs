//! Writes the pkg-config files of `libdoca_soft.so` (doca-common, doca-gpunetio, doca-eth,
//! doca-flow, doca-urom, doca-argp) into a directory:
//!
//! ```text
//! doca_soft_pkgconfig --out DIR [--libdir L] [--includedir I]
//! PKG_CONFIG_PATH=DIR pkg-config --cflags --libs doca-gpunetio
//! ```
//!
//! The library directory defaults to this binary's own directory (`cargo build -p doca-soft
//! -p doca-soft-capi` puts `libdoca_soft.so`, the library of the doca-soft-capi package,
//! next to it), the include directory to the crate's `include/`.

use std::path::PathBuf;
use std::process::ExitCode;

use doca_soft::pkgconfig;

const USAGE: &str = "usage: doca_soft_pkgconfig --out DIR [--libdir DIR] [--includedir DIR]";

struct Args {
    out: PathBuf,
    libdir: Option<PathBuf>,
    includedir: Option<PathBuf>,
}

fn parse_args(mut argv: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let (mut out, mut libdir, mut includedir) = (None, None, None);
    while let Some(flag) = argv.next() {
        let slot = match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--out" => &mut out,
            "--libdir" => &mut libdir,
            "--includedir" => &mut includedir,
            other => return Err(format!("unknown argument {other:?}")),
        };
        let value = argv.next().ok_or_else(|| format!("{flag} needs a value"))?;
        *slot = Some(PathBuf::from(value));
    }
    let out = out.ok_or("--out is required")?;
    Ok(Some(Args {
        out,
        libdir,
        includedir,
    }))
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("doca_soft_pkgconfig: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let libdir = match args.libdir {
        Some(dir) => dir,
        None => match std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(PathBuf::from))
        {
            Some(dir) => dir,
            None => {
                eprintln!(
                    "doca_soft_pkgconfig: cannot find this binary's directory; pass --libdir"
                );
                return ExitCode::FAILURE;
            }
        },
    };
    if !libdir.join("libdoca_soft.so").exists() {
        eprintln!(
            "doca_soft_pkgconfig: warning: no libdoca_soft.so in {} (cargo build -p doca-soft-capi)",
            libdir.display()
        );
    }
    let includedir = args
        .includedir
        .unwrap_or_else(pkgconfig::default_include_dir);
    match pkgconfig::write_pc_files(&args.out, &libdir, &includedir) {
        Ok(written) => {
            for path in written {
                println!("{}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("doca_soft_pkgconfig: {e}");
            ExitCode::FAILURE
        }
    }
}
