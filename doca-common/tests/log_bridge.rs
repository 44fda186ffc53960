//! The `log` bridge: a warning the runtime prints reaches the process's `log` logger, with
//! its level and the DOCA source as the target; levels set from Rust reach DOCA.
#![cfg(feature = "log")]

use doca_common::log::{install_log_bridge, set_global_level, set_sdk_level, Level};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// (level, target, message) of every record.
static SEEN: Mutex<Vec<(log::Level, String, String)>> = Mutex::new(Vec::new());

struct Collect;

impl log::Log for Collect {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, r: &log::Record<'_>) {
        SEEN.lock()
            .unwrap()
            .push((r.level(), r.target().to_owned(), r.args().to_string()));
    }
    fn flush(&self) {}
}

static LOGGER: Collect = Collect;

/// Waits (bounded) for a record matching `f`.
fn wait_for(
    f: impl Fn(&(log::Level, String, String)) -> bool,
) -> Option<(log::Level, String, String)> {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(r) = SEEN.lock().unwrap().iter().find(|r| f(r)) {
            return Some(r.clone());
        }
        if Instant::now() > end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_runtime_warning_reaches_the_log_logger() {
    log::set_logger(&LOGGER).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    install_log_bridge().unwrap();
    install_log_bridge().unwrap(); // twice: still one bridge
    assert!(
        doca_common::log::sdk_level() >= Some(Level::Warning),
        "warnings are on by default"
    );
    // The runtime reads the device configuration on every listing and warns about a
    // malformed value (the test's own process: nothing else reads it).
    std::env::set_var("DOCA_SOFT_PCI_MAP", "not-a-pci-map");
    let _ = doca_common::Device::list();
    let (level, target, msg) = wait_for(|(_, _, m)| m.contains("DOCA_SOFT_PCI_MAP"))
        .expect("the runtime's warning reached the logger");
    assert_eq!(level, log::Level::Warn);
    assert_eq!(target, "doca::dev");
    assert!(msg.contains("not-a-pci-map"), "{msg}");
    assert!(
        !msg.starts_with('['),
        "the line's prefix is parsed off: {msg}"
    );

    // With the SDK level at ERROR, the same warning is no longer printed.
    set_sdk_level(Level::Error).unwrap();
    assert_eq!(doca_common::log::sdk_level(), Some(Level::Error));
    std::env::set_var("DOCA_SOFT_PCI_MAP", "second-bad-value");
    let _ = doca_common::Device::list();
    // A later warning, printed again: the pipe keeps order, so once it arrived the
    // muted one would have arrived before it.
    set_sdk_level(Level::Warning).unwrap();
    std::env::set_var("DOCA_SOFT_PCI_MAP", "third-bad-value");
    let _ = doca_common::Device::list();
    assert!(wait_for(|(_, _, m)| m.contains("third-bad-value")).is_some());
    assert!(
        !SEEN
            .lock()
            .unwrap()
            .iter()
            .any(|(_, _, m)| m.contains("second-bad-value")),
        "a warning below the SDK level was forwarded"
    );
    std::env::remove_var("DOCA_SOFT_PCI_MAP");

    set_global_level(Level::Debug).unwrap();
    assert_eq!(doca_common::log::global_level(), Some(Level::Debug));
}
