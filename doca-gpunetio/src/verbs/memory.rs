//! Memory registered for RDMA on a PD: a memory map on the PD's device and its key
//! (`doca_rdma_bridge_get_mmap_mkey_from_pd`), which serves as lkey and rkey, as the
//! `ibv_mr` of DOCA's samples does.

use super::context::Pd;
use crate::gpu::{GpuAlloc, GpuBuffer, GpuPod};
use crate::mmap::AccessFlags;
use doca_common::error::{check, Error, Result};
use doca_sys as sys;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

/// A range of host or GPU memory registered on a [`Pd`]: its address and its key (host
/// byte order; kernels take `key.to_be()`). Keeps the memory (GPU buffers) and the PD alive;
/// deregistered on drop. `Send + Sync`.
pub struct MemoryRegion {
    mmap: NonNull<sys::doca_mmap>,
    addr: u64,
    len: usize,
    key: u32,
    _memory: Option<Arc<GpuAlloc>>,
    _pd: Pd,
}

// SAFETY: a started mmap is immutable; the region only reads its fields.
unsafe impl Send for MemoryRegion {}
// SAFETY: as above.
unsafe impl Sync for MemoryRegion {}

impl MemoryRegion {
    /// Registers a GPU buffer (any memory type of `doca_gpu_mem_alloc`).
    pub fn gpu<T: GpuPod>(
        pd: &Pd,
        buf: &GpuBuffer<T>,
        access: AccessFlags,
    ) -> Result<MemoryRegion> {
        let alloc = buf.allocation().clone();
        let (ptr, len) = (alloc.gpu_ptr(), alloc.bytes());
        // SAFETY: a live allocation, kept by the region.
        unsafe { Self::register(pd, ptr, len, access, Some(alloc)) }
    }

    /// Registers host memory `[addr, addr + len)`.
    ///
    /// # Safety
    /// The range stays valid, and is not moved or freed, while the region (and anything a
    /// peer may still send to it) lives.
    pub unsafe fn host(
        pd: &Pd,
        addr: *mut c_void,
        len: usize,
        access: AccessFlags,
    ) -> Result<MemoryRegion> {
        // SAFETY: caller contract.
        unsafe { Self::register(pd, addr, len, access, None) }
    }

    /// # Safety
    /// `[addr, addr + len)` stays valid while the region lives.
    unsafe fn register(
        pd: &Pd,
        addr: *mut c_void,
        len: usize,
        access: AccessFlags,
        memory: Option<Arc<GpuAlloc>>,
    ) -> Result<MemoryRegion> {
        if addr.is_null() || len == 0 {
            return Err(Error::InvalidArgument("empty or NULL memory range".into()));
        }
        let dev = pd.doca_dev()?;
        let mut m = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("doca_mmap_create", unsafe { sys::doca_mmap_create(&mut m) })?;
        let m = NonNull::new(m)
            .ok_or_else(|| Error::NotFound("doca_mmap_create returned NULL".into()))?;
        let mut region = MemoryRegion {
            mmap: m,
            addr: addr as u64,
            len,
            key: 0,
            _memory: memory,
            _pd: pd.clone(),
        };
        let raw = m.as_ptr();
        // SAFETY: an unstarted mmap; the range is the caller's; the PD's device is open.
        unsafe {
            check(
                "doca_mmap_set_memrange",
                sys::doca_mmap_set_memrange(raw, addr, len),
            )?;
            check(
                "doca_mmap_set_permissions",
                sys::doca_mmap_set_permissions(raw, access.bits()),
            )?;
            check("doca_mmap_add_dev", sys::doca_mmap_add_dev(raw, dev))?;
            check("doca_mmap_start", sys::doca_mmap_start(raw))?;
        }
        let ibv_pd = {
            // SAFETY: a live PD.
            unsafe { sys::doca_verbs_bridge_verbs_pd_get_ibv_pd(pd.as_raw()) }
        };
        let mut key = 0u32;
        // SAFETY: a started mmap; the PD's ibv_pd; a valid out-pointer.
        check("doca_rdma_bridge_get_mmap_mkey_from_pd", unsafe {
            sys::doca_rdma_bridge_get_mmap_mkey_from_pd(raw, ibv_pd, &mut key)
        })?;
        region.key = key;
        Ok(region)
    }

    /// The key (lkey = rkey), host byte order.
    pub fn key(&self) -> u32 {
        self.key
    }

    /// The first byte's address (GPU or host virtual address).
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Bytes registered.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region is empty (never: registration refuses empty ranges).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether kernels may dereference [`addr`](Self::addr) directly: the region was made
    /// by [`gpu`](Self::gpu) (any `doca_gpu_mem_alloc` type; the address is the device
    /// one). Host regions are reachable by the NIC only.
    pub fn is_gpu_accessible(&self) -> bool {
        self._memory.is_some()
    }

    /// The memory map behind it. Valid while `self` lives.
    pub fn as_raw_mmap(&self) -> *mut sys::doca_mmap {
        self.mmap.as_ptr()
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        let raw = self.mmap.as_ptr();
        // SAFETY: made and (unless registration failed half way) started in `register`;
        // stopped and destroyed once. Stop fails harmlessly on an unstarted map.
        unsafe {
            let _ = sys::doca_mmap_stop(raw);
            let rc = sys::doca_mmap_destroy(raw);
            if let Err(e) = check("doca_mmap_destroy", rc) {
                doca_common::record_drop_error(e);
            }
        }
    }
}

impl std::fmt::Debug for MemoryRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRegion")
            .field("addr", &format_args!("{:#x}", self.addr))
            .field("len", &self.len)
            .field("key", &format_args!("{:#x}", self.key))
            .finish()
    }
}
