//! Shared helpers for the UROM integration tests: build the C plugins, run a daemon (its
//! stdout report collected), and a raw protocol client over the runtime's transport
//! (`Node`, TCP).
#![allow(dead_code)]

use doca_soft::testing::urom::{loopback, ConnId, Decoder, Event, Msg, Node, PluginDesc, SpawnReq};
use doca_test_support::netns::NetNs;
use doca_test_support::urom;
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Compiles `doca-urom/tests/c/<name>.c` into `dir/<name>.so`.
pub fn build_c_plugin(name: &str, dir: &Path) -> PathBuf {
    let src = doca_test_support::workspace::workspace_root()
        .join("doca-urom/tests/c")
        .join(format!("{name}.c"));
    urom::build_c_plugin(&src, dir)
}

/// A daemon loading the echo C plugin (built into the returned folder, kept while the
/// daemon runs).
pub fn echo_daemon() -> (tempfile::TempDir, Daemon) {
    let dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", dir.path());
    let d = Daemon::start(dir.path().to_str().unwrap(), &[]);
    (dir, d)
}

/// doca-soft's daemon through doca-test-support's launcher ([`urom::Daemon`]), with this
/// package's worker binary; stopped on drop, its stdout lines collected.
pub struct Daemon {
    /// Where it listens.
    pub addr: SocketAddrV4,
    inner: urom::Daemon,
}

impl Daemon {
    /// Starts the daemon with `UROM_PLUGIN_PATH=plugin_path` and extra args.
    pub fn start(plugin_path: &str, extra: &[&str]) -> Daemon {
        Self::start_with(None, plugin_path, extra, &[])
    }

    /// Same, optionally inside network namespace `netns`.
    pub fn start_in(netns: Option<&NetNs>, plugin_path: &str, extra: &[&str]) -> Daemon {
        Self::start_with(netns, plugin_path, extra, &[])
    }

    /// Same, with extra environment variables for the daemon (and so its workers).
    pub fn start_with(
        netns: Option<&NetNs>,
        plugin_path: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Daemon {
        let bins = urom::UromBinaries::for_tests();
        let mut b = urom::Daemon::builder(bins.daemon())
            .plugin_dir(plugin_path)
            .worker(&bins.worker());
        if let Some(ns) = netns {
            b = b.netns(ns);
        }
        for a in extra {
            b = b.arg(*a);
        }
        for (k, v) in env {
            b = b.env(*k, *v);
        }
        let inner = b.start().unwrap_or_else(|e| panic!("start daemon: {e}"));
        Daemon {
            addr: inner.addr(),
            inner,
        }
    }

    /// The daemon's stdout lines after the banner, once `want` of them matched `pred` (or
    /// after [`T`]).
    pub fn report(&self, pred: impl Fn(&str) -> bool, want: usize) -> Vec<String> {
        self.inner.wait_for_lines(pred, want, T)
    }

    /// Its process id, as kill(2) takes it.
    pub fn pid(&self) -> i32 {
        self.inner.pid() as i32
    }
}

impl std::ops::Deref for Daemon {
    type Target = urom::Daemon;
    fn deref(&self) -> &urom::Daemon {
        &self.inner
    }
}

impl std::ops::DerefMut for Daemon {
    fn deref_mut(&mut self) -> &mut urom::Daemon {
        &mut self.inner
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
        let mut node = Node::new();
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

    /// Hello and its answer: the daemon's plugins.
    pub fn hello(&mut self) -> Vec<PluginDesc> {
        self.send(&Msg::Hello { max_msg: 4096 });
        match self.recv(T) {
            Some(Msg::HelloOk {
                plugins,
                cpuset,
                max_msg,
            }) => {
                assert_eq!(cpuset.len(), 16);
                assert_eq!(max_msg, 4096);
                plugins
            }
            other => panic!("expected HelloOk, got {other:?}"),
        }
    }

    /// A spawn request and the daemon's answer.
    pub fn spawn(
        &mut self,
        req: u64,
        worker_id: u64,
        gid: u32,
        plugins: u64,
        env: Vec<String>,
    ) -> Msg {
        self.spawn_on(req, worker_id, gid, plugins, env, vec![])
    }

    /// [`Raw::spawn`] with a CPU set.
    pub fn spawn_on(
        &mut self,
        req: u64,
        worker_id: u64,
        gid: u32,
        plugins: u64,
        env: Vec<String>,
        cpuset: Vec<u64>,
    ) -> Msg {
        self.send(&Msg::Spawn(SpawnReq {
            req,
            worker_id,
            gid,
            plugins,
            cpuset,
            env,
        }));
        self.recv(T).expect("spawn reply")
    }
}

/// The port and token of a `Spawned` answer.
pub fn spawned(m: Msg) -> (u16, Vec<u8>) {
    match m {
        Msg::Spawned { port, token, .. } => (port, token),
        other => panic!("expected Spawned, got {other:?}"),
    }
}

/// Attaches a raw client to a worker (data stays on TCP: no UCX address offered); returns
/// it with its `Attached` answer.
pub fn attach(port: u16, worker_id: u64, token: Vec<u8>) -> (Raw, Msg) {
    let mut w = Raw::local(port);
    w.send(&Msg::Attach {
        worker_id,
        token,
        ucx_addr: vec![],
        unwatched: false,
    });
    let m = w.recv(T).expect("attach answer");
    (w, m)
}

/// Descriptor targets (`socket:[..]`, `pipe:[..]`, paths) of process `pid`, by fd.
pub fn fd_targets(pid: i32) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for e in rd.flatten() {
            let fd = e.file_name().to_string_lossy().parse().unwrap_or(-1);
            if let Ok(t) = std::fs::read_link(e.path()) {
                out.push((fd, t.to_string_lossy().into_owned()));
            }
        }
    }
    out.sort();
    out
}

/// CPU time (user + system) process `pid` used so far.
pub fn cpu_time(pid: i32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) start at field 3 (state):
    // utime and stime are fields 14 and 15.
    let f: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, r)| r.split_whitespace().collect())
        .unwrap_or_default();
    let field = |n: usize| {
        f.get(n - 3)
            .and_then(|x| x.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let ticks = field(14) + field(15);
    // SAFETY: plain sysconf query.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_millis(ticks * 1000 / hz)
}

/// The state letter of process `pid` (`R`, `S`, `T`, `Z`, ...).
pub fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// A command of the echo C plugin (`kind`: 0 echo, 1 hold, 2 address lookup).
pub fn echo_cmd(plugin: u64, ctx: u64, kind: u64, data: u64) -> Vec<u8> {
    let mut c = Vec::new();
    for v in [plugin, ctx, 16, kind, data] {
        c.extend_from_slice(&v.to_le_bytes());
    }
    c
}

pub const T: Duration = Duration::from_secs(20);
