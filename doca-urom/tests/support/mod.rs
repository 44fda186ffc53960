//! Test support: build the daemon, worker and plugins, run a daemon, write the service file.
#![allow(dead_code)]

use doca_urom::{Device, Service};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// target/<profile> of this test binary.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// Where the daemon, worker, plugins and examples the tests run are built: a target
/// directory of their own. The nested build selects other packages than the `cargo test`
/// running us, so features unify differently and shared libraries get rebuilt; in the
/// outer target directory that would replace rlibs (`libdoca_soft.rlib` has no hash in its
/// name) under the outer build's feet, and its doctests then fail to find crates.
pub fn built_dir() -> PathBuf {
    target_dir()
        .parent()
        .unwrap()
        .join("urom-tests")
        .join("debug")
}

/// The examples the tests run.
const EXAMPLES: [&str; 2] = ["urom_multi_workers_bootstrap", "urom_ping_pong"];

static BUILD: Once = Once::new();

/// Builds the daemon/worker binaries, the Rust plugins and the UROM examples, all in one
/// cargo call (one feature resolution: a second test binary finds everything fresh).
pub fn ensure_built() {
    BUILD.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let nested = built_dir().parent().unwrap().to_path_buf();
        // `--bins` alone selects only binaries of every package named (the plugins have
        // none); `--lib` adds the plugins' cdylibs.
        let mut args = vec![
            "build",
            "-p",
            "doca-soft",
            "-p",
            "worker_graph",
            "-p",
            "worker_sandbox",
            "-p",
            "doca",
            "--bins",
            "--lib",
        ];
        for e in EXAMPLES {
            args.extend(["--example", e]);
        }
        let st = Command::new(cargo)
            .current_dir(repo_root())
            .env("CARGO_TARGET_DIR", &nested)
            .args(args)
            .status()
            .expect("run cargo build");
        assert!(
            st.success(),
            "building the UROM binaries, plugins and examples must succeed"
        );
    });
}

/// Copies Rust plugin `name` (lib<name>.so) into `dir` as `<name>.so`.
pub fn install_rust_plugin(name: &str, dir: &Path) {
    ensure_built();
    let src = built_dir().join(format!("lib{name}.so"));
    std::fs::copy(&src, dir.join(format!("{name}.so")))
        .unwrap_or_else(|e| panic!("copy {}: {e}", src.display()));
}

/// Compiles `tests/c/<name>.c` into `dir/<name>.so`.
pub fn build_c_plugin(name: &str, dir: &Path) {
    let ucx = std::env::var("UCX_HOME").expect("UCX_HOME (source .tools/env.sh)");
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-Wall", "-Wextra", "-Werror"])
        .arg(format!(
            "-I{}",
            repo_root().join("doca-soft/include").display()
        ))
        .arg(format!("-I{ucx}/include"))
        .arg("-o")
        .arg(dir.join(format!("{name}.so")))
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/c")
                .join(format!("{name}.c")),
        )
        .status()
        .expect("run cc");
    assert!(st.success());
}

pub struct Daemon {
    pub child: Child,
    pub addr: String,
    _service_file: tempfile::NamedTempFile,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hostname() -> String {
    let mut b = [0u8; 256];
    // SAFETY: writable buffer.
    unsafe { libc::gethostname(b.as_mut_ptr() as *mut libc::c_char, b.len()) };
    let n = b.iter().position(|c| *c == 0).unwrap_or(0);
    String::from_utf8_lossy(&b[..n]).into_owned()
}

/// Starts a daemon over `plugin_path` and returns it with the `lo` device.
pub fn start_daemon(plugin_path: &str) -> (Daemon, Device) {
    ensure_built();
    let mut child = Command::new(built_dir().join("doca_urom_daemon"))
        .env("UROM_PLUGIN_PATH", plugin_path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start daemon");
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("doca_urom_daemon listening on ")
        .expect("banner")
        .to_owned();
    std::thread::spawn(move || for _ in lines.lines() {});
    let dev = Device::open("lo").expect("the lo device");
    let pci = dev.info().pci_addr().to_owned();
    assert!(!pci.is_empty(), "lo has a PCI address");
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), format!("{} dpu {addr} {pci} lo\n", hostname())).unwrap();
    (
        Daemon {
            child,
            addr,
            _service_file: f,
        },
        dev,
    )
}

impl Daemon {
    /// The service file naming this daemon for the local host and `lo`.
    pub fn service_file(&self) -> &Path {
        self._service_file.path()
    }
}

/// The path of a UROM example of the facade package (built by [`ensure_built`]).
pub fn build_example(name: &str) -> PathBuf {
    assert!(EXAMPLES.contains(&name), "add {name} to EXAMPLES");
    ensure_built();
    built_dir().join("examples").join(name)
}

static ENV_LOCK: Mutex<()> = Mutex::new(());

/// Starts a service against `d` (DOCA_UROM_SERVICE_FILE is process-wide: serialised).
pub fn start_service(d: &Daemon, dev: &Device, max_workers: u32) -> Arc<Service> {
    let _g = ENV_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    std::env::set_var("DOCA_UROM_SERVICE_FILE", d._service_file.path());
    Service::builder(dev)
        .max_workers(max_workers)
        .start()
        .expect("service start")
}
