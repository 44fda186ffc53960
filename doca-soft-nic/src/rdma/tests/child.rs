//! The other process of the multi-process tests: this test binary re-executed as
//! `<exe> --exact nic::tests::child::child_process --ignored --nocapture` with
//! `DOCA_SOFT_NIC_CHILD=<IPv4 to bind>`. It runs one NIC with one QP and 1 MiB of registered
//! memory (every right) and obeys line commands on stdin; its answers are the stdout lines
//! marked `@@nic ` (the test harness prints its own lines too). EOF on stdin ends it.
//!
//! | command | answer |
//! |---|---|
//! | (start) | `ready GID QPN ADDR KEY` (GID hex, ADDR hex) |
//! | `connect GID QPN` | `ok` |
//! | `fill OFF LEN SEED` | `ok` (bytes SEED + 7i) |
//! | `dump OFF LEN` | `data HEX` |
//! | `recv OFF LEN N` | `ok` (N receives of LEN bytes from OFF on) |
//! | `rcqe MS` / `scqe MS` | `cqe HEX` or `timeout` (next receive / send CQE) |
//! | `write RADDR RKEY OFF LEN N` | `ok` (N signaled writes of LEN bytes from OFF, rung) |
//! | `send OFF LEN` | `ok` (one signaled send, rung) |
//! | `events` | `events TEXT` |
//! | `exit` | (ends) |

use crate::rdma::api::Nic;
use crate::rdma::host::{self, HostMem, HostQp, Seg, Sizes};
use crate::rdma::mkey::{self, Access, MemKind};
use doca_test_support::netns::NetNs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::Ipv4Addr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Bytes of registered memory in every process of these tests.
pub(crate) const MEM: usize = 1 << 20;

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub(crate) fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

pub(crate) fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| seed.wrapping_add((i * 7) as u8)).collect()
}

#[test]
#[ignore = "the child process of the multi-process NIC tests (started by them)"]
fn child_process() {
    let Ok(bind) = std::env::var("DOCA_SOFT_NIC_CHILD") else {
        println!("not started as a child (DOCA_SOFT_NIC_CHILD unset): nothing to do");
        return;
    };
    let bind: Ipv4Addr = bind.parse().expect("bind address");
    let inline = std::env::var_os("DOCA_SOFT_NIC_CHILD_INLINE").is_some();
    let nic = Nic::start(bind).expect("start NIC");
    let mut q = HostQp::new(&nic, Sizes::default(), inline).expect("QP");
    let mut mem = HostMem::new(MEM).expect("memory");
    let all =
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC;
    let reg = mkey::register(mem.addr(), MEM as u64, all, MemKind::Host).expect("register");
    let out = |s: String| {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "\n@@nic {s}");
        let _ = o.flush();
    };
    out(format!(
        "ready {} {} {:x} {}",
        hex(&nic.gid()),
        q.qpn(),
        mem.addr(),
        reg.key()
    ));
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> u64 { w[i].parse().expect("number") };
        let x = |i: usize| -> u64 { u64::from_str_radix(w[i], 16).expect("hex number") };
        match w.first().copied() {
            Some("connect") => {
                let gid: [u8; 16] = unhex(w[1]).try_into().expect("gid");
                out(match q.qp().connect(&gid, n(2) as u32) {
                    Ok(()) => "ok".into(),
                    Err(e) => format!("err {e:?}"),
                });
            }
            Some("fill") => {
                let (off, len) = (n(1) as usize, n(2) as usize);
                mem.bytes_mut()[off..off + len].copy_from_slice(&pattern(len, n(3) as u8));
                out("ok".into());
            }
            Some("dump") => out(format!(
                "data {}",
                hex(&mem.read(n(1) as usize, n(2) as usize))
            )),
            Some("recv") => {
                let (off, len) = (n(1), n(2) as u32);
                for k in 0..n(3) {
                    q.post_recv(mem.addr() + off + k * len as u64, reg.key(), len);
                }
                out("ok".into());
            }
            Some(c @ ("rcqe" | "scqe")) => {
                let t = Duration::from_millis(n(1));
                let c = if c == "rcqe" {
                    q.poll_recv(t)
                } else {
                    q.poll_send(t)
                };
                out(c.map_or("timeout".into(), |c| format!("cqe {}", hex(&c))));
            }
            Some("write") => {
                let (raddr, rkey) = (x(1), n(2) as u32);
                let src = Seg {
                    addr: mem.addr() + n(3),
                    key: reg.key(),
                    len: n(4) as u32,
                };
                for _ in 0..n(5) {
                    q.post(|i, qpn| host::wqe_write(i, qpn, (raddr, rkey), &[src], None, true));
                }
                q.ring();
                out("ok".into());
            }
            Some("send") => {
                let src = Seg {
                    addr: mem.addr() + n(1),
                    key: reg.key(),
                    len: n(2) as u32,
                };
                q.post(|i, qpn| host::wqe_send(i, qpn, &[src], None, true));
                q.ring();
                out("ok".into());
            }
            Some("events") => out(format!("events {:?}", nic.take_events())),
            Some("exit") => break,
            _ => out(format!("err unknown command {line:?}")),
        }
    }
}

/// A running child and its pipes.
pub(crate) struct Peer {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// Its NIC's GID.
    pub gid: [u8; 16],
    /// Its QP.
    pub qpn: u32,
    /// Its registered memory.
    pub addr: u64,
    /// The key of that memory.
    pub key: u32,
}

impl Peer {
    /// Starts a child binding `bind`, inside network namespace `netns` when given, with
    /// extra environment `env`.
    pub(crate) fn spawn(bind: &str, netns: Option<&NetNs>, env: &[(&str, &str)]) -> Peer {
        let exe = std::env::current_exe().expect("test binary");
        let mut cmd = Command::new(&exe);
        if let Some(ns) = netns {
            // Its own /sys too: UCX lists the namespace's interfaces there.
            ns.enter(&mut cmd);
        }
        cmd.args([
            "--exact",
            "rdma::tests::child::child_process",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DOCA_SOFT_NIC_CHILD", bind)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn child");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            loop {
                line.clear();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        // libtest may print the test name on the same line first.
                        if let Some(at) = line.find("@@nic ") {
                            if tx.send(line[at + 6..].trim_end().to_string()).is_err() {
                                break;
                            }
                        }
                    }
                }
            }
            let _ = r.read_to_end(&mut Vec::new());
        });
        let ready = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("child ready line");
        let w: Vec<&str> = ready.split_whitespace().collect();
        assert_eq!(w[0], "ready", "{ready}");
        Peer {
            child,
            stdin,
            lines: rx,
            gid: unhex(w[1]).try_into().expect("gid"),
            qpn: w[2].parse().expect("qpn"),
            addr: u64::from_str_radix(w[3], 16).expect("addr"),
            key: w[4].parse().expect("key"),
        }
    }

    /// Sends one command and returns the answer.
    pub(crate) fn cmd(&mut self, c: &str) -> String {
        writeln!(self.stdin, "{c}").expect("write to child");
        self.stdin.flush().expect("flush");
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no answer to {c:?}"))
    }

    /// A command that must answer `@ok`.
    pub(crate) fn ok(&mut self, c: &str) {
        assert_eq!(self.cmd(c), "ok", "{c}");
    }

    /// The child's bytes at `off`.
    pub(crate) fn dump(&mut self, off: usize, len: usize) -> Vec<u8> {
        let a = self.cmd(&format!("dump {off} {len}"));
        unhex(a.strip_prefix("data ").expect("data answer"))
    }

    /// The next receive (`recv`) or send CQE, waiting up to `ms`.
    pub(crate) fn cqe(&mut self, recv: bool, ms: u64) -> Option<[u8; 64]> {
        let a = self.cmd(&format!("{} {ms}", if recv { "rcqe" } else { "scqe" }));
        a.strip_prefix("cqe ")
            .map(|h| unhex(h).try_into().expect("64 bytes"))
    }

    /// Kills the child at once (SIGKILL).
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // Closing stdin ends the child; give it a moment, then make sure.
        let _ = writeln!(self.stdin, "exit");
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill();
    }
}
