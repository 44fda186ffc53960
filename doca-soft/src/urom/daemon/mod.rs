//! `doca_urom_daemon`: the UROM service. Listens (UCX over TCP) on 127.0.0.1 by default,
//! prints `doca_urom_daemon listening on IP:PORT` on stdout, reports the plugins found in
//! `UROM_PLUGIN_PATH`, spawns one `doca_urom_worker` per worker id and tears workers down
//! on request, when their last host disconnects, and when the daemon stops (SIGTERM/SIGINT).
//!
//! Hosts talk to workers directly: the daemon answers `Spawn` with the worker's port on the
//! daemon's address. A worker spawned for id X is reused by any host asking for X (a new
//! connection to the same process). Spawning blocks the daemon until the worker listens
//! (bounded); that keeps the daemon single-threaded.

pub(crate) mod plugins;
pub(crate) mod procs;

use crate::error::{DocaError, DocaResult};
use crate::urom::stop::{install_stop_signals, stop_requested};
use crate::urom::transport::{ConnId, Event, Node};
use crate::urom::wire::{Decoder, Msg, SpawnReq, OVERHEAD};
use plugins::Plugin;
use procs::{Proc, SpawnSpec};
use std::collections::HashMap;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::time::Duration;

/// `DOCA_UROM_WORKER_ID_ANY`.
pub(crate) const WORKER_ID_ANY: u64 = u64::MAX;
/// First id handed out for ANY requests (far from ids applications pick themselves).
const ANY_ID_BASE: u64 = 1 << 48;

/// Daemon command line.
#[derive(Debug, Clone)]
pub(crate) struct DaemonArgs {
    /// Address (and port, 0 = any) to listen on.
    pub listen: SocketAddrV4,
    /// Log level (10..70).
    pub log_level: u32,
    /// SDK log level (10..70).
    pub sdk_log_level: u32,
    /// Largest UROM message (command/notification header + plugin payload).
    pub max_msg: usize,
    /// Worker binary.
    pub worker_bin: PathBuf,
}

const USAGE: &str = "usage: doca_urom_daemon [-l|--log-level 10..70] [--sdk-log-level 10..70] \
[-m|--max-msg-size BYTES] [--listen IP[:PORT]] [--worker-bin PATH]";

fn level(s: Option<&String>) -> DocaResult<u32> {
    let v: u32 = s
        .ok_or(DocaError::INVALID_VALUE)?
        .parse()
        .map_err(|_| DocaError::INVALID_VALUE)?;
    if (10..=70).contains(&v) {
        Ok(v)
    } else {
        Err(DocaError::INVALID_VALUE)
    }
}

impl DaemonArgs {
    /// Parses the command line (without `argv[0]`).
    pub(crate) fn parse(args: &[String]) -> DocaResult<DaemonArgs> {
        let default_bin = std::env::var_os("DOCA_UROM_WORKER_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                std::env::current_exe()
                    .ok()
                    .and_then(|p| p.parent().map(|d| d.join("doca_urom_worker")))
                    .unwrap_or_else(|| PathBuf::from("doca_urom_worker"))
            });
        let mut a = DaemonArgs {
            listen: SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
            log_level: 30,
            sdk_log_level: 30,
            max_msg: 4096,
            worker_bin: default_bin,
        };
        let mut it = args.iter();
        let bad = DocaError::INVALID_VALUE;
        while let Some(x) = it.next() {
            match x.as_str() {
                "-l" | "--log-level" => a.log_level = level(it.next())?,
                "--sdk-log-level" => a.sdk_log_level = level(it.next())?,
                "-m" | "--max-msg-size" => {
                    a.max_msg = it.next().ok_or(bad)?.parse().map_err(|_| bad)?;
                    if a.max_msg < 64 || a.max_msg > (1 << 24) {
                        return Err(bad);
                    }
                }
                "--listen" => {
                    let v = it.next().ok_or(bad)?;
                    a.listen = match v.parse::<SocketAddrV4>() {
                        Ok(s) => s,
                        Err(_) => SocketAddrV4::new(v.parse().map_err(|_| bad)?, 0),
                    };
                }
                "--worker-bin" => a.worker_bin = PathBuf::from(it.next().ok_or(bad)?),
                _ => return Err(bad),
            }
        }
        Ok(a)
    }
}

struct HostConn {
    decoder: Decoder,
    greeted: bool,
}

struct Daemon {
    args: DaemonArgs,
    node: Node,
    plugins: Vec<Plugin>,
    hosts: HashMap<ConnId, HostConn>,
    workers: HashMap<u64, Proc>,
    next_any: u64,
}

/// Validates one `NAME=value` environment entry (no spaces, a plain name).
pub(crate) fn valid_env(e: &str) -> Option<(String, String)> {
    let (k, v) = e.split_once('=')?;
    let name_ok = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let value_ok = !v.chars().any(|c| c.is_whitespace() || c == '\0');
    (name_ok && value_ok).then(|| (k.to_owned(), v.to_owned()))
}

impl Daemon {
    fn send(&mut self, conn: ConnId, m: &Msg) {
        let _ = self.node.send(conn, m.encode());
    }

    fn spawn(&mut self, conn: ConnId, s: SpawnReq) -> DocaResult<(u64, u16)> {
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
        if s.cpuset.len() > 16 {
            return Err(DocaError::INVALID_VALUE);
        }
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
                return Ok((id, p.port));
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
            bin: &self.args.worker_bin,
            id,
            gid: s.gid,
            listen: *self.args.listen.ip(),
            max_msg: self.args.max_msg,
            plugins,
            env,
            cpuset: s.cpuset.clone(),
        })?;
        proc.users.insert(conn, 1);
        let port = proc.port;
        sdk_info!(
            "urom_daemon",
            "worker {id} (gid {}) started, pid {}, port {port}",
            s.gid,
            proc.child.id()
        );
        self.workers.insert(id, proc);
        if s.worker_id == WORKER_ID_ANY {
            self.next_any += 1;
        }
        Ok((id, port))
    }

    /// Drops one of `conn`'s uses of `id` (all of them when `all`); the last user's
    /// release terminates the process.
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
        if p.users.is_empty() {
            let mut p = self.workers.remove(&id).expect("present");
            p.terminate(Duration::from_secs(1));
        }
        true
    }

    fn on_msg(&mut self, conn: ConnId, m: Msg) -> DocaResult<()> {
        let greeted = self.hosts.get(&conn).is_some_and(|h| h.greeted);
        match m {
            Msg::Hello { max_msg } => {
                if max_msg as usize > self.args.max_msg {
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
                let plugins = self.plugins.iter().map(|p| p.desc.clone()).collect();
                self.send(
                    conn,
                    &Msg::HelloOk {
                        plugins,
                        cpuset: cpuset_words(),
                        max_msg: self.args.max_msg as u64,
                    },
                );
            }
            _ if !greeted => return Err(DocaError::BAD_STATE),
            Msg::Spawn(s) => {
                let req = s.req;
                match self.spawn(conn, s) {
                    Ok((worker_id, port)) => self.send(
                        conn,
                        &Msg::Spawned {
                            req,
                            worker_id,
                            port,
                        },
                    ),
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

    fn drop_host_flushed(&mut self, conn: ConnId) {
        self.release_all(conn);
        self.node.close_flushed(conn);
    }

    fn drop_host(&mut self, conn: ConnId) {
        self.release_all(conn);
        self.node.close(conn);
    }

    fn release_all(&mut self, conn: ConnId) {
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
                "host connection {conn}: protocol error {e:?}, dropping it"
            );
            self.send(conn, &Msg::Error { req: 0, code: e.0 });
            self.drop_host_flushed(conn);
        }
    }

    fn reap(&mut self) {
        let dead: Vec<u64> = self
            .workers
            .iter_mut()
            .filter_map(|(i, p)| p.exited().then_some(*i))
            .collect();
        for id in dead {
            sdk_warn!("urom_daemon", "worker {id} exited");
            self.workers.remove(&id);
        }
    }

    fn run(&mut self) {
        let mut ticks = 0u32;
        while !stop_requested() {
            let events = self.node.poll();
            let busy = !events.is_empty();
            for e in events {
                match e {
                    Event::Accepted(c) => {
                        let decoder = Decoder::new(self.args.max_msg + OVERHEAD);
                        self.hosts.insert(
                            c,
                            HostConn {
                                decoder,
                                greeted: false,
                            },
                        );
                    }
                    Event::Data(c, b) => self.on_data(c, &b),
                    Event::Closed(c) => self.drop_host(c),
                }
            }
            ticks = ticks.wrapping_add(1);
            if ticks.is_multiple_of(16) {
                self.reap();
            }
            if !busy {
                self.node.wait(5);
            }
        }
        for (_, mut p) in self.workers.drain() {
            p.terminate(Duration::from_secs(1));
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

/// Entry point of `doca_urom_daemon`; returns the exit code.
pub(crate) fn main_with_args(args: &[String]) -> i32 {
    let args = match DaemonArgs::parse(args) {
        Ok(a) => a,
        Err(_) => {
            eprintln!("{USAGE}");
            return 2;
        }
    };
    install_stop_signals();
    // -l: the application log limit; --sdk-log-level: the runtime's own messages (the
    // daemon reports through the SDK log).
    let _ = crate::log::global().set_global_upper(args.log_level);
    let _ = crate::log::global().set_global_sdk(args.sdk_log_level);
    let plugins = plugins::discover(&std::env::var("UROM_PLUGIN_PATH").unwrap_or_default());
    let mut node = match Node::new() {
        Ok(n) => n,
        Err(_) => return 4,
    };
    let port = match node.listen(args.listen) {
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
    for p in &plugins {
        let _ = writeln!(
            out,
            "plugin {} id {:#x} version {:#x}",
            p.desc.name, p.desc.id, p.desc.version
        );
    }
    let _ = out.flush();
    let mut d = Daemon {
        args,
        node,
        plugins,
        hosts: HashMap::new(),
        workers: HashMap::new(),
        next_any: ANY_ID_BASE,
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
    fn daemon_flags_parse() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let a = DaemonArgs::parse(&v(&[
            "-l",
            "60",
            "--sdk-log-level",
            "10",
            "-m",
            "8192",
            "--listen",
            "10.1.0.2:5000",
        ]))
        .unwrap();
        assert_eq!((a.log_level, a.sdk_log_level, a.max_msg), (60, 10, 8192));
        assert_eq!(a.listen, "10.1.0.2:5000".parse().unwrap());
        assert!(DaemonArgs::parse(&v(&["-l", "5"])).is_err());
        assert!(DaemonArgs::parse(&v(&["--bogus"])).is_err());
        assert!(DaemonArgs::parse(&v(&["-m", "1"])).is_err());
    }
}
