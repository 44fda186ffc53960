//! gpu_packet_processing's serving figures, measured on `lo` in a private network
//! namespace (examples/gpu_packet_processing/lo_net.rs), each next to the Linux kernel's
//! own answer to the same clients in the same run:
//!
//! * `gpp/http-get-rps/{gpu,python}/cN`: HTTP GET requests per second answered with N
//!   concurrent clients (kernel TCP sockets from 127.0.0.1, one keep-alive connection each,
//!   `GET /index.html`, the next request once the whole response arrived), by the GPU
//!   server (`gpu_packet_processing -s`, 127.0.0.2:80) and by a minimal Python HTTP/1.1
//!   server on 127.0.0.1 (`http.server`, threaded, fixed body) as the baseline.
//! * `gpp/icmp-rtt-{p50,p99}/{gpu,linux}`: echo round-trip time from a raw ICMP socket,
//!   one request at a time: answered by the GPU (127.0.0.2) and by Linux's own ICMP echo
//!   (127.0.0.1) as the baseline.
//!
//! The example binary is looked for in `GPP_EXAMPLE`, `DOCA_RS_EXAMPLES`, next to this
//! binary, and in `target/release/examples`. Without a GPU, root or the binary, every
//! figure prints as skipped with the reason.

mod support;

#[path = "../examples/gpu_packet_processing/lo_net.rs"]
mod lo_net;

use clap::Parser;
use std::io::{Read, Write};
use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::args::{self, Common};
use support::report::{gpu_present, gpu_skip_reason, Figure};

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "gpp_http",
    about = "gpu_packet_processing's HTTP server and ICMP echo against Linux's on lo"
)]
struct Cli {
    /// Concurrent HTTP clients per figure (default 1,4,16; --quick 1,4)
    #[arg(long, value_delimiter = ',')]
    clients: Option<Vec<usize>>,
    /// Seconds per HTTP figure (default 3; --quick 1)
    #[arg(long)]
    seconds: Option<f64>,
    /// ICMP echo requests per figure (default 1000; --quick 200)
    #[arg(long)]
    pings: Option<usize>,
    #[command(flatten)]
    common: Common,
}

/// The baseline server: HTTP/1.1 keep-alive, one thread per connection, a fixed page.
const PY_SERVER: &str = r#"
import http.server, socketserver, sys
BODY = b"<html><body><h1>baseline</h1></body></html>" * 8
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=UTF-8")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"#;

fn example_binary() -> Option<PathBuf> {
    let name = "gpu_packet_processing";
    let mut cands: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("GPP_EXAMPLE") {
        cands.push(PathBuf::from(p));
    }
    if let Some(d) = std::env::var_os("DOCA_RS_EXAMPLES") {
        cands.push(PathBuf::from(d).join(name));
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            cands.push(dir.join(name));
            cands.push(dir.join("../examples").join(name));
        }
    }
    cands.push(PathBuf::from("target/release/examples").join(name));
    cands.into_iter().find(|p| p.is_file())
}

/// A child process killed (and reaped) on drop.
struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads one HTTP response (headers, then Content-Length bytes) from `s`.
fn read_response(s: &mut std::net::TcpStream, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buf[..end]).unwrap_or("");
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| std::io::Error::other("no Content-Length"))?;
            if buf.len() >= end + 4 + len {
                return Ok(());
            }
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::Error::other("connection closed"));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Requests per second from `clients` keep-alive clients for `secs` against `to`
/// (connections from 127.0.0.1), and the failures.
fn http_rps(to: SocketAddrV4, clients: usize, secs: f64) -> (f64, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let req = b"GET /index.html HTTP/1.1\r\nHost: bench\r\n\r\n";
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let (stop, done, failed) = (stop.clone(), done.clone(), failed.clone());
            std::thread::spawn(move || {
                let Ok(mut s) = lo_net::connect_from_client(to, Duration::from_secs(2)) else {
                    failed.fetch_add(1, Ordering::Relaxed);
                    return;
                };
                let mut buf = Vec::with_capacity(8192);
                while !stop.load(Ordering::Relaxed) {
                    if s.write_all(req).is_err() || read_response(&mut s, &mut buf).is_err() {
                        failed.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    // Measure after the connections are up (a short warm-up).
    std::thread::sleep(Duration::from_millis(300));
    let (n0, t0) = (done.load(Ordering::Relaxed), Instant::now());
    std::thread::sleep(Duration::from_secs_f64(secs));
    let (n1, dt) = (done.load(Ordering::Relaxed), t0.elapsed().as_secs_f64());
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    ((n1 - n0) as f64 / dt, failed.load(Ordering::Relaxed))
}

/// Echo round-trip times in microseconds (sorted) for `n` requests to `dst`, one at a time;
/// lost requests (no reply within 1 s) are counted apart.
fn icmp_rtts(dst: [u8; 4], n: usize) -> std::io::Result<(Vec<f64>, usize)> {
    // SAFETY: plain socket(2); the descriptor is owned below.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::IPPROTO_ICMP,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    let sock: std::os::fd::OwnedFd = unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) };
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 20_000,
    };
    // SAFETY: valid option value for SO_RCVTIMEO.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as u32,
        )
    };
    let to = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(dst),
        },
        sin_zero: [0; 8],
    };
    let id = (std::process::id() & 0xffff) as u16;
    let (mut rtts, mut lost) = (Vec::with_capacity(n), 0);
    let mut buf = [0u8; 2048];
    for seq in 0..n as u16 {
        let mut m = vec![8u8, 0, 0, 0];
        m.extend_from_slice(&id.to_be_bytes());
        m.extend_from_slice(&seq.to_be_bytes());
        m.extend_from_slice(&[0x5a; 56]);
        let mut sum: u32 = m
            .chunks(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .sum();
        while sum >> 16 != 0 {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        m[2..4].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        let t0 = Instant::now();
        // SAFETY: `m` and `to` are valid for the call.
        let r = unsafe {
            libc::sendto(
                std::os::fd::AsRawFd::as_raw_fd(&sock),
                m.as_ptr().cast(),
                m.len(),
                0,
                (&to as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as u32,
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let got = loop {
            if t0.elapsed() > Duration::from_secs(1) {
                break false;
            }
            // SAFETY: `buf` is writable for its length.
            let k = unsafe {
                libc::recv(
                    std::os::fd::AsRawFd::as_raw_fd(&sock),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    0,
                )
            };
            if k < 28 {
                continue;
            }
            let p = &buf[..k as usize];
            let ihl = usize::from(p[0] & 0x0f) * 4;
            if p.len() >= ihl + 8
                && p[12..16] == dst
                && p[ihl] == 0
                && p[ihl + 4..ihl + 6] == id.to_be_bytes()
                && p[ihl + 6..ihl + 8] == seq.to_be_bytes()
            {
                break true;
            }
        };
        if got {
            rtts.push(t0.elapsed().as_secs_f64() * 1e6);
        } else {
            lost += 1;
        }
    }
    rtts.sort_by(f64::total_cmp);
    Ok((rtts, lost))
}

fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn skip_all(clients: &[usize], why: &str) {
    for c in clients {
        Figure::skipped(format!("gpp/http-get-rps/gpu/c{c}"), None, why).emit();
    }
    for p in ["p50", "p99"] {
        Figure::skipped(format!("gpp/icmp-rtt-{p}/gpu"), None, why).emit();
    }
}

fn main() {
    let a: Cli = args::parse();
    let c = &a.common;
    let clients: Vec<usize> = a
        .clients
        .clone()
        .unwrap_or_else(|| c.pick(vec![1, 4], vec![1, 4, 16]));
    let secs: f64 = a.seconds.unwrap_or(c.pick(1.0, 3.0));
    let pings: usize = a.pings.unwrap_or(c.pick(200, 1000));
    // First, before any other thread: the private network.
    if let Err(e) = lo_net::private_lo() {
        return skip_all(
            &clients,
            &format!("no private network namespace (needs root): {e}"),
        );
    }
    let py_port = 18080u16;
    let python = Command::new("python3")
        .args(["-c", PY_SERVER, &py_port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
        .map(Kid);
    let py = SocketAddrV4::new(lo_net::CLIENT_IP.into(), py_port);
    if python.is_some() {
        // Wait until it listens (bounded).
        let t0 = Instant::now();
        while lo_net::connect_from_client(py, Duration::from_millis(200)).is_err()
            && t0.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // The baselines, measured in every run (they need no GPU).
    let mut base_rps = Vec::new();
    for &c in &clients {
        let b = python.as_ref().map(|_| http_rps(py, c, secs));
        match b {
            Some((v, 0)) => {
                Figure::info(
                    format!("gpp/http-get-rps/python/c{c}"),
                    v,
                    "req/s",
                    format!("baseline: Python http.server (HTTP/1.1, threaded) on 127.0.0.1; {c} keep-alive clients, {secs} s"),
                )
                .emit();
                base_rps.push(Some(v));
            }
            Some((_, failed)) => {
                Figure::skipped(
                    format!("gpp/http-get-rps/python/c{c}"),
                    None,
                    format!("{failed} clients failed"),
                )
                .emit();
                base_rps.push(None);
            }
            None => {
                Figure::skipped(format!("gpp/http-get-rps/python/c{c}"), None, "no python3").emit();
                base_rps.push(None);
            }
        }
    }
    let linux_rtt = icmp_rtts(lo_net::CLIENT_IP, pings);
    if let Ok((k, kl)) = &linux_rtt {
        for (p, q) in [("p50", 0.5), ("p99", 0.99)] {
            Figure::info(
                format!("gpp/icmp-rtt-{p}/linux"),
                pct(k, q),
                "us",
                format!("baseline: Linux's ICMP echo on lo; {pings} requests, one at a time, raw ICMP socket; lost {kl}"),
            )
            .emit();
        }
    }
    if !gpu_present() {
        return skip_all(&clients, &gpu_skip_reason("a CUDA driver"));
    }
    let Some(bin) = example_binary() else {
        return skip_all(&clients, "gpu_packet_processing not found (GPP_EXAMPLE, DOCA_RS_EXAMPLES, cargo build --release --examples)");
    };
    let ready = std::env::temp_dir().join(format!("gpp-bench-{}.ready", std::process::id()));
    let _ = std::fs::remove_file(&ready);
    let app = Command::new(&bin)
        .args(["-g", "0", "-n", "lo", "-q", "1", "-s", "--ready-file"])
        .arg(&ready)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(Kid);
    let Ok(mut app) = app else {
        return skip_all(&clients, &format!("cannot start {}", bin.display()));
    };
    let t0 = Instant::now();
    while !ready.exists() {
        if t0.elapsed() > Duration::from_secs(120) || matches!(app.0.try_wait(), Ok(Some(_))) {
            return skip_all(
                &clients,
                "gpu_packet_processing did not start (run it by hand to see why)",
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let gpu = SocketAddrV4::new(lo_net::SERVER_IP.into(), 80);
    for (&c, base) in clients.iter().zip(&base_rps) {
        let (rps, failed) = http_rps(gpu, c, secs);
        let mut f = Figure::info(
            format!("gpp/http-get-rps/gpu/c{c}"),
            rps,
            "req/s",
            format!("{c} keep-alive clients, GET /index.html, {secs} s; failed clients {failed}; GPU server on lo (software NIC: AF_PACKET lanes and TX proxy threads)"),
        );
        if let Some(b) = base {
            f = f.with_baseline(format!("gpp/http-get-rps/python/c{c}"), *b);
        }
        f.emit();
    }
    match (icmp_rtts(lo_net::SERVER_IP, pings), &linux_rtt) {
        (Ok((g, gl)), Ok((k, _))) => {
            for (p, q) in [("p50", 0.5), ("p99", 0.99)] {
                Figure::info(
                    format!("gpp/icmp-rtt-{p}/gpu"),
                    pct(&g, q),
                    "us",
                    format!("{pings} echo requests of 56 data bytes, one at a time, raw ICMP socket; lost {gl}"),
                )
                .with_baseline(format!("gpp/icmp-rtt-{p}/linux"), pct(k, q))
                .emit();
            }
        }
        (g, k) => {
            let e = match (g, k) {
                (Err(e), _) => e.to_string(),
                (_, Err(e)) => e.to_string(),
                _ => String::new(),
            };
            for p in ["p50", "p99"] {
                Figure::skipped(
                    format!("gpp/icmp-rtt-{p}/gpu"),
                    None,
                    format!("raw ICMP socket: {e}"),
                )
                .emit();
            }
        }
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(app.0.id() as i32, libc::SIGINT) };
    let t1 = Instant::now();
    while t1.elapsed() < Duration::from_secs(60) && !matches!(app.0.try_wait(), Ok(Some(_))) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_file(&ready);
    drop(python);
}
