//! AF_XDP against AF_PACKET: the soft NIC's AF_XDP backend (`xdp:IFACE`) against its AF_PACKET
//! lane on one veth pair, in the same run.
//!
//! The bench makes a network namespace of its own and a veth pair `xva` - `xvb` in it. RX
//! points: a sender thread blasts numbered UDP frames into `xvb` with `sendmmsg` (64 per
//! call) for `--seconds`; they arrive at `xva`, where a port (AF_PACKET, AF_XDP in generic
//! mode, AF_XDP in driver mode) receives them on one lane and hands them to a sink that
//! counts them and checks their order. The figure is the rate of frames delivered to the
//! sink; the notes say how many the sender offered (the rest were dropped by the kernel on
//! the way: a veth passes what its receive side keeps up with), the order check, and the
//! lane's CPU time per frame (from its thread's scheduler clock), which is the backend's
//! cost. TX points: the port sends numbered frames out of `xva` with `Port::send_batch` (64
//! per call) for `--seconds`; the figure is the rate of frames it sent, checked against the
//! peer's receive counter.
//!
//! Each point runs for a fixed time (plus at most one second of drain), so the bench ends
//! in bounded time: about `points x (seconds + 1)` seconds. Points whose port fell back to
//! AF_PACKET (AF_XDP unavailable) say so and are reported as skipped.

mod support;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use doca_soft::testing::frames::udp4;
use doca_soft::testing::{DropReason, Port, PortSpec, RxSink};
use doca_test_support::netns;
use support::args::{self, Common};
use support::report::Figure;
use support::soft::lane_cpu_ns;

/// The command line.
#[derive(Parser, Debug)]
#[command(name = "xdp_veth", about = "AF_XDP against AF_PACKET on a veth pair")]
struct Cli {
    /// Backends: af_packet, xdp (generic mode), xdp-native (driver mode)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "af_packet,xdp,xdp-native"
    )]
    backend: Vec<String>,
    /// Frame sizes in bytes
    #[arg(long, value_delimiter = ',', default_value = "64,1024")]
    size: Vec<usize>,
    /// Seconds per point
    #[arg(long)]
    seconds: Option<f64>,
    /// Directions: rx, tx
    #[arg(long, value_delimiter = ',', default_value = "rx,tx")]
    dir: Vec<String>,
    #[command(flatten)]
    common: Common,
}

const A: &str = "xva";
const B: &str = "xvb";
/// Where the sequence number sits: the first payload byte of an untagged UDP/IPv4 frame.
const SEQ_AT: usize = 42;
const BATCH: usize = 64;

/// A new namespace for this process's main thread (and the threads it starts), with the
/// veth pair up in it (made by netlink requests: no `ip` command needed).
fn setup() -> Result<(), String> {
    // SAFETY: plain unshare(2); affects this thread and what it starts later.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "unshare(CLONE_NEWNET): {}",
            std::io::Error::last_os_error()
        ));
    }
    let e = |e: std::io::Error| e.to_string();
    netns::Veth::new(A, B).create().map_err(e)?;
    netns::link_up(A).map_err(e)?;
    netns::link_up(B).map_err(e)?;
    // Nothing of the kernel's own (IPv6 autoconfiguration) on the pair.
    for dev in [A, B] {
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{dev}/disable_ipv6"), "1");
    }
    // Ask the kernel of this thread's namespace (sysfs shows the namespace it was
    // mounted in).
    let up = |d: &str| netns::link(d).is_ok_and(|l| l.has_carrier());
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if up(A) && up(B) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err("veth carrier did not come up".into())
}

fn ifindex(name: &str) -> u32 {
    let c = std::ffi::CString::new(name).expect("name");
    // SAFETY: c is a valid NUL-terminated string.
    unsafe { libc::if_nametoindex(c.as_ptr()) }
}

/// Frames `dev` has received, from this thread's namespace's `/proc/net/dev`.
fn rx_packets(dev: &str) -> u64 {
    let t = std::fs::read_to_string("/proc/thread-self/net/dev").unwrap_or_default();
    t.lines()
        .filter_map(|l| l.trim().split_once(':'))
        .find(|(name, _)| *name == dev)
        .and_then(|(_, v)| v.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// A raw socket sending on `dev`.
fn raw_tx(dev: &str) -> OwnedFd {
    // SAFETY: plain socket(2) call; checked below.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
    // SAFETY: fd is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_ll is plain data; all-zero is valid.
    let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_ifindex = ifindex(dev) as i32;
    // SAFETY: sa is a valid sockaddr_ll of the size passed.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    assert_eq!(r, 0, "bind: {}", std::io::Error::last_os_error());
    fd
}

fn frame(size: usize, dport: u16) -> Vec<u8> {
    let payload = vec![0u8; size.max(64) - SEQ_AT];
    udp4([10, 9, 0, 2], [10, 9, 0, 1], 4000, dport, &payload)
}

/// Counts frames and checks that sequence numbers only grow (a loss is a gap, not an
/// order fault).
#[derive(Default)]
struct CountSink {
    frames: AtomicU64,
    last_seq: AtomicU64,
    out_of_order: AtomicU64,
    last_ns: AtomicU64,
}

impl RxSink for CountSink {
    fn push(&self, frame: &[u8], _ts: u64) -> Result<(), DropReason> {
        let mut b = [0u8; 8];
        if let Some(s) = frame.get(SEQ_AT..SEQ_AT + 8) {
            b.copy_from_slice(s);
        }
        let seq = u64::from_be_bytes(b);
        let n = self.frames.fetch_add(1, Ordering::Relaxed);
        if n > 0 && seq <= self.last_seq.load(Ordering::Relaxed) {
            self.out_of_order.fetch_add(1, Ordering::Relaxed);
        }
        self.last_seq.store(seq, Ordering::Relaxed);
        Ok(())
    }

    fn flush(&self) {
        self.last_ns.store(mono_ns(), Ordering::Relaxed);
    }
}

fn mono_ns() -> u64 {
    // SAFETY: ts is a valid out-parameter.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn spec(backend: &str) -> PortSpec {
    match backend {
        "af_packet" => PortSpec::Linux {
            ifname: A.into(),
            ifindex: 0,
        },
        b => PortSpec::Xdp {
            ifname: A.into(),
            native: b == "xdp-native",
            zerocopy: false,
        },
    }
}

/// Opens the port of `backend`; `Err` with the reason when it is not what was asked for.
fn open(backend: &str) -> Result<Arc<Port>, String> {
    let port = Port::for_spec(&spec(backend)).map_err(|e| format!("open: {e:?}"))?;
    let kind = port.backend_kind().to_string();
    let ok = match backend {
        "af_packet" => kind == "af_packet",
        "xdp" => kind.starts_with("af_xdp"),
        _ => kind.contains("driver"),
    };
    if ok {
        Ok(port)
    } else {
        Err(format!(
            "port fell back to {kind} (see the log line for the reason)"
        ))
    }
}

fn rx_point(backend: &str, size: usize, secs: f64) -> Figure {
    let name = format!("xdp-veth/rx/{backend}/{size}B");
    let port = match open(backend) {
        Ok(p) => p,
        Err(why) => return Figure::skipped(name, None, why),
    };
    let sink = Arc::new(CountSink::default());
    port.set_default_queue(Some(0));
    if let Err(e) = port.register_rx_queue(0, sink.clone()) {
        return Figure::skipped(name, None, format!("register: {e:?}"));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let sender = std::thread::spawn(move || {
        let fd = raw_tx(B);
        let mut bufs: Vec<Vec<u8>> = (0..BATCH).map(|_| frame(size, 7000)).collect();
        // SAFETY: plain data, all-zero valid.
        let mut iov: Vec<libc::iovec> = vec![unsafe { std::mem::zeroed() }; BATCH];
        // SAFETY: as above.
        let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; BATCH];
        let mut seq = 1u64;
        let mut sent = 0u64;
        while !stop2.load(Ordering::Relaxed) {
            for i in 0..BATCH {
                bufs[i][SEQ_AT..SEQ_AT + 8].copy_from_slice(&(seq + i as u64).to_be_bytes());
                iov[i] = libc::iovec {
                    iov_base: bufs[i].as_mut_ptr().cast(),
                    iov_len: bufs[i].len(),
                };
                msgs[i].msg_hdr.msg_iov = &mut iov[i];
                msgs[i].msg_hdr.msg_iovlen = 1;
            }
            // SAFETY: msgs each point at one live iovec over a live buffer.
            let n = unsafe { libc::sendmmsg(fd.as_raw_fd(), msgs.as_mut_ptr(), BATCH as u32, 0) };
            if n > 0 {
                sent += n as u64;
                seq += n as u64;
            } else {
                std::thread::yield_now();
            }
        }
        sent
    });
    let cpu0 = lane_cpu_ns();
    let t0 = mono_ns();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let offered = sender.join().expect("sender");
    // Drain what is in flight (bounded).
    let end = Instant::now() + Duration::from_secs(1);
    let mut last = sink.frames.load(Ordering::Relaxed);
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
        let now = sink.frames.load(Ordering::Relaxed);
        if now == last {
            break;
        }
        last = now;
    }
    let cpu = lane_cpu_ns() - cpu0;
    let delivered = sink.frames.load(Ordering::Relaxed);
    let t1 = sink.last_ns.load(Ordering::Relaxed).max(t0 + 1);
    let c = port.counters();
    let kdrops = port.kernel_drops().map_or(String::new(), |n| {
        format!(", {n} dropped in the AF_XDP rings")
    });
    let kind = port.backend_kind().to_string();
    port.unregister_rx_queue(0);
    drop(port);
    let pps = delivered as f64 * 1e9 / (t1 - t0) as f64;
    Figure::info(
        name,
        pps / 1e6,
        "Mpps",
        format!(
            "{kind}; {delivered} of {offered} offered frames delivered ({:.1}%), {} out of order; \
             port received {} dropped {}{kdrops}; lane CPU {:.0} ns/frame",
            100.0 * delivered as f64 / offered.max(1) as f64,
            sink.out_of_order.load(Ordering::Relaxed),
            c.received,
            c.dropped(),
            cpu as f64 / delivered.max(1) as f64,
        ),
    )
}

fn tx_point(backend: &str, size: usize, secs: f64) -> Figure {
    let name = format!("xdp-veth/tx/{backend}/{size}B");
    let port = match open(backend) {
        Ok(p) => p,
        Err(why) => return Figure::skipped(name, None, why),
    };
    let mut bufs: Vec<Vec<u8>> = (0..BATCH).map(|_| frame(size, 7001)).collect();
    let rx0 = rx_packets(B);
    let mut seq = 1u64;
    let mut sent = 0u64;
    let mut again = 0u64;
    let cpu0 = thread_cpu_ns();
    let t0 = Instant::now();
    let limit = Duration::from_secs_f64(secs);
    while t0.elapsed() < limit {
        for (i, b) in bufs.iter_mut().enumerate() {
            b[SEQ_AT..SEQ_AT + 8].copy_from_slice(&(seq + i as u64).to_be_bytes());
        }
        let refs: Vec<&[u8]> = bufs.iter().map(Vec::as_slice).collect();
        let (n, r) = port.send_batch(&refs);
        sent += n as u64;
        seq += n as u64;
        if r.is_err() {
            again += 1;
            std::thread::yield_now();
        }
    }
    let dt = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_ns() - cpu0;
    std::thread::sleep(Duration::from_millis(200));
    let arrived = rx_packets(B) - rx0;
    let kind = port.backend_kind().to_string();
    drop(port);
    Figure::info(
        name,
        sent as f64 / dt / 1e6,
        "Mpps",
        format!(
            "{kind}; {sent} frames sent, {arrived} counted by the peer; {again} busy returns; \
             sender CPU {:.0} ns/frame",
            cpu as f64 / sent.max(1) as f64
        ),
    )
}

/// CPU time of the calling thread (ns).
fn thread_cpu_ns() -> u64 {
    // SAFETY: ts is a valid out-parameter.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn main() {
    let cli: Cli = args::parse();
    let secs = cli.seconds.unwrap_or(cli.common.pick(0.5, 2.0));
    if let Err(why) = setup() {
        for dir in &cli.dir {
            for b in &cli.backend {
                for s in &cli.size {
                    Figure::skipped(
                        format!("xdp-veth/{dir}/{b}/{s}B"),
                        None,
                        format!("no veth pair: {why}"),
                    )
                    .emit();
                }
            }
        }
        return;
    }
    for dir in &cli.dir {
        for &size in &cli.size {
            for b in &cli.backend {
                let f = match dir.as_str() {
                    "rx" => rx_point(b, size, secs),
                    _ => tx_point(b, size, secs),
                };
                f.emit();
            }
        }
    }
}
