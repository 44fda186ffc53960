//! Test support: a UROM daemon on `lo` loading the sample plugins, its service file, and
//! services against it. The daemon, worker, plugins and UROM examples come from one nested
//! cargo build (doca-test-support's `UromBinaries::build_for_tests`, which says why it has
//! a target directory of its own).
#![allow(dead_code)]

use doca_test_support::urom::{Daemon as UromDaemon, DaemonBuilder, UromBinaries};
use doca_urom::{Device, Service};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The UROM binaries, plugins and examples (built once per test binary).
pub fn bins() -> &'static UromBinaries {
    static BINS: OnceLock<UromBinaries> = OnceLock::new();
    BINS.get_or_init(UromBinaries::build_for_tests)
}

/// A daemon builder loading the Rust plugins `rust` (copied into the daemon's own plugin
/// folder).
pub fn daemon(rust: &[&str]) -> DaemonBuilder {
    rust.iter()
        .fold(UromDaemon::builder(bins().daemon()), |b, p| {
            b.plugin(bins().plugin(p), p)
        })
}

/// A running daemon and the service file naming it for this host and `lo`.
pub struct Daemon {
    pub daemon: UromDaemon,
    service_file: PathBuf,
}

impl Daemon {
    /// The service file (`DOCA_UROM_SERVICE_FILE`) naming this daemon.
    pub fn service_file(&self) -> &Path {
        &self.service_file
    }
}

/// Starts the daemon of `b` and writes its service file; the daemon and the `lo` device.
pub fn start(b: DaemonBuilder) -> (Daemon, Device) {
    let daemon = b.start().expect("start the UROM daemon");
    let dev = Device::open("lo").expect("the lo device");
    let pci = dev.info().pci_addr().to_owned();
    assert!(!pci.is_empty(), "lo has a PCI address");
    let service_file = daemon.service_file(&pci, "lo");
    (
        Daemon {
            daemon,
            service_file,
        },
        dev,
    )
}

/// A daemon loading the Rust plugins `rust`, and the `lo` device.
pub fn start_daemon(rust: &[&str]) -> (Daemon, Device) {
    start(daemon(rust))
}

/// Compiles `tests/c/<name>.c` into `dir/<name>.so`.
pub fn build_c_plugin(name: &str, dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    doca_test_support::urom::build_c_plugin(&src, dir)
}

/// The path of a UROM example of the facade package (built with the binaries).
pub fn build_example(name: &str) -> PathBuf {
    bins().example(name)
}

static ENV_LOCK: Mutex<()> = Mutex::new(());

/// Starts a service against `d` (DOCA_UROM_SERVICE_FILE is process-wide: serialised).
pub fn start_service(d: &Daemon, dev: &Device, max_workers: u32) -> Arc<Service> {
    let _g = ENV_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var("DOCA_UROM_SERVICE_FILE", d.service_file());
    Service::builder(dev)
        .max_workers(max_workers)
        .start()
        .expect("service start")
}
