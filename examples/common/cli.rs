//! Command lines of the sample programs: clap (derive) with the originals' short and long
//! flags, plus the general flags every DOCA program takes, in one place:
//!
//! * `-h, --help`: the help, exit status 0;
//! * `-v, --version`: the version (this crate's, the DOCA API it binds and the backend),
//!   exit status 0;
//! * `-l, --log-level LEVEL`: the lowest level DOCA logs for the program
//!   (`doca_log_level_set_global_lower_limit`);
//! * `--sdk-log-level LEVEL`: the lowest level the DOCA libraries log
//!   (`doca_log_level_set_global_sdk_limit`).
//!
//! LEVEL is DOCA's number (10 disable, 20 critical, 30 error, 40 warning, 50 info, 60 debug,
//! 70 trace) or its name. A sample flattens [`General`] into its arguments, parses with
//! [`parse`] (which applies the levels), and reports bad values found after parsing with
//! [`usage_error`]: a message and the usage on stderr, exit status 2, as clap does for
//! what it finds itself. Failures at run time go through [`fail`] (status 1).
//!
//! Included with `#[path]` by the facade's examples and the examples crates; it needs
//! only `clap` and `doca`.

#![allow(dead_code)]

use clap::error::ErrorKind;
use clap::{ArgAction, CommandFactory, Parser};

/// DOCA's log levels, by name, as `-l` and `--sdk-log-level` accept them.
pub const LOG_LEVELS: [(&str, u32); 7] = [
    ("disable", 10),
    ("critical", 20),
    ("error", 30),
    ("warning", 40),
    ("info", 50),
    ("debug", 60),
    ("trace", 70),
];

/// DOCA's general flags; `#[command(flatten)]` them into a sample's arguments.
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct General {
    /// Lowest level DOCA logs for this program: 10 disable, 20 critical, 30 error,
    /// 40 warning, 50 info, 60 debug, 70 trace (or the name)
    #[arg(short = 'l', long = "log-level", value_name = "LEVEL", value_parser = log_level)]
    pub log_level: Option<u32>,
    /// Lowest level the DOCA libraries log (same values as --log-level)
    #[arg(long = "sdk-log-level", value_name = "LEVEL", value_parser = log_level)]
    pub sdk_log_level: Option<u32>,
    /// Print the version and exit
    #[arg(short = 'v', long = "version", action = ArgAction::Version)]
    version: (),
}

impl General {
    /// Sets DOCA's global log limits to the levels given (none given: DOCA's defaults).
    pub fn apply(&self) {
        if let Some(level) = self.log_level {
            // SAFETY: a plain setter taking a level by value; it refuses bad levels with an
            // error code.
            let r = unsafe { doca::sys::doca_log_level_set_global_lower_limit(level) };
            warn_if_refused("--log-level", level, r);
        }
        if let Some(level) = self.sdk_log_level {
            // SAFETY: as above.
            let r = unsafe { doca::sys::doca_log_level_set_global_sdk_limit(level) };
            warn_if_refused("--sdk-log-level", level, r);
        }
    }
}

fn warn_if_refused(flag: &str, level: u32, r: doca::sys::doca_error_t) {
    if let Err(e) = doca::common::DocaError::result(r) {
        eprintln!("warning: DOCA refused {flag} {level}: {e}");
    }
}

/// Parses a log level: DOCA's number (10, 20, ... 70) or its name.
pub fn log_level(s: &str) -> Result<u32, String> {
    let named = LOG_LEVELS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(s))
        .map(|&(_, n)| n);
    let level = named.or_else(|| s.parse::<u32>().ok());
    match level {
        Some(n) if LOG_LEVELS.iter().any(|&(_, l)| l == n) => Ok(n),
        _ => Err(format!(
            "{s:?} is no DOCA log level: one of 10, 20, 30, 40, 50, 60, 70 or {}",
            LOG_LEVELS.map(|(name, _)| name).join(", ")
        )),
    }
}

/// What `-v/--version` prints after the program's name: this package's version, the DOCA
/// API it binds and the backend.
pub fn version() -> &'static str {
    match doca::sys::BACKEND {
        "sdk" => concat!(
            env!("CARGO_PKG_VERSION"),
            " (doca-rs; DOCA API 3.3; backend: installed DOCA SDK)"
        ),
        _ => concat!(
            env!("CARGO_PKG_VERSION"),
            " (doca-rs; DOCA API 3.3; backend: doca-soft, the software runtime)"
        ),
    }
}

/// The default network device of the UROM samples: `lo` with the software runtime, where
/// every Linux interface is a device (the originals' `mlx5_0` exists only on machines with
/// a ConnectX or BlueField), and `mlx5_0` with the SDK.
pub fn default_urom_device() -> &'static str {
    match doca::sys::BACKEND {
        "sdk" => "mlx5_0",
        _ => "lo",
    }
}

/// The command of `T` with the general flags wired: the version [`version`] prints, and
/// clap's own `-V` replaced by DOCA's `-v`.
pub fn command<T: CommandFactory>() -> clap::Command {
    T::command().version(version()).disable_version_flag(true)
}

/// Parses `args` (with the program name first) into `T`, or the clap error (help and
/// version are errors of kind `DisplayHelp`/`DisplayVersion`, exit status 0).
pub fn try_parse_from<T, I, S>(args: I) -> Result<T, clap::Error>
where
    T: Parser,
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = command::<T>();
    let matches = cmd.try_get_matches_from_mut(args)?;
    T::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Parses the process arguments into `T` and applies `T`'s general flags; prints help,
/// version or the error and exits (0 for help and version, 2 for bad input).
pub fn parse<T: Parser>(general: impl FnOnce(&T) -> &General) -> T {
    let args = try_parse_from::<T, _, _>(std::env::args_os()).unwrap_or_else(|e| e.exit());
    general(&args).apply();
    args
}

/// Prints `msg` and the usage of `T` to stderr and exits with status 2: bad input found
/// after parsing (a value out of range, flags that do not go together).
pub fn usage_error<T: CommandFactory>(msg: impl std::fmt::Display) -> ! {
    command::<T>().error(ErrorKind::ValueValidation, msg).exit()
}

/// Prints `prog: msg` to stderr and exits with status 1 (a failure at run time).
pub fn fail(prog: &str, msg: impl std::fmt::Display) -> ! {
    eprintln!("{prog}: {msg}");
    std::process::exit(1);
}

/// Parses a duration in seconds that must be positive and finite (`-d/--duration`).
pub fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(d) if d > 0.0 && d.is_finite() => Ok(d),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}
