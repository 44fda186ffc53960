//! pktgen: a UDP traffic tool for the samples, on any Linux interface (`lo` by default).
//!
//! ```sh
//! pktgen send -i lo -s 256 -c 1000 -r 100000 -d 5000         # 1000 frames at 100 kpps
//! pktgen send -i lo -c 256 -b 32 -w 2000000                  # bursts of 32, 2 ms apart
//! pktgen recv -i lo -d 5000 --expect 1000 --require-csum     # verify what arrives
//! ```
//!
//! Frames are Ethernet/IPv4/UDP with a payload holding a magic word, a sequence number, a
//! burst index and a byte pattern derived from the sequence number. The receiver verifies
//! every byte, counts sequence gaps and duplicates, checks IPv4/UDP checksums, measures
//! the spacing between bursts, prints one `summary` line of `key=value` pairs, and exits
//! with status 1 when an expectation (`--expect`, `--require-csum`, `--expect-spacing-ns`)
//! fails. Needs root (AF_PACKET), no Python and no `ip` binary.

#[path = "common/mod.rs"]
mod common;

use clap::{Parser, ValueEnum};
use common::cli::{self, fail, usage_error, General};
use common::packet::{self, FrameSpec, Parsed};
use common::raw_socket::RawSocket;
use common::signal;
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

const PROG: &str = "pktgen";

/// What pktgen does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Send test frames
    Send,
    /// Receive and verify test frames
    Recv,
}

/// The command line (pktgen is this project's tool: `-v` is DOCA's `--version`, so
/// `--verbose` has no short form).
#[derive(Parser, Debug)]
#[command(name = PROG, about = "pktgen: send or receive-and-verify UDP test frames")]
struct Cli {
    /// send or recv
    #[arg(value_enum)]
    mode: Mode,
    /// Interface
    #[arg(short = 'i', long, default_value = "lo")]
    iface: String,
    /// send: frame size in bytes incl. headers (58..1514)
    #[arg(short = 's', long, default_value_t = 128)]
    size: usize,
    /// send: frames to send [default: 1000]; recv: stop after this many pktgen frames
    #[arg(short = 'c', long)]
    count: Option<u64>,
    /// send: frames per second, 0 = as fast as possible
    #[arg(short = 'r', long, default_value_t = 0.0)]
    rate: f64,
    /// UDP destination port
    #[arg(short = 'd', long = "dst-port", default_value_t = 5000)]
    dst_port: u16,
    /// send: UDP source port
    #[arg(short = 'p', long = "src-port", default_value_t = 4000)]
    src_port: u16,
    /// send: frames per burst
    #[arg(short = 'b', long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    burst: u64,
    /// send: nanoseconds between burst starts
    #[arg(short = 'w', long = "burst-gap-ns", default_value_t = 0)]
    burst_gap_ns: u64,
    /// send: first sequence number
    #[arg(short = 'f', long = "first-seq", default_value_t = 0)]
    first_seq: u64,
    /// send: leave IPv4/UDP checksums 0
    #[arg(short = 'z', long = "no-csum")]
    no_csum: bool,
    /// send: destination MAC [default: 10:11:12:13:14:15]
    #[arg(short = 'm', long = "dst-mac")]
    dst_mac: Option<String>,
    /// recv: stop after this long without a frame, once one arrived
    #[arg(short = 't', long = "idle-ms", default_value_t = 2000)]
    idle_ms: u64,
    /// recv: give up after this long without any frame
    #[arg(short = 'W', long = "wait-ms", default_value_t = 10000)]
    wait_ms: u64,
    /// recv: require exactly sequence numbers 0..N, each once
    #[arg(short = 'e', long)]
    expect: Option<u64>,
    /// recv: require valid IPv4 and UDP checksums
    #[arg(short = 'C', long = "require-csum")]
    require_csum: bool,
    /// recv: require burst spacing within --tolerance of this
    #[arg(short = 'T', long = "expect-spacing-ns")]
    expect_spacing_ns: Option<u64>,
    /// recv: relative tolerance for --expect-spacing-ns
    #[arg(short = 'o', long, default_value_t = 0.1)]
    tolerance: f64,
    /// recv: create this file once listening
    #[arg(short = 'R', long = "ready-file")]
    ready_file: Option<String>,
    /// Print every frame
    #[arg(long)]
    verbose: bool,
    #[command(flatten)]
    general: General,
}

fn main() {
    // First: a Ctrl-C during setup must still lead to an orderly teardown.
    signal::install();
    let cli: Cli = cli::parse(|c: &Cli| &c.general);
    let code = match cli.mode {
        Mode::Send => send(&cli),
        Mode::Recv => recv(&cli),
    };
    std::process::exit(code);
}

fn send(cli: &Cli) -> i32 {
    let (iface, dst_port, size) = (cli.iface.as_str(), cli.dst_port, cli.size);
    if !(packet::MIN_FRAME..=packet::MAX_FRAME).contains(&size) {
        usage_error::<Cli>(format!(
            "--size {size} out of range {}..={}",
            packet::MIN_FRAME,
            packet::MAX_FRAME
        ));
    }
    let count = cli.count.unwrap_or(1000);
    let (rate, burst) = (cli.rate, cli.burst);
    let gap = Duration::from_nanos(cli.burst_gap_ns);
    let first = cli.first_seq;
    let mut spec = FrameSpec {
        dst_port,
        src_port: cli.src_port,
        ..FrameSpec::default()
    };
    if let Some(m) = &cli.dst_mac {
        spec.dst_mac =
            packet::parse_mac(m).unwrap_or_else(|| usage_error::<Cli>(format!("bad MAC {m:?}")));
    }
    let checksums = !cli.no_csum;
    let sock = RawSocket::open(iface).unwrap_or_else(|e| fail(PROG, e));
    let mut frame = vec![0u8; size];
    let start = Instant::now();
    let mut sent = 0u64;
    while sent < count && !signal::stop_requested() {
        let b = sent / burst;
        let due = if !gap.is_zero() {
            Some(gap * b as u32)
        } else if rate > 0.0 {
            Some(Duration::from_secs_f64(sent as f64 / rate))
        } else {
            None
        };
        if let Some(due) = due {
            wait_until(start + due);
        }
        packet::build_frame(&mut frame, &spec, first + sent, b as u32, checksums);
        if let Err(e) = sock.send(&frame) {
            fail(PROG, format!("send on {iface}: {e}"));
        }
        if cli.verbose {
            println!("sent seq={} burst={b}", first + sent);
        }
        sent += 1;
    }
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    println!(
        "summary mode=send sent={sent} bytes={} seconds={secs:.6} pps={:.0}",
        sent * size as u64,
        sent as f64 / secs
    );
    0
}

/// Sleeps most of the way, then spins, so bursts start on time.
fn wait_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > Duration::from_micros(200) {
            std::thread::sleep(left - Duration::from_micros(100));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// What the receiver saw.
#[derive(Default)]
struct Stats {
    good: u64,
    corrupt: u64,
    other: u64,
    csum_valid: u64,
    csum_invalid: u64,
    seqs: HashSet<u64>,
    /// Arrival time (ns) of the first frame of each burst.
    burst_first: BTreeMap<u32, u64>,
    bytes: u64,
}

fn recv(cli: &Cli) -> i32 {
    let (iface, dst_port) = (cli.iface.as_str(), cli.dst_port);
    let limit = cli.count;
    let idle = Duration::from_millis(cli.idle_ms);
    let wait = Duration::from_millis(cli.wait_ms);
    let (expect, spacing, tolerance) = (cli.expect, cli.expect_spacing_ns, cli.tolerance);
    let verbose = cli.verbose;
    let sock = RawSocket::open(iface).unwrap_or_else(|e| fail(PROG, e));
    sock.set_timeout(Duration::from_millis(50))
        .unwrap_or_else(|e| fail(PROG, e));
    if let Some(f) = &cli.ready_file {
        std::fs::write(f, b"ready\n").unwrap_or_else(|e| fail(PROG, format!("{f}: {e}")));
    }
    let mut st = Stats::default();
    let mut buf = vec![0u8; 65536];
    let started = Instant::now();
    let mut last_frame: Option<Instant> = None;
    loop {
        if signal::stop_requested() || limit.is_some_and(|n| st.good >= n) {
            break;
        }
        match last_frame {
            Some(t) if t.elapsed() >= idle => break,
            None if started.elapsed() >= wait => break,
            _ => {}
        }
        let (n, kernel_ts) = match sock.recv(&mut buf) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => fail(PROG, format!("recv on {iface}: {e}")),
        };
        let now = Instant::now();
        // Kernel timestamp when there is one, else this process's clock.
        let arrival = kernel_ts.unwrap_or_else(|| (now - started).as_nanos() as u64);
        match packet::parse_frame(&buf[..n], dst_port) {
            Parsed::Other => st.other += 1,
            Parsed::Corrupt(why) => {
                last_frame = Some(now);
                st.corrupt += 1;
                eprintln!("{PROG}: corrupt frame ({n} bytes): {why}");
            }
            Parsed::Good {
                seq,
                burst,
                checksums_valid,
            } => {
                last_frame = Some(now);
                st.good += 1;
                st.bytes += n as u64;
                st.seqs.insert(seq);
                st.burst_first.entry(burst).or_insert(arrival);
                if checksums_valid {
                    st.csum_valid += 1;
                } else {
                    st.csum_invalid += 1;
                }
                if verbose {
                    println!("recv seq={seq} burst={burst} len={n} csum_ok={checksums_valid}");
                }
            }
        }
    }
    report(&st, expect, cli.require_csum, spacing, tolerance)
}

/// Prints the summary line and checks the expectations; the exit status.
fn report(
    st: &Stats,
    expect: Option<u64>,
    require_csum: bool,
    spacing: Option<u64>,
    tolerance: f64,
) -> i32 {
    let unique = st.seqs.len() as u64;
    let (min, max) = (
        st.seqs.iter().min().copied().unwrap_or(0),
        st.seqs.iter().max().copied().unwrap_or(0),
    );
    let gaps = if unique == 0 {
        0
    } else {
        max - min + 1 - unique
    };
    let dups = st.good - unique;
    let times: Vec<u64> = st.burst_first.values().copied().collect();
    let spaces: Vec<u64> = times
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .collect();
    let (smin, smax, smean) = if spaces.is_empty() {
        (0, 0, 0)
    } else {
        (
            *spaces.iter().min().expect("non-empty"),
            *spaces.iter().max().expect("non-empty"),
            spaces.iter().sum::<u64>() / spaces.len() as u64,
        )
    };
    println!(
        "summary mode=recv received={} unique={unique} corrupt={} other={} bytes={} \
         first_seq={min} last_seq={max} gaps={gaps} dups={dups} csum_valid={} csum_invalid={} \
         bursts={} spacing_min_ns={smin} spacing_mean_ns={smean} spacing_max_ns={smax}",
        st.good,
        st.corrupt,
        st.other,
        st.bytes,
        st.csum_valid,
        st.csum_invalid,
        st.burst_first.len(),
    );
    let mut failures = Vec::new();
    if st.corrupt > 0 {
        failures.push(format!("{} corrupt frame(s)", st.corrupt));
    }
    if let Some(n) = expect {
        if unique != n || dups != 0 || (n > 0 && (min != 0 || max != n - 1)) {
            failures.push(format!(
                "expected sequence numbers 0..{n} once each; got {unique} unique ({min}..={max}), {dups} duplicate(s)"
            ));
        }
    }
    if require_csum && (st.csum_invalid > 0 || st.good == 0) {
        failures.push(format!(
            "{} frame(s) with missing or invalid checksums (of {})",
            st.csum_invalid, st.good
        ));
    }
    if let Some(t) = spacing {
        let (lo, hi) = (t as f64 * (1.0 - tolerance), t as f64 * (1.0 + tolerance));
        if spaces.is_empty() || spaces.iter().any(|&s| (s as f64) < lo || (s as f64) > hi) {
            failures.push(format!(
                "burst spacing {smin}..={smax} ns ({} bursts) not within {:.0}% of {t} ns",
                st.burst_first.len(),
                tolerance * 100.0
            ));
        }
    }
    for f in &failures {
        eprintln!("{PROG}: FAIL: {f}");
    }
    i32::from(!failures.is_empty())
}
