//! Command-line parsing for DOCA programs (`doca_argp.h`).
//!
//! A program registers parameters (short and/or long name, type, callback, mandatory flag)
//! between `doca_argp_init` and `doca_argp_start`. `doca_argp_start` parses the command
//! line: `-s VALUE`, `-sVALUE` (one-letter short names), `--long VALUE`, `--long=VALUE`;
//! BOOLEAN parameters take no value (or `--long=true|false|1|0`). After the whole line
//! parsed and every mandatory parameter was seen, the callbacks run in command-line order,
//! each with a pointer to the parsed value (`char *`, `int *`, `bool *`, `double *`) and the
//! config pointer given to `doca_argp_init`; the first callback error is returned.
//!
//! General flags every DOCA program accepts: `-h/--help` (usage to stdout, exit 0),
//! `-v/--version` (version, exit 0), `-l/--log-level N` (global lower log limit) and
//! `--sdk-log-level N` (global SDK log limit). Unknown flags, stray arguments, bad values and
//! missing mandatory parameters print an error and the usage, and return INVALID_VALUE.

use crate::error::{DocaError, DocaResult};
use crate::sync::lock;
use std::ffi::{c_int, c_void, CString};
use std::sync::Mutex;

/// `DOCA_ARGP_TYPE_UNKNOWN`.
pub const TYPE_UNKNOWN: u32 = 0;
/// `DOCA_ARGP_TYPE_STRING`.
pub const TYPE_STRING: u32 = 1;
/// `DOCA_ARGP_TYPE_INT`.
pub const TYPE_INT: u32 = 2;
/// `DOCA_ARGP_TYPE_BOOLEAN`.
pub const TYPE_BOOLEAN: u32 = 3;
/// `DOCA_ARGP_TYPE_DEVICE` (parsed as a string).
pub const TYPE_DEVICE: u32 = 4;
/// `DOCA_ARGP_TYPE_DEVICE_REP` (parsed as a string).
pub const TYPE_DEVICE_REP: u32 = 5;
/// `DOCA_ARGP_TYPE_DOUBLE`.
pub const TYPE_DOUBLE: u32 = 6;

/// `doca_argp_param_cb_t`.
pub type ParamCb = Option<unsafe extern "C" fn(param: *mut c_void, config: *mut c_void) -> u32>;

/// The C `struct doca_argp_param`.
#[derive(Default, Clone)]
pub struct Param {
    short_name: Option<String>,
    long_name: Option<String>,
    arguments: Option<String>,
    description: Option<String>,
    cb: ParamCb,
    kind: u32,
    mandatory: bool,
    cli_only: bool,
    multiple: bool,
}

/// A parsed value, ready to be passed by pointer to a callback.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// STRING, DEVICE, DEVICE_REP.
    Str(String),
    /// INT.
    Int(i32),
    /// BOOLEAN.
    Bool(bool),
    /// DOUBLE.
    Double(f64),
}

/// What a parse asks for.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Run the callbacks: (parameter index, value) in command-line order; log levels to set.
    Run {
        /// Values for registered parameters.
        values: Vec<(usize, Value)>,
        /// `-l/--log-level`, if given.
        log_level: Option<u32>,
        /// `--sdk-log-level`, if given.
        sdk_log_level: Option<u32>,
    },
    /// `-h/--help`: print this usage and exit 0.
    Help(String),
    /// `-v/--version`: print this and exit 0.
    Version(String),
}

/// `doca_argp_validation_cb_t`.
pub type ValidationCb = Option<unsafe extern "C" fn(config: *mut c_void) -> u32>;

/// A parser: program name, registered parameters and program-wide callbacks.
#[derive(Default)]
pub(crate) struct Argp {
    program: String,
    params: Vec<Param>,
    version_cb: ParamCb,
    validation_cb: ValidationCb,
}

const GENERAL: [(&str, &str, bool, &str); 4] = [
    ("h", "help", false, "Show this help and exit"),
    ("v", "version", false, "Show the DOCA version and exit"),
    (
        "l",
        "log-level",
        true,
        "Program log level (10 disable, 20 critical, 30 error, 40 warning, 50 info, 60 debug, 70 trace)",
    ),
    ("", "sdk-log-level", true, "SDK log level (same values as --log-level)"),
];

fn parse_int(s: &str) -> Option<i32> {
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => t.parse::<i64>().ok()?,
    };
    i32::try_from(if neg { -v } else { v }).ok()
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn parse_level(s: &str) -> DocaResult<u32> {
    let v = parse_int(s).ok_or(DocaError::INVALID_VALUE)?;
    let v = u32::try_from(v).map_err(|_| DocaError::INVALID_VALUE)?;
    if crate::log::is_valid_level(v) {
        Ok(v)
    } else {
        Err(DocaError::INVALID_VALUE)
    }
}

impl Argp {
    /// A parser for `program`.
    pub(crate) fn new(program: &str) -> Argp {
        Argp {
            program: program.to_owned(),
            ..Argp::default()
        }
    }

    /// Registers a parameter: it needs a name, a known type and a callback, and its names
    /// must be free (INVALID_VALUE otherwise).
    pub(crate) fn register(&mut self, p: Param) -> DocaResult<()> {
        if p.short_name.is_none() && p.long_name.is_none() {
            return Err(DocaError::INVALID_VALUE);
        }
        if p.cb.is_none() || !(TYPE_STRING..=TYPE_DOUBLE).contains(&p.kind) {
            return Err(DocaError::INVALID_VALUE);
        }
        let taken = |n: &str, long: bool| {
            GENERAL
                .iter()
                .any(|g| if long { g.1 == n } else { g.0 == n })
                || self.params.iter().any(|q| {
                    let other = if long { &q.long_name } else { &q.short_name };
                    other.as_deref() == Some(n)
                })
        };
        let bad_name = |n: &Option<String>, long: bool| {
            n.as_deref()
                .is_some_and(|n| n.is_empty() || n.starts_with('-') || taken(n, long))
        };
        if bad_name(&p.short_name, false) || bad_name(&p.long_name, true) {
            return Err(DocaError::INVALID_VALUE);
        }
        self.params.push(p);
        Ok(())
    }

    fn find(&self, name: &str, long: bool) -> Option<usize> {
        self.params.iter().position(|p| {
            let n = if long { &p.long_name } else { &p.short_name };
            n.as_deref() == Some(name)
        })
    }

    fn convert(&self, idx: usize, raw: &str) -> Result<Value, String> {
        let p = &self.params[idx];
        let name = p.display_name();
        match p.kind {
            TYPE_INT => parse_int(raw)
                .map(Value::Int)
                .ok_or_else(|| format!("{name} expects an integer, got {raw:?}")),
            TYPE_DOUBLE => raw
                .trim()
                .parse::<f64>()
                .map(Value::Double)
                .map_err(|_| format!("{name} expects a number, got {raw:?}")),
            TYPE_BOOLEAN => parse_bool(raw)
                .map(Value::Bool)
                .ok_or_else(|| format!("{name} expects true or false, got {raw:?}")),
            _ => Ok(Value::Str(raw.to_owned())),
        }
    }

    /// Parses `args` (without the program name).
    pub(crate) fn parse(&self, args: &[String]) -> Result<Outcome, String> {
        let mut values = Vec::new();
        let (mut log_level, mut sdk_log_level) = (None, None);
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            // Split into (name, long?, inline value).
            let (name, long, inline): (&str, bool, Option<&str>) =
                if let Some(rest) = a.strip_prefix("--") {
                    match rest.split_once('=') {
                        Some((n, v)) => (n, true, Some(v)),
                        None => (rest, true, None),
                    }
                } else if let Some(rest) = a.strip_prefix('-').filter(|r| !r.is_empty()) {
                    (rest, false, None)
                } else {
                    return Err(format!("unexpected argument {a:?}"));
                };
            // General flags.
            let general = GENERAL.iter().find(|g| {
                if long {
                    g.1 == name
                } else {
                    !g.0.is_empty() && g.0 == name
                }
            });
            if let Some(g) = general {
                match g.1 {
                    "help" => return Ok(Outcome::Help(self.usage())),
                    "version" => {
                        return Ok(Outcome::Version(format!(
                        "DOCA SDK version (compilation): {}\nDOCA runtime version: {} (doca-soft)",
                        crate::version::RUNTIME_VERSION,
                        crate::version::RUNTIME_VERSION
                    )))
                    }
                    _ => {
                        let raw = match inline {
                            Some(v) => v,
                            None => {
                                let v = args.get(i).ok_or(format!("{a} needs a value"))?;
                                i += 1;
                                v
                            }
                        };
                        let lvl =
                            parse_level(raw).map_err(|_| format!("invalid log level {raw:?}"))?;
                        if g.1 == "log-level" {
                            log_level = Some(lvl);
                        } else {
                            sdk_log_level = Some(lvl);
                        }
                        continue;
                    }
                }
            }
            // Program parameters: exact name, or a one-letter short name with the value
            // attached (`-n17:00.0`).
            let (idx, inline) = match self.find(name, long) {
                Some(idx) => (idx, inline),
                None if !long && name.len() > 1 => {
                    let (first, rest) =
                        name.split_at(name.chars().next().map_or(1, char::len_utf8));
                    match self.find(first, false) {
                        Some(idx) if self.params[idx].kind != TYPE_BOOLEAN => (idx, Some(rest)),
                        _ => return Err(format!("unknown flag {a:?}")),
                    }
                }
                None => return Err(format!("unknown flag {a:?}")),
            };
            let value = if self.params[idx].kind == TYPE_BOOLEAN {
                match inline {
                    Some(v) => self.convert(idx, v)?,
                    None => Value::Bool(true),
                }
            } else {
                let raw = match inline {
                    Some(v) => v,
                    None => {
                        let v = args.get(i).ok_or(format!("{a} needs a value"))?;
                        i += 1;
                        v.as_str()
                    }
                };
                self.convert(idx, raw)?
            };
            if !self.params[idx].multiple && values.iter().any(|(i, _)| *i == idx) {
                return Err(format!(
                    "{} given more than once",
                    self.params[idx].display_name()
                ));
            }
            values.push((idx, value));
        }
        for (idx, p) in self.params.iter().enumerate() {
            if p.mandatory && !values.iter().any(|(i, _)| *i == idx) {
                return Err(format!("missing mandatory parameter {}", p.display_name()));
            }
        }
        Ok(Outcome::Run {
            values,
            log_level,
            sdk_log_level,
        })
    }

    /// Runs the callbacks of parsed values with `config`; returns the first error.
    ///
    /// # Safety
    /// `config` is what the registered callbacks expect (they receive it as is).
    pub(crate) unsafe fn run_callbacks(
        &self,
        values: &[(usize, Value)],
        config: *mut c_void,
    ) -> DocaResult<()> {
        for (idx, v) in values {
            let p = &self.params[*idx];
            let Some(cb) = p.cb else { continue };
            // SAFETY: each value lives for the duration of its callback, which receives a
            // pointer of the type its parameter declares (the C API contract).
            let rc = unsafe {
                match v {
                    Value::Str(s) => {
                        let c = CString::new(s.as_str()).map_err(|_| DocaError::INVALID_VALUE)?;
                        cb(c.as_ptr() as *mut c_void, config)
                    }
                    Value::Int(n) => {
                        let mut x: c_int = *n;
                        cb((&mut x as *mut c_int).cast(), config)
                    }
                    Value::Bool(b) => {
                        let mut x: bool = *b;
                        cb((&mut x as *mut bool).cast(), config)
                    }
                    Value::Double(d) => {
                        let mut x: f64 = *d;
                        cb((&mut x as *mut f64).cast(), config)
                    }
                }
            };
            if rc != 0 {
                sdk_err!(
                    "argp",
                    "callback of {} failed: {:?}",
                    p.display_name(),
                    DocaError(rc)
                );
                return Err(DocaError(rc));
            }
        }
        if let Some(v) = self.validation_cb {
            // SAFETY: the program's validation callback receives its own config pointer.
            let rc = unsafe { v(config) };
            if rc != 0 {
                sdk_err!("argp", "program validation failed: {:?}", DocaError(rc));
                return Err(DocaError(rc));
            }
        }
        Ok(())
    }

    /// The usage text.
    pub(crate) fn usage(&self) -> String {
        let mut s = format!(
            "Usage: {} [DOCA Flags] [Program Flags]\n\nDOCA Flags:\n",
            self.program
        );
        let line = |s: &mut String, short: &str, long: &str, args: &str, descr: &str| {
            let mut names = String::new();
            if !short.is_empty() {
                names.push_str(&format!("-{short}"));
                if !long.is_empty() {
                    names.push_str(", ");
                }
            }
            if !long.is_empty() {
                names.push_str(&format!("--{long}"));
            }
            if !args.is_empty() {
                names.push(' ');
                names.push_str(args);
            }
            s.push_str(&format!("  {names:<40} {descr}\n"));
        };
        for g in GENERAL {
            line(&mut s, g.0, g.1, if g.2 { "<level>" } else { "" }, g.3);
        }
        s.push_str("\nProgram Flags:\n");
        for p in &self.params {
            let mut descr = p.description.clone().unwrap_or_default();
            for (on, note) in [
                (p.mandatory, "(mandatory)"),
                (p.multiple, "(repeatable)"),
                (p.cli_only, "(command line only)"),
            ] {
                if on {
                    if !descr.is_empty() {
                        descr.push(' ');
                    }
                    descr.push_str(note);
                }
            }
            line(
                &mut s,
                p.short_name.as_deref().unwrap_or(""),
                p.long_name.as_deref().unwrap_or(""),
                p.arguments.as_deref().unwrap_or(""),
                &descr,
            );
        }
        s
    }
}

impl Param {
    fn display_name(&self) -> String {
        match (&self.long_name, &self.short_name) {
            (Some(l), _) => format!("--{l}"),
            (None, Some(s)) => format!("-{s}"),
            (None, None) => "(unnamed)".into(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The process-wide parser the C API drives (one per process, as in DOCA).

struct Global {
    argp: Argp,
    config: usize,
}

static GLOBAL: Mutex<Option<Global>> = Mutex::new(None);

fn global() -> std::sync::MutexGuard<'static, Option<Global>> {
    lock(&GLOBAL)
}

impl Param {
    /// Sets the one-letter (or short) name, without the dash.
    pub(crate) fn set_short_name(&mut self, name: Option<String>) {
        self.short_name = name;
    }
    /// Sets the long name, without the dashes.
    pub(crate) fn set_long_name(&mut self, name: Option<String>) {
        self.long_name = name;
    }
    /// Sets the argument text shown in the usage.
    pub(crate) fn set_arguments(&mut self, arguments: Option<String>) {
        self.arguments = arguments;
    }
    /// Sets the description shown in the usage.
    pub(crate) fn set_description(&mut self, description: Option<String>) {
        self.description = description;
    }
    /// Sets the callback that receives the parsed value.
    pub(crate) fn set_callback(&mut self, cb: ParamCb) {
        self.cb = cb;
    }
    /// Sets the value type (`TYPE_*`).
    pub(crate) fn set_type(&mut self, kind: u32) {
        self.kind = kind;
    }
    /// Marks the parameter mandatory.
    pub(crate) fn set_mandatory(&mut self) {
        self.mandatory = true;
    }
    /// Marks the parameter command-line only: doca-soft reads no JSON configuration, so
    /// every parameter is; the mark shows in the usage.
    pub(crate) fn set_cli_only(&mut self) {
        self.cli_only = true;
    }
    /// Lets the flag repeat (the callback runs for each); otherwise a repeat is an error.
    pub(crate) fn set_multiplicity(&mut self) {
        self.multiple = true;
    }
}

/// `doca_argp_init`: the process-wide parser for `program`; BAD_STATE when one exists.
/// `config` is only passed back to the callbacks.
pub(crate) fn init(program: &str, config: *mut c_void) -> DocaResult<()> {
    let mut g = global();
    if g.is_some() {
        return Err(DocaError::BAD_STATE);
    }
    *g = Some(Global {
        argp: Argp::new(program),
        config: config as usize,
    });
    Ok(())
}

/// `doca_argp_destroy`: forgets the parser and its parameters; BAD_STATE when none.
pub(crate) fn destroy() -> DocaResult<()> {
    global().take().map(drop).ok_or(DocaError::BAD_STATE)
}

/// `doca_argp_register_version_callback`: called (with a NULL value and the config) for
/// `-v/--version` instead of printing the version; the program then exits 0.
pub(crate) fn set_version_callback(cb: ParamCb) -> DocaResult<()> {
    let mut g = global();
    let g = g.as_mut().ok_or(DocaError::BAD_STATE)?;
    if cb.is_none() {
        return Err(DocaError::INVALID_VALUE);
    }
    g.argp.version_cb = cb;
    Ok(())
}

/// `doca_argp_register_validation_callback`: called once with the config after every
/// parameter callback succeeded; its error is `doca_argp_start`'s.
pub(crate) fn set_validation_callback(cb: ValidationCb) -> DocaResult<()> {
    let mut g = global();
    let g = g.as_mut().ok_or(DocaError::BAD_STATE)?;
    if cb.is_none() {
        return Err(DocaError::INVALID_VALUE);
    }
    g.argp.validation_cb = cb;
    Ok(())
}

/// `doca_argp_register_param`: BAD_STATE before [`init`]; INVALID_VALUE (logged) when the
/// name is taken or the callback or type is missing.
pub(crate) fn register_param(p: Param) -> DocaResult<()> {
    let mut g = global();
    let g = g.as_mut().ok_or(DocaError::BAD_STATE)?;
    let name = p.display_name();
    let r = g.argp.register(p);
    if r.is_err() {
        sdk_err!(
            "argp",
            "cannot register parameter {name} (name taken, no callback or no type)"
        );
    }
    r
}

/// The usage text of the process-wide parser (None before [`init`]).
pub(crate) fn usage() -> Option<String> {
    global().as_ref().map(|g| g.argp.usage())
}

/// `doca_argp_start`: parses `args` (without the program name), then runs the callbacks.
/// `-h` and `-v` print (or call the version callback) and exit the process with 0, as in
/// DOCA; a parse error prints the usage to stderr and is INVALID_VALUE.
pub(crate) fn start(args: &[String]) -> DocaResult<()> {
    // Parse under the lock, run callbacks without it (they may call argp functions).
    let (outcome, config, version_cb) = {
        let g = global();
        let g = g.as_ref().ok_or(DocaError::BAD_STATE)?;
        match g.argp.parse(args) {
            Ok(o) => (o, g.config, g.argp.version_cb),
            Err(msg) => {
                sdk_err!("argp", "{msg}");
                eprint!("{}", g.argp.usage());
                return Err(DocaError::INVALID_VALUE);
            }
        }
    };
    match outcome {
        Outcome::Version(_) if version_cb.is_some() => {
            if let Some(cb) = version_cb {
                // SAFETY: the program's callback, with its own config pointer.
                unsafe { cb(std::ptr::null_mut(), config as *mut c_void) };
            }
            std::process::exit(0);
        }
        Outcome::Help(u) | Outcome::Version(u) => {
            use std::io::Write;
            print!("{u}");
            if !u.ends_with('\n') {
                println!();
            }
            let _ = std::io::stdout().flush();
            std::process::exit(0);
        }
        Outcome::Run {
            values,
            log_level,
            sdk_log_level,
        } => {
            if let Some(l) = log_level {
                let _ = crate::log::global().set_global_lower(l);
            }
            if let Some(l) = sdk_log_level {
                let _ = crate::log::global().set_global_sdk(l);
            }
            // Take the parser out for the callbacks, then put it back.
            let taken = global().take().ok_or(DocaError::BAD_STATE)?;
            // SAFETY: `config` is the pointer the program gave doca_argp_init for its callbacks.
            let r = unsafe { taken.argp.run_callbacks(&values, config as *mut c_void) };
            let mut g = global();
            if g.is_none() {
                *g = Some(taken);
            }
            r
        }
    }
}

#[cfg(test)]
mod tests;
