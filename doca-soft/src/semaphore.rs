//! `doca_gpu_semaphore`: an array of status words (plus per-item packet info and optional
//! custom info blobs) in a chosen memory type, shared by CPU threads and GPU kernels. The
//! device handle layout is `struct doca_gpu_semaphore_gpu` of
//! `include/doca_gpunetio_dev_sem.cuh`, mirrored and asserted here.
//!
//! Memory of one semaphore: `[handle (64 B) | status u32 x items | packet info 16 B x items]`
//! in the semaphore's memory type, and `custom_nbytes x items` in the custom info's type.
//! The CPU may read and write items only when the memory is CPU-visible (GPU_CPU, CPU_GPU).

use crate::error::{DocaError, DocaResult};
use crate::gpu::{Gpu, GpuShared};
use crate::sync::lock;
use crate::types::{GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU, GPU_MEM_TYPE_GPU_CPU};
use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// `DOCA_GPU_SEMAPHORE_STATUS_EXIT`, the largest status value.
pub const STATUS_MAX: u32 = 5;

/// `struct doca_gpu_semaphore_gpu` (device handle).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct SemHandle {
    /// Device address of `u32 status[num_items]`.
    pub status_addr: u64,
    /// Device address of `SemPacketInfo[num_items]`.
    pub info_addr: u64,
    /// Device address of the custom info blobs (0 when none).
    pub custom_addr: u64,
    /// Items.
    pub num_items: u32,
    /// Bytes of custom info per item.
    pub custom_nbytes: u32,
    rsvd: [u64; 4],
}

/// Per-item packet info (`set_packet_info` / `get_packet_info`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct SemPacketInfo {
    /// Packets.
    pub num_packets: u32,
    /// Padding.
    pub pad: u32,
    /// First buffer index.
    pub doca_buf_idx_start: u64,
}

const _: () = assert!(size_of::<SemHandle>() == 64);
const _: () = assert!(offset_of!(SemHandle, info_addr) == 8);
const _: () = assert!(offset_of!(SemHandle, custom_addr) == 16);
const _: () = assert!(offset_of!(SemHandle, num_items) == 24);
const _: () = assert!(offset_of!(SemHandle, custom_nbytes) == 28);
const _: () = assert!(size_of::<SemPacketInfo>() == 16);

/// Where a semaphore's memory comes from.
#[derive(Clone)]
enum Backing {
    Gpu(Arc<GpuShared>),
    /// Host memory (made only by the testing hooks); access rules follow the type.
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    Host,
}

/// One allocation: device address, CPU address (0 when device-only), length.
struct Block {
    dev: u64,
    cpu: usize,
    len: usize,
    backing: Backing,
}

/// `n` zeroed values; NO_MEMORY when they cannot be allocated (the sizes come from the
/// application: an allocation failure must not abort its process).
fn zeroed<T: Default + Clone>(n: usize) -> DocaResult<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| DocaError::NO_MEMORY)?;
    v.resize(n, T::default());
    Ok(v)
}

impl Block {
    fn new(backing: &Backing, len: usize, mem_type: u32) -> DocaResult<Block> {
        match backing {
            Backing::Gpu(g) => {
                let (dev, cpu) = g.alloc(len, 64, mem_type)?;
                let b = Block {
                    dev,
                    cpu: cpu as usize,
                    len,
                    backing: backing.clone(),
                };
                b.write(0, &zeroed::<u8>(len)?)?;
                Ok(b)
            }
            Backing::Host => {
                let v = zeroed::<u64>(len.div_ceil(8))?.into_boxed_slice();
                let p = Box::into_raw(v) as *mut u64 as usize;
                Ok(Block {
                    dev: p as u64,
                    cpu: p,
                    len,
                    backing: Backing::Host,
                })
            }
        }
    }

    fn write(&self, off: usize, data: &[u8]) -> DocaResult<()> {
        if off + data.len() > self.len {
            return Err(DocaError::INVALID_VALUE);
        }
        if self.cpu != 0 {
            // SAFETY: [off, off+len) lies inside this block (checked above).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    data.as_ptr(),
                    (self.cpu as *mut u8).add(off),
                    data.len(),
                )
            };
            return Ok(());
        }
        match &self.backing {
            Backing::Gpu(g) => g.copy_to_device(self.dev + off as u64, data),
            Backing::Host => Err(DocaError::BAD_STATE),
        }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        match &self.backing {
            Backing::Gpu(g) => {
                if let Err(e) = g.free(self.dev) {
                    sdk_warn!("semaphore", "freeing semaphore memory failed: {e}");
                }
            }
            Backing::Host => {
                let n = self.len.div_ceil(8);
                // SAFETY: allocated in `new` as a boxed slice of n u64.
                drop(unsafe {
                    Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.cpu as *mut u64, n))
                });
            }
        }
    }
}

struct SemCfg {
    mem_type: u32,
    items: u32,
    custom: Option<(u32, u32)>,
}

struct SemRun {
    main: Block,
    custom: Option<Block>,
}

/// The C `struct doca_gpu_semaphore`.
pub struct Semaphore {
    backing: Backing,
    cfg: Mutex<SemCfg>,
    run: Mutex<Option<SemRun>>,
}

const HANDLE_BYTES: usize = size_of::<SemHandle>();

fn cpu_visible(t: u32) -> bool {
    t == GPU_MEM_TYPE_GPU_CPU || t == GPU_MEM_TYPE_CPU_GPU
}

impl Semaphore {
    fn new(backing: Backing) -> Semaphore {
        Semaphore {
            backing,
            cfg: Mutex::new(SemCfg {
                mem_type: GPU_MEM_TYPE_GPU,
                items: 0,
                custom: None,
            }),
            run: Mutex::new(None),
        }
    }

    /// A semaphore in memory of `gpu` (`doca_gpu_semaphore_create`).
    pub(crate) fn on_gpu(gpu: &Gpu) -> Semaphore {
        Semaphore::new(Backing::Gpu(gpu.shared().clone()))
    }

    /// A semaphore in host memory (CPU users and tests); the "GPU handle" is a CPU pointer.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn new_host() -> Semaphore {
        Semaphore::new(Backing::Host)
    }

    fn idle_cfg(&self) -> DocaResult<MutexGuard<'_, SemCfg>> {
        if lock(&self.run).is_some() {
            return Err(DocaError::BAD_STATE);
        }
        Ok(lock(&self.cfg))
    }

    /// `doca_gpu_semaphore_set_memory_type`.
    pub(crate) fn set_memory_type(&self, t: u32) -> DocaResult<()> {
        if t > GPU_MEM_TYPE_CPU_GPU {
            return Err(DocaError::INVALID_VALUE);
        }
        self.idle_cfg()?.mem_type = t;
        Ok(())
    }

    /// `doca_gpu_semaphore_set_items_num`.
    pub(crate) fn set_items_num(&self, n: u32) -> DocaResult<()> {
        if n == 0 || n > 1 << 24 {
            return Err(DocaError::INVALID_VALUE);
        }
        self.idle_cfg()?.items = n;
        Ok(())
    }

    /// `doca_gpu_semaphore_set_custom_info`.
    pub(crate) fn set_custom_info(&self, nbytes: u32, t: u32) -> DocaResult<()> {
        if nbytes == 0 || nbytes > 1 << 20 || t > GPU_MEM_TYPE_CPU_GPU {
            return Err(DocaError::INVALID_VALUE);
        }
        self.idle_cfg()?.custom = Some((nbytes, t));
        Ok(())
    }

    /// `doca_gpu_semaphore_start`: allocates and zeroes the memory (all items FREE).
    pub(crate) fn start(&self) -> DocaResult<()> {
        let cfg = self.idle_cfg()?;
        if cfg.items == 0 {
            return Err(DocaError::BAD_STATE);
        }
        let n = cfg.items as usize;
        let status_off = HANDLE_BYTES;
        let info_off = status_off + (n * 4).next_multiple_of(16);
        let main_len = info_off + n * size_of::<SemPacketInfo>();
        let main = Block::new(&self.backing, main_len, cfg.mem_type)?;
        let custom = match cfg.custom {
            Some((nb, t)) => Some(Block::new(&self.backing, nb as usize * n, t)?),
            None => None,
        };
        let h = SemHandle {
            status_addr: main.dev + status_off as u64,
            info_addr: main.dev + info_off as u64,
            custom_addr: custom.as_ref().map_or(0, |c| c.dev),
            num_items: cfg.items,
            custom_nbytes: cfg.custom.map_or(0, |c| c.0),
            rsvd: [0; 4],
        };
        // SAFETY: SemHandle is plain repr(C) data; viewing it as bytes is sound.
        let bytes = unsafe {
            std::slice::from_raw_parts(&h as *const SemHandle as *const u8, HANDLE_BYTES)
        };
        main.write(0, bytes)?;
        drop(cfg);
        *lock(&self.run) = Some(SemRun { main, custom });
        Ok(())
    }

    /// `doca_gpu_semaphore_stop`: frees the memory (BAD_STATE when not started).
    pub(crate) fn stop(&self) -> DocaResult<()> {
        lock(&self.run).take().map(drop).ok_or(DocaError::BAD_STATE)
    }

    /// Device address of the handle (BAD_STATE before start).
    pub(crate) fn gpu_handle(&self) -> DocaResult<u64> {
        lock(&self.run)
            .as_ref()
            .map(|r| r.main.dev)
            .ok_or(DocaError::BAD_STATE)
    }

    /// Runs `f` on the status word of item `idx` (CPU access, semaphore locked).
    fn with_status<R>(&self, idx: u32, f: impl FnOnce(&AtomicU32) -> R) -> DocaResult<R> {
        let cfg = lock(&self.cfg);
        let run = lock(&self.run);
        let run = run.as_ref().ok_or(DocaError::BAD_STATE)?;
        if idx >= cfg.items {
            return Err(DocaError::INVALID_VALUE);
        }
        if run.main.cpu == 0 || !cpu_visible(cfg.mem_type) {
            return Err(DocaError::NOT_SUPPORTED);
        }
        let p = run.main.cpu + HANDLE_BYTES + idx as usize * 4;
        // SAFETY: p is a 4-byte aligned u32 inside the started block, which cannot be freed
        // while `run` is locked; other agents access it atomically too.
        Ok(f(unsafe { AtomicU32::from_ptr(p as *mut u32) }))
    }

    /// `doca_gpu_semaphore_set_status` (CPU-visible memory only).
    pub(crate) fn set_status(&self, idx: u32, status: u32) -> DocaResult<()> {
        if status > STATUS_MAX {
            return Err(DocaError::INVALID_VALUE);
        }
        self.with_status(idx, |w| w.store(status, Ordering::Release))
    }

    /// `doca_gpu_semaphore_get_status` (CPU-visible memory only).
    pub(crate) fn get_status(&self, idx: u32) -> DocaResult<u32> {
        self.with_status(idx, |w| w.load(Ordering::Acquire))
    }

    /// `doca_gpu_semaphore_get_custom_info_addr`: CPU address of item `idx`'s blob
    /// (CPU-visible custom memory only).
    pub(crate) fn custom_info_addr(&self, idx: u32) -> DocaResult<*mut u8> {
        let cfg = lock(&self.cfg);
        let run = lock(&self.run);
        let run = run.as_ref().ok_or(DocaError::BAD_STATE)?;
        let (nb, t) = cfg.custom.ok_or(DocaError::INVALID_VALUE)?;
        if idx >= cfg.items {
            return Err(DocaError::INVALID_VALUE);
        }
        let c = run.custom.as_ref().ok_or(DocaError::INVALID_VALUE)?;
        if c.cpu == 0 || !cpu_visible(t) {
            return Err(DocaError::NOT_SUPPORTED);
        }
        Ok((c.cpu + idx as usize * nb as usize) as *mut u8)
    }
}
