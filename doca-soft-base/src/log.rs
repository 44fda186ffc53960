//! Logging: log sources, log backends and level limits (the `doca_log.h` C API), the entry
//! point `doca_soft_log_emit` that `doca_log` hands each formatted message to, and the
//! `sdk_*!` macros the runtime uses for its own (SDK) messages.
//!
//! Two kinds of messages and backends, as in DOCA:
//! * application messages (`DOCA_LOG_*` in a program) go to application backends: the
//!   standard one (CRIT and ERROR to stderr, the rest to stdout) and the file/fd ones;
//! * SDK messages (this runtime's own) go to SDK backends (`..._sdk` constructors).
//!
//! Levels are numbers where smaller is more severe (CRIT 20 ... TRACE 70, DISABLE 10). An
//! application backend prints level `L` when `upper <= L <= lower`: the lower limit is the
//! least severe level it shows, the upper limit the most severe one. An SDK backend prints
//! `L <= sdk_level`. The global setters apply to every existing backend and become the
//! default of backends created later. With no backend of a kind, messages of that kind at
//! WARNING or worse still reach stderr (doca-soft's choice, so that errors are never lost).
//!
//! Lines look like `[HH:MM:SS:micro][pid][LEVEL][source:line][func] msg`; SDK lines carry an
//! extra `[DOCA]` tag after the pid.

use crate::error::{DocaError, DocaResult};
use crate::sync::lock;
use std::ffi::{c_int, CString};
use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// `DOCA_LOG_LEVEL_DISABLE`.
pub const LEVEL_DISABLE: u32 = 10;
/// `DOCA_LOG_LEVEL_CRIT`.
pub const LEVEL_CRIT: u32 = 20;
/// `DOCA_LOG_LEVEL_ERROR`.
pub const LEVEL_ERROR: u32 = 30;
/// `DOCA_LOG_LEVEL_WARNING`.
pub const LEVEL_WARNING: u32 = 40;
/// `DOCA_LOG_LEVEL_INFO`.
pub const LEVEL_INFO: u32 = 50;
/// `DOCA_LOG_LEVEL_DEBUG`.
pub const LEVEL_DEBUG: u32 = 60;
/// `DOCA_LOG_LEVEL_TRACE`.
pub const LEVEL_TRACE: u32 = 70;

/// Whether `level` is one of the `DOCA_LOG_LEVEL_*` values.
pub fn is_valid_level(level: u32) -> bool {
    (LEVEL_DISABLE..=LEVEL_TRACE).contains(&level) && level.is_multiple_of(10)
}

/// Short tag of a level as printed in a line.
pub fn level_tag(level: u32) -> &'static str {
    match level {
        LEVEL_CRIT => "CRIT",
        LEVEL_ERROR => "ERR",
        LEVEL_WARNING => "WARN",
        LEVEL_INFO => "INFO",
        LEVEL_DEBUG => "DBG",
        LEVEL_TRACE => "TRC",
        _ => "?",
    }
}

fn check_level(level: u32) -> DocaResult<()> {
    if is_valid_level(level) {
        Ok(())
    } else {
        Err(DocaError::INVALID_VALUE)
    }
}

/// A C `FILE *` owned by the application; we only write to it.
#[derive(Clone, Copy)]
struct CFile(*mut libc::FILE);
// SAFETY: stdio FILE streams lock internally; writes happen under the logger's write lock.
unsafe impl Send for CFile {}
// SAFETY: as above.
unsafe impl Sync for CFile {}

/// Where a backend writes.
#[derive(Clone, Copy)]
enum Sink {
    /// stdout, or stderr for CRIT and ERROR.
    Standard,
    /// An application `FILE *` (written with fputs + fflush).
    File(CFile),
    /// A file descriptor.
    Fd(c_int),
}

/// The C `struct doca_log_backend`. Backends live until the process ends (DOCA has no
/// destroy call for them).
pub struct LogBackend {
    sink: Sink,
    sdk: bool,
    lower: AtomicU32,
    upper: AtomicU32,
    sdk_level: AtomicU32,
}

impl LogBackend {
    fn accepts(&self, level: u32, sdk: bool) -> bool {
        if sdk != self.sdk || level <= LEVEL_DISABLE {
            return false;
        }
        if sdk {
            level <= self.sdk_level.load(Ordering::Relaxed)
        } else {
            level <= self.lower.load(Ordering::Relaxed)
                && level >= self.upper.load(Ordering::Relaxed)
        }
    }
}

/// Sources, backends and limits. One global instance serves the C API; tests make their own.
pub struct Logger {
    sources: Mutex<Vec<Option<String>>>,
    backends: Mutex<Vec<&'static LogBackend>>,
    global_lower: AtomicU32,
    global_upper: AtomicU32,
    global_sdk: AtomicU32,
    // The most verbose SDK level anything prints (the global one, every SDK backend's):
    // runtime messages above it are dropped before they are formatted, so disabled debug
    // lines cost no allocation on data paths.
    sdk_ceiling: AtomicU32,
    write_lock: Mutex<()>,
}

impl Default for Logger {
    fn default() -> Self {
        Self::new()
    }
}

impl Logger {
    /// A logger with no sources and no backends (lower limit INFO, SDK limit WARNING).
    pub const fn new() -> Logger {
        Logger {
            sources: Mutex::new(Vec::new()),
            backends: Mutex::new(Vec::new()),
            global_lower: AtomicU32::new(LEVEL_INFO),
            global_upper: AtomicU32::new(LEVEL_CRIT),
            global_sdk: AtomicU32::new(LEVEL_WARNING),
            sdk_ceiling: AtomicU32::new(LEVEL_WARNING),
            write_lock: Mutex::new(()),
        }
    }

    /// Registers a source name; returns its id.
    pub fn register_source(&self, name: &str) -> i32 {
        let mut s = lock(&self.sources);
        s.push(Some(name.to_owned()));
        (s.len() - 1) as i32
    }

    /// Forgets a source; NOT_FOUND for an unknown id.
    pub fn unregister_source(&self, id: i32) -> DocaResult<()> {
        let mut s = lock(&self.sources);
        match usize::try_from(id).ok().and_then(|i| s.get_mut(i)) {
            Some(slot @ Some(_)) => {
                *slot = None;
                Ok(())
            }
            _ => Err(DocaError::NOT_FOUND),
        }
    }

    pub fn source_name(&self, id: i32) -> Option<String> {
        let s = lock(&self.sources);
        usize::try_from(id)
            .ok()
            .and_then(|i| s.get(i).cloned().flatten())
    }

    fn add_backend(&self, sink: Sink, sdk: bool) -> &'static LogBackend {
        let b: &'static LogBackend = Box::leak(Box::new(LogBackend {
            sink,
            sdk,
            lower: AtomicU32::new(self.global_lower.load(Ordering::Relaxed)),
            upper: AtomicU32::new(self.global_upper.load(Ordering::Relaxed)),
            sdk_level: AtomicU32::new(self.global_sdk.load(Ordering::Relaxed)),
        }));
        lock(&self.backends).push(b);
        self.refresh_sdk_ceiling();
        b
    }

    /// Recomputes the most verbose SDK level any sink prints.
    fn refresh_sdk_ceiling(&self) {
        let backends = lock(&self.backends);
        let most = backends
            .iter()
            .filter(|b| b.sdk)
            .map(|b| b.sdk_level.load(Ordering::Relaxed))
            .fold(self.global_sdk.load(Ordering::Relaxed), u32::max);
        self.sdk_ceiling.store(most, Ordering::Relaxed);
    }

    /// Whether an SDK message of `level` could reach any sink.
    pub fn sdk_may_print(&self, level: u32) -> bool {
        level <= self.sdk_ceiling.load(Ordering::Relaxed)
    }

    /// Sets the lower limit of every application backend, and the default of new ones.
    pub fn set_global_lower(&self, level: u32) -> DocaResult<()> {
        check_level(level)?;
        self.global_lower.store(level, Ordering::Relaxed);
        for b in lock(&self.backends).iter() {
            b.lower.store(level, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Sets the upper limit of every application backend, and the default of new ones.
    pub fn set_global_upper(&self, level: u32) -> DocaResult<()> {
        check_level(level)?;
        self.global_upper.store(level, Ordering::Relaxed);
        for b in lock(&self.backends).iter() {
            b.upper.store(level, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Sets the SDK level of every SDK backend, and the default of new ones (and the
    /// threshold of the stderr fallback).
    pub fn set_global_sdk(&self, level: u32) -> DocaResult<()> {
        check_level(level)?;
        self.global_sdk.store(level, Ordering::Relaxed);
        for b in lock(&self.backends).iter() {
            b.sdk_level.store(level, Ordering::Relaxed);
        }
        self.refresh_sdk_ceiling();
        Ok(())
    }

    /// Sends a message to the backends of its kind.
    #[allow(clippy::too_many_arguments)]
    pub fn emit(&self, sdk: bool, level: u32, source: &str, line: u32, func: &str, msg: &str) {
        if level <= LEVEL_DISABLE {
            return;
        }
        let targets: Vec<&'static LogBackend> = lock(&self.backends)
            .iter()
            .copied()
            .filter(|b| b.sdk == sdk)
            .collect();
        // No backend of this kind: the stderr fallback, up to WARNING for application
        // messages and up to the global SDK limit for SDK ones.
        let fallback_limit = if sdk {
            self.global_sdk.load(Ordering::Relaxed)
        } else {
            self.global_lower.load(Ordering::Relaxed).min(LEVEL_WARNING)
        };
        let fallback = targets.is_empty() && level <= fallback_limit;
        let wanted: Vec<&'static LogBackend> = targets
            .into_iter()
            .filter(|b| b.accepts(level, sdk))
            .collect();
        if wanted.is_empty() && !fallback {
            return;
        }
        let text = format_line(sdk, level, source, line, func, msg);
        let _w = lock(&self.write_lock);
        if fallback {
            write_sink(Sink::Fd(2), level, &text);
        }
        for b in wanted {
            write_sink(b.sink, level, &text);
        }
    }
}

fn format_line(sdk: bool, level: u32, source: &str, line: u32, func: &str, msg: &str) -> String {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    // SAFETY: an all-zero `tm` is a valid value; localtime_r fills it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    unsafe { libc::localtime_r(&ts.tv_sec, &mut tm) };
    let tag = if sdk { "[DOCA]" } else { "" };
    let msg = msg.strip_suffix('\n').unwrap_or(msg);
    format!(
        "[{:02}:{:02}:{:02}:{:06}][{}]{}[{}][{}:{}][{}] {}\n",
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        ts.tv_nsec / 1000,
        std::process::id(),
        tag,
        level_tag(level),
        source,
        line,
        func,
        msg
    )
}

fn write_sink(sink: Sink, level: u32, text: &str) {
    match sink {
        Sink::Standard => {
            if level <= LEVEL_ERROR {
                let mut e = std::io::stderr().lock();
                let _ = e.write_all(text.as_bytes());
                let _ = e.flush();
            } else {
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(text.as_bytes());
                let _ = o.flush();
            }
        }
        Sink::File(f) => {
            let c = CString::new(text.replace('\0', "")).unwrap_or_default();
            // SAFETY: `f.0` is the application's open FILE (backend contract); `c` is a
            // valid NUL-terminated string.
            unsafe {
                libc::fputs(c.as_ptr(), f.0);
                libc::fflush(f.0);
            }
        }
        Sink::Fd(fd) => write_fd(fd, text.as_bytes()),
    }
}

fn write_fd(fd: c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a valid readable slice for its length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

static LOGGER: Logger = Logger::new();

/// The process-wide logger behind the C API.
pub fn global() -> &'static Logger {
    &LOGGER
}

/// Emits one SDK-side message with its line and function (used by the `sdk_*!` macros).
pub fn emit_at(level: u32, source: &str, line: u32, func: &str, msg: std::fmt::Arguments<'_>) {
    if !LOGGER.sdk_may_print(level) {
        return;
    }
    let text = match msg.as_str() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(msg.to_string()),
    };
    LOGGER.emit(true, level, source, line, func, &text);
}

/// `sdk_log!(LEVEL, "source", "fmt", args...)`.
#[macro_export]
macro_rules! sdk_log {
    ($lvl:expr, $src:expr, $($arg:tt)*) => {
        $crate::log::emit_at($lvl, $src, line!(), module_path!(), format_args!($($arg)*))
    };
}
/// Error from the runtime.
#[macro_export]
macro_rules! sdk_err { ($src:expr, $($arg:tt)*) => { $crate::sdk_log!($crate::log::LEVEL_ERROR, $src, $($arg)*) }; }
/// Warning from the runtime.
#[macro_export]
macro_rules! sdk_warn { ($src:expr, $($arg:tt)*) => { $crate::sdk_log!($crate::log::LEVEL_WARNING, $src, $($arg)*) }; }
/// Information from the runtime.
#[macro_export]
macro_rules! sdk_info { ($src:expr, $($arg:tt)*) => { $crate::sdk_log!($crate::log::LEVEL_INFO, $src, $($arg)*) }; }
/// Debug message from the runtime.
#[macro_export]
macro_rules! sdk_dbg { ($src:expr, $($arg:tt)*) => { $crate::sdk_log!($crate::log::LEVEL_DEBUG, $src, $($arg)*) }; }
/// Trace message from the runtime.
#[macro_export]
macro_rules! sdk_trc { ($src:expr, $($arg:tt)*) => { $crate::sdk_log!($crate::log::LEVEL_TRACE, $src, $($arg)*) }; }

// ---------------------------------------------------------------------------------------
// What the C API (capi/doca_log.rs) drives: the process-wide logger's backends and limits.

/// Where a new backend writes (`doca_log_backend_create_*`).
pub enum BackendTarget {
    /// stdout, or stderr for CRIT and ERROR (application messages only).
    Standard,
    /// An application `FILE *`, open for as long as the process logs.
    File(*mut libc::FILE),
    /// A file descriptor.
    Fd(c_int),
}

impl Logger {
    /// Adds a backend for application (`sdk == false`) or SDK messages; INVALID_VALUE for
    /// a null FILE or a negative descriptor. Backends live until the process ends.
    pub fn create_backend(
        &self,
        target: BackendTarget,
        sdk: bool,
    ) -> DocaResult<&'static LogBackend> {
        let sink = match target {
            BackendTarget::Standard => Sink::Standard,
            BackendTarget::File(f) if !f.is_null() => Sink::File(CFile(f)),
            BackendTarget::Fd(fd) if fd >= 0 => Sink::Fd(fd),
            _ => return Err(DocaError::INVALID_VALUE),
        };
        Ok(self.add_backend(sink, sdk))
    }

    /// An application message from C (`doca_soft_log_emit`): the source name is the one
    /// registered for `source`, else the base name of `file`.
    pub fn emit_app(&self, level: u32, source: i32, file: &str, line: i32, func: &str, msg: &str) {
        let name = self
            .source_name(source)
            .unwrap_or_else(|| file.rsplit('/').next().unwrap_or("").to_owned());
        self.emit(false, level, &name, line.max(0) as u32, func, msg);
    }

    /// The lower limit new application backends get.
    pub fn global_lower(&self) -> u32 {
        self.global_lower.load(Ordering::Relaxed)
    }

    /// The upper limit new application backends get.
    pub fn global_upper(&self) -> u32 {
        self.global_upper.load(Ordering::Relaxed)
    }

    /// The SDK level new SDK backends get.
    pub fn global_sdk(&self) -> u32 {
        self.global_sdk.load(Ordering::Relaxed)
    }
}

impl LogBackend {
    /// Sets the SDK level (messages up to it are printed).
    pub fn set_sdk_level(&self, level: u32) -> DocaResult<()> {
        check_level(level)?;
        self.sdk_level.store(level, Ordering::Relaxed);
        LOGGER.refresh_sdk_ceiling();
        Ok(())
    }

    /// The SDK level.
    pub fn sdk_level(&self) -> u32 {
        self.sdk_level.load(Ordering::Relaxed)
    }

    /// Sets the lower limit (the least severe level printed).
    pub fn set_lower(&self, level: u32) -> DocaResult<()> {
        check_level(level)?;
        self.lower.store(level, Ordering::Relaxed);
        Ok(())
    }

    /// Sets the upper limit (the most severe level printed).
    pub fn set_upper(&self, level: u32) -> DocaResult<()> {
        check_level(level)?;
        self.upper.store(level, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;

    /// A FILE* over a fresh temp file, plus the file to read it back.
    fn temp_file_stream() -> (std::fs::File, *mut libc::FILE) {
        let f = tempfile::tempfile().unwrap();
        // SAFETY: dup of a valid descriptor.
        let fd = unsafe { libc::dup(f.as_raw_fd()) };
        assert!(fd >= 0);
        // SAFETY: `fd` is a valid descriptor; mode is a NUL-terminated string.
        let fe = unsafe { libc::fdopen(fd, c"w".as_ptr()) };
        assert!(!fe.is_null());
        (f, fe)
    }

    fn read_all(mut f: &std::fs::File) -> String {
        f.rewind().unwrap();
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn app_backend_filters_by_lower_and_upper_limit() {
        let lg = Logger::new();
        let (f, fe) = temp_file_stream();
        let b = lg.add_backend(Sink::File(CFile(fe)), false);
        let src = lg.register_source("UNIT");
        let name = lg.source_name(src).unwrap();
        lg.emit(false, LEVEL_ERROR, &name, 10, "f", "error-line");
        lg.emit(false, LEVEL_INFO, &name, 11, "f", "info-line");
        lg.emit(false, LEVEL_DEBUG, &name, 12, "f", "debug-hidden");
        lg.emit(true, LEVEL_ERROR, "sdk", 13, "f", "sdk-not-for-app");
        b.upper.store(LEVEL_WARNING, Ordering::Relaxed);
        lg.emit(false, LEVEL_CRIT, &name, 14, "f", "crit-hidden");
        lg.set_global_lower(LEVEL_DEBUG).unwrap();
        lg.emit(false, LEVEL_DEBUG, &name, 15, "g", "debug-shown");
        let out = read_all(&f);
        assert!(out.contains("[ERR][UNIT:10][f] error-line\n"), "{out}");
        assert!(out.contains("[INFO][UNIT:11][f] info-line"));
        assert!(out.contains("[DBG][UNIT:15][g] debug-shown"));
        assert!(!out.contains("debug-hidden"));
        assert!(!out.contains("crit-hidden"));
        assert!(!out.contains("sdk-not-for-app"));
        assert_eq!(out.lines().count(), 3);
        // SAFETY: fe came from fdopen and is not used after this.
        unsafe { libc::fclose(fe) };
    }

    #[test]
    fn sdk_backend_uses_its_sdk_level() {
        let lg = Logger::new();
        let (f, fe) = temp_file_stream();
        let b = lg.add_backend(Sink::File(CFile(fe)), true);
        lg.emit(true, LEVEL_WARNING, "core", 1, "x", "warn-shown");
        lg.emit(true, LEVEL_INFO, "core", 2, "x", "info-hidden");
        lg.emit(false, LEVEL_ERROR, "app", 3, "x", "app-not-for-sdk");
        b.sdk_level.store(LEVEL_DEBUG, Ordering::Relaxed);
        lg.emit(true, LEVEL_DEBUG, "core", 4, "x", "debug-shown");
        let out = read_all(&f);
        assert!(out.contains("[DOCA][WARN][core:1][x] warn-shown"), "{out}");
        assert!(out.contains("debug-shown"));
        assert!(!out.contains("info-hidden"));
        assert!(!out.contains("app-not-for-sdk"));
        // SAFETY: fe came from fdopen and is not used after this.
        unsafe { libc::fclose(fe) };
    }

    #[test]
    fn line_format_has_time_pid_level_source_func() {
        let l = format_line(false, LEVEL_WARNING, "SRC", 42, "main", "hello\n");
        // [HH:MM:SS:uuuuuu] is 17 characters.
        assert_eq!(&l[0..1], "[");
        assert_eq!(&l[16..17], "]");
        let rest = &l[17..];
        let pid = format!("[{}]", std::process::id());
        assert!(rest.starts_with(&pid), "{l}");
        assert!(rest.ends_with("[WARN][SRC:42][main] hello\n"), "{l}");
    }

    #[test]
    fn invalid_levels_and_null_arguments_are_rejected() {
        let lg = Logger::new();
        assert_eq!(lg.set_global_lower(55), Err(DocaError::INVALID_VALUE));
        assert_eq!(lg.set_global_sdk(80), Err(DocaError::INVALID_VALUE));
        assert_eq!(lg.unregister_source(3), Err(DocaError::NOT_FOUND));
        let id = lg.register_source("a");
        assert_eq!(lg.unregister_source(id), Ok(()));
        assert_eq!(lg.unregister_source(id), Err(DocaError::NOT_FOUND));
    }
}
