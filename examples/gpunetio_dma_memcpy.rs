//! gpunetio_dma_memcpy: DOCA's GPU DMA sample. Two `doca_dma` contexts share one device
//! and GPU: on the CPU data path a memcpy task copies a text from host memory into GPU
//! memory; on the GPU data path a CUDA kernel prints that text, then copies a text from GPU
//! memory to host memory itself (`doca_gpu_dev_dma_memcpy` + `doca_gpu_dev_dma_commit`),
//! and the CPU waits for it to arrive and prints it.
//!
//! ```sh
//! gpunetio_dma_memcpy -g 0 -n lo
//! ```
//!
//! Flags as the original's: `-g/--gpu` (GPU PCIe address or ordinal) and `-n/--nic` (NIC
//! PCIe address, interface or IB device name), both mandatory. Differences: the host
//! buffers are pinned host memory (`MemType::CpuGpu`, what the safe API maps), and every
//! byte of both destinations is checked (the CPU copy in GPU memory, the GPU copy in host
//! memory); a failed check exits with 1. DOCA's general flags too (`-l/--log-level`,
//! `--sdk-log-level`, `-v/--version`, `-h`).

#[path = "common/mod.rs"]
mod common;

use clap::Parser;
use common::cli::{self, fail, usage_error, General};
use common::gpu::{kernel_stopped, open_gpu, open_nic};
use cuda_kernels::{DeviceStatus, ExitFlag, Kernels};
use doca::gpunetio::dma::Dma;
use doca::gpunetio::rdma::{GpuBufArr, Local};
use doca::gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap, ProgressEngine};
use std::time::{Duration, Instant};

const PROG: &str = "gpunetio_dma_memcpy";
/// The sample's copy: 1024 bytes, in buffers of 1024 rounded up to the host page.
const COPY_LEN: usize = 1024;
const BUF_LEN: usize = 4096;
const CPU_TEXT: &str = "This is a sample piece of text from CPU";
const GPU_TEXT: &str = "This is a sample piece of text from GPU";
/// How long the CPU waits for a copy to land.
const COPY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Parser, Debug)]
#[command(name = PROG, about = "DOCA GPUNetIO DMA memcpy sample")]
struct Cli {
    /// GPU PCIe address (or ordinal)
    #[arg(short = 'g', long)]
    gpu: String,
    /// NIC PCIe address (or interface name)
    #[arg(short = 'n', long)]
    nic: String,
    #[command(flatten)]
    general: General,
}

fn info(msg: impl std::fmt::Display) {
    println!("[INFO] {msg}");
}

fn e2s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// `len` bytes of `mem` memory holding `text` then zeros.
fn text_buffer(gpu: &Gpu, mem: MemType, text: &str) -> Result<GpuBuffer<u8>, String> {
    let mut b = GpuBuffer::<u8>::with_alignment(gpu, BUF_LEN, BUF_LEN, mem).map_err(e2s)?;
    let mut bytes = vec![0u8; BUF_LEN];
    bytes[..text.len()].copy_from_slice(text.as_bytes());
    b.copy_from_host(&bytes).map_err(e2s)?;
    Ok(b)
}

fn map(dev: &Device, b: &GpuBuffer<u8>) -> Result<Mmap, String> {
    Mmap::from_gpu_buffer(b, &[dev], AccessFlags::LOCAL_READ_WRITE).map_err(e2s)
}

fn contents(b: &GpuBuffer<u8>) -> Result<Vec<u8>, String> {
    let mut v = vec![0u8; BUF_LEN];
    b.copy_to_host(&mut v).map_err(e2s)?;
    Ok(v)
}

/// The first `COPY_LEN` bytes of `dst` equal `src`'s, the rest are `rest`'s (untouched).
fn check_copy(what: &str, dst: &[u8], src: &[u8], rest: &[u8]) -> Result<(), String> {
    let bad = (0..BUF_LEN).find(|&i| dst[i] != if i < COPY_LEN { src[i] } else { rest[i] });
    match bad {
        None => Ok(()),
        Some(i) => Err(format!("{what}: byte {i} is {:#x}", dst[i])),
    }
}

/// Host to GPU through a memcpy task on the CPU data path; returns the GPU destination.
fn cpu_copy(dev: &Device, gpu: &Gpu) -> Result<GpuBuffer<u8>, String> {
    let src = text_buffer(gpu, MemType::CpuGpu, CPU_TEXT)?;
    let dst = text_buffer(gpu, MemType::Gpu, "")?;
    let (src_map, dst_map) = (map(dev, &src)?, map(dev, &dst)?);
    let pe = ProgressEngine::new().map_err(e2s)?;
    let dma = Dma::cpu(dev, &pe, 1).map_err(e2s)?;
    dma.memcpy_blocking(&src_map, 0, &dst_map, 0, COPY_LEN, COPY_TIMEOUT)
        .map_err(e2s)?;
    info("Success, DMA memcpy job done successfully");
    check_copy(
        "CPU-datapath copy in GPU memory",
        &contents(&dst)?,
        &contents(&src)?,
        &[0; BUF_LEN],
    )?;
    Ok(dst)
}

/// GPU to host through the kernel on the GPU data path.
fn gpu_copy(
    dev: &Device,
    gpu: &Gpu,
    kernels: &Kernels,
    cpu_dst: &GpuBuffer<u8>,
) -> Result<(), String> {
    let src = text_buffer(gpu, MemType::GpuCpu, GPU_TEXT)?;
    let dst = text_buffer(gpu, MemType::CpuGpu, "")?;
    let (src_map, dst_map) = (map(dev, &src)?, map(dev, &dst)?);
    let src_arr = GpuBufArr::<Local>::new(&src_map, gpu, 1, BUF_LEN).map_err(e2s)?;
    let dst_arr = GpuBufArr::<Local>::new(&dst_map, gpu, 1, BUF_LEN).map_err(e2s)?;
    let dma = Dma::gpu(dev, gpu).map_err(e2s)?;
    let exit = ExitFlag::new(gpu).map_err(e2s)?;
    let status = DeviceStatus::new(gpu).map_err(e2s)?;
    let handle = dma.gpu_handle().map_err(e2s)?;
    let (sh, dh) = (
        src_arr.gpu_handle().map_err(e2s)?,
        dst_arr.gpu_handle().map_err(e2s)?,
    );
    kernels.scope(|s| -> Result<(), String> {
        let k = s
            .launch_dma_memcpy(
                Some(cpu_dst),
                handle,
                sh,
                dh,
                COPY_LEN as u64,
                1,
                &exit,
                &status,
            )
            .map_err(e2s)?;
        kernel_stopped(PROG, k.stop())
    })?;
    if status.first_error() != 0 {
        return Err(format!(
            "a device call failed with DOCA error {}",
            status.first_error()
        ));
    }
    // No device-side completion: the CPU watches the destination, as the sample does.
    let t0 = Instant::now();
    while dst.read(0) == Some(0) {
        if t0.elapsed() > COPY_TIMEOUT {
            return Err(format!(
                "the GPU copy did not arrive within {COPY_TIMEOUT:?}"
            ));
        }
        std::thread::sleep(Duration::from_micros(10));
    }
    // The whole copy is there once the proxy finished it; the first byte can come first.
    let want = contents(&src)?;
    let t0 = Instant::now();
    let got = loop {
        let got = contents(&dst)?;
        if got[..COPY_LEN] == want[..COPY_LEN] || t0.elapsed() > COPY_TIMEOUT {
            break got;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let text_end = got.iter().position(|&b| b == 0).unwrap_or(COPY_LEN);
    println!(
        "CPU received message from GPU: {}",
        String::from_utf8_lossy(&got[..text_end])
    );
    check_copy(
        "GPU-datapath copy in host memory",
        &got,
        &want,
        &[0; BUF_LEN],
    )?;
    println!("Validation successful: both copies match their sources byte for byte");
    Ok(())
}

fn run(gpu_sel: &str, nic_sel: &str) -> Result<(), String> {
    let gpu = open_gpu(gpu_sel)?;
    let dev = open_nic(nic_sel)?;
    let kernels = Kernels::load(&gpu).map_err(e2s)?;
    let cpu_dst = cpu_copy(&dev, &gpu)?;
    gpu_copy(&dev, &gpu, &kernels, &cpu_dst)
}

fn main() {
    let c: Cli = cli::parse(|c: &Cli| &c.general);
    for (name, v) in [("gpu", &c.gpu), ("nic", &c.nic)] {
        if v.len() >= 13 {
            usage_error::<Cli>(format!("--{name} {v:?}: at most 12 characters"));
        }
    }
    match run(&c.gpu, &c.nic) {
        Ok(()) => info("Sample finished successfully"),
        Err(e) => {
            info("Sample finished with errors");
            fail(PROG, e);
        }
    }
}
