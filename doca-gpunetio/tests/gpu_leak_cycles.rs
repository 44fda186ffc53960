//! Many create/destroy cycles of GPU memory, semaphores and queues with a GPU data path
//! leak nothing: device memory (`cuMemGetInfo`) and host RSS are flat before and after.
//! Needs a CUDA driver (prints why it skips without one).
//!
//! `DOCA_LEAK_CYCLES` sets the cycle count (default 10000; at least 100, fewer could hide
//! a small leak in the slack). Run it alone, in release, so other tests' memory does not
//! move the measures:
//!
//! ```text
//! cargo test --release -p doca-gpunetio --test gpu_leak_cycles -- --nocapture
//! ```

// The queue cycles use the software runtime's wire ports.
#![cfg(doca_backend = "soft")]

mod eth_support;

use doca_gpunetio::{
    take_drop_errors, EthRxq, EthTxq, Gpu, GpuBuffer, MemType, RxqType, Semaphore,
};
use doca_test_support::require_cuda;
use eth_support::{declare_wires, wire};

/// Fewest cycles the test accepts.
const MIN_CYCLES: usize = 100;
/// Cycles run before the first measure: lazy initialisation and allocator caches settle.
const WARM_UP: usize = 50;
/// Largest growth taken as noise. A cycle allocates over 1 MiB of device memory, so a
/// device leak of one object per cycle shows after a few cycles; a host leak of 1 KiB per
/// cycle exceeds the host slack after 8192 cycles.
const DEVICE_SLACK: usize = 4 << 20;
const HOST_SLACK: usize = 8 << 20;

fn cycles() -> usize {
    let n = std::env::var("DOCA_LEAK_CYCLES")
        .ok()
        .map(|v| {
            v.trim()
                .parse::<usize>()
                .expect("DOCA_LEAK_CYCLES: a number")
        })
        .unwrap_or(10_000);
    assert!(
        n >= MIN_CYCLES,
        "DOCA_LEAK_CYCLES={n}: at least {MIN_CYCLES} cycles, or a leak hides in the slack"
    );
    n
}

/// Free device memory in bytes.
fn device_free(gpu: &Gpu) -> usize {
    gpu.cuda().bind_to_thread().unwrap();
    cudarc::driver::result::mem_get_info().unwrap().0
}

/// Resident set of this process in bytes.
fn host_rss() -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: usize = s
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status");
    kb * 1024
}

/// One cycle: GPU memory of each type, a semaphore with custom info, an RX queue with a
/// GPU packet buffer and a TX queue with GPU completions; all started, then dropped.
fn cycle(gpu: &Gpu, dev: &doca_gpunetio::Device, i: usize) {
    for mt in [MemType::Gpu, MemType::GpuCpu, MemType::CpuGpu] {
        let b = GpuBuffer::<u8>::with_alignment(gpu, 1 << 20, 65536, mt).unwrap();
        assert_ne!(b.device_ptr(), 0, "cycle {i}: {mt:?}");
    }
    let sem = Semaphore::<[u64; 4]>::with_info(gpu)
        .memory(MemType::CpuGpu)
        .items(64)
        .start()
        .unwrap();
    sem.gpu_handle().unwrap();
    drop(sem);
    let rxq = EthRxq::builder(dev)
        .max_burst_size(256)
        .max_packet_size(2048)
        .gpu_packet_buffer(gpu)
        .kind(RxqType::Cyclic)
        .start()
        .unwrap();
    rxq.gpu_handle().unwrap();
    drop(rxq);
    let txq = EthTxq::builder(dev)
        .max_burst_size(256)
        .completion_on_gpu()
        .datapath_gpu(gpu)
        .start()
        .unwrap();
    txq.gpu_handle().unwrap();
    drop(txq);
}

#[test]
fn gpu_leak_cycles() {
    let n = cycles();
    if !require_cuda("GPU queues, semaphores and memory") {
        return;
    }
    let gpu = Gpu::by_ordinal(0).expect("CUDA driver present but GPU 0 did not open");
    declare_wires(&["leak"]);
    let (dev, _peer) = wire("leak");
    for i in 0..WARM_UP {
        cycle(&gpu, &dev, i);
    }
    let (dev0, rss0) = (device_free(&gpu), host_rss());
    // A 10,000-cycle run takes minutes: a line every 1000 cycles shows its pace, so a run
    // cut short by a time limit still tells how long the whole would take.
    let start = std::time::Instant::now();
    for i in 0..n {
        cycle(&gpu, &dev, i);
        if (i + 1) % 1000 == 0 {
            let t = start.elapsed();
            eprintln!(
                "gpu_leak_cycles: {}/{n} cycles in {:.1} s ({:.2} ms a cycle)",
                i + 1,
                t.as_secs_f64(),
                t.as_secs_f64() * 1e3 / (i + 1) as f64
            );
        }
    }
    let (dev1, rss1) = (device_free(&gpu), host_rss());
    println!("{n} cycles: device free {dev0} -> {dev1} bytes, host RSS {rss0} -> {rss1} bytes");
    assert!(
        dev1 + DEVICE_SLACK >= dev0,
        "device memory leaked: {} bytes over {n} cycles",
        dev0 - dev1
    );
    assert!(
        rss1 <= rss0 + HOST_SLACK,
        "host memory grew by {} bytes over {n} cycles",
        rss1 - rss0
    );
    assert!(take_drop_errors().is_empty(), "{:?}", take_drop_errors());
}
