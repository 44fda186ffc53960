//! Process-wide registry of memory allocated with `doca_gpu_mem_alloc`, so that other
//! parts of the runtime (mmaps, queues) can tell whether an address is GPU memory, which
//! GPU owns it and whether it has a CPU mapping.

use super::GpuShared;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

/// One allocation as the registry sees it.
#[derive(Clone)]
pub(crate) struct Region {
    /// Device address of the (aligned) start.
    pub gpu: u64,
    /// CPU address of the start, 0 when the memory has no CPU mapping.
    pub cpu: usize,
    /// Usable length in bytes.
    pub len: usize,
    /// The owning GPU.
    pub owner: Weak<GpuShared>,
}

/// A range resolved against the registry.
#[derive(Clone)]
pub(crate) struct GpuRange {
    /// The owning GPU.
    pub gpu: Arc<GpuShared>,
    /// Device address of the range start.
    pub gpu_addr: u64,
    /// CPU address of the range start, if the memory is CPU-mapped.
    pub cpu_addr: Option<*mut u8>,
}

#[derive(Default)]
struct Maps {
    by_gpu: BTreeMap<u64, Region>,
    /// CPU start -> device start, for CPU-mapped allocations.
    by_cpu: BTreeMap<usize, u64>,
}

static REGISTRY: Mutex<Option<Maps>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Maps) -> R) -> R {
    let mut g = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Maps::default))
}

/// Records an allocation.
pub(crate) fn insert(r: Region) {
    with(|m| {
        if r.cpu != 0 {
            m.by_cpu.insert(r.cpu, r.gpu);
        }
        m.by_gpu.insert(r.gpu, r);
    });
}

/// Forgets the allocation starting at device address `gpu`.
pub(crate) fn remove(gpu: u64) {
    with(|m| {
        if let Some(r) = m.by_gpu.remove(&gpu) {
            if r.cpu != 0 {
                m.by_cpu.remove(&r.cpu);
            }
        }
    });
}

fn containing(m: &Maps, addr: u64, len: usize) -> Option<(Region, u64)> {
    let (_, r) = m.by_gpu.range(..=addr).next_back()?;
    let off = addr - r.gpu;
    (off as usize)
        .checked_add(len)
        .is_some_and(|end| end <= r.len)
        .then(|| (r.clone(), off))
}

/// The device allocation `[start, start + len)` holding device address `addr`, if any.
pub(crate) fn allocation_of(addr: u64) -> Option<(u64, usize)> {
    with(|m| containing(m, addr, 1).map(|(r, _)| (r.gpu, r.len)))
}

/// Resolves `[addr, addr + len)` given either as a device address or as the CPU address
/// of a CPU-mapped allocation. None when it is not (entirely) inside one allocation of a
/// live GPU.
pub(crate) fn lookup(addr: u64, len: usize) -> Option<GpuRange> {
    with(|m| {
        let (r, off) = containing(m, addr, len).or_else(|| {
            let (cpu, gpu) = m.by_cpu.range(..=(addr as usize)).next_back()?;
            let off = addr - *cpu as u64;
            containing(m, gpu + off, len)
        })?;
        Some(GpuRange {
            gpu: r.owner.upgrade()?,
            gpu_addr: r.gpu + off,
            cpu_addr: (r.cpu != 0).then(|| (r.cpu + off as usize) as *mut u8),
        })
    })
}
