//! `doca_urom_daemon`: the UROM service. Listens (TCP) on 127.0.0.1 by default, prints
//! `doca_urom_daemon listening on IP:PORT` on stdout, then one line per plugin found in
//! `UROM_PLUGIN_PATH` and per file it skipped (with the reason); spawns one
//! `doca_urom_worker` per worker id and tears workers down on request, when their last host
//! disconnects, and when the daemon stops (SIGTERM/SIGINT). Command line: `args.rs`
//! (`doca_urom_daemon --help`).
//!
//! Hosts talk to workers directly: the daemon answers `Spawn` with the worker's port on the
//! daemon's address and the token attaching to it takes. A worker spawned for id X is
//! reused by any host asking for X (a new connection to the same process).
//!
//! A host and a worker of one machine (their TCP connection's two ends have the same
//! address, or both are loopback) carry their commands over a UCX endpoint that UCX may put
//! on shared memory; between machines over TCP or RDMA (see `urom::transport`).
//! `DOCA_SOFT_UROM_UCX_WATCH=always` in the daemon's environment (its workers inherit it)
//! or in a host's keeps every host-worker endpoint on TCP or RDMA, for hosts and workers
//! that share a network but not shared memory (different IPC namespaces); the default,
//! `auto`, uses shared memory where it can. Either end asking for `always` is enough.
//!
//! # Trust model
//!
//! * Who may connect: anyone who reaches the listening address. The default is loopback;
//!   with `--listen` on another address, every machine that can reach it is a host. There
//!   is no authentication of hosts: put the daemon on a network only trusted hosts reach
//!   (as DOCA's UROM service on a DPU serves its host).
//! * What a host can make the daemon do: spawn and stop workers (bounded by the host's
//!   `max_workers` only on its own side), list plugins, list workers of a group. It cannot
//!   make the daemon load anything: plugins come only from `UROM_PLUGIN_PATH` (the
//!   operator's), named by the ids the daemon gave them.
//! * What a host can make a worker do: run commands of the plugins it was spawned with
//!   (whatever those plugins do with them), join domains, and set the worker's environment
//!   within `--worker-env-allow` (never `LD_*`): no code of the host's runs there. Any host
//!   that knows a worker id can attach to that worker through the daemon (workers are shared
//!   by id, as DOCA's are); a worker accepts only connections presenting the token the
//!   daemon handed out with its port.
//! * What one peer cannot do: wedge the daemon. Connections are bounded in total
//!   (`--max-connections`, within the descriptor limit), per peer address, and while they
//!   have not spoken (a silent one is closed after `--hello-timeout-ms`; pending ones are
//!   capped so the rest is kept for hosts that greeted); malformed input ends that
//!   connection; worker start-up and shutdown never block the daemon's loop (a slow plugin
//!   `open()` only delays that worker, bounded by `--spawn-timeout-ms`); a plugin that
//!   crashes or exits when loaded is found out in a child process at start.
//! * Workers get no descriptor of the daemon (all closed before exec) and die with it.

pub(crate) mod args;
pub(crate) mod env;
pub(crate) mod plugins;
pub mod procs;

use crate::error::{DocaError, DocaResult};
use crate::stop::{install_stop_signals, stop_requested};
use crate::transport::{ConnId, Event, Limits, Node};
use crate::wire::{Decoder, Msg, SpawnReq, OVERHEAD};
use args::{format_cpus, DaemonArgs};
use clap::Parser;
use plugins::Plugin;
use procs::{Dying, Proc, ProcState, SpawnSpec};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `DOCA_UROM_WORKER_ID_ANY`.
pub(crate) const WORKER_ID_ANY: u64 = u64::MAX;
/// First id handed out for ANY requests (far from ids applications pick themselves).
const ANY_ID_BASE: u64 = 1 << 48;
/// How long a worker gets to exit after SIGTERM.
const WORKER_GRACE: Duration = Duration::from_secs(1);
/// Longest sleep of the main loop (bounds how late timers are seen).
const TICK_MS: i32 = 50;
/// Descriptors kept for the daemon's own use when bounding connections.
const FD_RESERVE: u64 = 128;

struct HostConn {
    decoder: Decoder,
    greeted: bool,
}

struct Daemon {
    args: DaemonArgs,
    worker_bin: PathBuf,
    node: Node,
    plugins: Vec<Plugin>,
    // What hosts are told (`--cpuset`, else `available`), and what the machine has.
    reported_cpus: Vec<u64>,
    available_cpus: Vec<u64>,
    hosts: HashMap<ConnId, HostConn>,
    workers: HashMap<u64, Proc>,
    dying: Vec<Dying>,
    next_any: u64,
    pfds: Vec<libc::pollfd>,
}

/// Validates one `NAME=value` environment entry (no spaces, a plain name).
pub fn valid_env(e: &str) -> Option<(String, String)> {
    let (k, v) = e.split_once('=')?;
    let name_ok = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let value_ok = !v.chars().any(|c| c.is_whitespace() || c == '\0');
    (name_ok && value_ok).then(|| (k.to_owned(), v.to_owned()))
}

/// The CPUs set in `words` (16 words of a `ucs_cpu_set_t`).
fn cpus_of(words: &[u64]) -> Vec<usize> {
    (0..words.len() * 64)
        .filter(|c| words[c / 64] & (1 << (c % 64)) != 0)
        .collect()
}

impl Daemon {
    fn send(&mut self, conn: ConnId, m: &Msg) {
        let _ = self.node.send(conn, m.encode());
    }

    /// A spawn request's CPU set, checked against the CPUs this machine gives the daemon:
    /// None for "inherit" (empty or all zero).
    fn worker_cpuset(&self, words: &[u64]) -> DocaResult<Option<[u64; 16]>> {
        if words.len() > 16 {
            return Err(DocaError::INVALID_VALUE);
        }
        if words.iter().all(|w| *w == 0) {
            return Ok(None);
        }
        let missing: Vec<usize> = cpus_of(words)
            .into_iter()
            .filter(|c| self.available_cpus[c / 64] & (1 << (c % 64)) == 0)
            .collect();
        if !missing.is_empty() {
            sdk_err!(
                "urom_daemon",
                "worker CPU set names CPUs {} this machine does not give the daemon (it has {})",
                format_cpus(&missing),
                format_cpus(&cpus_of(&self.available_cpus))
            );
            return Err(DocaError::INVALID_VALUE);
        }
        let mut set = [0u64; 16];
        set[..words.len()].copy_from_slice(words);
        Ok(Some(set))
    }

    /// Starts (or reuses) a worker for `s`: `Ok(Some(reply))` to send now, `Ok(None)` when
    /// the reply comes once the worker listens.
    fn spawn(&mut self, conn: ConnId, s: SpawnReq) -> DocaResult<Option<Msg>> {
        let known: u64 = self.plugins.iter().map(|p| p.desc.id).fold(0, |a, b| a | b);
        if s.plugins == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        if s.plugins & !known != 0 {
            return Err(DocaError::NOT_FOUND);
        }
        let env = s
            .env
            .iter()
            .map(|e| valid_env(e).ok_or(DocaError::INVALID_VALUE))
            .collect::<DocaResult<Vec<_>>>()?;
        if let Some((k, _)) = env.iter().find(|(k, _)| !self.args.env_allow.allows(k)) {
            sdk_err!(
                "urom_daemon",
                "worker environment variable {k} refused: not in --worker-env-allow ({})",
                self.args.env_allow.text()
            );
            return Err(DocaError::NOT_PERMITTED);
        }
        let cpuset = self.worker_cpuset(&s.cpuset)?;
        let id = if s.worker_id == WORKER_ID_ANY {
            while self.workers.contains_key(&self.next_any) {
                self.next_any += 1;
            }
            self.next_any
        } else {
            s.worker_id
        };
        if let Some(p) = self.workers.get_mut(&id) {
            if !p.exited() {
                // Environment applies at spawn: it cannot change a running worker.
                if !env.is_empty() {
                    return Err(DocaError::ALREADY_EXIST);
                }
                *p.users.entry(conn).or_insert(0) += 1;
                return Ok(match &mut p.state {
                    ProcState::Running { port } => Some(Msg::Spawned {
                        req: s.req,
                        worker_id: id,
                        port: *port,
                        token: p.token.to_vec(),
                    }),
                    ProcState::Starting { waiters, .. } => {
                        waiters.push((conn, s.req));
                        None
                    }
                });
            }
            self.workers.remove(&id);
        }
        let plugins = self
            .plugins
            .iter()
            .filter(|p| s.plugins & p.desc.id != 0)
            .map(|p| (p.path.clone(), p.desc.id))
            .collect();
        let mut proc = procs::spawn(SpawnSpec {
            bin: &self.worker_bin,
            id,
            gid: s.gid,
            listen: *self.args.listen.ip(),
            max_msg: self.args.max_msg,
            plugins,
            env,
            cpuset,
            timeout: self.args.spawn_timeout(),
        })?;
        proc.users.insert(conn, 1);
        if let ProcState::Starting { waiters, .. } = &mut proc.state {
            waiters.push((conn, s.req));
        }
        sdk_info!(
            "urom_daemon",
            "worker {id} (gid {}) starting, pid {}",
            s.gid,
            proc.child.id()
        );
        self.workers.insert(id, proc);
        if s.worker_id == WORKER_ID_ANY {
            self.next_any += 1;
        }
        Ok(None)
    }

    /// Stops worker `id` (without blocking: reaped later).
    fn stop_worker(&mut self, id: u64) {
        if let Some(p) = self.workers.remove(&id) {
            if let ProcState::Starting { waiters, .. } = p.state {
                for (conn, req) in waiters {
                    let code = DocaError::SHUTDOWN.0;
                    let _ = self.node.send(conn, Msg::Error { req, code }.encode());
                }
            }
            self.dying.extend(Dying::terminate(p.child, WORKER_GRACE));
        }
    }

    /// Drops one of `conn`'s uses of `id` (all of them when `all`); the last user's
    /// release stops the process.
    fn release(&mut self, conn: ConnId, id: u64, all: bool) -> bool {
        let Some(p) = self.workers.get_mut(&id) else {
            return false;
        };
        let Some(n) = p.users.get_mut(&conn) else {
            return false;
        };
        *n -= 1;
        if *n == 0 || all {
            p.users.remove(&conn);
        }
        if let ProcState::Starting { waiters, .. } = &mut p.state {
            if all {
                waiters.retain(|(c, _)| *c != conn);
            }
        }
        if p.users.is_empty() {
            self.stop_worker(id);
        }
        true
    }

    fn on_msg(&mut self, conn: ConnId, m: Msg) -> DocaResult<()> {
        let greeted = self.hosts.get(&conn).is_some_and(|h| h.greeted);
        match m {
            Msg::Hello { max_msg } => {
                if max_msg > self.args.max_msg {
                    sdk_warn!(
                        "urom_daemon",
                        "host connection {conn} asks for messages of {max_msg} bytes; this daemon takes {} (-m)",
                        self.args.max_msg
                    );
                    self.send(
                        conn,
                        &Msg::Error {
                            req: 0,
                            code: DocaError::TOO_BIG.0,
                        },
                    );
                    return Ok(());
                }
                if let Some(h) = self.hosts.get_mut(&conn) {
                    h.greeted = true;
                }
                self.node.admit(conn);
                let plugins = self.plugins.iter().map(|p| p.desc.clone()).collect();
                self.send(
                    conn,
                    &Msg::HelloOk {
                        plugins,
                        cpuset: self.reported_cpus.clone(),
                        max_msg: self.args.max_msg,
                    },
                );
            }
            _ if !greeted => return Err(DocaError::BAD_STATE),
            Msg::Ping { seq } => self.send(conn, &Msg::Pong { seq }),
            Msg::Spawn(s) => {
                let req = s.req;
                match self.spawn(conn, s) {
                    Ok(Some(reply)) => self.send(conn, &reply),
                    Ok(None) => {}
                    Err(e) => self.send(conn, &Msg::Error { req, code: e.0 }),
                }
            }
            Msg::Destroy { req, worker_id } => {
                if self.release(conn, worker_id, false) {
                    self.send(conn, &Msg::Destroyed { req, worker_id });
                } else {
                    self.send(
                        conn,
                        &Msg::Error {
                            req,
                            code: DocaError::NOT_FOUND.0,
                        },
                    );
                }
            }
            Msg::GidQuery { req, gid } => {
                self.reap();
                let mut ids: Vec<u64> = self
                    .workers
                    .iter()
                    .filter(|(_, p)| p.gid == gid)
                    .map(|(i, _)| *i)
                    .collect();
                ids.sort_unstable();
                self.send(conn, &Msg::GidList { req, ids });
            }
            _ => return Err(DocaError::NOT_SUPPORTED),
        }
        Ok(())
    }

    fn drop_host(&mut self, conn: ConnId, flushed: bool) {
        self.hosts.remove(&conn);
        let ids: Vec<u64> = self
            .workers
            .iter()
            .filter(|(_, p)| p.users.contains_key(&conn))
            .map(|(i, _)| *i)
            .collect();
        for id in ids {
            self.release(conn, id, true);
        }
        if flushed {
            self.node.close_flushed(conn);
        } else {
            self.node.close(conn);
        }
    }

    fn on_data(&mut self, conn: ConnId, bytes: &[u8]) {
        let mut msgs = Vec::new();
        let mut failed = None;
        if let Some(h) = self.hosts.get_mut(&conn) {
            h.decoder.push(bytes);
            loop {
                match h.decoder.next_msg() {
                    Ok(Some(m)) => msgs.push(m),
                    Ok(None) => break,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
        }
        for m in msgs {
            if let Err(e) = self.on_msg(conn, m) {
                failed = Some(e);
                break;
            }
        }
        if let Some(e) = failed {
            sdk_warn!(
                "urom_daemon",
                "host connection {conn} ({:?}): protocol error {e:?}, dropping it",
                self.node.peer(conn)
            );
            self.send(conn, &Msg::Error { req: 0, code: e.0 });
            self.drop_host(conn, true);
        }
    }

    /// Reads the port lines of starting workers and answers their waiters.
    fn serve_starting(&mut self, now: Instant) -> bool {
        let mut done = Vec::new();
        for (&id, p) in self.workers.iter_mut() {
            if let Some(r) = p.poll_start(now) {
                done.push((id, r));
            }
        }
        let busy = !done.is_empty();
        for (id, r) in done {
            let Some(p) = self.workers.get_mut(&id) else {
                continue;
            };
            let waiters = match &mut p.state {
                ProcState::Starting { waiters, .. } => std::mem::take(waiters),
                ProcState::Running { .. } => Vec::new(),
            };
            match r {
                Ok(port) => {
                    p.state = ProcState::Running { port };
                    let token = p.token.to_vec();
                    sdk_info!("urom_daemon", "worker {id} listens on port {port}");
                    for (conn, req) in waiters {
                        let m = Msg::Spawned {
                            req,
                            worker_id: id,
                            port,
                            token: token.clone(),
                        };
                        self.send(conn, &m);
                    }
                }
                Err(e) => {
                    for (conn, req) in waiters {
                        self.send(conn, &Msg::Error { req, code: e.0 });
                    }
                    self.stop_worker(id);
                }
            }
        }
        busy
    }

    fn reap(&mut self) {
        let dead: Vec<u64> = self
            .workers
            .iter_mut()
            .filter_map(|(i, p)| {
                (matches!(p.state, ProcState::Running { .. }) && p.exited()).then_some(*i)
            })
            .collect();
        for id in dead {
            sdk_warn!("urom_daemon", "worker {id} exited");
            self.workers.remove(&id);
        }
        let now = Instant::now();
        self.dying.retain_mut(|d| !d.reap(now));
    }

    fn handle(&mut self, e: Event) {
        match e {
            Event::Accepted(c) => {
                let decoder = Decoder::new(self.args.max_msg as usize + OVERHEAD);
                self.hosts.insert(
                    c,
                    HostConn {
                        decoder,
                        greeted: false,
                    },
                );
            }
            Event::Data(c, b) => self.on_data(c, &b),
            Event::Closed(c) => self.drop_host(c, false),
        }
    }

    /// Sleeps until a connection, a starting worker's pipe or a timer needs the loop.
    fn sleep(&mut self) {
        let mut fds = std::mem::take(&mut self.pfds);
        if self.node.sleep_fds(&mut fds) {
            for p in self.workers.values() {
                if let Some(a) = &p.answer {
                    fds.push(libc::pollfd {
                        fd: std::os::fd::AsRawFd::as_raw_fd(a),
                        events: libc::POLLIN,
                        revents: 0,
                    });
                }
            }
            // SAFETY: fds holds valid pollfds for its length.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, TICK_MS) };
        }
        self.pfds = fds;
    }

    fn run(&mut self) {
        let mut last_reap = Instant::now();
        while !stop_requested() {
            let events = self.node.poll();
            let mut busy = !events.is_empty();
            for e in events {
                self.handle(e);
            }
            let now = Instant::now();
            busy |= self.serve_starting(now);
            if now.duration_since(last_reap) >= Duration::from_millis(TICK_MS as u64) {
                last_reap = now;
                self.reap();
            }
            if !busy {
                self.sleep();
            }
        }
        let ids: Vec<u64> = self.workers.keys().copied().collect();
        for id in ids {
            self.stop_worker(id);
        }
        let deadline = Instant::now() + WORKER_GRACE + Duration::from_millis(500);
        while !self.dying.is_empty() && Instant::now() < deadline {
            self.reap();
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The CPUs this process may use, as 16 `u64` words (`ucs_cpu_set_t`).
pub(crate) fn cpuset_words() -> Vec<u64> {
    let mut words = vec![0u64; 16];
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer and size.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } == 0
    {
        for (cpu, w) in (0..1024usize).map(|c| (c, c / 64)) {
            // SAFETY: cpu < CPU_SETSIZE.
            if unsafe { libc::CPU_ISSET(cpu, &set) } {
                words[w] |= 1 << (cpu % 64);
            }
        }
    }
    words
}

/// Raises the descriptor limit to its hard maximum; returns the soft limit in force.
fn raise_fd_limit() -> u64 {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) } != 0 {
        return 1024;
    }
    if l.rlim_cur < l.rlim_max {
        let want = libc::rlimit {
            rlim_cur: l.rlim_max,
            rlim_max: l.rlim_max,
        };
        // SAFETY: a valid rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } == 0 {
            return want.rlim_cur;
        }
    }
    l.rlim_cur
}

/// Entry point of `doca_urom_daemon`; returns the exit code (0; 2 for a bad command line;
/// 5 when it cannot listen).
pub(crate) fn main_with_args(argv: &[String]) -> i32 {
    let args = match DaemonArgs::try_parse_from(
        std::iter::once("doca_urom_daemon".to_string()).chain(argv.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    install_stop_signals();
    // -l: the application log limit; --sdk-log-level: the runtime's own messages (the
    // daemon reports through the SDK log).
    let _ = crate::log::global().set_global_upper(args.log_level);
    let _ = crate::log::global().set_global_sdk(args.sdk_log_level);
    let worker_bin = args.worker_bin();
    let plugin_path = std::env::var("UROM_PLUGIN_PATH").unwrap_or_default();
    let found = plugins::discover(&plugin_path, &worker_bin);
    let nofile = raise_fd_limit();
    let max_conns = args.max_conns.min(nofile.saturating_sub(FD_RESERVE).max(4)) as usize;
    let mut limits = Limits::for_daemon(max_conns);
    limits.pending_timeout = args.hello_timeout();
    let mut node = Node::new();
    let port = match node.listen(args.listen, limits) {
        Ok(p) => p,
        Err(_) => {
            eprintln!("doca_urom_daemon: cannot listen on {}", args.listen);
            return 5;
        }
    };
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "doca_urom_daemon listening on {}:{port}",
        args.listen.ip()
    );
    for p in &found.plugins {
        let _ = writeln!(
            out,
            "plugin {} id {:#x} version {:#x} from {}",
            p.desc.name,
            p.desc.id,
            p.desc.version,
            p.path.display()
        );
    }
    for (what, why) in &found.skipped {
        let _ = writeln!(out, "skipped {what}: {why}");
    }
    if let Some(c) = &args.cpuset {
        let _ = writeln!(
            out,
            "reporting CPUs {} to hosts (--cpuset); this machine gives the daemon CPUs {}",
            format_cpus(&c.cpus()),
            format_cpus(&cpus_of(&cpuset_words()))
        );
    }
    if found.plugins.is_empty() {
        let _ = writeln!(
            out,
            "no plugins: UROM_PLUGIN_PATH={plugin_path:?} holds none (hosts will find no plugin)"
        );
    }
    if (max_conns as u64) < args.max_conns {
        let _ = writeln!(
            out,
            "at most {max_conns} connections (the descriptor limit is {nofile})"
        );
    }
    let _ = out.flush();
    let available_cpus = cpuset_words();
    let reported_cpus = args
        .cpuset
        .map_or_else(|| available_cpus.clone(), |c| c.0.to_vec());
    let mut d = Daemon {
        args,
        worker_bin,
        node,
        plugins: found.plugins,
        reported_cpus,
        available_cpus,
        hosts: HashMap::new(),
        workers: HashMap::new(),
        dying: Vec::new(),
        next_any: ANY_ID_BASE,
        pfds: Vec::new(),
    };
    d.run();
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_entries_are_validated() {
        assert_eq!(
            valid_env("UCX_LOG_LEVEL=debug"),
            Some(("UCX_LOG_LEVEL".into(), "debug".into()))
        );
        assert_eq!(valid_env("A="), Some(("A".into(), String::new())));
        assert!(valid_env("NOEQUALS").is_none());
        assert!(valid_env("=x").is_none());
        assert!(valid_env("A B=c").is_none());
        assert!(valid_env("A=b c").is_none());
        assert!(valid_env("1A=b").is_none());
    }

    #[test]
    fn cpus_of_lists_the_bits() {
        let mut w = vec![0u64; 16];
        w[0] = 0b101;
        w[1] = 1;
        assert_eq!(cpus_of(&w), vec![0, 2, 64]);
    }
}
