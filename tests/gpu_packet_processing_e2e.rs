//! gpu_packet_processing end to end on `lo`, on a machine with a GPU: the example runs with
//! `-n lo`, and clients on this machine talk to it.
//!
//! On `lo` the Linux kernel also answers ICMP echo and TCP SYNs, and the application sees
//! its own transmitted frames. So the clients that must get the GPU's answers are
//! raw-socket clients (AF_PACKET on `lo`) whose frames carry unicast MAC addresses `lo`
//! does not own: the kernel stack ignores those frames (PACKET_OTHERHOST) and the GPU's
//! replies to them, and the clients recognise the replies by addresses, ports and ids.
//! Real programs are used where the kernel can be kept out: `ping` (with the kernel's own
//! echo replies turned off through `net.ipv4.icmp_echo_ignore_all` where this process may,
//! else recognised by their TTL of 128) and real UDP sockets for the DNS and other UDP
//! traffic. Every step has a timeout; the whole test takes well under two minutes.
//!
//! What is checked: every echo request gets exactly the reply the host model computes (and
//! valid checksums); a TCP handshake with the CPU thread (SYN-ACK fields and options), GETs
//! of /index.html, /contacts.html and a missing page answered by the GPU with one valid
//! HTTP/1.1 frame each (200, 200, 404), FIN acknowledged, the session gone afterwards; a
//! burst of SYNs then RSTs leaves no session; malformed frames on every queue change
//! nothing; the last statistics block counts exactly what the clients sent; without `-s`
//! the TCP kernel classifies SYN/FIN/ACK/GET/HEAD/POST/HTTP frames; the app exits 0 on
//! SIGINT.

mod support;

#[path = "../examples/common/raw_socket.rs"]
mod raw_socket;

use doca::gpunetio::cuda_available;
use raw_socket::RawSocket;
use std::net::UdpSocket;
use std::time::{Duration, Instant};
use support::{can_use_raw_sockets, example, ready_path, Finished, Proc};

const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const CLIENT_IP: [u8; 4] = [127, 0, 0, 1];
const SERVER_IP: [u8; 4] = [127, 0, 0, 2];
const HTTP_PORT: u16 = 80;

fn say(msg: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{msg}");
}

fn setup() -> Option<std::path::PathBuf> {
    if !cuda_available() {
        say("skipped: no CUDA driver on this machine (gpu_packet_processing end to end)");
        return None;
    }
    let bin = example("gpu_packet_processing")?;
    can_use_raw_sockets().then_some(bin)
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

fn ipv4(proto: u8, payload_len: usize, ttl: u8) -> Vec<u8> {
    let mut h = vec![0u8; 20];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&((20 + payload_len) as u16).to_be_bytes());
    h[6] = 0x40;
    h[8] = ttl;
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
    f.extend_from_slice(&ipv4(proto, l4.len(), 64));
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

/// Whether `f` is IPv4 from the server to the client with protocol `proto`.
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

/// The TCP segment of a frame from the server to the client port `port`, if it is one.
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

// ------------------------------------------------------------------ app and statistics

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
    // Let the receive lanes settle before the first frame.
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

/// Sums of the last statistics block: ([UDP] DNS, OTHER, TOTAL), and the [TCP] fields
/// (HTTP, HEAD, GET, POST, SYN, FIN, ACK, OTHER, TOTAL).
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

/// Real UDP clients: `dns` DNS queries to port 53 and `other` datagrams to another port,
/// each absorbed by a socket bound on the server address (so the kernel sends no ICMP
/// errors back into the app).
fn udp_traffic(dns: usize, other: usize) {
    let sink53 = UdpSocket::bind("127.0.0.2:53").expect("bind 127.0.0.2:53 (root)");
    let sink = UdpSocket::bind("127.0.0.2:5300").expect("bind 127.0.0.2:5300");
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    // A DNS query for example.invalid, type A.
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
    std::thread::sleep(Duration::from_millis(200));
    drop((sink53, sink));
}

// ------------------------------------------------------------------ ICMP

/// Raw echo requests of several sizes; returns how many were answered (all must be).
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
        let ip_len = usize::from(be16(&reply, 16));
        assert_eq!(ip_len, 20 + 8 + n, "reply length");
        assert_eq!(reply.len(), 14 + ip_len, "frame length = IP length + 14");
        assert_eq!(reply[6..12], SERVER_MAC);
        assert_eq!(reply[22], 128, "TTL 128");
        assert!(sums_to_ffff(&reply[14..34]), "IPv4 checksum (L3 offload)");
        assert!(sums_to_ffff(&reply[34..14 + ip_len]), "ICMP checksum");
        assert_eq!(reply[42..], req[42..], "data echoed");
        assert_eq!(reply[18..22], req[18..22], "id and flags kept");
    }
    sizes.len()
}

/// `ping` against the GPU, if this machine has it. Returns the replies it got from the
/// GPU, or None when skipped.
fn icmp_ping() -> Option<usize> {
    let ping = ["/usr/bin/ping", "/bin/ping", "/usr/sbin/ping"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(ping) = ping else {
        say("note: no ping on this machine; the raw-socket echo client covers ICMP");
        return None;
    };
    let knob = "/proc/sys/net/ipv4/icmp_echo_ignore_all";
    let old = std::fs::read_to_string(knob).unwrap_or_default();
    let kernel_quiet = std::fs::write(knob, "1").is_ok();
    let out = std::process::Command::new("timeout")
        .args([
            "20",
            ping,
            "-n",
            "-c",
            "3",
            "-i",
            "0.3",
            "-W",
            "3",
            "127.0.0.2",
        ])
        .output();
    if kernel_quiet {
        let _ = std::fs::write(knob, old.trim());
    }
    let out = out.expect("run ping");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        !text.contains("BAD CHECKSUM"),
        "ping saw a bad checksum:\n{text}"
    );
    let gpu_lines = text.lines().filter(|l| l.contains("ttl=128")).count();
    if kernel_quiet {
        assert!(
            text.contains(" 3 received") || text.contains(" 3 packets received"),
            "ping:\n{text}"
        );
        assert_eq!(gpu_lines, 3, "every reply from the GPU (TTL 128):\n{text}");
        assert!(!text.contains("ttl=64"), "the kernel answered:\n{text}");
    } else {
        say("note: cannot set icmp_echo_ignore_all; ping replies recognised by TTL 128");
        assert!(gpu_lines >= 3, "ping got no GPU replies (TTL 128):\n{text}");
    }
    Some(gpu_lines)
}

// ------------------------------------------------------------------ TCP / HTTP

const SYN_OPTS: [u8; 20] = [
    2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 7,
];

/// One HTTP exchange with the GPU server over a raw TCP client; returns the response.
fn http_get(sock: &RawSocket, port: u16, path: &str) -> Vec<u8> {
    let isn: u32 = 0x1000_0000 + u32::from(port) * 7919;
    sock.send(&tcp(port, isn, 0, 0x02, &SYN_OPTS, b"")).unwrap();
    let sa = wait_for(sock, Duration::from_secs(3), |f| {
        tcp_to(f, port) && f[47] & 0x02 != 0
    })
    .unwrap_or_else(|| panic!("no SYN-ACK for port {port}"));
    assert_eq!(sa[47], 0x12, "SYN|ACK");
    assert_eq!(be32(&sa, 38), 1000, "SYN-ACK seq");
    assert_eq!(be32(&sa, 42), isn + 1, "SYN-ACK ack");
    assert_eq!(sa[46], 0xa0, "20 bytes of options");
    assert_eq!(be16(&sa, 48), 60000, "window");
    assert_eq!(sa[22], 64, "TTL");
    assert_eq!(be16(&sa, 20), 0x4000, "DF");
    assert_eq!(
        sa[54..62],
        [2, 4, 0x20, 0x00, 4, 2, 8, 10],
        "MSS, SACK-permitted, TS"
    );
    assert_eq!(be32(&sa, 66), 7, "TSecr = our TSval");
    assert_eq!(sa[70..74], [1, 3, 3, 7], "NOP, window scale 7");
    assert!(sums_to_ffff(&sa[14..34]), "SYN-ACK IPv4 checksum");
    assert!(tcp_checksum_ok(&sa), "SYN-ACK TCP checksum");
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
    assert_eq!(resp[22], 60, "TTL");
    assert_eq!(be16(&resp, 48), 6000, "window");
    assert!(sums_to_ffff(&resp[14..34]), "response IPv4 checksum");
    assert!(tcp_checksum_ok(&resp), "response TCP checksum");
    let ip_len = usize::from(be16(&resp, 16));
    let payload = resp[54..14 + ip_len].to_vec();
    // ACK the response, then close.
    let seq2 = seq + req.len() as u32;
    sock.send(&tcp(port, seq2, ack + payload.len() as u32, 0x10, &[], b""))
        .unwrap();
    sock.send(&tcp(port, seq2, ack + payload.len() as u32, 0x11, &[], b""))
        .unwrap();
    let fin_ack = wait_for(sock, Duration::from_secs(3), |f| {
        tcp_to(f, port) && f[47] == 0x10 && be32(f, 42) == seq2 + 1
    });
    assert!(fin_ack.is_some(), "no ACK for the FIN of port {port}");
    // The session is gone: a late segment is not delivered to the GPU (not counted).
    std::thread::sleep(Duration::from_millis(100));
    sock.send(&tcp(port, seq2 + 1, ack, 0x10, &[], b""))
        .unwrap();
    payload
}

/// Status code and body of an HTTP/1.1 response, checked: status line, Content-Length
/// equal to the body length.
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

// ------------------------------------------------------------------ malformed frames

/// Frames that are wrong on every queue; the app must keep running and answer afterwards.
fn malformed(sock: &RawSocket) {
    let mut bad = Vec::new();
    // UDP: an IPv4 header claiming options (IHL 6). The Flow parser accepts it; the kernel
    // does not parse it as UDP and counts it as OTHER. (Truncated headers or IP lengths
    // past the frame are dropped by the software runtime's Flow parser before any queue,
    // so they are sent but not counted anywhere.)
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
    // TCP: data offset 4 words, 15 words with a short frame, SYN with an unknown option
    // kind of length 0 (the original looped forever on such options).
    let mut f = tcp(50000, 1, 0, 0x10, &[], b"GET /");
    f[46] = 0x40;
    bad.push(f.clone());
    f[46] = 0xf0;
    bad.push(f);
    bad.push(tcp(50001, 1, 0, 0x02, &[99, 0, 0, 0], b""));
    // ICMP: IP length past the frame, header cut short, IP options.
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
    // None of the ICMP ones is answered.
    assert!(
        wait_for(sock, Duration::from_millis(500), |f| from_server(f, 1)
            && be16(f, 38) == 0x5151)
        .is_none(),
        "a malformed echo request was answered"
    );
    // RST the SYN with the bad option, so it leaves no session.
    sock.send(&tcp(50001, 2, 0, 0x04, &[], b"")).unwrap();
}

// ------------------------------------------------------------------ scenarios

#[test]
fn http_server_mode_answers_real_clients() {
    let Some(bin) = setup() else { return };
    let sock = RawSocket::open("lo").expect("raw socket on lo");
    sock.set_timeout(Duration::from_millis(50)).unwrap();
    let app = start(&bin, &["-g", "0", "-n", "lo", "-q", "1", "-s"], "gpp-s");
    let t0 = Instant::now();

    let raw_replies = icmp_raw(&sock);
    let ping_replies = icmp_ping().unwrap_or(0);
    let (dns, other) = (4, 3);
    udp_traffic(dns, other);

    let pages = [
        ("/index.html", 200),
        ("/contacts.html", 200),
        ("/missing.html", 404),
    ];
    for (i, (path, code)) in pages.iter().enumerate() {
        let resp = http_get(&sock, 41000 + i as u16, path);
        assert_eq!(check_http(&resp), *code, "{path}");
    }

    // A burst of SYNs, then their RSTs: every session is gone afterwards.
    let burst = 300u16;
    for p in 0..burst {
        sock.send(&tcp(42000 + p, 77, 0, 0x02, &[], b"")).unwrap();
    }
    std::thread::sleep(Duration::from_secs(1));
    for p in 0..burst {
        sock.send(&tcp(42000 + p, 78, 0, 0x04, &[], b"")).unwrap();
    }
    malformed(&sock);
    // Still serving after all that.
    let resp = http_get(&sock, 41100, "/index.html");
    assert_eq!(check_http(&resp), 200);
    say(&format!("clients done in {:?}", t0.elapsed()));

    let out = app.finish();
    let (udp, tcp_counts) = last_block(&out.stdout);
    assert_eq!(udp[0], dns as i64, "DNS count:\n{}", out.stdout);
    assert_eq!(
        udp[1],
        other as i64 + 1,
        "OTHER = other datagrams + the UDP frame with IHL 6"
    );
    assert_eq!(udp[2], udp[0] + udp[1], "TOTAL");
    // Per exchange the GPU sees: handshake ACK, GET, response ACK (the FIN goes to the CPU,
    // the late segment after it matches no session and is dropped). 4 exchanges. The
    // malformed TCP frames are dropped before the GPU (Flow parser, or no session).
    let [http, head, get, post, syn, fin, ack, others, total] = tcp_counts;
    assert_eq!(
        (http, head, post, syn, fin),
        (0, 0, 0, 0, 0),
        "{}",
        out.stdout
    );
    assert_eq!(get, 4, "HTTP GET:\n{}", out.stdout);
    assert_eq!(ack, 8, "ACK:\n{}", out.stdout);
    assert_eq!(others, 0);
    assert_eq!(total, 12);
    let summary = support::summary(&out.stdout);
    let field = |k: &str| -> u64 {
        summary
            .get(k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} in summary:\n{out}"))
    };
    assert_eq!(field("icmp_replies"), (raw_replies + ping_replies) as u64);
    assert!(field("icmp_malformed") >= 1, "{out}");
    assert_eq!(field("http_responses"), 4);
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
fn without_http_server_the_tcp_kernel_classifies_everything() {
    let Some(bin) = setup() else { return };
    let sock = RawSocket::open("lo").expect("raw socket on lo");
    sock.set_timeout(Duration::from_millis(50)).unwrap();
    let app = start(&bin, &["-g", "0", "-n", "lo", "-q", "2"], "gpp-plain");
    let frames = [
        tcp(43000, 1, 0, 0x02, &SYN_OPTS, b""), // SYN
        tcp(43001, 1, 1, 0x10, &[], b""),       // ACK
        tcp(43002, 1, 1, 0x11, &[], b""),       // FIN (wins over ACK)
        tcp(43003, 1, 1, 0x18, &[], b"GET /index.html HTTP/1.1\r\n\r\n"),
        tcp(43004, 1, 1, 0x18, &[], b"HEAD / HTTP/1.1\r\n\r\n"),
        tcp(43005, 1, 1, 0x18, &[], b"POST /form HTTP/1.1\r\n\r\n"),
        tcp(43006, 1, 1, 0x18, &[], b"HTTP/1.1 200 OK\r\n\r\n"),
        tcp(43007, 1, 1, 0x00, &[], b""), // no flags: other
        tcp(43008, 1, 1, 0x04, &[], b""), // RST only: other
    ];
    for f in &frames {
        sock.send(f).unwrap();
    }
    let (dns, other) = (5, 2);
    udp_traffic(dns, other);
    // No GPU server: nothing answers TCP.
    assert!(wait_for(&sock, Duration::from_millis(500), |f| from_server(f, 6)).is_none());
    let out = app.finish();
    let (udp, tcp_counts) = last_block(&out.stdout);
    assert_eq!(
        udp,
        [dns as i64, other as i64, (dns + other) as i64],
        "{}",
        out.stdout
    );
    // HTTP, HEAD, GET, POST, SYN, FIN, ACK, OTHER, TOTAL summed over both queues.
    assert_eq!(tcp_counts, [1, 1, 1, 1, 1, 1, 1, 2, 9], "{}", out.stdout);
    assert_eq!(
        out.stdout.matches("[TCP] QUEUE: ").count() % 2,
        0,
        "two queues per block"
    );
}
