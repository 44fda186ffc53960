//! Log lines in the shape of DOCA's standard logger: `[time][pid][DOCA][LEVEL][SOURCE] msg`
//! on stdout (errors on stderr), with the original's log source names.

#![allow(dead_code)]

use std::io::Write as _;

/// Main program.
pub const MAIN: &str = "GPU_PACKET_PROCESSING";
/// Command line.
pub const ARGS: &str = "GPU_ARGS";
/// DOCA Flow setup.
pub const FLOW: &str = "GPU_PACKET_PROCESSING_FLOW";
/// HTTP response buffers.
pub const TXBUF: &str = "GPU_PACKET_PROCESSING_TXBUF";
/// UDP queues, and (as in the original) the ICMP queues.
pub const UDP: &str = "GPU_PACKET_PROCESSING_UDP";
/// TCP queues.
pub const TCP: &str = "GPU_PACKET_PROCESSING_TCP";
/// The CPU TCP threads.
pub const TCP_CPU: &str = "TCP_CPU_RSS";

/// Severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Errors (stderr).
    Err,
    /// Warnings.
    Warn,
    /// Information.
    Info,
    /// Debug lines (printed only with `GPP_LOG_DEBUG=1`, as DOCA prints DBG only at debug
    /// level).
    Dbg,
}

impl Level {
    fn tag(self) -> &'static str {
        match self {
            Level::Err => "ERR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Dbg => "DBG",
        }
    }
}

fn debug_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("GPP_LOG_DEBUG").is_some_and(|v| v == "1"))
}

/// The calling thread's id as the original prints it (`pthread_self()`, `%lu`).
pub fn thread_id() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

/// Prints one log line.
pub fn log(level: Level, source: &str, msg: &str) {
    if level == Level::Dbg && !debug_enabled() {
        return;
    }
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let day = d.as_secs() % 86_400;
    let line = format!(
        "[{:02}:{:02}:{:02}:{:06}][{}][DOCA][{}][{source}] {msg}\n",
        day / 3600,
        day / 60 % 60,
        day % 60,
        d.subsec_micros(),
        std::process::id(),
        level.tag()
    );
    // One write per line, so lines of different threads do not interleave.
    if level == Level::Err {
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    } else {
        let _ = std::io::stdout().lock().write_all(line.as_bytes());
    }
}

/// `doca_log!(Info, MAIN, "fmt", args...)`.
macro_rules! doca_log {
    ($level:ident, $source:expr, $($arg:tt)*) => {
        $crate::log::log($crate::log::Level::$level, $source, &format!($($arg)*))
    };
}
pub(crate) use doca_log;
