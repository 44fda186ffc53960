//! A small command-line parser for the samples: short and long flags (`-g X`, `--gpu X`,
//! `--gpu=X`), mandatory options, typed values, `-h/--help`; bad input prints a message and
//! the usage and exits with status 2.

#![allow(dead_code)]

use std::collections::HashMap;
use std::str::FromStr;

/// One option: short letter, long name, whether it takes a value, help text.
pub struct Opt {
    /// `-x`.
    pub short: char,
    /// `--long`.
    pub long: &'static str,
    /// Whether a value follows.
    pub takes_value: bool,
    /// One line of help.
    pub help: &'static str,
}

/// Parsed command line.
pub struct Cli {
    prog: &'static str,
    usage: String,
    values: HashMap<&'static str, String>,
    positional: Vec<String>,
}

fn usage_text(prog: &str, about: &str, opts: &[Opt]) -> String {
    let mut u = format!("{about}\n\nusage: {prog} [options]\n");
    for o in opts {
        let v = if o.takes_value { " <value>" } else { "" };
        u.push_str(&format!(
            "  -{}, --{}{v}\n        {}\n",
            o.short, o.long, o.help
        ));
    }
    u.push_str("  -h, --help\n        this text\n");
    u
}

impl Cli {
    /// Parses the process arguments.
    pub fn parse(prog: &'static str, about: &str, opts: &[Opt]) -> Cli {
        Self::parse_from(prog, about, opts, std::env::args().skip(1))
    }

    /// Parses `args` (without the program name).
    pub fn parse_from(
        prog: &'static str,
        about: &str,
        opts: &[Opt],
        args: impl IntoIterator<Item = String>,
    ) -> Cli {
        let mut cli = Cli {
            prog,
            usage: usage_text(prog, about, opts),
            values: HashMap::new(),
            positional: Vec::new(),
        };
        let mut it = args.into_iter();
        while let Some(a) = it.next() {
            if a == "-h" || a == "--help" {
                print!("{}", cli.usage);
                std::process::exit(0);
            }
            let (opt, inline) = if let Some(l) = a.strip_prefix("--") {
                let (name, val) = match l.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (l, None),
                };
                (opts.iter().find(|o| o.long == name), val)
            } else if a.len() >= 2
                && a.starts_with('-')
                && !a[1..].starts_with(|c: char| c.is_ascii_digit())
            {
                let c = a[1..].chars().next().expect("len >= 2");
                let rest = &a[1 + c.len_utf8()..];
                let val = (!rest.is_empty()).then(|| rest.to_string());
                (opts.iter().find(|o| o.short == c), val)
            } else {
                cli.positional.push(a);
                continue;
            };
            let Some(opt) = opt else {
                cli.usage_error(&format!("unknown option {a:?}"));
            };
            let value = if opt.takes_value {
                match inline.or_else(|| it.next()) {
                    Some(v) => v,
                    None => {
                        cli.usage_error(&format!("-{}/--{} needs a value", opt.short, opt.long))
                    }
                }
            } else {
                if inline.is_some() {
                    cli.usage_error(&format!("--{} takes no value", opt.long));
                }
                "1".to_string()
            };
            cli.values.insert(opt.long, value);
        }
        cli
    }

    /// Prints `msg` and a pointer to `--help` to stderr and exits with status 2.
    pub fn usage_error(&self, msg: &str) -> ! {
        eprintln!("{}: {msg} (see {} --help)", self.prog, self.prog);
        std::process::exit(2);
    }

    /// The value of `--long`, parsed, if given.
    pub fn get<T: FromStr>(&self, long: &str) -> Option<T> {
        let v = self.values.get(long)?;
        match v.parse() {
            Ok(x) => Some(x),
            Err(_) => self.usage_error(&format!("invalid value {v:?} for --{long}")),
        }
    }

    /// The value of `--long`, or `default`.
    pub fn get_or<T: FromStr>(&self, long: &str, default: T) -> T {
        self.get(long).unwrap_or(default)
    }

    /// The value of the mandatory `--long`.
    pub fn require<T: FromStr>(&self, long: &str) -> T {
        match self.get(long) {
            Some(v) => v,
            None => self.usage_error(&format!("missing mandatory option --{long}")),
        }
    }

    /// Whether the boolean flag `--long` was given.
    pub fn flag(&self, long: &str) -> bool {
        self.values.contains_key(long)
    }

    /// Arguments that are not options.
    pub fn positional(&self) -> &[String] {
        &self.positional
    }
}

/// Prints `prog: msg` to stderr and exits with status 1 (runtime failure).
pub fn fail(prog: &str, msg: impl std::fmt::Display) -> ! {
    eprintln!("{prog}: {msg}");
    std::process::exit(1);
}
