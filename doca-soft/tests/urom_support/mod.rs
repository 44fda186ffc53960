//! Shared helpers for the UROM integration tests: build the C plugin, run a daemon, and a
//! raw protocol client over the runtime's UCX transport (`Node`).
#![allow(dead_code)]

use doca_soft::testing::urom::{loopback, terminate_child, ConnId, Decoder, Event, Msg, Node};
use std::io::{BufRead, BufReader};
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Compiles `doca-urom/tests/c/<name>.c` into `dir/<name>.so`.
pub fn build_c_plugin(name: &str, dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let src = root.join("doca-urom/tests/c").join(format!("{name}.c"));
    let out = dir.join(format!("{name}.so"));
    let ucx = std::env::var("UCX_HOME").expect("UCX_HOME (source .tools/env.sh)");
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", root.join("doca-soft/include").display()))
        .arg(format!("-I{ucx}/include"))
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
        .expect("run cc");
    assert!(st.success(), "C plugin {name} must compile");
    out
}

/// A daemon process killed on drop.
pub struct Daemon {
    pub child: Child,
    pub addr: SocketAddrV4,
}

impl Daemon {
    /// Starts the daemon with `UROM_PLUGIN_PATH=plugin_path` and extra args.
    pub fn start(plugin_path: &str, extra: &[&str]) -> Daemon {
        Self::start_in(None, plugin_path, extra)
    }

    /// Same, optionally inside network namespace `netns`.
    pub fn start_in(netns: Option<&str>, plugin_path: &str, extra: &[&str]) -> Daemon {
        let bin = env!("CARGO_BIN_EXE_doca_urom_daemon");
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, bin]);
                c
            }
            None => Command::new(bin),
        };
        cmd.args(extra)
            .env("UROM_PLUGIN_PATH", plugin_path)
            .env(
                "DOCA_UROM_WORKER_BIN",
                env!("CARGO_BIN_EXE_doca_urom_worker"),
            )
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("start daemon");
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        lines.read_line(&mut first).expect("daemon banner");
        let addr = first
            .trim()
            .strip_prefix("doca_urom_daemon listening on ")
            .unwrap_or_else(|| panic!("unexpected banner {first:?}"))
            .parse()
            .expect("address");
        // Keep draining stdout so the daemon never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines.lines() {});
        Daemon { child, addr }
    }

    /// Pids of the daemon's worker processes.
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

    /// Whether the daemon process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        terminate_child(&mut self.child, Duration::from_secs(5));
    }
}

/// A raw protocol client (one connection).
pub struct Raw {
    pub node: Node,
    pub conn: ConnId,
    dec: Decoder,
    pub closed: bool,
}

impl Raw {
    pub fn connect(addr: SocketAddrV4) -> Raw {
        let mut node = Node::new().expect("node");
        let conn = node.connect(addr).expect("connect");
        Raw {
            node,
            conn,
            dec: Decoder::new(1 << 20),
            closed: false,
        }
    }

    pub fn local(port: u16) -> Raw {
        Self::connect(loopback(port))
    }

    pub fn send(&mut self, m: &Msg) {
        self.node.send(self.conn, m.encode()).expect("send");
    }

    pub fn send_raw(&mut self, b: Vec<u8>) {
        self.node.send(self.conn, b).expect("send raw");
    }

    /// Next message, or None on close / timeout.
    pub fn recv(&mut self, timeout: Duration) -> Option<Msg> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(m)) = self.dec.next_msg() {
                return Some(m);
            }
            if self.closed || Instant::now() > deadline {
                return None;
            }
            for e in self.node.poll() {
                match e {
                    Event::Data(_, b) => self.dec.push(&b),
                    Event::Closed(_) => self.closed = true,
                    Event::Accepted(_) => {}
                }
            }
            self.node.wait(5);
        }
    }

    /// Waits until the connection is reported closed.
    pub fn wait_closed(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.closed && Instant::now() < deadline {
            let _ = self.recv(Duration::from_millis(20));
        }
        self.closed
    }
}

pub const T: Duration = Duration::from_secs(20);
