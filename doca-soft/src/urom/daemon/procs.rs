//! Worker processes: spawn (`doca_urom_worker --id .. --gid .. so_path:id ..`), wait for the
//! `UROM_WORKER_PORT` line, reap, and tear down (SIGTERM, then SIGKILL after a grace time).

use crate::error::{DocaError, DocaResult};
use std::collections::HashMap;
use std::io::Read;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use std::time::{Duration, Instant};

/// One running worker process.
pub(crate) struct Proc {
    /// The process.
    pub child: Child,
    /// Port it listens on.
    pub port: u16,
    /// Group id.
    pub gid: u32,
    /// Host connections that use it, with how many worker contexts each has on it.
    pub users: HashMap<u64, u32>,
}

/// What a spawn needs.
pub(crate) struct SpawnSpec<'a> {
    /// Worker binary.
    pub bin: &'a Path,
    /// Worker id.
    pub id: u64,
    /// Group id.
    pub gid: u32,
    /// Listen address.
    pub listen: Ipv4Addr,
    /// Message size limit.
    pub max_msg: usize,
    /// (path, id) per plugin.
    pub plugins: Vec<(PathBuf, u64)>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// CPU set words (empty or all-zero: inherit).
    pub cpuset: Vec<u64>,
}

/// Fd number the worker writes its port line to.
const PORT_FD: i32 = 3;

fn read_port(out: &mut std::fs::File, timeout: Duration) -> DocaResult<u16> {
    let fd = out.as_raw_fd();
    let deadline = Instant::now() + timeout;
    let mut line = Vec::new();
    while !line.ends_with(b"\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(DocaError::TIME_OUT);
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(1000) as i32) };
        if n <= 0 {
            continue;
        }
        let mut b = [0u8; 1];
        match out.read(&mut b) {
            Ok(1) => line.push(b[0]),
            _ => return Err(DocaError::INITIALIZATION),
        }
        if line.len() > 64 {
            return Err(DocaError::UNEXPECTED);
        }
    }
    let s = String::from_utf8_lossy(&line);
    s.trim()
        .strip_prefix("UROM_WORKER_PORT ")
        .and_then(|p| p.parse().ok())
        .ok_or(DocaError::UNEXPECTED)
}

/// Starts a worker and waits until it listens.
pub(crate) fn spawn(spec: SpawnSpec<'_>) -> DocaResult<Proc> {
    let mut cmd = Command::new(spec.bin);
    cmd.arg("--id").arg(spec.id.to_string());
    cmd.arg("--gid").arg(spec.gid.to_string());
    cmd.arg("--listen").arg(spec.listen.to_string());
    cmd.arg("--max-msg").arg(spec.max_msg.to_string());
    for (p, id) in &spec.plugins {
        cmd.arg(format!("{}:{id}", p.display()));
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    cmd.arg("--port-fd").arg(PORT_FD.to_string());
    cmd.stdin(Stdio::null());
    let mut fds = [0i32; 2];
    // SAFETY: fds is writable for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(DocaError::OPERATING_SYSTEM);
    }
    // SAFETY: fresh descriptors we own.
    let (mut rd, wr) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    let wr_fd = wr.as_raw_fd();
    let cpuset = spec.cpuset.clone();
    // SAFETY: the closure only makes async-signal-safe system calls (prctl,
    // sched_setaffinity) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // A worker never outlives its daemon.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The port pipe becomes fd 3 (dup2 clears close-on-exec).
            if wr_fd == PORT_FD {
                // dup2 onto itself keeps close-on-exec: clear it explicitly.
                libc::fcntl(PORT_FD, libc::F_SETFD, 0);
            } else if libc::dup2(wr_fd, PORT_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if cpuset.iter().any(|w| *w != 0) {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for (i, w) in cpuset.iter().enumerate() {
                    for b in 0..64 {
                        if w & (1 << b) != 0 && i * 64 + b < libc::CPU_SETSIZE as usize {
                            libc::CPU_SET(i * 64 + b, &mut set);
                        }
                    }
                }
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| {
        sdk_err!("urom_daemon", "cannot start {}: {e}", spec.bin.display());
        DocaError::NOT_FOUND
    })?;
    drop(wr);
    match read_port(&mut rd, Duration::from_secs(20)) {
        Ok(port) => Ok(Proc {
            child,
            port,
            gid: spec.gid,
            users: HashMap::new(),
        }),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

impl Proc {
    /// Whether the process has exited (reaps it).
    pub(crate) fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGTERM, then SIGKILL after `grace`; always reaps.
    pub(crate) fn terminate(&mut self, grace: Duration) {
        terminate_child(&mut self.child, grace);
    }
}

/// Stops a child process: SIGTERM, then SIGKILL after `grace`; always reaps. (Also what the
/// tests and benches use to stop the daemons they start.)
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
