//! Memory maps (`doca_mmap.h`): a memory range registered for devices, with DOCA's state
//! rules. Setters (range, permissions, devices, max devices) work only before start
//! (BAD_STATE after); start needs a range (BAD_STATE without one); `get_mkey` needs a started
//! mmap and a device that was added (NOT_FOUND otherwise); destroy and stop are IN_USE while
//! buffers or queues still use the mmap (see [`MmapShared::add_user`]).
//!
//! At start the range is resolved against the GPU allocation registry: a range inside
//! memory from `doca_gpu_mem_alloc` (given by device or CPU address, through
//! `set_memrange` or `set_dmabuf_memrange`) is GPU memory, and [`MmapShared::write_at`] /
//! [`MmapShared::read_at`] reach it through the CPU mapping when there is one, else with a
//! device copy. A dmabuf range that is not such memory is INVALID_VALUE at start.

use crate::capi::toolkit::write_out;
use crate::dev::{dev_ref, Dev};
use crate::error::{to_c, DocaError, DocaResult};
use crate::gpu::registry::{self, GpuRange};
use crate::gpu::GpuShared;
use crate::types::DocaData;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Every `doca_access_flag` bit.
pub const ACCESS_ALL_BITS: u32 = 0x7f;
/// `DOCA_ACCESS_FLAG_LOCAL_READ_WRITE`.
pub const ACCESS_LOCAL_READ_WRITE: u32 = 1;

/// Default `max_num_devices`.
const DEFAULT_MAX_DEVICES: u32 = 16;

struct State {
    started: bool,
    addr: usize,
    len: usize,
    dmabuf: Option<(c_int, usize)>,
    permissions: u32,
    max_devices: u32,
    /// Added devices, by `Dev` address (the device stays open while added: it is IN_USE).
    devs: Vec<usize>,
    gpu: Option<GpuRange>,
    user_data: DocaData,
}

/// The shared state of a memory map; buffers and queues keep an `Arc` of it.
pub struct MmapShared {
    state: Mutex<State>,
    mkey: u32,
    users: AtomicUsize,
}

// SAFETY: raw addresses in the state are plain numbers or pointers into application
// memory that the runtime only accesses through explicit copies; the state is behind a mutex.
unsafe impl Send for MmapShared {}
// SAFETY: as above.
unsafe impl Sync for MmapShared {}

/// The C `struct doca_mmap`.
pub struct Mmap {
    shared: Arc<MmapShared>,
}

impl std::ops::Deref for Mmap {
    type Target = MmapShared;
    fn deref(&self) -> &MmapShared {
        &self.shared
    }
}

static NEXT_MKEY: AtomicU32 = AtomicU32::new(0x1000);
static BY_MKEY: Mutex<Option<HashMap<u32, Weak<MmapShared>>>> = Mutex::new(None);

fn mkey_table() -> MutexGuard<'static, Option<HashMap<u32, Weak<MmapShared>>>> {
    BY_MKEY.lock().unwrap_or_else(|p| p.into_inner())
}

/// The started mmap with this mkey (host order), if any.
pub fn mmap_by_mkey(mkey: u32) -> Option<Arc<MmapShared>> {
    mkey_table()
        .as_ref()
        .and_then(|t| t.get(&mkey))
        .and_then(Weak::upgrade)
}

impl Mmap {
    /// A new, empty, stopped mmap.
    pub fn new() -> Mmap {
        Mmap {
            shared: Arc::new(MmapShared {
                state: Mutex::new(State {
                    started: false,
                    addr: 0,
                    len: 0,
                    dmabuf: None,
                    permissions: ACCESS_LOCAL_READ_WRITE,
                    max_devices: DEFAULT_MAX_DEVICES,
                    devs: Vec::new(),
                    gpu: None,
                    user_data: DocaData { u64: 0 },
                }),
                mkey: NEXT_MKEY.fetch_add(0x100, Ordering::Relaxed),
                users: AtomicUsize::new(0),
            }),
        }
    }

    /// The shared state (what buffers and queues keep).
    pub fn shared(&self) -> &Arc<MmapShared> {
        &self.shared
    }

    /// Starts the mmap: BAD_STATE when started or without a range.
    pub fn start(&self) -> DocaResult<()> {
        let mut s = self.lock();
        if s.started || s.len == 0 {
            return Err(DocaError::BAD_STATE);
        }
        let gpu = registry::lookup(s.addr as u64, s.len);
        if gpu.is_none() && s.dmabuf.is_some() {
            sdk_err!(
                "mmap",
                "dmabuf range {:#x}+{} is not memory from doca_gpu_mem_alloc",
                s.addr,
                s.len
            );
            return Err(DocaError::INVALID_VALUE);
        }
        s.gpu = gpu;
        s.started = true;
        mkey_table()
            .get_or_insert_with(HashMap::new)
            .insert(self.mkey, Arc::downgrade(&self.shared));
        Ok(())
    }

    /// Stops the mmap: BAD_STATE when not started, IN_USE while it has users.
    pub fn stop(&self) -> DocaResult<()> {
        let mut s = self.lock();
        if !s.started {
            return Err(DocaError::BAD_STATE);
        }
        if self.users() > 0 {
            return Err(DocaError::IN_USE);
        }
        s.started = false;
        s.gpu = None;
        if let Some(t) = mkey_table().as_mut() {
            t.remove(&self.mkey);
        }
        Ok(())
    }

    fn with_idle<R>(&self, f: impl FnOnce(&mut State) -> DocaResult<R>) -> DocaResult<R> {
        let mut s = self.lock();
        if s.started {
            return Err(DocaError::BAD_STATE);
        }
        f(&mut s)
    }

    /// `set_memrange`.
    pub fn set_memrange(&self, addr: *mut c_void, len: usize) -> DocaResult<()> {
        if addr.is_null() || len == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        (addr as usize)
            .checked_add(len)
            .ok_or(DocaError::INVALID_VALUE)?;
        self.with_idle(|s| {
            s.addr = addr as usize;
            s.len = len;
            s.dmabuf = None;
            Ok(())
        })
    }

    /// `set_dmabuf_memrange`.
    pub fn set_dmabuf_memrange(
        &self,
        fd: c_int,
        addr: *mut c_void,
        offset: usize,
        len: usize,
    ) -> DocaResult<()> {
        if fd < 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        self.set_memrange(addr, len)?;
        self.with_idle(|s| {
            s.dmabuf = Some((fd, offset));
            Ok(())
        })
    }

    /// `set_permissions` (doca_access_flag bits).
    pub fn set_permissions(&self, mask: u32) -> DocaResult<()> {
        if mask & !ACCESS_ALL_BITS != 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        self.with_idle(|s| {
            s.permissions = mask;
            Ok(())
        })
    }

    /// `set_max_num_devices`: at least 1 and at least the devices already added.
    pub fn set_max_num_devices(&self, n: u32) -> DocaResult<()> {
        self.with_idle(|s| {
            if n == 0 || (n as usize) < s.devs.len() {
                return Err(DocaError::INVALID_VALUE);
            }
            s.max_devices = n;
            Ok(())
        })
    }

    /// `add_dev`: ALREADY_EXIST when added before, NO_MEMORY beyond max devices.
    pub fn add_dev(&self, dev: &Dev) -> DocaResult<()> {
        let key = dev as *const Dev as usize;
        self.with_idle(|s| {
            if s.devs.contains(&key) {
                return Err(DocaError::ALREADY_EXIST);
            }
            if s.devs.len() >= s.max_devices as usize {
                return Err(DocaError::NO_MEMORY);
            }
            s.devs.push(key);
            dev.add_user();
            Ok(())
        })
    }

    /// `rm_dev`: NOT_FOUND when the device was not added.
    pub fn rm_dev(&self, dev: &Dev) -> DocaResult<()> {
        let key = dev as *const Dev as usize;
        self.with_idle(|s| {
            let i = s
                .devs
                .iter()
                .position(|d| *d == key)
                .ok_or(DocaError::NOT_FOUND)?;
            s.devs.remove(i);
            dev.remove_user();
            Ok(())
        })
    }

    /// Releases everything before the mmap goes away (destroy): devices, mkey.
    fn teardown(&self) {
        let devs: Vec<usize> = {
            let mut s = self.lock();
            s.started = false;
            s.gpu = None;
            std::mem::take(&mut s.devs)
        };
        for d in devs {
            // SAFETY: an added device is IN_USE, so it cannot have been closed; it is live.
            unsafe { (*(d as *const Dev)).remove_user() };
        }
        if let Some(t) = mkey_table().as_mut() {
            t.remove(&self.mkey);
        }
    }
}

impl Default for Mmap {
    fn default() -> Self {
        Self::new()
    }
}

impl MmapShared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the mmap is started.
    pub fn is_started(&self) -> bool {
        self.lock().started
    }

    /// (address, length) once started; BAD_STATE before start.
    pub fn range(&self) -> DocaResult<(*mut u8, usize)> {
        let s = self.lock();
        if !s.started {
            return Err(DocaError::BAD_STATE);
        }
        Ok((s.addr as *mut u8, s.len))
    }

    /// The GPU owning the range, when the range is memory from `doca_gpu_mem_alloc`
    /// (known once started).
    pub fn gpu(&self) -> Option<Arc<GpuShared>> {
        self.lock().gpu.as_ref().map(|g| g.gpu.clone())
    }

    /// The range resolved against the GPU registry (device address, CPU mapping, type).
    pub fn gpu_range(&self) -> Option<GpuRange> {
        self.lock().gpu.clone()
    }

    /// A CPU pointer to the start of the range: the address itself for host memory, the
    /// CPU mapping for mapped GPU memory, None for device-only memory or before start.
    pub fn cpu_ptr(&self) -> Option<*mut u8> {
        let s = self.lock();
        if !s.started {
            return None;
        }
        match &s.gpu {
            None => Some(s.addr as *mut u8),
            Some(g) => g.cpu_addr,
        }
    }

    /// The mkey (host order), the same for every device added.
    pub fn mkey(&self) -> u32 {
        self.mkey
    }

    /// The access permissions (`doca_access_flag` bits).
    pub fn permissions(&self) -> u32 {
        self.lock().permissions
    }

    /// Whether `dev` was added.
    pub fn has_dev(&self, dev: &Dev) -> bool {
        self.lock().devs.contains(&(dev as *const Dev as usize))
    }

    /// Records a user (a buffer, a queue): stop and destroy are IN_USE until each user
    /// calls [`MmapShared::remove_user`].
    pub fn add_user(&self) {
        self.users.fetch_add(1, Ordering::AcqRel);
    }

    /// Releases a user recorded with [`MmapShared::add_user`].
    pub fn remove_user(&self) {
        let _ = self
            .users
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// Current number of users.
    pub fn users(&self) -> usize {
        self.users.load(Ordering::Acquire)
    }

    fn checked_span(&self, offset: usize, n: usize) -> DocaResult<(usize, Option<GpuRange>)> {
        let s = self.lock();
        if !s.started {
            return Err(DocaError::BAD_STATE);
        }
        let end = offset.checked_add(n).ok_or(DocaError::INVALID_VALUE)?;
        if end > s.len {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok((s.addr, s.gpu.clone()))
    }

    /// Copies `src` into the range at `offset` (CPU copy for host or mapped memory, device
    /// copy otherwise). INVALID_VALUE when out of range, BAD_STATE before start.
    pub fn write_at(&self, offset: usize, src: &[u8]) -> DocaResult<()> {
        let (addr, gpu) = self.checked_span(offset, src.len())?;
        match gpu {
            Some(g) => match g.cpu_addr {
                // SAFETY: [c + offset, + len) lies inside the mapped allocation (checked span).
                Some(c) => unsafe {
                    std::ptr::copy_nonoverlapping(src.as_ptr(), c.add(offset), src.len());
                    Ok(())
                },
                None => g.gpu.copy_to_device(g.gpu_addr + offset as u64, src),
            },
            None => {
                // SAFETY: host range registered by the application; span checked above.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.as_ptr(),
                        (addr as *mut u8).add(offset),
                        src.len(),
                    )
                };
                Ok(())
            }
        }
    }

    /// Copies from the range at `offset` into `dst` (see [`MmapShared::write_at`]).
    pub fn read_at(&self, offset: usize, dst: &mut [u8]) -> DocaResult<()> {
        let (addr, gpu) = self.checked_span(offset, dst.len())?;
        let src: *const u8 = match &gpu {
            Some(g) => match g.cpu_addr {
                // SAFETY: inside the mapped allocation (checked span).
                Some(c) => unsafe { c.add(offset) },
                None => return g.gpu.copy_from_device(dst, g.gpu_addr + offset as u64),
            },
            // SAFETY: inside the host range (checked span).
            None => unsafe { (addr as *const u8).add(offset) },
        };
        // SAFETY: `src` is readable for dst.len() bytes (checked span).
        unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }
}

/// Borrows an mmap from a C pointer; INVALID_VALUE when null.
///
/// # Safety
/// A non-null `p` must point to a live `Mmap`.
pub unsafe fn mmap_ref<'a>(p: *const Mmap) -> DocaResult<&'a Mmap> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}

// ---------------------------------------------------------------------------------------
// C API

/// Runs `f` on a borrowed mmap and returns the C code.
///
/// # Safety
/// `p` is null or a live mmap.
unsafe fn with_mmap(p: *const Mmap, f: impl FnOnce(&Mmap) -> DocaResult<()>) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { mmap_ref(p) }.and_then(f))
}

/// `doca_mmap_create(&mmap)`.
///
/// # Safety
/// `mmap` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_create(mmap: *mut *mut Mmap) -> u32 {
    if mmap.is_null() {
        return DocaError::INVALID_VALUE.0;
    }
    // SAFETY: checked non-null; caller guarantees writability.
    unsafe { *mmap = Box::into_raw(Box::new(Mmap::new())) };
    0
}

/// `doca_mmap_destroy(mmap)`: IN_USE while buffers or queues use it; a started mmap is
/// stopped first.
///
/// # Safety
/// `mmap` is null or an mmap from `doca_mmap_create`, not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_destroy(mmap: *mut Mmap) -> u32 {
    // SAFETY: caller contract.
    let Ok(m) = (unsafe { mmap_ref(mmap) }) else {
        return DocaError::INVALID_VALUE.0;
    };
    if m.users() > 0 {
        sdk_err!(
            "mmap",
            "destroying an mmap still used by {} objects",
            m.users()
        );
        return DocaError::IN_USE.0;
    }
    m.teardown();
    // SAFETY: made by Box::into_raw in doca_mmap_create; not used after this.
    drop(unsafe { Box::from_raw(mmap) });
    0
}

/// `doca_mmap_start(mmap)`.
///
/// # Safety
/// `mmap` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_start(mmap: *mut Mmap) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, Mmap::start) }
}

/// `doca_mmap_stop(mmap)`.
///
/// # Safety
/// `mmap` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_stop(mmap: *mut Mmap) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, Mmap::stop) }
}

/// `doca_mmap_add_dev(mmap, dev)`.
///
/// # Safety
/// `mmap` and `dev` are null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_add_dev(mmap: *mut Mmap, dev: *mut Dev) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, |m| m.add_dev(dev_ref(dev)?)) }
}

/// `doca_mmap_rm_dev(mmap, dev)`.
///
/// # Safety
/// `mmap` and `dev` are null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_rm_dev(mmap: *mut Mmap, dev: *mut Dev) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, |m| m.rm_dev(dev_ref(dev)?)) }
}

/// `doca_mmap_set_memrange(mmap, addr, len)`.
///
/// # Safety
/// `mmap` is null or live; the range is the application's memory.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_memrange(
    mmap: *mut Mmap,
    addr: *mut c_void,
    len: usize,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, |m| m.set_memrange(addr, len)) }
}

/// `doca_mmap_set_dmabuf_memrange(mmap, fd, addr, offset, len)`.
///
/// # Safety
/// `mmap` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_dmabuf_memrange(
    mmap: *mut Mmap,
    dmabuf_fd: c_int,
    addr: *mut c_void,
    dmabuf_offset: usize,
    len: usize,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_mmap(mmap, |m| {
            m.set_dmabuf_memrange(dmabuf_fd, addr, dmabuf_offset, len)
        })
    }
}

/// `doca_mmap_set_permissions(mmap, access_mask)`.
///
/// # Safety
/// `mmap` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_permissions(mmap: *mut Mmap, access_mask: u32) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, |m| m.set_permissions(access_mask)) }
}

/// `doca_mmap_set_max_num_devices(mmap, n)`.
///
/// # Safety
/// `mmap` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_max_num_devices(
    mmap: *mut Mmap,
    max_num_devices: u32,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, |m| m.set_max_num_devices(max_num_devices)) }
}

/// `doca_mmap_get_memrange(mmap, &addr, &len)`: BAD_STATE when no range was set.
///
/// # Safety
/// `mmap` is null or live; the out-pointers are null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_memrange(
    mmap: *const Mmap,
    addr: *mut *mut c_void,
    len: *mut usize,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_mmap(mmap, |m| {
            if addr.is_null() || len.is_null() {
                return Err(DocaError::INVALID_VALUE);
            }
            let s = m.lock();
            if s.len == 0 {
                return Err(DocaError::BAD_STATE);
            }
            *addr = s.addr as *mut c_void;
            *len = s.len;
            Ok(())
        })
    }
}

/// `doca_mmap_get_mkey(mmap, dev, &mkey)`: host-order mkey; BAD_STATE before start,
/// NOT_FOUND for a device that was not added.
///
/// # Safety
/// `mmap` and `dev` are null or live; `mkey` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_mkey(
    mmap: *const Mmap,
    dev: *const Dev,
    mkey: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_mmap(mmap, |m| {
            let d = dev_ref(dev)?;
            if mkey.is_null() {
                return Err(DocaError::INVALID_VALUE);
            }
            if !m.is_started() {
                return Err(DocaError::BAD_STATE);
            }
            if !m.has_dev(d) {
                return Err(DocaError::NOT_FOUND);
            }
            write_out(mkey, m.mkey())
        })
    }
}

/// `doca_mmap_set_user_data(mmap, user_data)`.
///
/// # Safety
/// `mmap` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_user_data(mmap: *mut Mmap, user_data: DocaData) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_mmap(mmap, |m| {
            m.lock().user_data = user_data;
            Ok(())
        })
    }
}

/// `doca_mmap_get_user_data(mmap, &user_data)`.
///
/// # Safety
/// `mmap` is null or live; `user_data` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_user_data(
    mmap: *const Mmap,
    user_data: *mut DocaData,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, |m| write_out(user_data, m.lock().user_data)) }
}

/// `doca_mmap_get_permissions(mmap, &mask)`.
///
/// # Safety
/// `mmap` is null or live; `access_mask` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_permissions(
    mmap: *const Mmap,
    access_mask: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, |m| write_out(access_mask, m.permissions())) }
}

/// `doca_mmap_get_max_num_devices(mmap, &n)`.
///
/// # Safety
/// `mmap` is null or live; `max_num_devices` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_max_num_devices(
    mmap: *const Mmap,
    max_num_devices: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_mmap(mmap, |m| write_out(max_num_devices, m.lock().max_devices)) }
}

#[cfg(test)]
mod tests;
