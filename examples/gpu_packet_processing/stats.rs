//! The statistics thread: reads the per-batch counts the UDP and TCP kernels post through
//! their semaphores and prints cumulative totals (since start, never reset) every 5
//! seconds, in the original's exact format.

#![allow(dead_code)]

use cuda_kernels::{StatsTcp, StatsUdp};
use std::fmt::Write as _;

/// Seconds between two statistics blocks (a block is printed once more than this passed).
pub const PRINT_INTERVAL_NS: u128 = 5_000_000_000;

/// Adds the named counters of batch `$b` to `$t`, wrapping as the original's counters do.
macro_rules! add_wrapping {
    ($t:expr, $b:expr, $($f:ident),+ $(,)?) => {
        $($t.$f = $t.$f.wrapping_add($b.$f);)+
    };
}

/// Cumulative UDP counts of one queue: the batch counters summed (wrapping).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpTotals(pub StatsUdp);

impl UdpTotals {
    /// Adds one batch.
    pub fn add(&mut self, b: &StatsUdp) {
        add_wrapping!(
            self.0,
            b,
            dns,
            dns_bytes,
            others,
            others_bytes,
            total,
            total_bytes
        );
    }
}

/// Cumulative TCP counts of one queue: 32-bit counters that wrap, as the original's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpTotals(pub StatsTcp);

impl TcpTotals {
    /// Adds one batch.
    pub fn add(&mut self, b: &StatsTcp) {
        add_wrapping!(
            self.0, b, http, http_head, http_get, http_post, tcp_syn, tcp_fin, tcp_ack, others,
            total
        );
    }
}

/// Gbit/s of `bytes` over `secs` seconds (0 when no time passed).
fn gbps(bytes: u64, secs: i64) -> f64 {
    if secs <= 0 {
        return 0.0;
    }
    (bytes as f64 * 8.0) / (secs as f64 * 1e9)
}

/// One statistics block, byte for byte as the original prints it (TCP counters are 32-bit
/// and printed signed, as its `%d`).
pub fn format_block(secs: i64, udp: &[UdpTotals], tcp: &[TcpTotals]) -> String {
    let mut s = format!("\nSeconds {secs}\n");
    for (i, u) in udp.iter().enumerate() {
        let u = &u.0;
        let _ = writeln!(
            s,
            "[UDP] QUEUE: {i} DNS: {} DNS_BW: {:.3} Gbps OTHER: {} OTHER_BW: {:.3} Gbps TOTAL: {} TOTAL_BW: {:.3} Gbps",
            u.dns as i64,
            gbps(u.dns_bytes, secs),
            u.others as i64,
            gbps(u.others_bytes, secs),
            u.total as i64,
            gbps(u.total_bytes, secs)
        );
    }
    for (i, t) in tcp.iter().enumerate() {
        let t = &t.0;
        let _ = writeln!(
            s,
            "[TCP] QUEUE: {i} HTTP: {} HTTP HEAD: {} HTTP GET: {} HTTP POST: {} TCP [SYN: {} FIN: {} ACK: {}] OTHER: {} TOTAL: {}",
            t.http as i32,
            t.http_head as i32,
            t.http_get as i32,
            t.http_post as i32,
            t.tcp_syn as i32,
            t.tcp_fin as i32,
            t.tcp_ack as i32,
            t.others as i32,
            t.total as i32
        );
    }
    s
}

/// Where the statistics thread reads batches from: the semaphores, or a test's queue.
pub trait BatchSource {
    /// The next UDP batch of queue `q`, if one is ready (and frees it).
    fn next_udp(&mut self, q: usize) -> Result<Option<StatsUdp>, String>;
    /// The next TCP batch of queue `q`, if one is ready (and frees it).
    fn next_tcp(&mut self, q: usize) -> Result<Option<StatsTcp>, String>;
}

/// The accumulated totals and the print clock of the statistics thread.
pub struct Reporter {
    /// Per UDP queue.
    pub udp: Vec<UdpTotals>,
    /// Per TCP queue.
    pub tcp: Vec<TcpTotals>,
    start_sec: i64,
    last_print_ns: u128,
}

impl Reporter {
    /// Totals for `queues` queues, starting the clock at `now` (seconds, nanoseconds).
    pub fn new(queues: usize, now_sec: i64, now_ns: u128) -> Reporter {
        Reporter {
            udp: vec![UdpTotals::default(); queues],
            tcp: vec![TcpTotals::default(); queues],
            start_sec: now_sec,
            last_print_ns: now_ns,
        }
    }

    /// One pass: at most one batch per queue and protocol (as the original). Returns
    /// whether anything was read.
    pub fn poll(&mut self, src: &mut dyn BatchSource) -> Result<bool, String> {
        let mut any = false;
        for q in 0..self.udp.len() {
            if let Some(b) = src.next_udp(q)? {
                self.udp[q].add(&b);
                any = true;
            }
            if let Some(b) = src.next_tcp(q)? {
                self.tcp[q].add(&b);
                any = true;
            }
        }
        Ok(any)
    }

    /// The block to print if more than 5 s passed since the last one (then restarts the
    /// interval at `now`).
    pub fn maybe_block(&mut self, now_sec: i64, now_ns: u128) -> Option<String> {
        if now_ns.saturating_sub(self.last_print_ns) <= PRINT_INTERVAL_NS {
            return None;
        }
        self.last_print_ns = now_ns;
        Some(format_block(now_sec - self.start_sec, &self.udp, &self.tcp))
    }
}

/// CLOCK_REALTIME as (seconds, nanoseconds since the epoch).
pub fn realtime() -> (i64, u128) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, d.as_nanos())
}
