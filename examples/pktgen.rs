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

use common::cli::{fail, Cli, Opt};
use common::packet::{self, FrameSpec, Parsed};
use common::raw_socket::RawSocket;
use common::signal;
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

const PROG: &str = "pktgen";

const OPTS: &[Opt] = &[
    Opt {
        short: 'i',
        long: "iface",
        takes_value: true,
        help: "interface (default lo)",
    },
    Opt {
        short: 's',
        long: "size",
        takes_value: true,
        help: "send: frame size in bytes incl. headers (58..1514, default 128)",
    },
    Opt {
        short: 'c',
        long: "count",
        takes_value: true,
        help: "send: frames to send (default 1000); recv: stop after this many pktgen frames",
    },
    Opt {
        short: 'r',
        long: "rate",
        takes_value: true,
        help: "send: frames per second, 0 = as fast as possible (default 0)",
    },
    Opt {
        short: 'd',
        long: "dst-port",
        takes_value: true,
        help: "UDP destination port (default 5000)",
    },
    Opt {
        short: 'p',
        long: "src-port",
        takes_value: true,
        help: "send: UDP source port (default 4000)",
    },
    Opt {
        short: 'b',
        long: "burst",
        takes_value: true,
        help: "send: frames per burst (default 1)",
    },
    Opt {
        short: 'w',
        long: "burst-gap-ns",
        takes_value: true,
        help: "send: nanoseconds between burst starts (default 0)",
    },
    Opt {
        short: 'f',
        long: "first-seq",
        takes_value: true,
        help: "send: first sequence number (default 0)",
    },
    Opt {
        short: 'z',
        long: "no-csum",
        takes_value: false,
        help: "send: leave IPv4/UDP checksums 0",
    },
    Opt {
        short: 'm',
        long: "dst-mac",
        takes_value: true,
        help: "send: destination MAC (default 10:11:12:13:14:15)",
    },
    Opt {
        short: 't',
        long: "idle-ms",
        takes_value: true,
        help: "recv: stop after this long without a frame, once one arrived (default 2000)",
    },
    Opt {
        short: 'W',
        long: "wait-ms",
        takes_value: true,
        help: "recv: give up after this long without any frame (default 10000)",
    },
    Opt {
        short: 'e',
        long: "expect",
        takes_value: true,
        help: "recv: require exactly sequence numbers 0..N, each once",
    },
    Opt {
        short: 'C',
        long: "require-csum",
        takes_value: false,
        help: "recv: require valid IPv4 and UDP checksums",
    },
    Opt {
        short: 'T',
        long: "expect-spacing-ns",
        takes_value: true,
        help: "recv: require burst spacing within --tolerance of this",
    },
    Opt {
        short: 'o',
        long: "tolerance",
        takes_value: true,
        help: "recv: relative tolerance for --expect-spacing-ns (default 0.1)",
    },
    Opt {
        short: 'R',
        long: "ready-file",
        takes_value: true,
        help: "recv: create this file once listening",
    },
    Opt {
        short: 'v',
        long: "verbose",
        takes_value: false,
        help: "print every frame",
    },
];

fn main() {
    // First: a Ctrl-C during setup must still lead to an orderly teardown.
    signal::install();
    let cli = Cli::parse(
        PROG,
        "pktgen: send or receive-and-verify UDP test frames (mode: send | recv)",
        OPTS,
    );
    let mode = match cli.positional() {
        [m] => m.as_str(),
        [] => cli.usage_error("missing mode: send or recv"),
        _ => cli.usage_error("exactly one mode expected: send or recv"),
    };
    let iface: String = cli.get_or("iface", "lo".to_string());
    let dst_port: u16 = cli.get_or("dst-port", 5000);
    let code = match mode {
        "send" => send(&cli, &iface, dst_port),
        "recv" => recv(&cli, &iface, dst_port),
        other => cli.usage_error(&format!("unknown mode {other:?}: send or recv")),
    };
    std::process::exit(code);
}

fn send(cli: &Cli, iface: &str, dst_port: u16) -> i32 {
    let size: usize = cli.get_or("size", 128);
    if !(packet::MIN_FRAME..=packet::MAX_FRAME).contains(&size) {
        cli.usage_error(&format!(
            "--size {size} out of range {}..={}",
            packet::MIN_FRAME,
            packet::MAX_FRAME
        ));
    }
    let count: u64 = cli.get_or("count", 1000);
    let rate: f64 = cli.get_or("rate", 0.0);
    let burst: u64 = cli.get_or("burst", 1);
    if burst == 0 {
        cli.usage_error("--burst must be at least 1");
    }
    let gap = Duration::from_nanos(cli.get_or("burst-gap-ns", 0));
    let first: u64 = cli.get_or("first-seq", 0);
    let mut spec = FrameSpec {
        dst_port,
        src_port: cli.get_or("src-port", 4000),
        ..FrameSpec::default()
    };
    if let Some(m) = cli.get::<String>("dst-mac") {
        spec.dst_mac =
            packet::parse_mac(&m).unwrap_or_else(|| cli.usage_error(&format!("bad MAC {m:?}")));
    }
    let checksums = !cli.flag("no-csum");
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
        if cli.flag("verbose") {
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

fn recv(cli: &Cli, iface: &str, dst_port: u16) -> i32 {
    let limit: Option<u64> = cli.get("count");
    let idle = Duration::from_millis(cli.get_or("idle-ms", 2000));
    let wait = Duration::from_millis(cli.get_or("wait-ms", 10000));
    let expect: Option<u64> = cli.get("expect");
    let spacing: Option<u64> = cli.get("expect-spacing-ns");
    let tolerance: f64 = cli.get_or("tolerance", 0.1);
    let verbose = cli.flag("verbose");
    let sock = RawSocket::open(iface).unwrap_or_else(|e| fail(PROG, e));
    sock.set_timeout(Duration::from_millis(50))
        .unwrap_or_else(|e| fail(PROG, e));
    if let Some(f) = cli.get::<String>("ready-file") {
        std::fs::write(&f, b"ready\n").unwrap_or_else(|e| fail(PROG, format!("{f}: {e}")));
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
    report(&st, expect, cli.flag("require-csum"), spacing, tolerance)
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
