//! Memory maps (`doca_mmap`): register memory with devices so queues can use it.

use crate::gpu::{GpuAlloc, GpuBuffer, GpuPod};
use doca_common::error::{check, Error, Result};
use doca_common::Device;
use doca_sys as sys;
use std::ffi::c_void;
use std::os::fd::{FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::Arc;

bitflags::bitflags! {
    /// Access rights of a memory map (`enum doca_access_flag`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct AccessFlags: u32 {
        /// Local read and write (DOCA's `LOCAL_READ_ONLY` is the empty set).
        const LOCAL_READ_WRITE = 1;
        /// Remote RDMA read.
        const RDMA_READ = 2;
        /// Remote RDMA write.
        const RDMA_WRITE = 4;
        /// Remote RDMA atomics.
        const RDMA_ATOMIC = 8;
        /// PCI read only.
        const PCI_READ_ONLY = 16;
        /// PCI read and write.
        const PCI_READ_WRITE = 32;
        /// PCI relaxed ordering.
        const PCI_RELAXED_ORDERING = 64;
    }
}

struct MmapInner {
    raw: NonNull<sys::doca_mmap>,
    devices: Vec<Device>,
    _memory: Option<Arc<GpuAlloc>>,
    _dmabuf: Option<OwnedFd>,
}

// SAFETY: a started doca_mmap is immutable and safe to share between threads.
unsafe impl Send for MmapInner {}
// SAFETY: as above.
unsafe impl Sync for MmapInner {}

impl Drop for MmapInner {
    fn drop(&mut self) {
        // SAFETY: created by doca_mmap_create, destroyed once after every user is gone.
        let rc = unsafe { sys::doca_mmap_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_mmap_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A started memory map: a memory range registered with one or more devices. Keeps the
/// memory and the devices alive. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Mmap {
    inner: Arc<MmapInner>,
}

/// An mmap being configured; destroyed if never started.
struct Building(NonNull<sys::doca_mmap>);
impl Drop for Building {
    fn drop(&mut self) {
        // SAFETY: not started and not shared; destroyed once.
        unsafe { sys::doca_mmap_destroy(self.0.as_ptr()) };
    }
}

impl Mmap {
    /// Maps a GPU buffer for `devices`, the way DOCA's samples do: through a dmabuf when the
    /// driver offers one, else by address (nvidia-peermem style).
    pub fn from_gpu_buffer<T: GpuPod>(
        buf: &GpuBuffer<T>,
        devices: &[&Device],
        access: AccessFlags,
    ) -> Result<Mmap> {
        let alloc = buf.allocation().clone();
        let mut fd = -1;
        // SAFETY: the pointer and size describe a live allocation of this GPU.
        let rc = unsafe {
            sys::doca_gpu_dmabuf_fd(
                alloc.gpu().as_raw(),
                alloc.gpu_ptr(),
                alloc.bytes(),
                &mut fd,
            )
        };
        let dmabuf = (rc == sys::doca_error_t::DOCA_SUCCESS && fd >= 0).then(|| {
            // SAFETY: DOCA handed us a new file descriptor that nobody else owns.
            unsafe { OwnedFd::from_raw_fd(fd) }
        });
        let ptr = alloc.gpu_ptr();
        let len = alloc.bytes();
        Self::build(
            devices,
            access,
            Some(alloc),
            dmabuf,
            |m, dmabuf| match dmabuf {
                // SAFETY: `m` is an unstarted mmap; the range is the live allocation.
                Some(fd) => check("doca_mmap_set_dmabuf_memrange", unsafe {
                    sys::doca_mmap_set_dmabuf_memrange(
                        m,
                        std::os::fd::AsRawFd::as_raw_fd(fd),
                        ptr,
                        0,
                        len,
                    )
                }),
                // SAFETY: as above.
                None => check("doca_mmap_set_memrange", unsafe {
                    sys::doca_mmap_set_memrange(m, ptr, len)
                }),
            },
        )
    }

    /// Maps host memory at `addr..addr+len` for `devices`.
    ///
    /// # Safety
    /// The range must stay valid and not move for as long as this map or anything using
    /// it (queues, buffers) lives.
    pub unsafe fn from_host_range(
        addr: *mut c_void,
        len: usize,
        devices: &[&Device],
        access: AccessFlags,
    ) -> Result<Mmap> {
        if addr.is_null() || len == 0 {
            return Err(Error::InvalidArgument("empty or NULL host range".into()));
        }
        Self::build(devices, access, None, None, |m, _| {
            // SAFETY: `m` is an unstarted mmap; the caller guarantees the range.
            check("doca_mmap_set_memrange", unsafe {
                sys::doca_mmap_set_memrange(m, addr, len)
            })
        })
    }

    fn build(
        devices: &[&Device],
        access: AccessFlags,
        memory: Option<Arc<GpuAlloc>>,
        dmabuf: Option<OwnedFd>,
        set_range: impl FnOnce(*mut sys::doca_mmap, Option<&OwnedFd>) -> Result<()>,
    ) -> Result<Mmap> {
        if devices.is_empty() {
            return Err(Error::InvalidArgument(
                "a memory map needs at least one device".into(),
            ));
        }
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("doca_mmap_create", unsafe {
            sys::doca_mmap_create(&mut raw)
        })?;
        let m = Building(
            NonNull::new(raw)
                .ok_or_else(|| Error::Cuda("doca_mmap_create returned NULL".into()))?,
        );
        for d in devices {
            // SAFETY: both handles are live.
            check("doca_mmap_add_dev", unsafe {
                sys::doca_mmap_add_dev(m.0.as_ptr(), d.as_raw())
            })?;
        }
        set_range(m.0.as_ptr(), dmabuf.as_ref())?;
        // SAFETY: the mmap is live and not started.
        check("doca_mmap_set_permissions", unsafe {
            sys::doca_mmap_set_permissions(m.0.as_ptr(), access.bits())
        })?;
        // SAFETY: as above.
        check("doca_mmap_start", unsafe {
            sys::doca_mmap_start(m.0.as_ptr())
        })?;
        let raw = m.0;
        std::mem::forget(m);
        let devices = devices.iter().map(|d| (*d).clone()).collect();
        Ok(Mmap {
            inner: Arc::new(MmapInner {
                raw,
                devices,
                _memory: memory,
                _dmabuf: dmabuf,
            }),
        })
    }

    /// The memory key of this map for `device` (host byte order; the device API wants it
    /// big-endian: `mkey.to_be()`).
    pub fn mkey(&self, device: &Device) -> Result<u32> {
        let mut k = 0u32;
        // SAFETY: both handles are live; `k` is a valid out-pointer.
        check("doca_mmap_get_mkey", unsafe {
            sys::doca_mmap_get_mkey(self.as_raw(), device.as_raw(), &mut k)
        })?;
        Ok(k)
    }

    /// The mapped range (address, length).
    pub fn range(&self) -> Result<(*mut c_void, usize)> {
        let mut a = std::ptr::null_mut();
        let mut l = 0usize;
        // SAFETY: the mmap is live; out-pointers valid.
        check("doca_mmap_get_memrange", unsafe {
            sys::doca_mmap_get_memrange(self.as_raw(), &mut a, &mut l)
        })?;
        Ok((a, l))
    }

    /// The devices this map was registered with.
    pub fn devices(&self) -> &[Device] {
        &self.inner.devices
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_mmap {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for Mmap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mmap")
            .field("range", &self.range().ok())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_memory_maps_for_loopback() {
        let lo = Device::open("lo").unwrap();
        let mut mem = vec![0u8; 1 << 16];
        // SAFETY: `mem` outlives the map (dropped at the end of the test, after `m`).
        let m = unsafe {
            Mmap::from_host_range(
                mem.as_mut_ptr().cast(),
                mem.len(),
                &[&lo],
                AccessFlags::LOCAL_READ_WRITE,
            )
        }
        .unwrap();
        let (a, l) = m.range().unwrap();
        assert_eq!((a as usize, l), (mem.as_ptr() as usize, mem.len()));
        let k1 = m.mkey(&lo).unwrap();
        assert_eq!(m.mkey(&lo).unwrap(), k1, "mkey is stable");
        drop(m);
        // SAFETY: NULL is refused before reaching DOCA.
        let e = unsafe {
            Mmap::from_host_range(
                std::ptr::null_mut(),
                10,
                &[&lo],
                AccessFlags::LOCAL_READ_WRITE,
            )
        };
        assert!(matches!(e, Err(Error::InvalidArgument(_))));
    }
}
