//! UDP traffic for the RX/TX benches: frames with sequence numbers, `sendmmsg` senders,
//! `recvmmsg` receivers and a per-sender sequence tracker (zero-loss check).
//!
//! A packet of size S is an Ethernet frame of S bytes (no FCS): 14 B Ethernet, 20 B IPv4,
//! 8 B UDP and S - 42 B of payload. Over `lo` the kernel sends the same frames (AF_PACKET on
//! `lo` sees a 14-byte Ethernet header of zeros), so every path of a run carries identical
//! bytes.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Ethernet + IPv4 + UDP header bytes.
pub const HEADERS: usize = 42;
/// Payload bytes we use (magic, sender, pad, sequence).
pub const PAYLOAD_MIN: usize = 16;
/// Smallest packet size the benches accept.
pub const MIN_SIZE: usize = HEADERS + PAYLOAD_MIN;
/// First UDP destination port; queue / sender `i` uses `BASE_PORT + i`.
pub const BASE_PORT: u16 = 47100;
const MAGIC: [u8; 4] = *b"DRSB";
/// Messages per sendmmsg / recvmmsg call.
pub const BATCH: usize = 32;
/// Source sockets (flows) per sender, used in turn one sendmmsg batch each: the kernel's
/// per-flow hashes (AF_PACKET fanout, RSS) see several flows per sender, not one, so a few
/// senders spread over receive lanes as real traffic would instead of by the luck of a
/// handful of hashes. The receiving side (port per sender) is unchanged.
pub const FLOWS_PER_SENDER: usize = 8;

/// Writes a full frame of `buf.len()` bytes (>= [`MIN_SIZE`]) from 127.0.0.1:`src_port` to
/// 127.0.0.1:`dst_port` carrying (`sender`, `seq`).
pub fn build_frame(buf: &mut [u8], src_port: u16, dst_port: u16, sender: u16, seq: u64) {
    assert!(
        buf.len() >= MIN_SIZE,
        "frame of {} bytes too small",
        buf.len()
    );
    buf[..12].fill(0);
    buf[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (buf.len() - 14) as u16;
    let ip = &mut buf[14..34];
    ip.fill(0);
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&Ipv4Addr::LOCALHOST.octets());
    ip[16..20].copy_from_slice(&Ipv4Addr::LOCALHOST.octets());
    let csum = ipv4_checksum(ip);
    ip[10..12].copy_from_slice(&csum.to_be_bytes());
    let udp_len = ip_len - 20;
    let udp = &mut buf[34..42];
    udp[0..2].copy_from_slice(&src_port.to_be_bytes());
    udp[2..4].copy_from_slice(&dst_port.to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    udp[6..8].fill(0);
    write_payload(&mut buf[HEADERS..], sender, seq);
}

fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes our payload (magic, sender, sequence; the rest zero).
pub fn write_payload(p: &mut [u8], sender: u16, seq: u64) {
    p[0..4].copy_from_slice(&MAGIC);
    p[4..6].copy_from_slice(&sender.to_le_bytes());
    p[6..8].fill(0);
    p[8..16].copy_from_slice(&seq.to_le_bytes());
    p[16..].fill(0);
}

/// (sender, seq) of one of our payloads.
pub fn parse_payload(p: &[u8]) -> Option<(u16, u64)> {
    if p.len() < PAYLOAD_MIN || p[0..4] != MAGIC {
        return None;
    }
    let sender = u16::from_le_bytes([p[4], p[5]]);
    let seq = u64::from_le_bytes(p[8..16].try_into().ok()?);
    Some((sender, seq))
}

/// (sender, seq) of one of our frames; None for anything else (ICMP, other traffic).
pub fn parse_frame(f: &[u8]) -> Option<(u16, u64)> {
    if f.len() < MIN_SIZE || f[12..14] != [0x08, 0x00] || f[23] != 17 {
        return None;
    }
    let ihl = usize::from(f[14] & 0x0f) * 4;
    parse_payload(f.get(14 + ihl + 8..)?)
}

/// Which sequence numbers of each sender arrived.
pub struct SeqTracker {
    per_sender: u64,
    seen: Vec<Vec<u64>>,
    received: u64,
    duplicates: u64,
    foreign: u64,
}

impl SeqTracker {
    /// `senders` senders of `per_sender` frames each.
    pub fn new(senders: usize, per_sender: u64) -> SeqTracker {
        let words = per_sender.div_ceil(64) as usize;
        SeqTracker {
            per_sender,
            seen: vec![vec![0u64; words]; senders],
            received: 0,
            duplicates: 0,
            foreign: 0,
        }
    }

    /// One frame arrived.
    pub fn note(&mut self, sender: u16, seq: u64) {
        let Some(bits) = self.seen.get_mut(usize::from(sender)) else {
            self.foreign += 1;
            return;
        };
        if seq >= self.per_sender {
            self.foreign += 1;
            return;
        }
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if bits[w] & (1 << b) != 0 {
            self.duplicates += 1;
        } else {
            bits[w] |= 1 << b;
            self.received += 1;
        }
    }

    /// Adds another tracker's observations (same shape).
    pub fn merge(&mut self, o: &SeqTracker) {
        for (a, b) in self.seen.iter_mut().zip(&o.seen) {
            for (x, y) in a.iter_mut().zip(b) {
                self.duplicates += u64::from((*x & *y).count_ones());
                *x |= *y;
            }
        }
        self.received = self
            .seen
            .iter()
            .flatten()
            .map(|w| u64::from(w.count_ones()))
            .sum();
        self.duplicates += o.duplicates;
        self.foreign += o.foreign;
    }

    /// Distinct frames received.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Frames sent and never received.
    pub fn lost(&self) -> u64 {
        self.per_sender * self.seen.len() as u64 - self.received
    }

    /// Frames received more than once.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Frames that were not ours or out of range.
    pub fn foreign(&self) -> u64 {
        self.foreign
    }
}

fn last_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// An owned UDP socket fd.
pub struct Sock(pub i32);

impl Drop for Sock {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        unsafe { libc::close(self.0) };
    }
}

fn sockaddr(port: u16) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data; all-zero is a valid value.
    let mut a: libc::sockaddr_in = unsafe { zeroed() };
    a.sin_family = libc::AF_INET as u16;
    a.sin_port = port.to_be();
    a.sin_addr.s_addr = u32::from(Ipv4Addr::LOCALHOST).to_be();
    a
}

fn set_int(fd: i32, level: i32, opt: i32, v: i32) -> io::Result<()> {
    // SAFETY: fd is a socket; the value is an int of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&v as *const i32).cast(),
            size_of::<i32>() as u32,
        )
    };
    if r != 0 {
        return Err(last_err("setsockopt"));
    }
    Ok(())
}

/// A UDP socket; bound to 127.0.0.1:`port` when given, with a receive buffer of `rcvbuf`
/// bytes (forced as root) and a receive timeout.
pub fn udp_socket(bind_port: Option<u16>, rcvbuf: i32, timeout: Duration) -> io::Result<Sock> {
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if fd < 0 {
        return Err(last_err("socket"));
    }
    let s = Sock(fd);
    if rcvbuf > 0 && set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, rcvbuf).is_err() {
        set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, rcvbuf)?;
    }
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: fd is a socket; tv is a timeval of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            size_of::<libc::timeval>() as u32,
        )
    };
    if r != 0 {
        return Err(last_err("SO_RCVTIMEO"));
    }
    if let Some(p) = bind_port {
        let a = sockaddr(p);
        // SAFETY: a is a sockaddr_in of the size passed.
        let r = unsafe {
            libc::bind(
                fd,
                (&a as *const libc::sockaddr_in).cast(),
                size_of::<libc::sockaddr_in>() as u32,
            )
        };
        if r != 0 {
            return Err(last_err("bind"));
        }
    }
    Ok(s)
}

/// UDP sockets bound on `BASE_PORT..BASE_PORT + n` of `lo` that drop every datagram in the
/// kernel (a one-instruction socket filter). The soft NIC's `lo` benches hold them while
/// they send: a frame then ends at a socket, as with the recvmmsg baseline's receivers,
/// instead of the kernel answering each one with an ICMP port-unreachable (loopback has no
/// ICMP rate limit: one more packet per frame, built on the sender's CPU, which also reaches
/// the AF_PACKET lanes).
pub struct DropSinks {
    _socks: Vec<Sock>,
}

impl DropSinks {
    /// Binds one dropping socket per destination port the `n` senders use.
    pub fn bind(n: usize) -> io::Result<DropSinks> {
        let mut socks = Vec::with_capacity(n);
        for i in 0..n {
            let s = udp_socket(Some(BASE_PORT + i as u16), 0, Duration::from_millis(1))?;
            drop_all(s.0)?;
            socks.push(s);
        }
        Ok(DropSinks { _socks: socks })
    }
}

/// Attaches a classic BPF program that accepts nothing (`ret #0`) to socket `fd`.
pub fn drop_all(fd: i32) -> io::Result<()> {
    let mut insn = [libc::sock_filter {
        code: 0x06, // BPF_RET | BPF_K
        jt: 0,
        jf: 0,
        k: 0,
    }];
    let prog = libc::sock_fprog {
        len: insn.len() as u16,
        filter: insn.as_mut_ptr(),
    };
    // SAFETY: fd is a socket; prog points at `insn`, alive for the call (the kernel copies
    // the program).
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            (&prog as *const libc::sock_fprog).cast(),
            size_of::<libc::sock_fprog>() as u32,
        )
    };
    if r != 0 {
        return Err(last_err("SO_ATTACH_FILTER"));
    }
    Ok(())
}

/// What one sender thread did.
#[derive(Clone, Copy, Debug, Default)]
pub struct SendResult {
    /// Frames sent.
    pub sent: u64,
    /// Seconds from the first to the last sendmmsg.
    pub secs: f64,
    /// sendmmsg calls that failed with a retryable error (ENOBUFS/EAGAIN).
    pub retries: u64,
}

/// A `sendmmsg` sender of bench frames to 127.0.0.1:`dst_port`; everything it needs is
/// allocated up front, so sending allocates nothing.
pub struct UdpSender {
    socks: Vec<Sock>,
    sender: u16,
    bufs: Vec<Vec<u8>>,
    msgs: Vec<libc::mmsghdr>,
    // The headers point into these; both are heap allocations that never move.
    _iov: Vec<libc::iovec>,
    _dst: Box<libc::sockaddr_in>,
}

// SAFETY: the raw pointers in `msgs` point into this value's own heap allocations, which
// move with it; one thread uses it at a time.
unsafe impl Send for UdpSender {}

impl UdpSender {
    /// Sender `sender` of `size`-byte packets to port `dst_port`.
    pub fn new(sender: u16, dst_port: u16, size: usize) -> io::Result<UdpSender> {
        let socks = (0..FLOWS_PER_SENDER)
            .map(|_| udp_socket(None, 0, Duration::from_millis(100)))
            .collect::<io::Result<Vec<Sock>>>()?;
        let plen = size - HEADERS;
        let mut bufs = vec![vec![0u8; plen]; BATCH];
        let mut dst = Box::new(sockaddr(dst_port));
        // SAFETY: iovec and mmsghdr are plain data; zero is valid, pointers are set below.
        let mut iov: Vec<libc::iovec> = vec![unsafe { zeroed() }; BATCH];
        // SAFETY: as above.
        let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { zeroed() }; BATCH];
        for i in 0..BATCH {
            iov[i].iov_base = bufs[i].as_mut_ptr().cast();
            iov[i].iov_len = plen;
            msgs[i].msg_hdr.msg_iov = &mut iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = (&mut *dst as *mut libc::sockaddr_in).cast();
            msgs[i].msg_hdr.msg_namelen = size_of::<libc::sockaddr_in>() as u32;
        }
        Ok(UdpSender {
            socks,
            sender,
            bufs,
            msgs,
            _iov: iov,
            _dst: dst,
        })
    }

    /// Sends sequence numbers `from..to`, calling `gate(seq)` before each batch (pacing or
    /// back-pressure). Returns how many sendmmsg calls were retried (ENOBUFS/EAGAIN).
    pub fn send_range(&mut self, from: u64, to: u64, mut gate: impl FnMut(u64)) -> io::Result<u64> {
        let mut retries = 0;
        let mut seq = from;
        let mut flow = 0;
        while seq < to {
            let n = BATCH.min((to - seq) as usize);
            for (k, b) in self.bufs.iter_mut().enumerate().take(n) {
                write_payload(b, self.sender, seq + k as u64);
            }
            gate(seq);
            let fd = self.socks[flow % self.socks.len()].0;
            // SAFETY: msgs[..n] point at live iovecs, buffers and the destination address.
            let r = unsafe { libc::sendmmsg(fd, self.msgs.as_mut_ptr(), n as u32, 0) };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR) => {
                        retries += 1;
                        std::thread::yield_now();
                        continue;
                    }
                    _ => return Err(io::Error::new(e.kind(), format!("sendmmsg: {e}"))),
                }
            }
            seq += r as u64;
            flow += 1;
        }
        Ok(retries)
    }
}

/// Sends `frames` UDP datagrams of packet size `size` to 127.0.0.1:`dst_port` with
/// `sendmmsg`, tagged with `sender` and sequence 0..frames, at most `rate_pps` per second
/// (0 = as fast as possible).
pub fn send_frames(
    sender: u16,
    dst_port: u16,
    size: usize,
    frames: u64,
    rate_pps: f64,
) -> io::Result<SendResult> {
    let mut s = UdpSender::new(sender, dst_port, size)?;
    let start = Instant::now();
    let retries = s.send_range(0, frames, |seq| {
        if rate_pps > 0.0 {
            let due = Duration::from_secs_f64(seq as f64 / rate_pps);
            while start.elapsed() < due {
                std::hint::spin_loop();
            }
        }
    })?;
    Ok(SendResult {
        sent: frames,
        secs: start.elapsed().as_secs_f64(),
        retries,
    })
}

/// What one receiver thread saw.
pub struct RecvResult {
    /// Sequence numbers per sender.
    pub tracker: SeqTracker,
    /// Time of the first frame.
    pub first: Option<Instant>,
    /// Time of the last frame.
    pub last: Option<Instant>,
}

/// Receives with `recvmmsg` on `sock` until `done` is set and no frame came for one receive
/// timeout, or until `expect` frames arrived.
pub fn recv_frames(
    sock: &Sock,
    size: usize,
    senders: usize,
    per_sender: u64,
    expect: u64,
    done: &AtomicBool,
) -> RecvResult {
    let cap = size.max(MIN_SIZE) + 64;
    let mut bufs = vec![vec![0u8; cap]; BATCH];
    // SAFETY: iovec and mmsghdr are plain data; zero is valid, pointers are set below.
    let mut iov: Vec<libc::iovec> = vec![unsafe { zeroed() }; BATCH];
    // SAFETY: as above.
    let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { zeroed() }; BATCH];
    for i in 0..BATCH {
        iov[i].iov_base = bufs[i].as_mut_ptr().cast();
        iov[i].iov_len = cap;
        msgs[i].msg_hdr.msg_iov = &mut iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    let mut out = RecvResult {
        tracker: SeqTracker::new(senders, per_sender),
        first: None,
        last: None,
    };
    let mut got = 0u64;
    while got < expect {
        // SAFETY: msgs point at live iovecs and buffers of `cap` bytes.
        let r = unsafe {
            libc::recvmmsg(
                sock.0,
                msgs.as_mut_ptr(),
                BATCH as u32,
                0,
                std::ptr::null_mut(),
            )
        };
        if r <= 0 {
            if done.load(Ordering::Acquire) {
                break;
            }
            continue;
        }
        let now = Instant::now();
        out.first.get_or_insert(now);
        out.last = Some(now);
        for (m, b) in msgs.iter().zip(&bufs).take(r as usize) {
            let p = &b[..(m.msg_len as usize).min(cap)];
            match parse_payload(p) {
                Some((s, q)) => out.tracker.note(s, q),
                None => out.tracker.foreign += 1,
            }
        }
        got += r as u64;
    }
    out
}

/// One run of N senders to N receivers on `lo` (sender i -> port BASE_PORT + i).
#[derive(Debug, Default, Clone, Copy)]
pub struct UdpRun {
    /// Frames sent in total.
    pub sent: u64,
    /// Distinct frames received.
    pub received: u64,
    /// Frames lost.
    pub lost: u64,
    /// Duplicates seen.
    pub duplicates: u64,
    /// Receive span: first to last frame over all receivers (seconds).
    pub recv_secs: f64,
    /// Mean per-sender send time (seconds).
    pub send_secs: f64,
}

/// `count` per second over `secs` (0 when nothing was timed).
pub fn per_second(count: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        count / secs
    } else {
        0.0
    }
}

impl UdpRun {
    /// Received frames per second over the receive span.
    pub fn rx_pps(&self) -> f64 {
        per_second(self.received as f64, self.recv_secs)
    }

    /// Frames per second per sender thread (one core each).
    pub fn tx_pps_per_core(&self, senders: usize) -> f64 {
        per_second(self.sent as f64 / senders as f64, self.send_secs)
    }
}

/// Binds `queues` receiver sockets (ports [`BASE_PORT`] on, 32 MiB buffers, 200 ms receive
/// timeout) and starts a [`recv_frames`] thread on each, expecting `frames` from each of
/// `queues` senders, until `done`.
pub fn spawn_receivers(
    queues: usize,
    size: usize,
    frames: u64,
    done: &Arc<AtomicBool>,
) -> io::Result<Vec<std::thread::JoinHandle<RecvResult>>> {
    let mut socks = Vec::new();
    for q in 0..queues {
        socks.push(udp_socket(
            Some(BASE_PORT + q as u16),
            32 << 20,
            Duration::from_millis(200),
        )?);
    }
    Ok(socks
        .into_iter()
        .map(|s| {
            let done = done.clone();
            std::thread::spawn(move || recv_frames(&s, size, queues, frames, frames, &done))
        })
        .collect())
}

/// Runs `queues` sendmmsg senders against `queues` recvmmsg receivers, `frames` per sender,
/// each sender paced to `rate_pps / queues` (0 = unpaced).
pub fn run_recvmmsg(queues: usize, size: usize, frames: u64, rate_pps: f64) -> io::Result<UdpRun> {
    let done = Arc::new(AtomicBool::new(false));
    let receivers = spawn_receivers(queues, size, frames, &done)?;
    let per = if rate_pps > 0.0 {
        rate_pps / queues as f64
    } else {
        0.0
    };
    let senders: Vec<_> = (0..queues)
        .map(|q| {
            std::thread::spawn(move || {
                send_frames(q as u16, BASE_PORT + q as u16, size, frames, per)
            })
        })
        .collect();
    let mut run = UdpRun::default();
    let mut err = None;
    for s in senders {
        match s.join().expect("sender thread") {
            Ok(r) => {
                run.sent += r.sent;
                run.send_secs += r.secs / queues as f64;
            }
            Err(e) => err = Some(e),
        }
    }
    done.store(true, Ordering::Release);
    let mut all = SeqTracker::new(queues, frames);
    let (mut first, mut last): (Option<Instant>, Option<Instant>) = (None, None);
    for r in receivers {
        let r = r.join().expect("receiver thread");
        all.merge(&r.tracker);
        if let Some(f) = r.first {
            first = Some(first.map_or(f, |x| x.min(f)));
        }
        if let Some(l) = r.last {
            last = Some(last.map_or(l, |x| x.max(l)));
        }
    }
    if let Some(e) = err {
        return Err(e);
    }
    run.received = all.received();
    run.lost = all.lost();
    run.duplicates = all.duplicates();
    run.recv_secs = match (first, last) {
        (Some(f), Some(l)) => (l - f).as_secs_f64(),
        _ => 0.0,
    };
    Ok(run)
}

/// Longest a paced retry of [`zero_loss_search`] may be expected to take.
const MAX_PACED_SECS: f64 = 30.0;

/// Runs `attempt(rate)` first unpaced, then paced at 90% of the last delivered rate until a
/// run has zero loss or `tries` runs were made, or a paced retry of `total_frames` would take
/// longer than [`MAX_PACED_SECS`]. Returns the last run and the rate it was paced at
/// (0 = unpaced).
pub fn zero_loss_search<R: Copy, E>(
    tries: usize,
    total_frames: u64,
    mut attempt: impl FnMut(f64) -> Result<R, E>,
    lost: impl Fn(&R) -> u64,
    delivered_pps: impl Fn(&R) -> f64,
) -> Result<(R, f64), E> {
    let mut rate = 0.0;
    let mut r = attempt(rate)?;
    for _ in 1..tries {
        if lost(&r) == 0 {
            break;
        }
        let next = 0.9 * delivered_pps(&r);
        // A run that delivered almost nothing would make the paced retry crawl for minutes:
        // keep the lossy result (reported as LOSS) instead.
        if next <= 0.0 || total_frames as f64 / next > MAX_PACED_SECS {
            break;
        }
        rate = next;
        r = attempt(rate)?;
    }
    Ok((r, rate))
}
