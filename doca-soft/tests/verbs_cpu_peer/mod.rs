//! The other process of the two-process GPU verbs tests: the test binary re-executed as
//! `<exe> --exact verbs_child --ignored --nocapture` with `DOCA_SOFT_VERBS_CHILD=1` (and
//! `..._HANDLER`, `..._INLINE`). It builds one side as the samples do (context on `lo`, a
//! main QP and a core-direct companion QP, 4 MiB of registered host memory) and obeys line
//! commands on stdin; answers are the stdout lines marked `@@v `.
//!
//! | command | answer |
//! |---|---|
//! | (start) | `ready GID QPN CQPN ADDR KEY` (GID hex, ADDR hex) |
//! | `connect GID QPN CQPN` | `ok` (main to QPN, companion to CQPN) |
//! | `fill OFF LEN SEED` / `dump OFF LEN` / `u64 OFF` | `ok` / `data HEX` / `val N` |
//! | `recv OFF LEN N` | `ok T` (N receives of LEN bytes from OFF on; T the first ticket) |
//! | `rwait T MS` | `cqe HEX`, `err HEX` or `timeout` (receive CQE of ticket T) |
//! | `put LOFF RADDR RKEY LEN` | `cqe HEX` / `err HEX` / `timeout` (one put, waited) |
//! | `mirror_write N POFF RADDR RKEY` | `ok` at once; in the background: for i in 1..=N wait until local byte POFF is i, then write byte i to RADDR (write_lat's server) |
//! | `mirror_signal N FOFF SOFF DOFF LEN RADDR RKEY RFLAG RFKEY` | `ok`; background: for i in 1..=N wait until the local u64 FOFF is i, then put_signal LEN bytes from DOFF to RADDR with +1 at RFLAG (fetched to SOFF) (put_signal_lat's server) |
//! | `check_counter N COFF DOFF LEN` | `ok`; background: for k in 1..=N wait until the u64 at COFF is at least k, then check that block k-1 (LEN bytes at DOFF + (k-1)LEN) holds pattern(LEN, k) |
//! | `join` | `ok` or `fail TEXT` (the background job's result) |
//! | `state` | `state N` |

use super::verbs_cpu_support::*;
use doca_soft::testing::verbs::{cqe_fields, Addr, PollError};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Registered bytes of the child.
pub const MEM: usize = 4 << 20;

fn answer(s: String) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "\n@@v {s}");
    let _ = o.flush();
}

fn poll_str(r: Result<[u8; 64], PollError>) -> String {
    match r {
        Ok(c) => format!("cqe {}", hex(&c)),
        Err(PollError::Error(c)) => format!("err {}", hex(&c)),
        Err(PollError::Timeout) => "timeout".into(),
    }
}

/// Waits until `f` holds (bounded by [`T`]).
fn until(f: impl Fn() -> bool) -> bool {
    let end = Instant::now() + T;
    while !f() {
        if Instant::now() > end {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// The child's body (called by the ignored test when `DOCA_SOFT_VERBS_CHILD` is set).
pub fn child_main() {
    let handler: u32 = std::env::var("DOCA_SOFT_VERBS_CHILD_HANDLER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(handler::CPU_PROXY);
    let inline = std::env::var_os("DOCA_SOFT_VERBS_CHILD_INLINE").is_some();
    let base = Base::new();
    let mut mem = Mem::new(&base, MEM);
    let main = Qp::new(
        &base,
        QpOpts {
            sq: 1024,
            rq: 1024,
            handler,
            cqe_inline: inline,
            ..Default::default()
        },
    );
    let comp = Qp::new(
        &base,
        QpOpts {
            sq: 1024,
            rq: 0,
            handler,
            core_direct: true,
            ..Default::default()
        },
    );
    answer(format!(
        "ready {} {} {} {:x} {}",
        hex(&base.gid),
        main.qpn(),
        comp.qpn(),
        mem.addr(),
        mem.key
    ));
    let mut job: Option<std::thread::JoinHandle<Result<(), String>>> = None;
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> u64 { w[i].parse().expect("number") };
        let x = |i: usize| -> u64 { u64::from_str_radix(w[i], 16).expect("hex number") };
        match w.first().copied() {
            Some("connect") => {
                let gid: [u8; 16] = unhex(w[1]).try_into().expect("gid");
                main.connect(&base, gid, n(2) as u32, false);
                comp.connect(&base, gid, n(3) as u32, true);
                answer("ok".into());
            }
            Some("fill") => {
                let (off, len) = (n(1) as usize, n(2) as usize);
                mem.bytes_mut()[off..off + len].copy_from_slice(&pattern(len, n(3) as u8));
                answer("ok".into());
            }
            Some("dump") => answer(format!(
                "data {}",
                hex(&mem.read(n(1) as usize, n(2) as usize))
            )),
            Some("u64") => answer(format!("val {}", mem.u64_at(n(1) as usize))),
            Some("recv") => {
                let (off, len, cnt) = (n(1), n(2) as u32, n(3));
                let mut first = None;
                for i in 0..cnt {
                    let t = main
                        .dev
                        .recv(mem.at(off + i * len as u64), len, T)
                        .expect("recv");
                    first.get_or_insert(t);
                }
                answer(format!("ok {}", first.unwrap_or(0)));
            }
            Some("rwait") => {
                let ms = Duration::from_millis(n(2));
                answer(poll_str(main.dev.recv_wait(n(1), ms)));
            }
            Some("put") => {
                let r = Addr {
                    addr: x(2),
                    key: n(3) as u32,
                };
                let res = main
                    .dev
                    .put(r, mem.at(n(1)), n(4) as u32, T)
                    .and_then(|t| main.dev.wait(t, T));
                answer(poll_str(res));
            }
            Some("mirror_write") => {
                let (cnt, poff) = (n(1), n(2) as usize);
                let r = Addr {
                    addr: x(3),
                    key: n(4) as u32,
                };
                let (dev, src) = (main.dev, mem.at(poff as u64 + 4096));
                let p = mem.buf.as_ptr() as usize;
                job = Some(std::thread::spawn(move || {
                    for i in 1..=cnt {
                        // SAFETY: a byte of the child's registered memory.
                        let b = || unsafe { std::ptr::read_volatile((p + poff) as *const u8) };
                        if !until(|| b() == i as u8) {
                            return Err(format!("ping {i} never came"));
                        }
                        // SAFETY: the source byte of the child's memory.
                        unsafe { std::ptr::write_volatile((p + poff + 4096) as *mut u8, i as u8) };
                        let t = dev.put(r, src, 1, T).map_err(|e| format!("{e:?}"))?;
                        dev.wait(t, T).map_err(|e| format!("pong {i}: {e:?}"))?;
                    }
                    Ok(())
                }));
                answer("ok".into());
            }
            Some("mirror_signal") => {
                let (cnt, foff, soff, doff, len) = (n(1), n(2), n(3), n(4), n(5) as u32);
                let r = Addr {
                    addr: x(6),
                    key: n(7) as u32,
                };
                let rf = Addr {
                    addr: x(8),
                    key: n(9) as u32,
                };
                let (dev, sl, dl) = (main.dev, mem.at(soff), mem.at(doff));
                let p = mem.buf.as_ptr() as usize;
                job = Some(std::thread::spawn(move || {
                    for i in 1..=cnt {
                        // SAFETY: an aligned u64 of the child's registered memory.
                        let f = || unsafe {
                            std::ptr::read_volatile((p + foff as usize) as *const u64)
                        };
                        if !until(|| f() == i) {
                            return Err(format!("signal {i} never came (flag {})", f()));
                        }
                        let t = dev
                            .put_signal(r, dl, len, rf, sl, 1, T)
                            .map_err(|e| format!("{e:?}"))?;
                        dev.wait(t, T)
                            .map_err(|e| format!("signal back {i}: {e:?}"))?;
                    }
                    Ok(())
                }));
                answer("ok".into());
            }
            Some("check_counter") => {
                let (cnt, coff, doff, len) = (n(1), n(2) as usize, n(3) as usize, n(4) as usize);
                let p = mem.buf.as_ptr() as usize;
                job = Some(std::thread::spawn(move || {
                    for k in 1..=cnt {
                        // SAFETY: an aligned u64 of the child's registered memory.
                        let c = || unsafe { std::ptr::read_volatile((p + coff) as *const u64) };
                        if !until(|| c() >= k) {
                            return Err(format!("counter stuck at {}", c()));
                        }
                        let at = p + doff + (k as usize - 1) * len;
                        // SAFETY: inside the child's registered memory.
                        let got: Vec<u8> = (0..len)
                            .map(|i| unsafe { std::ptr::read_volatile((at + i) as *const u8) })
                            .collect();
                        if got != pattern(len, k as u8) {
                            return Err(format!("counter {k} visible before its data"));
                        }
                    }
                    Ok(())
                }));
                answer("ok".into());
            }
            Some("join") => match job.take().map(|j| j.join()) {
                Some(Ok(Ok(()))) => answer("ok".into()),
                Some(Ok(Err(e))) => answer(format!("fail {e}")),
                _ => answer("fail no job or it panicked".into()),
            },
            Some("state") => answer(format!("state {}", main.state())),
            Some("exit") | None => break,
            Some(other) => answer(format!("fail unknown command {other}")),
        }
    }
    drop(comp);
    drop(main);
}

/// The parent's handle of a child.
pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    pub gid: [u8; 16],
    pub qpn: u32,
    pub cqpn: u32,
    pub addr: u64,
    pub key: u32,
}

impl Peer {
    /// Starts a child with `handler` (and inline receives when `inline`).
    pub fn spawn(handler: u32, inline: bool) -> Peer {
        let exe = std::env::current_exe().expect("test binary");
        let mut cmd = Command::new(exe);
        cmd.args([
            "--exact",
            "verbs_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DOCA_SOFT_VERBS_CHILD", "1")
        .env("DOCA_SOFT_VERBS_CHILD_HANDLER", handler.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        if inline {
            cmd.env("DOCA_SOFT_VERBS_CHILD_INLINE", "1");
        }
        let mut child = cmd.spawn().expect("spawn the child");
        let stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = String::new();
            loop {
                buf.clear();
                match out.read_line(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if let Some(l) = buf.trim_end().strip_prefix("@@v ") {
                            if tx.send(l.to_owned()).is_err() {
                                break;
                            }
                        }
                    }
                }
            }
            let mut rest = Vec::new();
            let _ = out.read_to_end(&mut rest);
        });
        let first = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("child ready");
        let w: Vec<&str> = first.split_whitespace().collect();
        assert_eq!(w[0], "ready", "{first}");
        Peer {
            child,
            stdin,
            lines: rx,
            gid: unhex(w[1]).try_into().unwrap(),
            qpn: w[2].parse().unwrap(),
            cqpn: w[3].parse().unwrap(),
            addr: u64::from_str_radix(w[4], 16).unwrap(),
            key: w[5].parse().unwrap(),
        }
    }

    /// Sends a command and returns its answer.
    pub fn ask(&mut self, cmd: &str) -> String {
        writeln!(self.stdin, "{cmd}").expect("child stdin");
        self.stdin.flush().unwrap();
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no answer to {cmd}"))
    }

    /// Sends a command that must answer `ok`.
    pub fn ok(&mut self, cmd: &str) {
        let a = self.ask(cmd);
        assert_eq!(a, "ok", "{cmd}");
    }

    pub fn dump(&mut self, off: usize, len: usize) -> Vec<u8> {
        let a = self.ask(&format!("dump {off} {len}"));
        unhex(a.strip_prefix("data ").expect("data"))
    }

    pub fn u64_at(&mut self, off: usize) -> u64 {
        let a = self.ask(&format!("u64 {off}"));
        a.strip_prefix("val ").expect("val").parse().unwrap()
    }

    /// Its registered memory at `off`.
    pub fn at(&self, off: u64) -> Addr {
        Addr {
            addr: self.addr + off,
            key: self.key,
        }
    }

    /// Kills the child (a peer that goes away).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "exit");
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Parses a `cqe HEX` / `err HEX` answer: (is_error, opcode, counter, bytes, syndrome, raw).
pub fn parse_cqe(a: &str) -> (bool, u8, u16, u32, u8, [u8; 64]) {
    let (err, h) = if let Some(h) = a.strip_prefix("cqe ") {
        (false, h)
    } else if let Some(h) = a.strip_prefix("err ") {
        (true, h)
    } else {
        panic!("not a CQE: {a}");
    };
    let c: [u8; 64] = unhex(h).try_into().unwrap();
    let (op, ctr, bytes, synd) = cqe_fields(&c);
    (err, op, ctr, bytes, synd, c)
}
