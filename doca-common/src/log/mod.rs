//! DOCA's logging from Rust: the levels of the runtime's (SDK) messages and of application
//! messages, the default that keeps SDK warnings visible, and (feature `log`) a bridge that
//! routes every DOCA log line into the [`log`](https://docs.rs/log) facade.
//!
//! DOCA prints two kinds of lines: the library's own ("SDK" messages, `[DOCA]` in the line)
//! and those of `DOCA_LOG_*` calls in C code of this process (application messages, e.g. a
//! C plugin). Levels are [`Level`]s, from [`Level::Critical`] (most severe) to
//! [`Level::Trace`]; a backend prints the lines at its level or more severe.
//!
//! ## The default: SDK warnings on stderr
//!
//! The first time a program opens a device, lists devices or creates a progress engine
//! (or calls [`init_default`]), this module makes sure the library's warnings reach the
//! user: the global SDK level is raised to [`Level::Warning`] when it is below, and an SDK
//! backend writing to stderr is added (unless the [bridge](install_log_bridge) is already
//! installed). Silence or widen it with [`set_sdk_level`]; a level set before that first
//! use is kept.
//!
//! ## The bridge (feature `log`)
//!
//! [`install_log_bridge`] adds DOCA log backends writing into a pipe that a thread of this
//! module reads; each line becomes a `log` record with the mapped level (critical and error
//! lines are `Error`), the DOCA source as its target under `doca::` (`doca::urom`,
//! `doca::dev`: filter them all with `doca`), and the DOCA file line. The stderr backend
//! of the default is muted then, so lines are not printed twice. DOCA offers no callback
//! backend in 3.3 (backends write to a `FILE *` or a file descriptor, and are never
//! destroyed), hence the pipe: it is 1 MiB where Linux allows, and its write end never
//! blocks DOCA, so if the reader falls that far behind, lines are dropped rather than
//! stalling the calls that log them.
//!
//! ```no_run
//! # #[cfg(feature = "log")]
//! # fn main() -> Result<(), doca_common::Error> {
//! use doca_common::log::{install_log_bridge, set_sdk_level, Level};
//!
//! // env_logger::init(); // any `log` logger
//! install_log_bridge()?;
//! set_sdk_level(Level::Debug)?; // the runtime's debug lines too
//! let _pe = doca_common::ProgressEngine::new()?;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "log"))]
//! # fn main() {}
//! ```

#[cfg(feature = "log")]
mod bridge;
#[cfg(feature = "log")]
mod line;

#[cfg(feature = "log")]
pub use bridge::install_log_bridge;

use crate::error::{check, Result};
use doca_sys as sys;
use std::sync::Mutex;

/// A DOCA log level (`enum doca_log_level`). Ordered from [`Disable`](Level::Disable) (print
/// nothing) to [`Trace`](Level::Trace) (print everything): a backend at level `L` prints
/// the lines of every level up to `L`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Nothing (`DOCA_LOG_LEVEL_DISABLE`).
    Disable,
    /// Critical errors (`DOCA_LOG_LEVEL_CRIT`).
    Critical,
    /// Errors (`DOCA_LOG_LEVEL_ERROR`).
    Error,
    /// Warnings (`DOCA_LOG_LEVEL_WARNING`).
    Warning,
    /// Information (`DOCA_LOG_LEVEL_INFO`).
    Info,
    /// Debugging (`DOCA_LOG_LEVEL_DEBUG`).
    Debug,
    /// Tracing (`DOCA_LOG_LEVEL_TRACE`).
    Trace,
}

impl Level {
    /// The `DOCA_LOG_LEVEL_*` value.
    pub fn raw(self) -> u32 {
        match self {
            Level::Disable => 10,
            Level::Critical => 20,
            Level::Error => 30,
            Level::Warning => 40,
            Level::Info => 50,
            Level::Debug => 60,
            Level::Trace => 70,
        }
    }

    /// The level of a `DOCA_LOG_LEVEL_*` value (`None` for other numbers).
    pub fn from_raw(v: u32) -> Option<Level> {
        Some(match v {
            10 => Level::Disable,
            20 => Level::Critical,
            30 => Level::Error,
            40 => Level::Warning,
            50 => Level::Info,
            60 => Level::Debug,
            70 => Level::Trace,
            _ => return None,
        })
    }
}

#[cfg(feature = "log")]
impl From<::log::Level> for Level {
    fn from(l: ::log::Level) -> Level {
        match l {
            ::log::Level::Error => Level::Error,
            ::log::Level::Warn => Level::Warning,
            ::log::Level::Info => Level::Info,
            ::log::Level::Debug => Level::Debug,
            ::log::Level::Trace => Level::Trace,
        }
    }
}

#[cfg(feature = "log")]
impl From<::log::LevelFilter> for Level {
    fn from(l: ::log::LevelFilter) -> Level {
        l.to_level().map_or(Level::Disable, Level::from)
    }
}

/// A log backend DOCA handed out (never destroyed: DOCA has no call for it).
#[derive(Clone, Copy)]
struct Backend(*mut sys::doca_log_backend);

// SAFETY: a backend handle is an address DOCA keeps valid for the life of the process; the
// calls on it are DOCA's global logging configuration, made under `STATE`'s lock.
unsafe impl Send for Backend {}

impl Backend {
    fn set_sdk_level(self, level: Level) -> Result<()> {
        // SAFETY: a backend DOCA created, valid for the life of the process.
        check("doca_log_backend_set_sdk_level", unsafe {
            sys::doca_log_backend_set_sdk_level(self.0, level.raw())
        })
    }
}

/// What this module set up.
struct State {
    /// Whether [`init_default`] ran (or an explicit choice made it unnecessary).
    initialized: bool,
    /// The stderr SDK backend of the default.
    stderr: Option<Backend>,
    /// Whether the `log` bridge is installed (its stderr backend is then muted).
    bridged: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    initialized: false,
    stderr: None,
    bridged: false,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes the default (see the module docs) happen now, if it has not: SDK warnings are
/// printed, on stderr or through the bridge. Device and progress engine creation call it;
/// calling it again does nothing.
pub fn init_default() {
    let mut st = state();
    let _ = init_locked(&mut st);
}

fn init_locked(st: &mut State) -> Result<()> {
    if st.initialized {
        return Ok(());
    }
    st.initialized = true;
    // SAFETY: plain getter of DOCA's global configuration.
    let now = unsafe { sys::doca_log_level_get_global_sdk_limit() };
    if now < Level::Warning.raw() {
        // SAFETY: a valid level.
        check("doca_log_level_set_global_sdk_limit", unsafe {
            sys::doca_log_level_set_global_sdk_limit(Level::Warning.raw())
        })?;
    }
    if !st.bridged {
        let mut b = std::ptr::null_mut();
        // SAFETY: fd 2 stays open for the process; `b` is a valid out-pointer.
        check("doca_log_backend_create_with_fd_sdk", unsafe {
            sys::doca_log_backend_create_with_fd_sdk(2, &mut b)
        })?;
        if !b.is_null() {
            st.stderr = Some(Backend(b));
        }
    }
    Ok(())
}

/// Sets the level of the library's own (SDK) messages, for every backend
/// (`doca_log_level_set_global_sdk_limit`). Set before the first device or engine, it
/// replaces the default's [`Level::Warning`].
pub fn set_sdk_level(level: Level) -> Result<()> {
    let mut st = state();
    // The default runs first, so it cannot undo this choice later.
    init_locked(&mut st)?;
    // SAFETY: a valid level.
    check("doca_log_level_set_global_sdk_limit", unsafe {
        sys::doca_log_level_set_global_sdk_limit(level.raw())
    })?;
    // The global setter reaches every backend, the muted stderr one too.
    match (st.bridged, st.stderr) {
        (true, Some(b)) => b.set_sdk_level(Level::Disable),
        _ => Ok(()),
    }
}

/// The global level of SDK messages (`doca_log_level_get_global_sdk_limit`).
pub fn sdk_level() -> Option<Level> {
    // SAFETY: plain getter of DOCA's global configuration.
    Level::from_raw(unsafe { sys::doca_log_level_get_global_sdk_limit() })
}

/// Sets the least severe level of application messages (`DOCA_LOG_*` in C code of this
/// process) that every backend prints (`doca_log_level_set_global_lower_limit`).
pub fn set_global_level(level: Level) -> Result<()> {
    // SAFETY: a valid level.
    check("doca_log_level_set_global_lower_limit", unsafe {
        sys::doca_log_level_set_global_lower_limit(level.raw())
    })
}

/// The global level of application messages (`doca_log_level_get_global_lower_limit`).
pub fn global_level() -> Option<Level> {
    // SAFETY: plain getter of DOCA's global configuration.
    Level::from_raw(unsafe { sys::doca_log_level_get_global_lower_limit() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_to_doca_values_and_back() {
        let all = [
            Level::Disable,
            Level::Critical,
            Level::Error,
            Level::Warning,
            Level::Info,
            Level::Debug,
            Level::Trace,
        ];
        for (i, l) in all.iter().enumerate() {
            assert_eq!(l.raw(), 10 * (i as u32 + 1));
            assert_eq!(Level::from_raw(l.raw()), Some(*l));
        }
        assert_eq!(Level::from_raw(45), None);
        assert!(Level::Critical < Level::Warning && Level::Warning < Level::Trace);
    }

    #[cfg(feature = "log")]
    #[test]
    fn log_levels_convert() {
        assert_eq!(Level::from(::log::Level::Warn), Level::Warning);
        assert_eq!(Level::from(::log::LevelFilter::Off), Level::Disable);
        assert_eq!(Level::from(::log::LevelFilter::Trace), Level::Trace);
    }
}
