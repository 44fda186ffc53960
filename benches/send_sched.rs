//! Figure 4: send scheduling accuracy, the p50/p99 error of wait-on-time sends against the
//! requested time (CLOCK_REALTIME).
//!
//! Measured today with a CPU producer in place of the GPU kernel: the producer writes
//! WAIT + SEND descriptor pairs (the device API's `txq_wait_send` algorithm) into a host TX
//! ring with requested times `--interval-us` apart, each about 1 ms ahead of its time, the TX proxy thread honours them, and the
//! frame output records when each frame left the proxy. The error is the proxy's.
//!
//! The GPU path (where there is a GPU): a `doca_eth_txq` with wait-on-time offload on one
//! side of an in-memory wire, frames in GPU memory, the kernel `bench_wait_send`
//! (kernels/bench_tx.cu) issuing `txq_wait_send` with values from
//! `doca_eth_txq_calculate_timestamp`, and a host RX ring on the other side whose completion
//! timestamps (taken when the proxy put each frame on the wire) give the send times.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cudarc::driver::{LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use doca_soft::testing::capi::doca_eth_txq::doca_eth_txq_calculate_timestamp;
use support::gpu_rx::{check, kernels_dir, BenchDev, GpuEnv};
use support::gpu_tx::GpuTxQueue;
use support::soft::{port_spec, HostQueue, Mode};

use clap::Parser;
use doca_soft::testing::capi::doca_error::DocaResult;
use doca_soft::testing::{ns_to_wait_on_time, realtime_ns, FrameOut, Port, TxRingCfg};
use support::args::{self, Common};
use support::report::Figure;
use support::tx::SoftTx;
use support::udp;

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "send_sched",
    about = "How late scheduled (wait-on-time) sends leave"
)]
struct Cli {
    /// Frames to send
    #[arg(long)]
    sends: Option<usize>,
    /// Microseconds between scheduled sends
    #[arg(long = "interval-us", default_value_t = 20)]
    interval_us: u64,
    /// Microseconds between scheduling and the first send
    #[arg(long = "lead-us", default_value_t = 2_000)]
    lead_us: u64,
    #[command(flatten)]
    common: Common,
}

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

/// Send-time errors (ns) of `n` GPU wait-on-time sends `interval` us apart.
fn gpu_errors(env: &GpuEnv, n: usize, interval: u64, lead: u64) -> Result<Vec<i64>, String> {
    let fatbin = kernels_dir().join("bench_tx.fatbin");
    let module = env
        .ctx()
        .load_module(Ptx::from_file(&fatbin))
        .map_err(|e| format!("loading {}: {e:?}", fatbin.display()))?;
    let wire = format!("gsched{}", std::process::id());
    let dev = BenchDev::new(Mode::Wire, &wire);
    let peer =
        Port::for_spec(&port_spec(Mode::Wire, &wire, 1)).map_err(|e| format!("peer: {e:?}"))?;
    let rx = HostQueue::new(8192, 128);
    peer.register_rx_queue(0, rx.ring.clone())
        .map_err(|e| format!("register: {e:?}"))?;
    peer.set_default_queue(Some(0));
    let result = (|| {
        let slot = 128usize;
        let mut buf = vec![0u8; n * slot];
        for (i, f) in buf.chunks_mut(slot).enumerate() {
            udp::build_frame(&mut f[..64], 40000, udp::BASE_PORT, 0, i as u64);
        }
        let q = GpuTxQueue::new(env, dev.0, 0, &buf, true)?;
        // Far enough ahead for the kernel launch.
        let t0 = realtime_ns() + lead * 1000 + 50_000_000;
        let requested: Vec<u64> = (0..n as u64).map(|i| t0 + i * interval * 1000).collect();
        let mut waits = Vec::with_capacity(n);
        for &t in &requested {
            let mut w = 0u64;
            // SAFETY: live, started queue; valid out-pointer.
            check("doca_eth_txq_calculate_timestamp", unsafe {
                doca_eth_txq_calculate_timestamp(q.q, t, &mut w)
            })?;
            waits.push(w);
        }
        let e =
            |what: &'static str| move |err: cudarc::driver::DriverError| format!("{what}: {err:?}");
        let stream = env.ctx().default_stream();
        let waits_d = stream.clone_htod(&waits).map_err(e("waits"))?;
        let f = module
            .load_function("bench_wait_send")
            .map_err(e("bench_wait_send"))?;
        let (handle, base, slot32, size32, count) =
            (q.handle, q.mem as u64, slot as u32, 64u32, n as u64);
        let mut b = stream.launch_builder(&f);
        b.arg(&handle)
            .arg(&waits_d)
            .arg(&base)
            .arg(&q.mkey_be)
            .arg(&slot32)
            .arg(&size32)
            .arg(&count);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match bench_wait_send; queue and frames outlive the kernel.
        unsafe { b.launch(cfg) }.map_err(e("launch bench_wait_send"))?;
        let mut sent_at = vec![0u64; n];
        let mut got = 0usize;
        let c = rx.consumer();
        let deadline = requested[n - 1] + 2_000_000_000;
        while got < n && realtime_ns() < deadline {
            c.recv_with(64, 1_000_000, |_, a, fr| {
                if let Some((_, seq)) = udp::parse_frame(fr) {
                    if let Some(s) = sent_at.get_mut(seq as usize) {
                        if *s == 0 {
                            *s = a.timestamp_ns;
                            got += 1;
                        }
                    }
                }
            });
        }
        stream.synchronize().map_err(e("kernel"))?;
        drop(q);
        Ok(sent_at
            .iter()
            .zip(&requested)
            .filter(|(s, _)| **s != 0)
            .map(|(s, r)| *s as i64 - *r as i64)
            .collect())
    })();
    peer.set_default_queue(None);
    peer.unregister_rx_queue(0);
    std::thread::sleep(Duration::from_millis(1));
    drop(dev);
    result
}

fn percentile(sorted: &[i64], p: f64) -> i64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn main() {
    let a: Cli = args::parse();
    let n = a.sends.unwrap_or(a.common.pick(2_000, 20_000));
    let (interval, lead) = (a.interval_us, a.lead_us);
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
    let gpu = GpuEnv::open().and_then(|env| {
        let mut e = gpu_errors(&env, n, interval, lead).map_err(|e| format!("failed: {e}"))?;
        e.sort_unstable();
        Ok((e, env.name.clone()))
    });
    for (p, q) in [("p50", 0.5), ("p99", 0.99)] {
        let name = format!("tx/wait-on-time-error-{p}/gpu");
        match &gpu {
            Ok((e, gpu_name)) if !e.is_empty() => Figure::info(
                &name,
                percentile(e, q) as f64 / 1000.0,
                "us",
                format!(
                    "send time (frame on the wire) - requested time; {} of {n} sends, {interval} us apart; {} early; send kernel on {gpu_name}, TX proxy thread",
                    e.len(),
                    e.iter().filter(|x| **x < 0).count()
                ),
            )
            .emit(),
            Ok(_) => Figure::skipped(&name, None, "no frame arrived").emit(),
            Err(reason) => Figure::skipped(&name, None, reason.clone()).emit(),
        }
    }
}
