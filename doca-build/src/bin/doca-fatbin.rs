//! `doca-fatbin`: doca-build's recipe from the command line.
//!
//! ```text
//! doca-fatbin [-I DIR]... [-D NAME[=VALUE]]... -o OUT.fatbin SRC.cu...
//! doca-fatbin --which     # prints the nvcc the search finds
//! ```
//!
//! Exit status: 0 built, 1 nvcc missing or failing (the message says why), 2 bad usage.

use doca_build::{Fatbin, Nvcc};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: doca-fatbin [-I DIR]... [-D NAME[=VALUE]]... -o OUT.fatbin SRC.cu...\n       doca-fatbin --which";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--which") {
        return match Nvcc::find() {
            Ok(n) => {
                println!("{} ({:?})", n.path().display(), n.origin());
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        };
    }
    let (fatbin, out) = match parse(&args) {
        Ok(v) => v,
        Err(msg) => {
            eprintln!("doca-fatbin: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let Some(name) = out
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".fatbin"))
    else {
        eprintln!("doca-fatbin: the output must be NAME.fatbin\n{USAGE}");
        return ExitCode::from(2);
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("doca-fatbin: creating {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    match fatbin.out_dir(&dir).cargo_metadata(false).compile(name) {
        Ok(p) => {
            println!("{}", p.display());
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

fn fail(e: &doca_build::Error) -> ExitCode {
    eprintln!("doca-fatbin: {e}");
    ExitCode::FAILURE
}

/// The recipe and the output path from the arguments.
fn parse(args: &[String]) -> Result<(Fatbin, PathBuf), String> {
    let mut f = Fatbin::new();
    let mut out = None;
    let mut sources = 0;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str, inline: &str| -> Result<String, String> {
            if inline.is_empty() {
                it.next().cloned().ok_or(format!("{flag} needs a value"))
            } else {
                Ok(inline.to_string())
            }
        };
        if let Some(rest) = a.strip_prefix("-I") {
            f = f.include(value("-I", rest)?);
        } else if let Some(rest) = a.strip_prefix("-D") {
            let d = value("-D", rest)?;
            f = match d.split_once('=') {
                Some((k, v)) => f.define(k, Some(v)),
                None => f.define(&d, None),
            };
        } else if a == "-o" {
            out = Some(PathBuf::from(value("-o", "")?));
        } else if a.starts_with('-') {
            return Err(format!("unknown option {a}"));
        } else {
            f = f.file(a);
            sources += 1;
        }
    }
    if sources == 0 {
        return Err("no source files".into());
    }
    let out = out.ok_or("no output (-o OUT.fatbin)")?;
    Ok((f, out))
}
