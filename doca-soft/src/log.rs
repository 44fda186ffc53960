//! Logging: `doca_log` and the log backends (the C API), and the macros the runtime uses
//! for its own (SDK) messages.

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

/// Emits one SDK-side message (the runtime's own) at `level` from `source`.
pub fn emit(level: u32, source: &str, msg: std::fmt::Arguments<'_>) {
    // Placeholder routing until the backends land: warnings and worse go to stderr.
    if level <= LEVEL_WARNING {
        eprintln!("[doca-soft][{source}] {msg}");
    }
}

#[allow(unused_macros)]
/// `sdk_log!(LEVEL, "source", "fmt", args...)`.
macro_rules! sdk_log {
    ($lvl:expr, $src:expr, $($arg:tt)*) => {
        $crate::log::emit($lvl, $src, format_args!($($arg)*))
    };
}
/// Warning from the runtime.
#[allow(unused_macros)]
macro_rules! sdk_warn { ($src:expr, $($arg:tt)*) => { sdk_log!($crate::log::LEVEL_WARNING, $src, $($arg)*) }; }
/// Error from the runtime.
#[allow(unused_macros)]
macro_rules! sdk_err { ($src:expr, $($arg:tt)*) => { sdk_log!($crate::log::LEVEL_ERROR, $src, $($arg)*) }; }
/// Debug message from the runtime.
#[allow(unused_macros)]
macro_rules! sdk_dbg { ($src:expr, $($arg:tt)*) => { sdk_log!($crate::log::LEVEL_DEBUG, $src, $($arg)*) }; }
