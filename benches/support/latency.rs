//! Latency of a lone frame (nothing else in flight, the receive side idle between frames): a
//! UDP datagram sent on `lo`, timed from just before `send_to` until it is read, (a) from a
//! plain UDP socket (the kernel's own path: the baseline) and (b) from a host RX ring behind
//! the AF_PACKET port, read with the device API's receive algorithm (`CpuRxq`) spinning, as
//! a receive kernel would. (b) shows how long the port's lane takes to see a single frame:
//! with a TPACKET_V3 ring that was the ring's block retire timer (1 ms or more).

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use super::soft::{port_spec, slot_size, Mode, SoftRx};

/// Percentiles of one latency run (microseconds).
#[derive(Debug, Clone, Copy)]
pub struct Latency {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Largest.
    pub max_us: f64,
    /// Frames timed (after the warm-up).
    pub samples: usize,
    /// Frames that never arrived within a second.
    pub lost: usize,
}

/// Frames sent before timing starts (lane start-up, first-send costs).
const WARMUP: usize = 20;
/// How long one frame may take before it counts as lost.
const GIVE_UP: Duration = Duration::from_secs(1);

/// Keeps sample `i` (its round trip started at `t`) once past the warm-up: its time in
/// microseconds when it came back (`got`), else one more loss.
fn record(i: usize, got: bool, t: Instant, v: &mut Vec<f64>, lost: &mut usize) {
    let us = t.elapsed().as_secs_f64() * 1e6;
    if i >= WARMUP {
        if got {
            v.push(us);
        } else {
            *lost += 1;
        }
    }
}

fn summarize(mut v: Vec<f64>, lost: usize) -> Result<Latency, String> {
    if v.is_empty() {
        return Err(format!("no frame arrived ({lost} lost)"));
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Ok(Latency {
        p50_us: at(0.5),
        p99_us: at(0.99),
        max_us: v[v.len() - 1],
        samples: v.len(),
        lost,
    })
}

fn payload(i: usize) -> [u8; 16] {
    let mut p = [0u8; 16];
    p[..8].copy_from_slice(b"lat-lone");
    p[8..].copy_from_slice(&(i as u64).to_be_bytes());
    p
}

/// Baseline: `samples` lone datagrams from one UDP socket to another on `lo`, `gap` apart,
/// each timed until a blocking `recv_from` returns it.
pub fn udp_socket_latency(samples: usize, gap: Duration) -> Result<Latency, String> {
    let e = |e: std::io::Error| e.to_string();
    let rx = UdpSocket::bind("127.0.0.1:0").map_err(e)?;
    rx.set_read_timeout(Some(GIVE_UP)).map_err(e)?;
    let tx = UdpSocket::bind("127.0.0.1:0").map_err(e)?;
    let dst = rx.local_addr().map_err(e)?;
    let mut buf = [0u8; 64];
    let (mut v, mut lost) = (Vec::with_capacity(samples), 0);
    for i in 0..WARMUP + samples {
        let p = payload(i);
        let t = Instant::now();
        tx.send_to(&p, dst).map_err(e)?;
        let got = loop {
            match rx.recv_from(&mut buf) {
                Ok((n, _)) if buf[..n] == p => break true,
                Ok(_) => continue,
                Err(_) => break false,
            }
        };
        record(i, got, t, &mut v, &mut lost);
        std::thread::sleep(gap);
    }
    summarize(v, lost)
}

/// The soft NIC: `samples` lone datagrams on `lo`, `gap` apart, each timed until the CPU
/// consumer of the port's one RX queue reads it. The datagrams end at a socket that drops
/// them in the kernel (no ICMP answers).
pub fn soft_lo_latency(samples: usize, gap: Duration) -> Result<Latency, String> {
    let e = |e: std::io::Error| e.to_string();
    let sink = UdpSocket::bind("127.0.0.1:0").map_err(e)?;
    super::udp::drop_all(sink.as_raw_fd()).map_err(e)?;
    let dst = sink.local_addr().map_err(e)?;
    let tx = UdpSocket::bind("127.0.0.1:0").map_err(e)?;
    let rx = SoftRx::open(&port_spec(Mode::Lo, "", 0), 1, 256, slot_size(64));
    let q = rx.queues[0].consumer();
    let (mut v, mut lost) = (Vec::with_capacity(samples), 0);
    for i in 0..WARMUP + samples {
        let p = payload(i);
        let t = Instant::now();
        tx.send_to(&p, dst).map_err(e)?;
        let mut got = false;
        while !got && t.elapsed() < GIVE_UP {
            // A 1 ns limit: take what is there and return (spinning, as a kernel polls).
            q.recv_with(64, 1, |_, _, f| got |= f.ends_with(&p));
        }
        record(i, got, t, &mut v, &mut lost);
        std::thread::sleep(gap);
    }
    // `q` reads the queue `rx` owns; locals go in reverse order, `q` first.
    summarize(v, lost)
}
