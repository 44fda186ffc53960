//! The GPU send queue and frame buffer setup shared by simple_send and send_wait_time.

#![allow(dead_code)]

use doca::gpunetio::{AccessFlags, Device, EthTxq, Gpu, GpuBuffer, MemType, Mmap, GPU_PAGE_SIZE};
use std::sync::atomic::{AtomicBool, Ordering};

/// Send-ring entries (as the original samples).
pub const TX_DESCRIPTORS: u32 = 8192;

/// Starts a GPU send queue on `nic` with checksum offload and completions on the GPU.
pub fn start_txq(
    nic: &Device,
    gpu: &Gpu,
    proxy: bool,
    wait_on_time: bool,
) -> Result<EthTxq, String> {
    let mut b = EthTxq::builder(nic)
        .max_burst_size(TX_DESCRIPTORS)
        .l3_checksum_offload(true)
        .l4_checksum_offload(true)
        .completion_on_gpu()
        .datapath_gpu(gpu);
    if proxy {
        b = b.cpu_proxy();
    }
    if wait_on_time {
        b = b.wait_on_time();
    }
    let q = b.start().map_err(|e| format!("GPU send queue: {e}"))?;
    q.apply_queue_id(0)
        .map_err(|e| format!("send queue id: {e}"))?;
    Ok(q)
}

/// GPU memory holding `frames` (copied from the host), registered for `nic`; returns the
/// buffer, its memory map and the big-endian memory key the device API takes.
pub fn frame_buffer(
    gpu: &Gpu,
    nic: &Device,
    frames: &[u8],
) -> Result<(GpuBuffer<u8>, Mmap, u32), String> {
    let len = frames.len().div_ceil(GPU_PAGE_SIZE) * GPU_PAGE_SIZE;
    let mut buf = GpuBuffer::<u8>::with_alignment(gpu, len, GPU_PAGE_SIZE, MemType::Gpu)
        .map_err(|e| format!("frame buffer ({len} bytes of GPU memory): {e}"))?;
    let mut all = vec![0u8; len];
    all[..frames.len()].copy_from_slice(frames);
    buf.copy_from_host(&all)
        .map_err(|e| format!("copying frames to the GPU: {e}"))?;
    let mmap = Mmap::from_gpu_buffer(&buf, &[nic], AccessFlags::LOCAL_READ_WRITE)
        .map_err(|e| format!("memory map of the frame buffer: {e}"))?;
    let mkey = mmap.mkey(nic).map_err(|e| format!("memory key: {e}"))?;
    Ok((buf, mmap, mkey.to_be()))
}

/// The CPU proxy loop (`-p 1`): drives the queue until `stop` is set. Busy-polls, so
/// wait-on-time sends leave as close to their time as this thread can see it.
pub fn proxy_loop(txq: &EthTxq, stop: &AtomicBool) -> Result<(), String> {
    while !stop.load(Ordering::Relaxed) {
        txq.cpu_proxy_progress()
            .map_err(|e| format!("CPU proxy: {e}"))?;
    }
    Ok(())
}

/// Asks for 1 ns timer slack for this thread and the threads it creates later (the
/// runtime's queue threads), so their short sleeps are not stretched by the default
/// 50 us slack: wait-on-time sends then leave closer to their time.
pub fn precise_timers() {
    // SAFETY: prctl(PR_SET_TIMERSLACK) takes a plain integer; failure is harmless.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}
