//! Helpers for the tests that run the example programs.

#![allow(dead_code)]

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
        println!("skipped: example {name} not found at {} (cargo build --examples, or set DOCA_RS_EXAMPLES)", p.display());
        None
    }
}

/// Whether this process may open AF_PACKET sockets (root or CAP_NET_RAW); prints why not.
pub fn can_use_raw_sockets() -> bool {
    // SAFETY: plain socket(2)/close(2) calls on a descriptor we own.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
    if fd < 0 {
        println!("skipped: AF_PACKET sockets need root or CAP_NET_RAW");
        return false;
    }
    // SAFETY: `fd` is ours.
    unsafe { libc::close(fd) };
    true
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

/// Waits until `p` exists (the receiver is listening); panics after 20 s.
pub fn wait_for_file(p: &std::path::Path) {
    let t = std::time::Instant::now();
    while !p.exists() {
        assert!(t.elapsed().as_secs() < 20, "{} never appeared", p.display());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
