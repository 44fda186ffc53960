//! Running a UROM daemon (`doca_urom_daemon` of doca-soft-urom) for a test or bench.
//!
//! [`Daemon::builder`] starts the daemon on loopback with its own temporary folder: the
//! plugins it should load are copied there (as `<name>.so`, the name its plugin scan
//! expects) and the service file hosts read (`DOCA_UROM_SERVICE_FILE`) is written there.
//! The address comes from the daemon's first line, `doca_urom_daemon listening on
//! IP:PORT`, read with a time limit. Dropping the [`Daemon`] stops it: SIGTERM, then
//! SIGKILL after a grace period (and then its workers, which a SIGKILLed daemon cannot
//! stop), and removes the folder.
//!
//! The binaries are found by path ([`UromBinaries`]): this crate depends on nothing of
//! doca-soft, and Cargo's `CARGO_BIN_EXE_*` variables exist only in doca-soft-urom's own
//! tests; other tests find them next to themselves after a workspace build
//! ([`UromBinaries::for_tests`]) or build them with a nested cargo call
//! ([`UromBinaries::build_for_tests`]); benches and packed binaries find them next to the
//! running executable ([`UromBinaries::next_to_current_exe`]).

use crate::netns::NetNs;
use crate::process::terminate;
use crate::workspace::{cargo_build, doca_soft_include_dir, target_dir};
use std::io::{BufRead, BufReader};
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// File name of the daemon binary.
pub const DAEMON_BIN: &str = "doca_urom_daemon";
/// File name of the worker binary (the daemon looks for it next to itself).
pub const WORKER_BIN: &str = "doca_urom_worker";
/// What the daemon's first line of stdout starts with, followed by `IP:PORT`.
pub const BANNER: &str = "doca_urom_daemon listening on ";
/// The UROM examples of the facade package that [`UromBinaries::build_for_tests`] builds.
pub const EXAMPLES: [&str; 2] = ["urom_multi_workers_bootstrap", "urom_async"];
/// Packages whose binaries are UROM samples, built by [`UromBinaries::build_for_tests`]
/// too: `urom-mpi` (`urom_ping_pong`, over the `mpi` crate).
pub const SAMPLE_PACKAGES: [&str; 1] = ["urom-mpi"];

/// A folder holding the daemon and worker binaries and the Rust plugins (`lib<name>.so`,
/// as cargo names cdylibs); examples, when built, in `examples/` under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UromBinaries {
    /// The folder.
    pub dir: PathBuf,
}

impl UromBinaries {
    /// The binaries in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> UromBinaries {
        UromBinaries { dir: dir.into() }
    }

    /// The daemon binary.
    pub fn daemon(&self) -> PathBuf {
        self.dir.join(DAEMON_BIN)
    }

    /// Rust plugin `name` as cargo built it (`lib<name>.so`).
    pub fn plugin(&self, name: &str) -> PathBuf {
        self.dir.join(format!("lib{name}.so"))
    }

    /// Example `name` (built by [`UromBinaries::build_for_tests`]): an example of the
    /// facade (`examples/<name>`), else a binary of one of [`SAMPLE_PACKAGES`].
    pub fn example(&self, name: &str) -> PathBuf {
        let example = self.dir.join("examples").join(name);
        if example.is_file() {
            example
        } else {
            self.dir.join(name)
        }
    }

    /// Whether the daemon and every plugin of `plugins` are there.
    pub fn has(&self, plugins: &[&str]) -> bool {
        self.daemon().is_file() && plugins.iter().all(|p| self.plugin(p).is_file())
    }

    /// The folder of the running executable, or the one above it (a test binary in
    /// `deps/`), that holds the daemon and `plugins` (what packed binaries use).
    pub fn next_to_current_exe(plugins: &[&str]) -> Option<UromBinaries> {
        let exe = std::env::current_exe().ok()?;
        exe.ancestors()
            .skip(1)
            .take(2)
            .map(UromBinaries::in_dir)
            .find(|b| b.has(plugins))
    }

    /// Builds the daemon, the worker, `libdoca_soft.so` (`doca-soft-capi`) and the sample
    /// plugins (`worker_graph`, `worker_sandbox`), plus `extra` cargo arguments, into `target_dir` (debug, or
    /// release); once per process (see [`cargo_build`] for why a target directory of
    /// their own).
    pub fn build(target_dir: &Path, release: bool, extra: &[&str]) -> Result<UromBinaries, String> {
        let mut args = vec![];
        if release {
            args.push("--release");
        }
        // `--bins` alone selects only binaries of every package named (the plugins have
        // none); `--lib` adds the plugins' cdylibs and the runtime's C library.
        args.extend([
            "-p",
            "doca-soft-urom",
            "-p",
            "doca-soft-capi",
            "-p",
            "worker_graph",
            "-p",
            "worker_sandbox",
            "--bins",
            "--lib",
        ]);
        args.extend_from_slice(extra);
        cargo_build(target_dir, &args)?;
        let profile = if release { "release" } else { "debug" };
        Ok(UromBinaries::in_dir(target_dir.join(profile)))
    }

    /// The daemon and worker for a test: next to the test binary (a workspace build puts
    /// every package's binaries there), else built by [`UromBinaries::build`] into
    /// `<target>/urom-tests` (a test of one package alone). Panics when the build fails.
    pub fn for_tests() -> UromBinaries {
        UromBinaries::next_to_current_exe(&[]).unwrap_or_else(|| {
            UromBinaries::build(&target_dir().join("urom-tests"), false, &[])
                .unwrap_or_else(|e| panic!("building the UROM daemon and worker: {e}"))
        })
    }

    /// The worker binary.
    pub fn worker(&self) -> PathBuf {
        self.dir.join(WORKER_BIN)
    }

    /// What tests use: [`UromBinaries::build`] (debug) into `<target>/urom-tests`, with the
    /// facade's UROM [`EXAMPLES`], all in one cargo call (one feature resolution, so a
    /// second test binary finds everything fresh). Panics when the build fails.
    pub fn build_for_tests() -> UromBinaries {
        let mut extra = vec!["-p", "doca"];
        for e in EXAMPLES {
            extra.extend(["--example", e]);
        }
        for p in SAMPLE_PACKAGES {
            extra.extend(["-p", p]);
        }
        UromBinaries::build(&target_dir().join("urom-tests"), false, &extra)
            .unwrap_or_else(|e| panic!("building the UROM binaries, plugins and examples: {e}"))
    }
}

/// Compiles the C plugin `src` into `out_dir/<stem>.so` (`-Wall -Wextra -Werror`, against
/// doca-soft's headers and UCX's from `UCX_HOME`) and returns its path. Panics with the
/// compiler's verdict when it fails.
pub fn build_c_plugin(src: &Path, out_dir: &Path) -> PathBuf {
    let ucx = std::env::var("UCX_HOME").expect("UCX_HOME is not set (source .tools/env.sh)");
    let stem = src
        .file_stem()
        .expect("a source file name")
        .to_string_lossy();
    let out = out_dir.join(format!("{stem}.so"));
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", doca_soft_include_dir().display()))
        .arg(format!("-I{ucx}/include"))
        .arg("-o")
        .arg(&out)
        .arg(src)
        .status()
        .expect("running cc");
    assert!(st.success(), "C plugin {} must compile", src.display());
    out
}

/// This host's name (the first column of a service file).
pub fn hostname() -> String {
    let mut b = [0u8; 256];
    // SAFETY: a writable buffer of the length given.
    unsafe { libc::gethostname(b.as_mut_ptr().cast::<libc::c_char>(), b.len()) };
    let n = b.iter().position(|c| *c == 0).unwrap_or(0);
    String::from_utf8_lossy(&b[..n]).into_owned()
}

/// A service file line naming `addr` for this host and device `pci` (`devs`: the device
/// names the daemon serves).
pub fn service_line(addr: SocketAddrV4, pci: &str, devs: &str) -> String {
    format!("{} dpu {addr} {pci} {devs}\n", hostname())
}

/// How to start a daemon ([`Daemon::builder`]).
#[derive(Debug)]
pub struct DaemonBuilder {
    bin: PathBuf,
    /// `UROM_PLUGIN_PATH` entries; None marks where the temporary plugin folder goes.
    path: Vec<Option<PathBuf>>,
    plugins: Vec<(PathBuf, String)>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// The namespace to run in, or why it could not be kept (told by `start`).
    netns: Option<Result<NetNs, String>>,
    banner_timeout: Duration,
    grace: Duration,
}

impl DaemonBuilder {
    /// Copies `so` into the daemon's plugin folder as `<name>.so`. The folder joins
    /// `UROM_PLUGIN_PATH` where the first plugin was added.
    pub fn plugin(mut self, so: impl Into<PathBuf>, name: &str) -> DaemonBuilder {
        if !self.path.contains(&None) {
            self.path.push(None);
        }
        self.plugins.push((so.into(), name.to_string()));
        self
    }

    /// Adds a folder to `UROM_PLUGIN_PATH` (scanned in the order added; it need not exist).
    pub fn plugin_dir(mut self, dir: impl Into<PathBuf>) -> DaemonBuilder {
        self.path.push(Some(dir.into()));
        self
    }

    /// A command-line argument of the daemon.
    pub fn arg(mut self, a: impl Into<String>) -> DaemonBuilder {
        self.args.push(a.into());
        self
    }

    /// An environment variable of the daemon (and so of its workers).
    pub fn env(mut self, k: impl Into<String>, v: impl Into<String>) -> DaemonBuilder {
        self.env.push((k.into(), v.into()));
        self
    }

    /// The worker binary (`DOCA_UROM_WORKER_BIN`; default: next to the daemon).
    pub fn worker(self, bin: &Path) -> DaemonBuilder {
        let v = bin.display().to_string();
        self.env("DOCA_UROM_WORKER_BIN", v)
    }

    /// Runs the daemon (and so its workers) in network namespace `ns`, with a `/sys`
    /// of that namespace ([`NetNs::enter`]). The builder keeps a duplicate descriptor.
    pub fn netns(mut self, ns: &NetNs) -> DaemonBuilder {
        self.netns = Some(ns.try_clone().map_err(|e| e.to_string()));
        self
    }

    /// How long to wait for the `listening on` line (default 30 s).
    pub fn banner_timeout(mut self, d: Duration) -> DaemonBuilder {
        self.banner_timeout = d;
        self
    }

    /// How long the daemon gets to exit after SIGTERM before SIGKILL (default 5 s).
    pub fn grace(mut self, d: Duration) -> DaemonBuilder {
        self.grace = d;
        self
    }

    /// Starts the daemon and reads its address. On any failure the process is stopped and
    /// the error says what went wrong.
    pub fn start(self) -> Result<Daemon, String> {
        let dir = tempfile::Builder::new()
            .prefix("doca-urom-daemon-")
            .tempdir()
            .map_err(|e| format!("temporary folder: {e}"))?;
        let plugin_dir = dir.path().join("plugins");
        std::fs::create_dir(&plugin_dir).map_err(|e| format!("{}: {e}", plugin_dir.display()))?;
        for (so, name) in &self.plugins {
            let to = plugin_dir.join(format!("{name}.so"));
            std::fs::copy(so, &to).map_err(|e| format!("copying plugin {}: {e}", so.display()))?;
        }
        let entries: Vec<String> = if self.path.is_empty() {
            vec![plugin_dir.display().to_string()]
        } else {
            self.path
                .iter()
                .map(|p| p.as_deref().unwrap_or(&plugin_dir).display().to_string())
                .collect()
        };
        let mut cmd = Command::new(&self.bin);
        match &self.netns {
            Some(Ok(ns)) => {
                ns.enter(&mut cmd);
            }
            Some(Err(why)) => return Err(format!("the daemon's network namespace: {why}")),
            None => {}
        }
        cmd.args(&self.args)
            .env("UROM_PLUGIN_PATH", entries.join(";"))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.bin.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let banner = first_line(stdout, self.banner_timeout, lines.clone());
        let fail = |mut child: Child, why: String| -> String {
            let status = terminate(&mut child, self.grace);
            format!("{} ({}): {why}", self.bin.display(), describe(status))
        };
        let line = match banner {
            Ok(Some(l)) => l,
            Ok(None) => return Err(fail(child, "exited before its banner".into())),
            Err(()) => {
                return Err(fail(
                    child,
                    format!("no banner within {:?}", self.banner_timeout),
                ))
            }
        };
        let addr = match line
            .trim()
            .strip_prefix(BANNER)
            .and_then(|a| a.parse::<SocketAddrV4>().ok())
        {
            Some(a) => a,
            None => return Err(fail(child, format!("unexpected banner {line:?}"))),
        };
        Ok(Daemon {
            child,
            addr,
            dir,
            grace: self.grace,
            lines,
        })
    }
}

/// Reads the first line of `out` within `limit` (Ok(None): end of output first; Err: too
/// late), then keeps draining it on a thread, so the child never blocks on a full pipe,
/// appending the later lines to `keep`.
fn first_line(
    out: std::process::ChildStdout,
    limit: Duration,
    keep: Arc<Mutex<Vec<String>>>,
) -> Result<Option<String>, ()> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out);
        let mut first = String::new();
        let got = matches!(lines.read_line(&mut first), Ok(n) if n > 0);
        let _ = tx.send(got.then_some(first));
        for l in lines.lines().map_while(Result::ok) {
            keep.lock().unwrap_or_else(|p| p.into_inner()).push(l);
        }
    });
    rx.recv_timeout(limit).map_err(|_| ())
}

fn describe(status: Option<ExitStatus>) -> String {
    status.map_or_else(|| "not reaped".to_string(), |s| s.to_string())
}

/// A running daemon; stopped when dropped.
#[derive(Debug)]
pub struct Daemon {
    child: Child,
    addr: SocketAddrV4,
    dir: tempfile::TempDir,
    grace: Duration,
    /// Its stdout lines after the banner (its report of connections and workers).
    lines: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    /// How to start the daemon binary `bin`.
    pub fn builder(bin: impl Into<PathBuf>) -> DaemonBuilder {
        DaemonBuilder {
            bin: bin.into(),
            path: Vec::new(),
            plugins: Vec::new(),
            args: Vec::new(),
            env: Vec::new(),
            netns: None,
            banner_timeout: Duration::from_secs(30),
            grace: Duration::from_secs(5),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddrV4 {
        self.addr
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The process, for tests that signal or wait for it themselves.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Pids of its worker processes (its children).
    pub fn worker_pids(&self) -> Vec<i32> {
        let pid = self.child.id();
        let mut out = Vec::new();
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
                    out.extend(s.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
                }
            }
        }
        out
    }

    /// Its stdout lines after the banner, so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Its stdout lines after the banner, once `want` of them match `pred` or after
    /// `limit` (the caller asserts on what came).
    pub fn wait_for_lines(
        &self,
        pred: impl Fn(&str) -> bool,
        want: usize,
        limit: Duration,
    ) -> Vec<String> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let l = self.lines();
            if l.iter().filter(|x| pred(x)).count() >= want || std::time::Instant::now() > deadline
            {
                return l;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The folder the plugins were copied to.
    pub fn plugin_dir(&self) -> PathBuf {
        self.dir.path().join("plugins")
    }

    /// Writes (again) the service file naming this daemon for this host and device `pci`
    /// (`devs`: device names, e.g. `lo`), and returns its path: the value of
    /// `DOCA_UROM_SERVICE_FILE`.
    pub fn service_file(&self, pci: &str, devs: &str) -> PathBuf {
        let p = self.dir.path().join("service");
        std::fs::write(&p, service_line(self.addr, pci, devs))
            .unwrap_or_else(|e| panic!("writing {}: {e}", p.display()));
        p
    }

    /// Stops it (SIGTERM, SIGKILL after the grace period) and returns how it ended.
    pub fn stop(mut self) -> Option<ExitStatus> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> Option<ExitStatus> {
        // A stopped daemon (a test may have sent SIGSTOP) cannot handle SIGTERM.
        // SAFETY: plain kill(2) on the daemon this value started and has not reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGCONT) };
        let workers = self.worker_pids();
        let status = terminate(&mut self.child, self.grace);
        let killed = {
            use std::os::unix::process::ExitStatusExt;
            status.is_none_or(|s| s.signal() == Some(libc::SIGKILL))
        };
        if killed {
            // A SIGKILLed daemon could not stop its workers (now orphans): stop them here.
            for w in workers {
                // SAFETY: plain kill(2); the pids were the daemon's children a moment ago
                // (SIGCONT first: a stopped worker would stay a stopped zombie-to-be).
                unsafe {
                    libc::kill(w, libc::SIGCONT);
                    libc::kill(w, libc::SIGKILL);
                }
            }
        }
        status
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.shut_down();
    }
}
