//! Correctness of the bench support code (no timing here).

#[path = "mod.rs"]
mod support;

use doca_test_support::alloc::{count, CountingAlloc};
use support::report::{json_str, Figure, Status};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Counting regions see every thread, so the tests of this file run one at a time: every
/// test takes this lock.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn counting_allocator_counts_allocations_in_the_region() {
    let _serial = serial();
    let (v, c) = count(|| {
        let a: Vec<u64> = Vec::with_capacity(100);
        let b = Box::new([0u8; 64]);
        std::hint::black_box((a, b))
    });
    drop(v);
    assert!(c.allocs >= 2, "two allocations made, counted {}", c.allocs);
    assert!(c.bytes >= 800 + 64, "bytes counted {}", c.bytes);
}

#[test]
fn counting_allocator_counts_nothing_for_allocation_free_code() {
    let _serial = serial();
    let data = vec![1u64; 1024];
    // The region sees every thread, the test harness's too (it starts the next test while
    // this one runs): code that allocates would show in every try, so one clean try of five
    // proves it allocates nothing.
    let tries: Vec<u64> = (0..5)
        .map(|_| {
            let (sum, c) = count(|| std::hint::black_box(&data).iter().sum::<u64>());
            assert_eq!(sum, 1024);
            c.allocs
        })
        .collect();
    assert!(
        tries.contains(&0),
        "allocations counted in every try: {tries:?}"
    );
}

#[test]
fn counting_allocator_sees_other_threads() {
    let _serial = serial();
    let (_, c) = count(|| {
        std::thread::spawn(|| std::hint::black_box(vec![0u8; 4096]).len())
            .join()
            .unwrap()
    });
    assert!(
        c.bytes >= 4096,
        "the spawned thread's vec was counted: {}",
        c.bytes
    );
}

#[test]
fn figure_json_has_every_key_and_the_ratio() {
    let _serial = serial();
    let f = Figure::info("x/y", 3.0, "Mpps", "a \"quoted\" note")
        .with_baseline("base", 2.0)
        .with_target("ratio >= 1.0", Status::Pass);
    let j = f.to_json();
    for k in [
        "\"figure\":\"x/y\"",
        "\"value\":3",
        "\"unit\":\"Mpps\"",
        "\"baseline\":\"base\"",
        "\"baseline_value\":2",
        "\"target\":\"ratio >= 1.0\"",
        "\"ratio\":1.5",
        "\"status\":\"pass\"",
        "\"notes\":\"a \\\"quoted\\\" note\"",
    ] {
        assert!(j.contains(k), "{k} missing in {j}");
    }
    let s = Figure::skipped("g", None, "needs GPU").to_json();
    assert!(
        s.contains("\"value\":null") && s.contains("\"status\":\"skipped\""),
        "{s}"
    );
    assert_eq!(json_str("a\nb\u{1}"), "\"a\\nb\\u0001\"");
}

#[test]
fn frames_carry_sequence_numbers_that_parse_back() {
    let _serial = serial();
    for size in [64usize, 1024] {
        let mut f = vec![0u8; size];
        support::udp::build_frame(&mut f, 3, 9000, 7, 123_456);
        assert_eq!(f.len(), size);
        let (sender, seq) = support::udp::parse_frame(&f).expect("our frame");
        assert_eq!((sender, seq), (7, 123_456));
        let payload = &f[support::udp::HEADERS..];
        assert_eq!(support::udp::parse_payload(payload), Some((7, 123_456)));
    }
    assert_eq!(support::udp::parse_frame(&[0u8; 64]), None);
}

#[test]
fn seq_tracker_detects_loss_and_duplicates() {
    let _serial = serial();
    let mut t = support::udp::SeqTracker::new(2, 10);
    for s in 0..10 {
        t.note(0, s);
    }
    for s in 0..9 {
        t.note(1, s);
    }
    t.note(1, 3);
    assert_eq!(t.received(), 19);
    assert_eq!(t.lost(), 1);
    assert_eq!(t.duplicates(), 1);
}

#[test]
fn latencies_quantiles_are_nearest_rank_of_sorted_samples() {
    let _serial = serial();
    use support::urom::Latencies;
    let l = Latencies::new((1..=100).rev().map(f64::from).collect());
    assert_eq!(l.median(), 50.0);
    assert_eq!(l.p99(), 99.0);
    assert_eq!(l.quantile(1.0), 100.0);
    assert_eq!(l.quantile(0.0), 1.0);
    assert!(Latencies::new(Vec::new()).median().is_nan());
}

#[test]
fn zero_loss_search_retries_paced_and_gives_up_on_a_crawl() {
    // It allocates: keep it out of the counting tests' regions.
    let _serial = serial();
    use support::udp::zero_loss_search;
    // (lost, delivered pps) per attempt; records the rates asked for.
    let run = |script: Vec<(u64, f64)>, total: u64| {
        let mut asked = Vec::new();
        let mut it = script.into_iter();
        let r = zero_loss_search::<(u64, f64), ()>(
            3,
            total,
            |rate| {
                asked.push(rate);
                Ok(it.next().expect("no more attempts scripted"))
            },
            |r| r.0,
            |r| r.1,
        )
        .unwrap();
        (r, asked)
    };
    // Loss, then zero loss at 90% of the delivered rate.
    let ((r, paced), asked) = run(vec![(5, 1e6), (0, 0.9e6)], 100_000);
    assert_eq!(r.0, 0);
    assert_eq!(asked, vec![0.0, 0.9e6]);
    assert_eq!(paced, 0.9e6);
    // A run that delivered 1000 pps of 1e6 frames: a paced retry would take ~18 min.
    let ((r, paced), asked) = run(vec![(999_000, 1000.0)], 1_000_000);
    assert_eq!(r.0, 999_000, "the lossy result is kept");
    assert_eq!(asked, vec![0.0], "no paced retry");
    assert_eq!(paced, 0.0);
}

#[test]
fn an_isolated_point_that_stalls_is_killed_in_time_with_its_trace() {
    use std::process::Command;
    use std::time::{Duration, Instant};
    use support::point::{run_command, Outcome};
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "echo '#trace lane 0: 5 frames'; echo '#trace lane 0: 5 frames, still'; sleep 30",
    ]);
    let start = Instant::now();
    let out = run_command("stall-test", cmd, Duration::from_millis(700));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the stalled point was not cut at its bound: {:?}",
        start.elapsed()
    );
    match out {
        Outcome::Stall { secs, trace } => {
            assert!(secs >= 0.6, "stalled after {secs} s, before its bound");
            assert_eq!(
                trace,
                vec!["lane 0: 5 frames", "lane 0: 5 frames, still"],
                "the trace lines it printed"
            );
        }
        _ => panic!("a point that never prints its result must stall"),
    }
}

#[test]
fn an_isolated_point_that_ends_hands_back_its_result_and_trace() {
    use std::process::Command;
    use std::time::Duration;
    use support::point::{run_command, Outcome};
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo '#trace t=0.5s'; echo '#result ok 1 2 3 4 5 6'"]);
    match run_command("done-test", cmd, Duration::from_secs(20)) {
        Outcome::Done { result, trace } => {
            assert_eq!(result, "ok 1 2 3 4 5 6");
            assert_eq!(trace, vec!["t=0.5s"]);
        }
        _ => panic!("the point printed its result"),
    }
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo '#trace before crash'; exit 3"]);
    match run_command("crash-test", cmd, Duration::from_secs(20)) {
        Outcome::Failed { why, trace } => {
            assert!(why.contains("without a result"), "{why}");
            assert_eq!(trace, vec!["before crash"]);
        }
        _ => panic!("a point that exits without a result failed"),
    }
}

#[test]
fn a_stalled_figure_says_stall() {
    let f = Figure::stalled("rx/x", Some("t"), "STALL: trace");
    assert_eq!(f.status, Status::Stall);
    assert!(
        f.to_json().contains("\"status\":\"STALL\""),
        "{}",
        f.to_json()
    );
    assert!(f.value.is_none());
}
