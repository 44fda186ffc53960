//! Opening what every GPU sample needs, with messages that say what to fix.

#![allow(dead_code)]

use doca::gpunetio::{cuda_available, gpu_pci_bus_ids, Device, Gpu};

/// Opens the GPU named by `-g`: a PCI address ("0000:17:00.0", "17:00.0") or an ordinal.
pub fn open_gpu(sel: &str) -> Result<Gpu, String> {
    if !cuda_available() {
        return Err(
            "no CUDA driver on this machine (libcuda could not be loaded): \
                    the GPU samples need an NVIDIA GPU and driver"
                .into(),
        );
    }
    let r = match sel.parse::<usize>() {
        Ok(n) if sel.len() <= 2 => Gpu::by_ordinal(n),
        _ => Gpu::open(sel),
    };
    r.map_err(|e| {
        let ids = gpu_pci_bus_ids().unwrap_or_default();
        format!("cannot open GPU {sel:?}: {e} (GPUs here: {ids:?})")
    })
}

/// Opens the network device named by `-n`: PCI address, interface or IB device name.
pub fn open_nic(sel: &str) -> Result<Device, String> {
    Device::open(sel).map_err(|e| {
        let known = Device::list()
            .map(|l| {
                l.iter()
                    .map(|d| format!("{} ({})", d.pci_addr(), d.iface_name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        format!("cannot open network device {sel:?}: {e} (devices: {known})")
    })
}

/// Gbit/s and Mpps for `packets` frames of `bytes` in total over `secs`.
pub fn rates(packets: u64, bytes: u64, secs: f64) -> (f64, f64) {
    let s = secs.max(1e-9);
    (packets as f64 / s / 1e6, bytes as f64 * 8.0 / s / 1e9)
}

/// The result of stopping a kernel. A kernel that ignores its exit flag cannot be killed,
/// and freeing what it uses would wait for it forever: then the process exits at once
/// (the driver reclaims everything) instead of tearing down.
pub fn kernel_stopped(prog: &str, r: Result<(), cuda_kernels::KernelError>) -> Result<(), String> {
    match r {
        Err(e @ cuda_kernels::KernelError::Hung(_)) => {
            super::cli::fail(prog, format!("{e}; exiting without teardown"))
        }
        r => r.map_err(|e| e.to_string()),
    }
}
