//! gpu_packet_processing end to end with real clients on `lo`.
//!
//! Each scenario runs in a private network namespace (nothing on the host changes), made
//! without `ip` (plain syscalls and ioctls): `lo` up with 127.0.0.1/32 only, a route
//! 127.0.0.2/32 over `lo`, and frames injected on `lo` accepted (`route_localnet`,
//! `accept_local`). The server address 127.0.0.2 is then not local: the kernel neither
//! answers echo requests for it nor resets TCP SYNs to it (a looped packet to a non-local
//! address is discarded), so real clients get their answers only from the application.
//! Clients: `ping -I 127.0.0.1`, `curl --interface 127.0.0.1`, Python's `http.client`
//! (whichever this machine has), real UDP sockets for DNS and other UDP, and raw-socket
//! clients (AF_PACKET) whose frames carry unicast MACs that `lo` does not own, so the
//! kernel ignores them and their replies, for exact byte-level checks. A sniffer records
//! what the clients sent, and the statistics block must count exactly that.
//!
//! * `clients_get_answers_from_the_host_model` (any machine with root): the same clients
//!   against a stand-in that answers with the example's own packet code on the CPU: proves
//!   the namespace, the clients and the frame builders work together (curl and ping accept
//!   the replies) before a GPU is involved.
//! * `http_server_mode_answers_real_clients` and
//!   `without_http_server_the_tcp_kernel_classifies_everything` (GPU machine): the example
//!   itself (`-n lo`), checked replies, statistics, log lines and exit status.
//!
//! Without root (or where namespaces are refused) the tests print why and skip; without a
//! CUDA driver the GPU tests skip. Every step has a timeout; the whole file runs in well
//! under two minutes.

mod support;

#[path = "../examples/gpu_packet_processing/http_pages.rs"]
mod http_pages;
#[path = "../examples/gpu_packet_processing/lo_net.rs"]
mod netns;
#[path = "../examples/gpu_packet_processing/packets.rs"]
mod packets;
#[path = "../examples/common/raw_socket.rs"]
mod raw_socket;
#[path = "../examples/gpu_packet_processing/tcp_sessions.rs"]
mod tcp_sessions;

use doca_test_support::{require_cuda, require_raw_sockets};
use raw_socket::RawSocket;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{example, ready_path, Finished, Proc};

const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const CLIENT_IP: [u8; 4] = [127, 0, 0, 1];
const SERVER_IP: [u8; 4] = [127, 0, 0, 2];
const HTTP_PORT: u16 = 80;

fn say(msg: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{msg}");
}

// ------------------------------------------------------------------ private namespace

/// Runs `f` on a new thread inside a private namespace; Err(reason) when one cannot be
/// made. A panic in `f` is re-raised.
fn in_private_net<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let h = std::thread::spawn(move || -> Result<T, String> {
        netns::private_lo().map_err(|e| e.to_string())?;
        Ok(f())
    });
    match h.join() {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    }
}

// ------------------------------------------------------------------ frames (test's own)

fn csum(b: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn sums_to_ffff(b: &[u8]) -> bool {
    csum(b) == 0
}

fn ipv4(proto: u8, payload_len: usize) -> Vec<u8> {
    let mut h = vec![0u8; 20];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&((20 + payload_len) as u16).to_be_bytes());
    h[6] = 0x40;
    h[8] = 64;
    h[9] = proto;
    h[12..16].copy_from_slice(&CLIENT_IP);
    h[16..20].copy_from_slice(&SERVER_IP);
    let c = csum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h
}

fn frame(proto: u8, l4: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(34 + l4.len());
    f.extend_from_slice(&SERVER_MAC);
    f.extend_from_slice(&CLIENT_MAC);
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&ipv4(proto, l4.len()));
    f.extend_from_slice(l4);
    f
}

fn icmp_echo(id: u16, seq: u16, data_len: usize) -> Vec<u8> {
    let mut m = vec![8u8, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend((0..data_len).map(|i| (i as u8).wrapping_mul(13).wrapping_add(seq as u8)));
    let c = csum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    frame(1, &m)
}

fn tcp(sport: u16, seq: u32, ack: u32, flags: u8, opts: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&HTTP_PORT.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.push((((20 + opts.len()) / 4) as u8) << 4);
    t.push(flags);
    t.extend_from_slice(&502u16.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 0]);
    t.extend_from_slice(opts);
    t.extend_from_slice(payload);
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&CLIENT_IP);
    pseudo.extend_from_slice(&SERVER_IP);
    pseudo.extend_from_slice(&[0, 6]);
    pseudo.extend_from_slice(&(t.len() as u16).to_be_bytes());
    pseudo.extend_from_slice(&t);
    let c = csum(&pseudo);
    t[16..18].copy_from_slice(&c.to_be_bytes());
    frame(6, &t)
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// IPv4 from the server to the raw client (its MAC) with protocol `proto`.
fn from_server(f: &[u8], proto: u8) -> bool {
    f.len() >= 34
        && f[0..6] == CLIENT_MAC
        && f[12..14] == [0x08, 0x00]
        && f[23] == proto
        && f[26..30] == SERVER_IP
        && f[30..34] == CLIENT_IP
}

/// Waits up to `t` for a frame satisfying `pred`.
fn wait_for(sock: &RawSocket, t: Duration, pred: impl Fn(&[u8]) -> bool) -> Option<Vec<u8>> {
    let end = Instant::now() + t;
    let mut buf = vec![0u8; 16384];
    while Instant::now() < end {
        if let Ok(Some((n, _))) = sock.recv(&mut buf) {
            if pred(&buf[..n]) {
                return Some(buf[..n].to_vec());
            }
        }
    }
    None
}

fn tcp_to(f: &[u8], port: u16) -> bool {
    from_server(f, 6) && be16(f, 34) == HTTP_PORT && be16(f, 36) == port
}

fn tcp_checksum_ok(f: &[u8]) -> bool {
    let ip_len = usize::from(be16(f, 16));
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&f[26..34]);
    pseudo.extend_from_slice(&[0, 6]);
    pseudo.extend_from_slice(&((ip_len - 20) as u16).to_be_bytes());
    pseudo.extend_from_slice(&f[34..14 + ip_len]);
    sums_to_ffff(&pseudo)
}

fn raw_socket() -> RawSocket {
    let s = RawSocket::open("lo").expect("raw socket on lo");
    s.set_timeout(Duration::from_millis(20)).unwrap();
    s
}

// ------------------------------------------------------------------ sniffer

/// Records the frames clients send to the server address while it runs.
struct Sniffer {
    stop: Arc<AtomicBool>,
    h: std::thread::JoinHandle<Vec<Vec<u8>>>,
}

impl Sniffer {
    fn start() -> Sniffer {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let sock = raw_socket();
        let h = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut buf = vec![0u8; 16384];
            while !s.load(Ordering::Relaxed) {
                if let Ok(Some((n, _))) = sock.recv(&mut buf) {
                    let f = &buf[..n];
                    if n >= 34 && f[12..14] == [8, 0] && f[30..34] == SERVER_IP {
                        got.push(f.to_vec());
                    }
                }
            }
            got
        });
        // Let it start receiving.
        std::thread::sleep(Duration::from_millis(100));
        Sniffer { stop, h }
    }

    fn stop(self) -> Vec<Vec<u8>> {
        std::thread::sleep(Duration::from_millis(300));
        self.stop.store(true, Ordering::Relaxed);
        self.h.join().expect("sniffer")
    }
}

/// What the UDP and TCP kernels must count for `frames` sent to the server: ([DNS,
/// OTHER, TOTAL], [HTTP, HEAD, GET, POST, SYN, FIN, ACK, OTHER, TOTAL]). `http_server`:
/// frames with SYN, FIN or RST go to the CPU, and only sessions' frames reach the GPU
/// (`late` lists (client port, seq) of segments sent after a session closed).
fn expected_counts(
    frames: &[Vec<u8>],
    http_server: bool,
    late: &[(u16, u32)],
) -> ([i64; 3], [i64; 9]) {
    let (mut udp, mut tcp) = ([0i64; 3], [0i64; 9]);
    for f in frames {
        match f[23] {
            17 => {
                let dns = f[14] == 0x45 && be16(f, 36) == 53;
                udp[if dns { 0 } else { 1 }] += 1;
                udp[2] += 1;
            }
            6 => {
                let hl = 34 + 4 * usize::from(f[46] >> 4);
                let end = (14 + usize::from(be16(f, 16))).min(f.len());
                let payload = if hl <= end { &f[hl..end] } else { &[][..] };
                let flags = f[47];
                if http_server && (flags & 0x07 != 0 || late.contains(&(be16(f, 34), be32(f, 38))))
                {
                    continue;
                }
                let k = if payload.starts_with(b"GET /") {
                    2
                } else if payload.starts_with(b"HEAD /") {
                    1
                } else if payload.starts_with(b"POST /") {
                    3
                } else if payload.starts_with(b"HTTP/1.1") {
                    0
                } else if flags & 0x01 != 0 {
                    5
                } else if flags & 0x02 != 0 {
                    4
                } else if flags & 0x10 != 0 {
                    6
                } else {
                    7
                };
                tcp[k] += 1;
                tcp[8] += 1;
            }
            _ => {}
        }
    }
    (udp, tcp)
}

// ------------------------------------------------------------------ clients

/// Raw echo requests of several sizes; every one must get exactly the reply the host
/// model computes. Returns how many were answered.
fn icmp_raw(sock: &RawSocket) -> usize {
    let sizes = [0usize, 56, 200, 400, 440];
    for (seq, &n) in sizes.iter().enumerate() {
        let req = icmp_echo(0x4747, seq as u16, n);
        sock.send(&req).unwrap();
        let reply = wait_for(sock, Duration::from_secs(3), |f| {
            from_server(f, 1)
                && f.len() >= 42
                && f[34] == 0
                && be16(f, 38) == 0x4747
                && be16(f, 40) == seq as u16
        })
        .unwrap_or_else(|| panic!("no echo reply to seq {seq} ({n} data bytes)"));
        let mut expected = packets::icmp_echo_reply(&req).expect("a valid request");
        packets::fill_ipv4_checksum(&mut expected);
        assert_eq!(reply, expected, "echo reply to seq {seq}");
        assert_eq!(reply[22], 128, "TTL 128");
        assert!(sums_to_ffff(&reply[14..34]), "IPv4 checksum");
        assert!(sums_to_ffff(&reply[34..]), "ICMP checksum");
    }
    sizes.len()
}

fn find_tool(names: &[&str]) -> Option<String> {
    let path = std::env::var("PATH").unwrap_or_default();
    for n in names {
        for dir in path
            .split(':')
            .chain(["/usr/bin", "/bin", "/usr/sbin", "/sbin"])
        {
            let p = std::path::Path::new(dir).join(n);
            if p.is_file() {
                return Some(p.to_string_lossy().to_string());
            }
        }
    }
    None
}

/// Runs `cmd` under `timeout`, returning stdout (and asserting it exited 0).
fn run_tool(secs: u32, cmd: &[&str]) -> String {
    let out = std::process::Command::new("timeout")
        .arg(secs.to_string())
        .args(cmd)
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({:?}):\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `ping` (3 echo requests); every reply must come from the application (TTL 128) with
/// a valid checksum. None when this machine has no ping.
fn ping_client() -> Option<usize> {
    let Some(ping) = find_tool(&["ping"]) else {
        say("note: no ping here; the raw-socket echo client covers ICMP");
        return None;
    };
    let text = run_tool(
        20,
        &[
            &ping,
            "-n",
            "-c",
            "3",
            "-i",
            "0.3",
            "-W",
            "3",
            "-I",
            "127.0.0.1",
            "127.0.0.2",
        ],
    );
    assert!(
        !text.contains("BAD CHECKSUM"),
        "ping saw a bad checksum:\n{text}"
    );
    assert!(!text.contains("DUP"), "duplicate replies:\n{text}");
    assert!(
        text.contains(" 3 received") || text.contains(" 3 packets received"),
        "ping:\n{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.contains("ttl=128")).count(),
        3,
        "{text}"
    );
    Some(3)
}

/// The pages real HTTP clients ask for, with the status each must get.
const PAGES: [(&str, u16); 3] = [
    ("/index.html", 200),
    ("/contacts.html", 200),
    ("/missing.html", 404),
];

/// `curl` GETs every page; returns the number of requests, None without curl.
fn curl_client() -> Option<usize> {
    let Some(curl) = find_tool(&["curl"]) else {
        say("note: no curl here");
        return None;
    };
    for (path, code) in PAGES {
        let url = format!("http://127.0.0.2{path}");
        let text = run_tool(
            15,
            &[
                &curl,
                "-sS",
                "--max-time",
                "5",
                "--interface",
                "127.0.0.1",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code} %{size_download} %{http_version}",
                &url,
            ],
        );
        let mut it = text.split_whitespace();
        assert_eq!(
            it.next(),
            Some(code.to_string().as_str()),
            "curl {path}: {text}"
        );
        let size: usize = it.next().unwrap().parse().unwrap();
        assert!(size > 0, "curl {path}: empty body");
        assert_eq!(it.next(), Some("1.1"), "curl {path}: HTTP version");
    }
    Some(PAGES.len())
}

/// Python's http.client GETs every page (its own connection each); None without python3.
fn python_client() -> Option<usize> {
    let Some(py) = find_tool(&["python3"]) else {
        say("note: no python3 here");
        return None;
    };
    let script = r#"
import http.client, sys
for path in sys.argv[1:]:
    c = http.client.HTTPConnection("127.0.0.2", 80, timeout=5, source_address=("127.0.0.1", 0))
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    assert r.version == 11, r.version
    assert int(r.getheader("Content-Length")) == len(body)
    print(r.status, len(body))
    c.close()
"#;
    let mut args = vec![py.as_str(), "-c", script];
    args.extend(PAGES.iter().map(|p| p.0));
    let text = run_tool(30, &args);
    let codes: Vec<u16> = text
        .lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        codes,
        PAGES.iter().map(|p| p.1).collect::<Vec<_>>(),
        "python:\n{text}"
    );
    Some(PAGES.len())
}

/// Real UDP sockets: `dns` DNS queries to port 53 and `other` datagrams to port 5300.
fn udp_client(dns: usize, other: usize) {
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in ["example", "invalid"] {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    for _ in 0..dns {
        client.send_to(&q, "127.0.0.2:53").unwrap();
    }
    for i in 0..other {
        client.send_to(&[i as u8; 100], "127.0.0.2:5300").unwrap();
    }
}

const SYN_OPTS: [u8; 20] = [
    2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 7,
];

/// One HTTP exchange over the raw TCP client, checked field by field. Returns the
/// response payload and the (port, seq) of the segment it sends after closing.
fn raw_http_get(sock: &RawSocket, port: u16, path: &str) -> (Vec<u8>, (u16, u32)) {
    let isn: u32 = 0x1000_0000 + u32::from(port) * 7919;
    sock.send(&tcp(port, isn, 0, 0x02, &SYN_OPTS, b"")).unwrap();
    let sa = wait_for(sock, Duration::from_secs(3), |f| {
        tcp_to(f, port) && f[47] & 0x02 != 0
    })
    .unwrap_or_else(|| panic!("no SYN-ACK for port {port}"));
    let syn = tcp(port, isn, 0, 0x02, &SYN_OPTS, b"");
    let v = packets::parse_tcp(&syn).unwrap();
    let mut expected = packets::build_cpu_reply(&v, true, be32(&sa, 62), 7);
    packets::fill_ipv4_checksum(&mut expected);
    packets::fill_tcp_checksum(&mut expected);
    assert_eq!(sa, expected, "SYN-ACK (TSval aside, byte for byte)");
    assert_eq!(
        (be32(&sa, 38), be32(&sa, 42), sa[47]),
        (1000, isn + 1, 0x12)
    );
    assert_eq!(be32(&sa, 66), 7, "TSecr = our TSval");
    assert!(
        sums_to_ffff(&sa[14..34]) && tcp_checksum_ok(&sa),
        "SYN-ACK checksums"
    );
    let (seq, ack) = (isn + 1, 1001);
    sock.send(&tcp(port, seq, ack, 0x10, &[], b"")).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.2\r\nUser-Agent: gpp-e2e\r\n\r\n");
    sock.send(&tcp(port, seq, ack, 0x18, &[], req.as_bytes()))
        .unwrap();
    let resp = wait_for(sock, Duration::from_secs(3), |f| {
        tcp_to(f, port) && usize::from(be16(f, 16)) > 40
    })
    .unwrap_or_else(|| panic!("no HTTP response for {path}"));
    assert_eq!(resp[47], 0x18, "PSH|ACK");
    assert_eq!(be32(&resp, 38), ack, "seq = the request's ack");
    assert_eq!(
        be32(&resp, 42),
        seq + req.len() as u32,
        "ack = seq + request length"
    );
    assert_eq!((resp[22], be16(&resp, 48)), (60, 6000), "TTL, window");
    assert!(
        sums_to_ffff(&resp[14..34]) && tcp_checksum_ok(&resp),
        "response checksums"
    );
    let ip_len = usize::from(be16(&resp, 16));
    assert_eq!(resp.len(), 14 + ip_len, "one frame, no padding");
    let payload = resp[54..].to_vec();
    let seq2 = seq + req.len() as u32;
    let ack2 = ack + payload.len() as u32;
    sock.send(&tcp(port, seq2, ack2, 0x10, &[], b"")).unwrap();
    sock.send(&tcp(port, seq2, ack2, 0x11, &[], b"")).unwrap();
    let fin_ack = wait_for(sock, Duration::from_secs(3), |f| {
        tcp_to(f, port) && f[47] == 0x10 && be32(f, 42) == seq2 + 1
    });
    let fin_ack = fin_ack.unwrap_or_else(|| panic!("no ACK for the FIN of port {port}"));
    assert_eq!(be32(&fin_ack, 38), ack2, "FIN's ACK seq = our ack");
    // The session is gone: a late segment must not reach the GPU.
    std::thread::sleep(Duration::from_millis(100));
    sock.send(&tcp(port, seq2 + 1, ack2, 0x10, &[], b""))
        .unwrap();
    (payload, (port, seq2 + 1))
}

/// Status code of an HTTP/1.1 response, checked: status line, Content-Length = body.
fn check_http(resp: &[u8]) -> u16 {
    let text = std::str::from_utf8(resp).expect("ASCII response");
    let (head, body) = text.split_once("\r\n\r\n").expect("end of headers");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap();
    assert!(status.starts_with("HTTP/1.1 "), "{status}");
    let len: usize = lines
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("Content-Length")
        .parse()
        .unwrap();
    assert_eq!(len, body.len(), "Content-Length vs body:\n{text}");
    status[9..12].parse().unwrap()
}

/// What the traffic phase did.
#[derive(Default)]
struct Sent {
    icmp_replies: usize,
    http_requests: usize,
    late: Vec<(u16, u32)>,
    frames: Vec<Vec<u8>>,
    real_http: bool,
}

/// The clients of the HTTP-server scenarios: echo (raw and ping), UDP, HTTP (raw, curl,
/// Python), with the sniffer recording what reached the server address.
fn http_clients(sock: &RawSocket) -> Sent {
    let mut s = Sent::default();
    let sniff = Sniffer::start();
    s.icmp_replies += icmp_raw(sock);
    s.icmp_replies += ping_client().unwrap_or(0);
    udp_client(4, 3);
    for (i, (path, code)) in PAGES.iter().enumerate() {
        let (resp, late) = raw_http_get(sock, 41000 + i as u16, path);
        assert_eq!(check_http(&resp), *code, "{path}");
        s.late.push(late);
        s.http_requests += 1;
    }
    for n in [curl_client(), python_client()].into_iter().flatten() {
        s.http_requests += n;
        s.real_http = true;
    }
    if !s.real_http {
        say("note: neither curl nor python3 here: HTTP checked with the raw client only");
    }
    s.frames = sniff.stop();
    s
}

// ------------------------------------------------------------------ stand-in server

/// Answers on `lo` as the application does, with the example's own packet code on the
/// CPU (checksums filled as the offloads would), until `stop`.
fn host_model(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    struct NoFlow;
    impl tcp_sessions::Offload for NoFlow {
        type Entry = ();
        fn enable(&mut self, _: &tcp_sessions::SessionKey) -> Result<(), String> {
            Ok(())
        }
        fn disable(&mut self, _: ()) -> Result<(), String> {
            Ok(())
        }
    }
    let sock = raw_socket();
    std::thread::spawn(move || {
        let mut table = tcp_sessions::SessionTable::new(tcp_sessions::TCP_SESSION_MAX_ENTRIES);
        let mut buf = vec![0u8; 16384];
        let mut answered = 0;
        while !stop.load(Ordering::Relaxed) {
            let Ok(Some((n, _))) = sock.recv(&mut buf) else {
                continue;
            };
            let f = &buf[..n];
            if n < 34 || f[12..14] != [8, 0] {
                continue;
            }
            let reply = match f[23] {
                1 => packets::icmp_echo_reply(f),
                6 => match packets::parse_tcp(f) {
                    Ok(v) if v.flags & 0x07 != 0 => {
                        let out = tcp_sessions::handle_frame(
                            f,
                            &mut table,
                            &mut NoFlow,
                            0x6500_0000,
                            &mut |_, _| {},
                        );
                        out.reply().map(<[u8]>::to_vec)
                    }
                    Ok(v) if table.contains(&tcp_sessions::SessionKey::of(&v)) => {
                        packets::info_http_of(f).map(|info| {
                            let page = [
                                cuda_kernels::HttpPage::Index,
                                cuda_kernels::HttpPage::Contacts,
                                cuda_kernels::HttpPage::NotFound,
                            ][info.page as usize];
                            let mut r = packets::http_response_frame(&http_pages::response(page));
                            packets::fill_http_reply(&mut r, &info);
                            r
                        })
                    }
                    _ => None,
                },
                _ => None,
            };
            if let Some(mut r) = reply {
                packets::fill_ipv4_checksum(&mut r);
                if r[23] == 6 {
                    packets::fill_tcp_checksum(&mut r);
                }
                sock.send(&r).unwrap();
                answered += 1;
            }
        }
        answered
    })
}

#[test]
fn clients_get_answers_from_the_host_model() {
    if !require_raw_sockets() {
        return;
    }
    let r = in_private_net(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let server = host_model(stop.clone());
        let sock = raw_socket();
        let sent = http_clients(&sock);
        stop.store(true, Ordering::Relaxed);
        let answered = server.join().expect("stand-in server");
        (
            sent.icmp_replies,
            sent.http_requests,
            sent.frames.len(),
            answered,
            sent.real_http,
        )
    });
    match r {
        Ok((icmp, http, frames, answered, real_http)) => {
            assert!(icmp >= 5 && http >= 3, "icmp {icmp}, http {http}");
            if find_tool(&["curl"]).is_some() || find_tool(&["python3"]).is_some() {
                assert!(real_http, "a real HTTP client ran");
            }
            assert!(frames > 0, "the sniffer saw the clients");
            assert!(answered >= icmp + 2 * http, "answered {answered}");
        }
        Err(why) => doca_test_support::skip(&format!("no private network namespace ({why})")),
    }
}

// ------------------------------------------------------------------ the application

fn gpu_setup() -> Option<std::path::PathBuf> {
    if !require_cuda("gpu_packet_processing end to end") {
        return None;
    }
    let bin = example("gpu_packet_processing")?;
    require_raw_sockets().then_some(bin)
}

struct App {
    proc: Proc,
    ready: std::path::PathBuf,
}

fn start(bin: &std::path::Path, args: &[&str], tag: &str) -> App {
    let ready = ready_path(tag);
    let r = ready.to_string_lossy().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--ready-file", &r]);
    let mut proc = Proc::spawn(bin, &all);
    proc.wait_ready(&ready, 120);
    std::thread::sleep(Duration::from_millis(500));
    App { proc, ready }
}

impl App {
    /// Waits for one more statistics block, then stops the app with SIGINT.
    fn finish(self) -> Finished {
        std::thread::sleep(Duration::from_secs(6));
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.proc.pid(), libc::SIGINT) };
        let out = self.proc.wait(90);
        let _ = std::fs::remove_file(&self.ready);
        assert_eq!(out.code, Some(0), "gpu_packet_processing:\n{out}");
        out
    }
}

/// Sums over the queues of the last statistics block.
fn last_block(out: &str) -> ([i64; 3], [i64; 9]) {
    let start = out
        .rfind("\nSeconds ")
        .expect("no statistics block printed");
    let (mut udp, mut tcp) = ([0i64; 3], [0i64; 9]);
    let num = |l: &str, key: &str| -> i64 {
        let i = l.find(key).unwrap_or_else(|| panic!("{key} in {l}")) + key.len();
        l[i..]
            .split_whitespace()
            .next()
            .unwrap()
            .trim_end_matches(']')
            .parse()
            .unwrap()
    };
    for l in out[start..].lines().skip(2) {
        if l.starts_with("[UDP]") {
            for (i, k) in [" DNS: ", " OTHER: ", " TOTAL: "].iter().enumerate() {
                udp[i] += num(l, k);
            }
        } else if l.starts_with("[TCP]") {
            let keys = [
                " HTTP: ", " HEAD: ", " GET: ", " POST: ", "[SYN: ", " FIN: ", " ACK: ",
                " OTHER: ", " TOTAL: ",
            ];
            for (i, k) in keys.iter().enumerate() {
                tcp[i] += num(l, k);
            }
        } else {
            break;
        }
    }
    (udp, tcp)
}

/// Frames that are wrong on every queue, sent while the sniffer is off; the app must keep
/// running and answer afterwards. Returns the UDP frames the kernel counts as OTHER (the
/// software runtime's Flow parser drops truncated headers and IP lengths past the frame
/// before any queue; a frame with IHL 6 passes and is counted as other UDP).
fn malformed(sock: &RawSocket) -> i64 {
    let mut bad = Vec::new();
    let mut f = frame(
        17,
        &[0x13, 0x88, 0, 53, 0, 16, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
    );
    f[14] = 0x46;
    bad.push(f);
    let mut f = frame(17, &[0, 53, 0, 53]);
    bad.push(f.clone());
    f[16..18].copy_from_slice(&1400u16.to_be_bytes());
    bad.push(f);
    let mut f = tcp(50000, 1, 0, 0x10, &[], b"GET /");
    f[46] = 0x40;
    bad.push(f.clone());
    f[46] = 0xf0;
    bad.push(f);
    // A SYN with an option kind of length 0 (the original looped forever on it).
    bad.push(tcp(50001, 1, 0, 0x02, &[99, 0, 0, 0], b""));
    let mut f = icmp_echo(0x5151, 1, 8);
    f[16..18].copy_from_slice(&400u16.to_be_bytes());
    bad.push(f);
    bad.push(icmp_echo(0x5151, 2, 8)[..38].to_vec());
    let mut f = icmp_echo(0x5151, 3, 8);
    f[14] = 0x46;
    bad.push(f);
    for f in &bad {
        sock.send(f).unwrap();
    }
    assert!(
        wait_for(sock, Duration::from_millis(500), |f| from_server(f, 1)
            && be16(f, 38) == 0x5151)
        .is_none(),
        "a malformed echo request was answered"
    );
    sock.send(&tcp(50001, 2, 0, 0x04, &[], b"")).unwrap();
    1
}

fn gpu_scenario(bin: std::path::PathBuf) {
    let sock = raw_socket();
    let app = start(&bin, &["-g", "0", "-n", "lo", "-q", "1", "-s"], "gpp-s");
    let sent = http_clients(&sock);
    // A burst of SYNs, then their RSTs (to the CPU only): every session is gone afterwards.
    let burst = 300u16;
    for p in 0..burst {
        sock.send(&tcp(42000 + p, 77, 0, 0x02, &[], b"")).unwrap();
    }
    std::thread::sleep(Duration::from_secs(1));
    for p in 0..burst {
        sock.send(&tcp(42000 + p, 78, 0, 0x04, &[], b"")).unwrap();
    }
    let bad_udp_other = malformed(&sock);
    // Still serving after all that (sniffed, so counted).
    let sniff = Sniffer::start();
    let (resp, late) = raw_http_get(&sock, 41100, "/index.html");
    assert_eq!(check_http(&resp), 200);
    let mut frames = sent.frames;
    frames.extend(sniff.stop());
    let mut lates = sent.late;
    lates.push(late);

    let out = app.finish();
    let (mut want_udp, want_tcp) = expected_counts(&frames, true, &lates);
    want_udp[1] += bad_udp_other;
    want_udp[2] += bad_udp_other;
    let (udp, tcp_counts) = last_block(&out.stdout);
    assert_eq!(
        udp, want_udp,
        "[UDP] DNS, OTHER, TOTAL vs what was sent:\n{}",
        out.stdout
    );
    assert_eq!(
        tcp_counts, want_tcp,
        "[TCP] counts vs what was sent:\n{}",
        out.stdout
    );
    // Every GET reached the GPU (a kernel client may have retransmitted one: then the
    // sniffer saw it twice and the GPU answered it twice).
    assert!(
        want_tcp[2] > sent.http_requests as i64,
        "every GET reached the GPU"
    );
    let summary = support::summary(&out.stdout);
    let field = |k: &str| -> u64 {
        summary
            .get(k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} in summary:\n{out}"))
    };
    assert_eq!(field("icmp_replies"), sent.icmp_replies as u64);
    assert!(field("icmp_malformed") >= 1, "{out}");
    assert_eq!(
        field("http_responses"),
        want_tcp[2] as u64,
        "one response per GET"
    );
    assert_eq!(field("sessions_open"), 0, "no stale session");
    assert_eq!(field("relay_dropped"), 0);
    assert_eq!(field("cpu_refused"), 0);
    for i in 0..3 {
        let key = format!("127.0.0.1:{}>127.0.0.2:80", 41000 + i);
        for what in [
            "Received SYN for TCP",
            "Created TCP offload session",
            "Received FIN for TCP",
            "Destroyed TCP offload session",
        ] {
            assert!(
                out.stdout.contains(&format!("{what} {key}")),
                "no '{what} {key}':\n{out}"
            );
        }
    }
    assert!(
        out.stdout.contains("ICMP debug event: Queue 0 packet"),
        "{out}"
    );
    assert!(
        out.stdout.contains("Application finished successfully"),
        "{out}"
    );
}

#[test]
fn http_server_mode_answers_real_clients() {
    let Some(bin) = gpu_setup() else { return };
    if let Err(why) = in_private_net(move || gpu_scenario(bin)) {
        panic!("a private network namespace is needed (root): {why}");
    }
}

fn plain_scenario(bin: std::path::PathBuf) {
    let sock = raw_socket();
    let app = start(&bin, &["-g", "0", "-n", "lo", "-q", "2"], "gpp-plain");
    let sniff = Sniffer::start();
    let frames = [
        tcp(43000, 1, 0, 0x02, &SYN_OPTS, b""),
        tcp(43001, 1, 1, 0x10, &[], b""),
        tcp(43002, 1, 1, 0x11, &[], b""),
        tcp(43003, 1, 1, 0x18, &[], b"GET /index.html HTTP/1.1\r\n\r\n"),
        tcp(43004, 1, 1, 0x18, &[], b"HEAD / HTTP/1.1\r\n\r\n"),
        tcp(43005, 1, 1, 0x18, &[], b"POST /form HTTP/1.1\r\n\r\n"),
        tcp(43006, 1, 1, 0x18, &[], b"HTTP/1.1 200 OK\r\n\r\n"),
        tcp(43007, 1, 1, 0x00, &[], b""),
        tcp(43008, 1, 1, 0x04, &[], b""),
    ];
    for f in &frames {
        sock.send(f).unwrap();
    }
    udp_client(5, 2);
    // No GPU server: nothing answers TCP.
    assert!(wait_for(&sock, Duration::from_millis(500), |f| from_server(f, 6)).is_none());
    let seen = sniff.stop();
    let out = app.finish();
    let (want_udp, want_tcp) = expected_counts(&seen, false, &[]);
    assert_eq!(
        want_tcp,
        [1, 1, 1, 1, 1, 1, 1, 2, 9],
        "the sniffer saw every frame"
    );
    let (udp, tcp_counts) = last_block(&out.stdout);
    assert_eq!(udp, want_udp, "{}", out.stdout);
    assert_eq!(want_udp, [5, 2, 7]);
    assert_eq!(tcp_counts, want_tcp, "{}", out.stdout);
}

#[test]
fn without_http_server_the_tcp_kernel_classifies_everything() {
    let Some(bin) = gpu_setup() else { return };
    if let Err(why) = in_private_net(move || plain_scenario(bin)) {
        panic!("a private network namespace is needed (root): {why}");
    }
}
