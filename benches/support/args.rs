//! A small flag parser: `--key value`, `--key=value` and bare `--flag`. `--bench` (added by
//! `cargo bench`) is ignored.

use std::collections::HashMap;

/// Parsed flags.
pub struct Args {
    flags: HashMap<String, String>,
}

impl Args {
    /// Parses the process arguments; prints `usage` and exits on `--help`.
    pub fn parse(usage: &str) -> Args {
        Args::from_iter(std::env::args().skip(1), usage)
    }

    /// Parses `args`.
    pub fn from_iter(args: impl IntoIterator<Item = String>, usage: &str) -> Args {
        let mut flags = HashMap::new();
        let mut it = args.into_iter().peekable();
        while let Some(a) = it.next() {
            let Some(k) = a.strip_prefix("--") else {
                continue;
            };
            if k == "help" {
                println!("{usage}");
                std::process::exit(0);
            }
            if k == "bench" {
                continue;
            }
            if let Some((k, v)) = k.split_once('=') {
                flags.insert(k.to_string(), v.to_string());
            } else if it.peek().is_some_and(|n| !n.starts_with("--")) {
                let v = it.next().unwrap_or_default();
                flags.insert(k.to_string(), v);
            } else {
                flags.insert(k.to_string(), String::new());
            }
        }
        Args { flags }
    }

    /// Whether `--key` was given.
    pub fn has(&self, key: &str) -> bool {
        self.flags.contains_key(key)
    }

    /// The value of `--key`, or `default`.
    pub fn str(&self, key: &str, default: &str) -> String {
        self.flags
            .get(key)
            .cloned()
            .unwrap_or_else(|| default.to_string())
    }

    /// `--key` as a number, or `default`; exits with a message when it does not parse.
    pub fn num<T: std::str::FromStr>(&self, key: &str, default: T) -> T {
        match self.flags.get(key) {
            None => default,
            Some(v) => v.parse().unwrap_or_else(|_| {
                eprintln!("--{key}: not a number: {v}");
                std::process::exit(2)
            }),
        }
    }

    /// `--key` as a comma-separated list of numbers, or `default`.
    pub fn list<T: std::str::FromStr + Clone>(&self, key: &str, default: &[T]) -> Vec<T> {
        match self.flags.get(key) {
            None => default.to_vec(),
            Some(v) => v
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.trim().parse().unwrap_or_else(|_| {
                        eprintln!("--{key}: not a number list: {v}");
                        std::process::exit(2)
                    })
                })
                .collect(),
        }
    }

    /// `--quick`: short runs for CI smoke.
    pub fn quick(&self) -> bool {
        self.has("quick")
    }
}
