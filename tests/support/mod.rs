//! Helpers for the tests that run the example programs.

#![allow(dead_code)]

use doca_test_support::netns::{NetNs, VethPair};
use doca_test_support::{poll_for, poll_until};
use std::path::PathBuf;
use std::process::{Command, Output};

/// Where the example binaries are: `DOCA_RS_EXAMPLES`, else `target/<profile>/examples`
/// next to this test binary (`target/<profile>/deps`).
pub fn examples_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("DOCA_RS_EXAMPLES") {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(|p| p.join("examples"))
        .expect("target/<profile>/deps has a parent")
}

/// The path of example `name`, or None (with the reason printed) when it is not built.
pub fn example(name: &str) -> Option<PathBuf> {
    let p = examples_dir().join(name);
    if p.is_file() {
        Some(p)
    } else {
        doca_test_support::skip(&format!(
            "example {name} not found at {} (cargo build --examples, or set DOCA_RS_EXAMPLES)",
            p.display()
        ));
        None
    }
}

/// The `key=value` pairs of the line starting with `summary` in `out`.
pub fn summary(out: &str) -> std::collections::HashMap<String, String> {
    out.lines()
        .rfind(|l| l.starts_with("summary "))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// A numeric summary field, panicking with the whole output when it is missing.
pub fn field(out: &Output, key: &str) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    summary(&text)
        .get(key)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no numeric {key} in summary; stdout:\n{text}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

/// The UCX transports of sample processes run in two network namespaces (the two-host
/// runs): `DOCA_RS_NETNS_UCX_TLS`, default `tcp,cuda_copy` (TCP between the "hosts", CUDA
/// copies for GPU memory; no shared memory or CUDA IPC across the pair, as between two
/// machines). `DOCA_RS_NETNS_UCX_TLS=any` leaves the choice to UCX (None).
pub fn netns_ucx_tls() -> Option<String> {
    match std::env::var("DOCA_RS_NETNS_UCX_TLS") {
        Ok(v) if v == "any" || v.is_empty() => None,
        Ok(v) => Some(v),
        Err(_) => Some("tcp,cuda_copy".to_string()),
    }
}

/// Two network namespaces joined by a veth pair, or None with the reason printed (a skip
/// line naming `what`).
pub fn veth_pair_or_skip(what: &str) -> Option<VethPair> {
    match VethPair::create() {
        Ok(p) => Some(p),
        Err(why) => {
            doca_test_support::skip(&format!("{what} between two network namespaces: {why}"));
            None
        }
    }
}

/// Runs `cmd` to completion, returning its output.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("spawn example")
}

/// A fresh path for a ready file.
pub fn ready_path(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("doca-rs-{tag}-{}.ready", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// A child process whose stdout/stderr go to files, so it can be waited on with a timeout.
pub struct Proc {
    child: std::process::Child,
    out: PathBuf,
    err: PathBuf,
    name: String,
}

/// What a finished [`Proc`] printed, and how it ended.
pub struct Finished {
    /// Exit code (None when killed by a signal).
    pub code: Option<i32>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

impl Finished {
    /// A numeric field of the last `summary` line.
    pub fn field(&self, key: &str) -> u64 {
        summary(&self.stdout)
            .get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no numeric {key} in summary of:\n{self}"))
    }
}

impl std::fmt::Display for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Proc {
    /// Starts `bin` with `args`.
    pub fn spawn(bin: &std::path::Path, args: &[&str]) -> Proc {
        Proc::spawn_with(bin, args, |_| {})
    }

    /// Starts `bin` with `args` inside network namespace `ns` (see
    /// [`doca_test_support::netns`]), with the UCX transports of [`netns_ucx_tls`].
    pub fn spawn_in(bin: &std::path::Path, args: &[&str], ns: &NetNs) -> Proc {
        Proc::spawn_with(bin, args, |c| {
            ns.enter(c);
            if let Some(tls) = netns_ucx_tls() {
                c.env("UCX_TLS", tls);
            }
        })
    }

    /// Starts `bin` with `args`, after `setup` has adjusted the command.
    pub fn spawn_with(
        bin: &std::path::Path,
        args: &[&str],
        setup: impl FnOnce(&mut Command),
    ) -> Proc {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = bin.file_name().unwrap().to_string_lossy().to_string();
        let base = std::env::temp_dir().join(format!("doca-rs-{}-{k}-{name}", std::process::id()));
        let (out, err) = (base.with_extension("out"), base.with_extension("err"));
        let mut cmd = Command::new(bin);
        setup(&mut cmd);
        let child = cmd
            .args(args)
            .stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&err).expect("stderr file"))
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()));
        Proc {
            child,
            out,
            err,
            name,
        }
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Whether it has exited already.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits up to `secs` seconds; kills it (and panics with its output) when it is late.
    pub fn wait(mut self, secs: u64) -> Finished {
        let limit = std::time::Duration::from_secs(secs);
        let status = poll_for(limit, || self.child.try_wait().expect("try_wait"));
        if status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let f = Finished {
            code: status.and_then(|s| s.code()),
            stdout: std::fs::read_to_string(&self.out).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.err).unwrap_or_default(),
        };
        let _ = std::fs::remove_file(&self.out);
        let _ = std::fs::remove_file(&self.err);
        assert!(
            status.is_some(),
            "{} hung for {secs} s and was killed:\n{f}",
            self.name
        );
        f
    }

    /// Waits until `ready` exists; if the process exits first, panics with its output.
    pub fn wait_ready(&mut self, ready: &std::path::Path, secs: u64) {
        let limit = std::time::Duration::from_secs(secs);
        poll_until(limit, || ready.exists() || self.exited());
        if ready.exists() {
            return;
        }
        assert!(self.exited(), "{} not ready after {secs} s", self.name);
        let code = self.child.try_wait().ok().flatten().and_then(|s| s.code());
        panic!(
            "{} exited ({code:?}) before it was ready:\n--- stdout\n{}--- stderr\n{}",
            self.name,
            std::fs::read_to_string(&self.out).unwrap_or_default(),
            std::fs::read_to_string(&self.err).unwrap_or_default()
        );
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // A test that panicked must not leave its child running.
        if !self.exited() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
