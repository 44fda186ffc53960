//! Child processes of the daemon: workers (`doca_urom_worker --id .. so_path:id ..`) and
//! plugin probes (`doca_urom_worker --probe PATH`).
//!
//! Every child gets, and keeps, only what the daemon means to give it: stdin from
//! `/dev/null`, stdout and stderr shared with the daemon (plugin probes: stdout to
//! `/dev/null`, so nothing a plugin prints mixes with the daemon's report), a private pipe as
//! descriptor 3 for its one-line answer, and nothing else: every other descriptor is closed
//! between fork and exec (`close_range`), whether or not it was close-on-exec. Its
//! environment is the daemon's plus the host's entries that passed the allowlist
//! (`env.rs`), and the worker's attach token. A child never outlives the daemon
//! (`PR_SET_PDEATHSIG`).
//!
//! Nothing here blocks the daemon: a worker's port line is read from its pipe by the main
//! loop as it arrives (bounded by `--spawn-timeout-ms`), a stopping worker gets SIGTERM and
//! is reaped (SIGKILL after a grace time) by the main loop too.

use crate::error::{DocaError, DocaResult};
use crate::transport::ConnId;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Fd number a child writes its answer line to.
pub(crate) const ANSWER_FD: i32 = 3;
/// Environment variable carrying a worker's attach token (hex) to it.
pub(crate) const TOKEN_ENV: &str = "DOCA_UROM_WORKER_TOKEN";
/// Bytes of an attach token.
pub(crate) const TOKEN_LEN: usize = 16;
/// Longest answer line accepted.
const MAX_LINE: usize = 512;

/// A started child and the read end of its answer pipe (non-blocking).
pub(crate) struct Launched {
    pub child: Child,
    pub answer: File,
}

/// Starts `bin args` with the daemon's environment plus `env`, on `cpuset` (None: the
/// daemon's CPUs), with only stdin, stdout, stderr and the answer pipe open.
pub(crate) fn launch(
    bin: &Path,
    args: &[OsString],
    env: &[(String, String)],
    cpuset: Option<[u64; 16]>,
    quiet: bool,
) -> std::io::Result<Launched> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is writable for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors we own.
    let (rd, wr) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    let wr_fd = wr.as_raw_fd();
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null());
    if quiet {
        cmd.stdout(Stdio::null());
    }
    // SAFETY: the closure makes only async-signal-safe system calls (prctl, fcntl, dup2,
    // close_range/close, sched_setaffinity) between fork and exec, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            // A child never outlives its daemon.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The answer pipe becomes fd 3, without close-on-exec (dup2 clears it; dup2 onto
            // itself does not, so clear it explicitly then).
            if wr_fd == ANSWER_FD {
                if libc::fcntl(ANSWER_FD, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(wr_fd, ANSWER_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Everything else the daemon has open stays with the daemon.
            close_from(ANSWER_FD + 1);
            if let Some(words) = cpuset {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for (i, w) in words.iter().enumerate() {
                    for b in 0..64 {
                        if w & (1 << b) != 0 {
                            libc::CPU_SET(i * 64 + b, &mut set);
                        }
                    }
                }
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    drop(wr);
    Ok(Launched { child, answer: rd })
}

/// Closes every descriptor from `first` up (between fork and exec: no allocation).
///
/// # Safety
/// Only in a freshly forked child, where nothing else uses those descriptors.
unsafe fn close_from(first: i32) {
    // SAFETY: close_range(2) takes plain integers; on kernels without it, fall back to
    // closing one by one up to the descriptor limit.
    let r = unsafe { libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, 0u32) };
    if r == 0 {
        return;
    }
    let mut lim: libc::rlimit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out pointer.
    let max = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur.min(1 << 20) as i32
    } else {
        65_536
    };
    for fd in first..max {
        // SAFETY: closing descriptors of the child only.
        unsafe { libc::close(fd) };
    }
}

/// Reads what arrived on a child's answer pipe into `line`: `Some(Ok(text))` once a whole
/// line is there, `Some(Err(()))` when the pipe closed without one (or the line is too
/// long), `None` while waiting.
pub(crate) fn read_answer(pipe: &mut File, line: &mut Vec<u8>) -> Option<Result<String, ()>> {
    let mut buf = [0u8; 256];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return Some(Err(())),
            Ok(n) => {
                line.extend_from_slice(&buf[..n]);
                if let Some(end) = line.iter().position(|b| *b == b'\n') {
                    return Some(Ok(String::from_utf8_lossy(&line[..end]).into_owned()));
                }
                if line.len() > MAX_LINE {
                    return Some(Err(()));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return None,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Some(Err(())),
        }
    }
}

/// How a child ended, in words.
pub(crate) fn describe_exit(child: &mut Child) -> String {
    use std::os::unix::process::ExitStatusExt;
    match child.try_wait() {
        Ok(Some(s)) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exited with status {c}"),
            (_, Some(sig)) => format!("was killed by signal {sig}"),
            _ => format!("ended ({s})"),
        },
        _ => "is still running".into(),
    }
}

/// A fresh attach token.
pub(crate) fn new_token() -> [u8; TOKEN_LEN] {
    let mut t = [0u8; TOKEN_LEN];
    let mut at = 0;
    while at < t.len() {
        // SAFETY: writing at most the rest of `t`.
        let n = unsafe { libc::getrandom(t[at..].as_mut_ptr().cast(), t.len() - at, 0) };
        if n > 0 {
            at += n as usize;
        } else if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // No randomness at all: the time and pid still make a token no host guesses
            // by accident (attach also needs the worker's port, which only hosts learn).
            let seed = Instant::now().elapsed().as_nanos() as u64 ^ std::process::id() as u64;
            t[..8].copy_from_slice(&seed.to_le_bytes());
            break;
        }
    }
    t
}

/// Hex text of `b`.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Bytes of hex text (None when it is not hex).
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Where a worker process stands.
pub(crate) enum ProcState {
    /// Started, its port line not read yet: the requests waiting for it.
    Starting {
        line: Vec<u8>,
        deadline: Instant,
        waiters: Vec<(ConnId, u64)>,
    },
    /// Listening on `port`.
    Running { port: u16 },
}

/// One worker process.
pub(crate) struct Proc {
    /// The process.
    pub child: Child,
    /// Its answer pipe (while starting).
    pub answer: Option<File>,
    /// Group id.
    pub gid: u32,
    /// What attaching to it takes.
    pub token: [u8; TOKEN_LEN],
    /// Host connections that use it, with how many worker contexts each has on it.
    pub users: HashMap<ConnId, u32>,
    /// Starting or running.
    pub state: ProcState,
}

/// What a worker spawn needs.
pub(crate) struct SpawnSpec<'a> {
    /// Worker binary.
    pub bin: &'a Path,
    /// Worker id.
    pub id: u64,
    /// Group id.
    pub gid: u32,
    /// Listen address.
    pub listen: std::net::Ipv4Addr,
    /// Message size limit.
    pub max_msg: u64,
    /// (path, id) per plugin.
    pub plugins: Vec<(PathBuf, u64)>,
    /// Environment entries that passed the allowlist.
    pub env: Vec<(String, String)>,
    /// CPU set (None: the daemon's).
    pub cpuset: Option<[u64; 16]>,
    /// How long it may take to listen.
    pub timeout: Duration,
}

/// Starts a worker; its port line is read later ([`Proc::poll_start`]).
pub(crate) fn spawn(spec: SpawnSpec<'_>) -> DocaResult<Proc> {
    let token = new_token();
    let mut args: Vec<OsString> = vec![
        "--id".into(),
        spec.id.to_string().into(),
        "--gid".into(),
        spec.gid.to_string().into(),
        "--listen".into(),
        spec.listen.to_string().into(),
        "--max-msg".into(),
        spec.max_msg.to_string().into(),
        "--port-fd".into(),
        ANSWER_FD.to_string().into(),
        "--".into(),
    ];
    for (p, id) in &spec.plugins {
        let mut a = p.clone().into_os_string();
        a.push(format!(":{id}"));
        args.push(a);
    }
    let mut env = spec.env;
    env.push((TOKEN_ENV.to_string(), hex(&token)));
    let l = launch(spec.bin, &args, &env, spec.cpuset, false).map_err(|e| {
        sdk_err!("urom_daemon", "cannot start {}: {e}", spec.bin.display());
        DocaError::NOT_FOUND
    })?;
    Ok(Proc {
        child: l.child,
        answer: Some(l.answer),
        gid: spec.gid,
        token,
        users: HashMap::new(),
        state: ProcState::Starting {
            line: Vec::new(),
            deadline: Instant::now() + spec.timeout,
            waiters: Vec::new(),
        },
    })
}

impl Proc {
    /// Whether the process has exited (reaps it).
    pub(crate) fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// For a starting worker: `Some(Ok(port))` once it listens, `Some(Err(code))` when it
    /// failed (exited, said something else, or took too long), `None` while waiting.
    pub(crate) fn poll_start(&mut self, now: Instant) -> Option<DocaResult<u16>> {
        let ProcState::Starting { line, deadline, .. } = &mut self.state else {
            return None;
        };
        let pipe = self.answer.as_mut()?;
        let r = match read_answer(pipe, line) {
            Some(Ok(text)) => Some(
                text.trim()
                    .strip_prefix("UROM_WORKER_PORT ")
                    .and_then(|p| p.parse::<u16>().ok())
                    .ok_or_else(|| {
                        sdk_err!("urom_daemon", "worker said {text:?} instead of its port");
                        DocaError::UNEXPECTED
                    }),
            ),
            Some(Err(())) => {
                let how = describe_exit(&mut self.child);
                sdk_err!(
                    "urom_daemon",
                    "worker pid {} {how} before listening (see its messages above)",
                    self.child.id()
                );
                Some(Err(DocaError::INITIALIZATION))
            }
            None if now > *deadline => {
                sdk_err!("urom_daemon", "worker pid {} did not listen in time (--spawn-timeout-ms): a plugin's open() is slow or hangs", self.child.id());
                Some(Err(DocaError::TIME_OUT))
            }
            None => None,
        };
        if r.is_some() {
            self.answer = None;
        }
        r
    }
}

/// A child asked to stop: SIGKILL at `kill_at` unless it exited.
pub(crate) struct Dying {
    child: Child,
    kill_at: Instant,
}

impl Dying {
    /// Sends SIGTERM to `child` and returns it, to be [reaped](Dying::reap) later.
    pub(crate) fn terminate(mut child: Child, grace: Duration) -> Option<Dying> {
        if !matches!(child.try_wait(), Ok(None)) {
            return None;
        }
        // SAFETY: signalling our own child by pid (not reaped yet, so the pid is its).
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        Some(Dying {
            child,
            kill_at: Instant::now() + grace,
        })
    }

    /// Reaps it if it exited, SIGKILLs it when its time is up: true when it is gone.
    pub(crate) fn reap(&mut self, now: Instant) -> bool {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return true;
        }
        if now >= self.kill_at {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return true;
        }
        false
    }
}

/// Stops a child process: SIGTERM, then SIGKILL after `grace`; always reaps (what tests and
/// benches use to stop the daemons they start).
#[cfg(any(test, feature = "testing"))]
pub fn terminate_child(child: &mut std::process::Child, grace: Duration) {
    let exited = |c: &mut std::process::Child| !matches!(c.try_wait(), Ok(None));
    if exited(child) {
        return;
    }
    // SAFETY: signalling our own child by pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if exited(child) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hex_roundtrips() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert_eq!(unhex(&hex(&a)).unwrap(), a.to_vec());
        assert!(unhex("abc").is_none());
        assert!(unhex("zz").is_none());
    }

    #[test]
    fn a_child_keeps_only_stdio_and_its_answer_pipe() {
        // A descriptor of ours without close-on-exec: the child must not get it.
        // SAFETY: plain dup of stdin at 100 or above (clear of the child's 0..=3); closed
        // below.
        let leaked = unsafe { libc::fcntl(0, libc::F_DUPFD, 100) };
        assert!(leaked >= 100);
        let mut l = launch(
            Path::new("/bin/sh"),
            &["-c".into(), "ls /proc/self/fd >&3".into()],
            &[],
            None,
            true,
        )
        .expect("launch sh");
        let _ = l.child.wait();
        // SAFETY: closing our own dup.
        unsafe { libc::close(leaked) };
        let mut out = String::new();
        let _ = l.answer.read_to_string(&mut out);
        let fds: Vec<i32> = out
            .split_whitespace()
            .filter_map(|s| s.parse().ok())
            .collect();
        // ls itself opens one descriptor for /proc/self/fd (a number above 3).
        assert!(fds.starts_with(&[0, 1, 2, 3]), "{fds:?}");
        assert!(fds.len() <= 5, "only stdio, the pipe and ls's own: {fds:?}");
    }
}
