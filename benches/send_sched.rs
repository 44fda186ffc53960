//! Figure 4: send scheduling accuracy, the p50/p99 error of wait-on-time sends against the
//! requested time (CLOCK_REALTIME).
//!
//! Measured today with a CPU producer in place of the GPU kernel: the producer writes
//! WAIT + SEND descriptor pairs (the device API's `txq_wait_send` algorithm) into a host TX
//! ring with requested times `--interval-us` apart, each about 1 ms ahead of its time, the TX proxy thread honours them, and the
//! frame output records when each frame left the proxy. The error is the proxy's; the GPU
//! path uses the same proxy with the descriptors written by a kernel, and prints as skipped
//! until it lands.

mod support;

use std::sync::{Arc, Mutex};

use doca_soft::error::DocaResult;
use doca_soft::eth::ring::{ns_to_wait_on_time, realtime_ns};
use doca_soft::eth::tx_proxy::{FrameOut, TxRingCfg};
use support::args::Args;
use support::report::{gpu_skip_reason, Figure};
use support::tx::SoftTx;
use support::udp;

const USAGE: &str = "send_sched [--sends N] [--interval-us N] [--lead-us N] [--quick]";

/// Records the send time of each frame by its sequence number.
struct Recorder {
    times: Mutex<Vec<u64>>,
}

impl FrameOut for Recorder {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        let now = realtime_ns();
        if let Some((_, seq)) = udp::parse_frame(frame) {
            let mut t = self.times.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(slot) = t.get_mut(seq as usize) {
                *slot = now;
            }
        }
        Ok(())
    }
}

fn percentile(sorted: &[i64], p: f64) -> i64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn main() {
    let a = Args::parse(USAGE);
    let quick = a.quick();
    let n: usize = a.num("sends", if quick { 2_000 } else { 20_000 });
    let interval: u64 = a.num("interval-us", 20);
    let lead: u64 = a.num("lead-us", 2_000);
    let rec = Arc::new(Recorder {
        times: Mutex::new(vec![0; n]),
    });
    let frames: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut f = vec![0u8; 64];
            udp::build_frame(&mut f, 40000, udp::BASE_PORT, 0, i as u64);
            f
        })
        .collect();
    let cfg = TxRingCfg {
        max_burst: 256,
        wait_on_time: true,
        ..Default::default()
    };
    let tx = SoftTx::new(frames, cfg, rec.clone());
    let t0 = realtime_ns() + lead * 1000;
    let requested: Vec<u64> = (0..n as u64).map(|i| t0 + i * interval * 1000).collect();
    for (i, &t) in requested.iter().enumerate() {
        // Submit about a millisecond ahead (as a kernel would, a little before each slot),
        // sleeping meanwhile so the producer does not compete with the proxy for a core.
        while realtime_ns() + 1_000_000 < t {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        tx.txq
            .wait_send(ns_to_wait_on_time(t), tx.addr(i), 1u32.to_be(), 64, false);
    }
    // Let the last scheduled send go out.
    while tx.sent() < n as u64 && realtime_ns() < requested[n - 1] + 1_000_000_000 {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    let sent = tx.finish();
    let times = rec.times.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut err: Vec<i64> = times
        .iter()
        .zip(&requested)
        .filter(|(s, _)| **s != 0)
        .map(|(s, r)| *s as i64 - *r as i64)
        .collect();
    err.sort_unstable();
    let early = err.iter().filter(|e| **e < 0).count();
    if err.is_empty() {
        Figure::skipped(
            "tx/wait-on-time-error-p50/soft-cpu-producer",
            None,
            "no frame was sent",
        )
        .emit();
    } else {
        for (p, q) in [("p50", 0.5), ("p99", 0.99)] {
            Figure::info(
                format!("tx/wait-on-time-error-{p}/soft-cpu-producer"),
                percentile(&err, q) as f64 / 1000.0,
                "us",
                format!(
                    "send time - requested time; {sent} of {n} sends, {interval} us apart; {early} early; max {:.1} us; TX proxy thread, CPU producer",
                    *err.last().unwrap_or(&0) as f64 / 1000.0
                ),
            )
            .emit();
        }
    }
    let reason = gpu_skip_reason("GPU TX kernel with wait-on-time and txq glue");
    for p in ["p50", "p99"] {
        Figure::skipped(
            format!("tx/wait-on-time-error-{p}/gpu"),
            None,
            reason.clone(),
        )
        .emit();
    }
}
