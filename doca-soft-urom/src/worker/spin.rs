//! The worker's idle policy: after its last activity the worker keeps polling (host
//! connections and plugins) for a bounded time before it arms its event descriptors and
//! sleeps, so commands arriving at a steady rate find it awake (a sleep/wake-up costs tens
//! of microseconds, several times the transport's latency) while an idle worker uses no CPU.
//!
//! The knob is the environment variable [`SPIN_ENV`] (`DOCA_SOFT_UROM_SPIN_US`) of the
//! worker process: microseconds to keep polling after the last activity at most, `0` =
//! sleep as soon as idle. The worker shortens the window while spinning does not pay (see
//! `AdaptiveSpin`), and spinning only helps when the host, the worker and their peers each
//! have a CPU: on a machine with fewer cores than busy parties, `0` is faster. Workers inherit the daemon's environment, and a host can set it per worker
//! with `doca_urom_worker_set_env`.

use std::time::Duration;

/// Environment variable holding the busy-poll window in microseconds.
pub const SPIN_ENV: &str = "DOCA_SOFT_UROM_SPIN_US";
/// Busy-poll window when [`SPIN_ENV`] is not set.
pub const DEFAULT_SPIN_US: u64 = 100;
/// Largest accepted window (one second; anything above is surely a typo).
pub(crate) const MAX_SPIN_US: u64 = 1_000_000;

/// The window a value of [`SPIN_ENV`] asks for (`None`: unset, the default).
pub(crate) fn parse_spin_us(v: Option<&str>) -> Result<Duration, String> {
    let Some(v) = v else {
        return Ok(Duration::from_micros(DEFAULT_SPIN_US));
    };
    match v.trim().parse::<u64>() {
        Ok(us) if us <= MAX_SPIN_US => Ok(Duration::from_micros(us)),
        Ok(us) => Err(format!(
            "{SPIN_ENV}={us}: more than {MAX_SPIN_US} microseconds"
        )),
        Err(_) => Err(format!("{SPIN_ENV}={v:?}: not a number of microseconds")),
    }
}

/// The window of this process's environment; a bad value is reported and the default used.
pub(crate) fn spin_from_env() -> Duration {
    let v = std::env::var(SPIN_ENV).ok();
    parse_spin_us(v.as_deref()).unwrap_or_else(|e| {
        sdk_warn!("urom_worker", "{e}; using {DEFAULT_SPIN_US} us");
        Duration::from_micros(DEFAULT_SPIN_US)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_knob_parses_and_rejects() {
        let us = Duration::from_micros;
        assert_eq!(parse_spin_us(None), Ok(us(DEFAULT_SPIN_US)));
        assert_eq!(parse_spin_us(Some("0")), Ok(Duration::ZERO));
        assert_eq!(parse_spin_us(Some(" 250 ")), Ok(us(250)));
        assert_eq!(parse_spin_us(Some("1000000")), Ok(us(MAX_SPIN_US)));
        assert!(parse_spin_us(Some("1000001")).is_err());
        assert!(parse_spin_us(Some("-1")).is_err());
        assert!(parse_spin_us(Some("10us")).is_err());
        assert!(parse_spin_us(Some("")).is_err());
    }
}
