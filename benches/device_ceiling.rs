//! Figure 1: the device API ceiling (GPU-resident producer, kernel touching every packet's
//! headers, no CPU in the loop), reported against the HBM bandwidth limit.
//!
//! Measured today where a GPU is present: the HBM bandwidth as seen by device-to-device
//! copies (bytes read + bytes written per second), and the packet rates that bandwidth
//! allows if every packet is written once by the producer and its headers read once. The
//! receive-kernel figures print as skipped until the producer/consumer kernels land.

mod support;

use std::time::Instant;

use cudarc::driver::CudaContext;
use support::args::Args;
use support::report::{gpu_skip_reason, Figure};

const USAGE: &str = "device_ceiling [--queues 1,2,4,8,16] [--size 64,1024] [--mib N] [--quick]";

/// Bytes read + written per second by device-to-device copies of `bytes`, `reps` times.
fn d2d_bandwidth(bytes: usize, reps: usize) -> Result<(f64, String), String> {
    let ctx = CudaContext::new(0).map_err(|e| format!("CUDA context: {e:?}"))?;
    let name = ctx.name().unwrap_or_else(|_| "GPU 0".into());
    let s = ctx.default_stream();
    let src = s
        .alloc_zeros::<u8>(bytes)
        .map_err(|e| format!("alloc: {e:?}"))?;
    let mut dst = s
        .alloc_zeros::<u8>(bytes)
        .map_err(|e| format!("alloc: {e:?}"))?;
    // Warm-up copy (first-touch and clocks).
    s.memcpy_dtod(&src, &mut dst)
        .map_err(|e| format!("copy: {e:?}"))?;
    s.synchronize().map_err(|e| format!("sync: {e:?}"))?;
    let t = Instant::now();
    for _ in 0..reps {
        s.memcpy_dtod(&src, &mut dst)
            .map_err(|e| format!("copy: {e:?}"))?;
    }
    s.synchronize().map_err(|e| format!("sync: {e:?}"))?;
    let secs = t.elapsed().as_secs_f64();
    Ok((2.0 * bytes as f64 * reps as f64 / secs, name))
}

fn main() {
    let a = Args::parse(USAGE);
    let quick = a.quick();
    let queues: Vec<usize> = a.list("queues", &[1, 2, 4, 8, 16]);
    let sizes: Vec<usize> = a.list("size", &[64, 1024]);
    let mib: usize = a.num("mib", if quick { 256 } else { 1024 });
    let mut hbm = None;
    if support::report::gpu_present() {
        match d2d_bandwidth(mib << 20, if quick { 10 } else { 50 }) {
            Ok((bw, name)) => {
                hbm = Some(bw);
                Figure::info(
                    "device/hbm-d2d-copy-bandwidth",
                    bw / 1e9,
                    "GB/s",
                    format!("{name}; read+write bytes of {mib} MiB device-to-device copies; the limit figure 1 is reported against"),
                )
                .emit();
            }
            Err(e) => Figure::skipped(
                "device/hbm-d2d-copy-bandwidth",
                None,
                format!("failed: {e}"),
            )
            .emit(),
        }
    } else {
        Figure::skipped("device/hbm-d2d-copy-bandwidth", None, gpu_skip_reason("")).emit();
    }
    let reason = gpu_skip_reason("GPU-resident producer and receive kernels");
    for &size in &sizes {
        if let Some(bw) = hbm {
            // Each packet written once by the producer, its first 64 B read once.
            let per_pkt = size as f64 + 64.0_f64.min(size as f64);
            Figure::info(
                format!("device/hbm-bound/{size}B"),
                bw / per_pkt / 1e6,
                "Mpps",
                format!(
                    "upper bound from the measured HBM bandwidth: {per_pkt} B moved per packet; = {:.0} Gbit/s of packets",
                    bw / per_pkt * size as f64 * 8.0 / 1e9
                ),
            )
            .emit();
        }
        let target = if size == 64 {
            ">= 595 Mpps"
        } else {
            ">= 400 Gbit/s"
        };
        for &q in &queues {
            Figure::skipped(
                format!("device/ceiling/{size}B/{q}q"),
                Some(target),
                reason.clone(),
            )
            .emit();
        }
    }
}
