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

mod rdma;

use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::gpu::registry::{self, GpuRange};
use crate::sync::UseCount;
use crate::types::DocaData;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::AtomicU32;
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
    /// RDMA: the NIC registration, exports, or the peer's memory this mmap stands for.
    rdma: rdma::RdmaState,
}

/// The shared state of a memory map; buffers and queues keep an `Arc` of it.
pub struct MmapShared {
    state: Mutex<State>,
    mkey: u32,
    users: UseCount,
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

/// mkeys are the soft NIC's caller-chosen keys (see `rdma`), so that an mmap registered
/// for RDMA is known to the NIC under the key programs read from it.
static NEXT_MKEY: AtomicU32 = AtomicU32::new(doca_soft_nic::rdma::keys::CALLER_KEYS);
static BY_MKEY: Mutex<Option<HashMap<u32, Weak<MmapShared>>>> = Mutex::new(None);

fn mkey_table() -> MutexGuard<'static, Option<HashMap<u32, Weak<MmapShared>>>> {
    BY_MKEY.lock().unwrap_or_else(|p| p.into_inner())
}

/// The started mmap with this mkey (host order), if any.
pub(crate) fn mmap_by_mkey(mkey: u32) -> Option<Arc<MmapShared>> {
    mkey_table()
        .as_ref()
        .and_then(|t| t.get(&mkey))
        .and_then(Weak::upgrade)
}

impl Mmap {
    /// A new, empty, stopped mmap.
    pub(crate) fn new() -> Mmap {
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
                    rdma: rdma::RdmaState::default(),
                }),
                mkey: rdma::next_mkey(&NEXT_MKEY),
                users: UseCount::default(),
            }),
        }
    }

    /// The shared state (what buffers and queues keep).
    pub(crate) fn shared(&self) -> &Arc<MmapShared> {
        &self.shared
    }

    /// Starts the mmap: BAD_STATE when started or without a range.
    pub(crate) fn start(&self) -> DocaResult<()> {
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
        let (addr, len, perms) = (s.addr as u64, s.len as u64, s.permissions);
        s.rdma.on_start(self.mkey, addr, len, perms)?;
        s.started = true;
        mkey_table()
            .get_or_insert_with(HashMap::new)
            .insert(self.mkey, Arc::downgrade(&self.shared));
        Ok(())
    }

    /// Stops the mmap: BAD_STATE when not started, IN_USE while it has users.
    pub(crate) fn stop(&self) -> DocaResult<()> {
        let mut s = self.lock();
        if !s.started {
            return Err(DocaError::BAD_STATE);
        }
        if self.users() > 0 {
            return Err(DocaError::IN_USE);
        }
        if s.rdma.is_remote() {
            return Err(DocaError::BAD_STATE);
        }
        s.started = false;
        s.gpu = None;
        s.rdma.on_stop();
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
    pub(crate) fn set_memrange(&self, addr: *mut c_void, len: usize) -> DocaResult<()> {
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
    pub(crate) fn set_dmabuf_memrange(
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
    pub(crate) fn set_permissions(&self, mask: u32) -> DocaResult<()> {
        if mask & !ACCESS_ALL_BITS != 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        self.with_idle(|s| {
            s.permissions = mask;
            Ok(())
        })
    }

    /// `set_max_num_devices`: at least 1 and at least the devices already added.
    pub(crate) fn set_max_num_devices(&self, n: u32) -> DocaResult<()> {
        self.with_idle(|s| {
            if n == 0 || (n as usize) < s.devs.len() {
                return Err(DocaError::INVALID_VALUE);
            }
            s.max_devices = n;
            Ok(())
        })
    }

    /// `add_dev`: ALREADY_EXIST when added before, NO_MEMORY beyond max devices.
    pub(crate) fn add_dev(&self, dev: &Dev) -> DocaResult<()> {
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
    pub(crate) fn rm_dev(&self, dev: &Dev) -> DocaResult<()> {
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
    pub(crate) fn teardown(&self) {
        let (devs, remote) = {
            let mut s = self.lock();
            s.started = false;
            s.gpu = None;
            let remote = s.rdma.is_remote();
            s.rdma.on_stop();
            (std::mem::take(&mut s.devs), remote)
        };
        for d in devs {
            // SAFETY: an added device is IN_USE, so it cannot have been closed; it is live.
            unsafe { (*(d as *const Dev)).remove_user() };
        }
        // A peer's key may equal one of ours: only local mmaps are in the table.
        if !remote {
            if let Some(t) = mkey_table().as_mut() {
                t.remove(&self.mkey);
            }
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
    pub(crate) fn is_started(&self) -> bool {
        self.lock().started
    }

    /// (address, length) once started; BAD_STATE before start.
    pub(crate) fn range(&self) -> DocaResult<(*mut u8, usize)> {
        let s = self.lock();
        if !s.started {
            return Err(DocaError::BAD_STATE);
        }
        Ok((s.addr as *mut u8, s.len))
    }

    /// The range resolved against the GPU registry (device address, CPU mapping, type).
    pub(crate) fn gpu_range(&self) -> Option<GpuRange> {
        self.lock().gpu.clone()
    }

    /// A CPU pointer to the start of the range: the address itself for host memory, the
    /// CPU mapping for mapped GPU memory, None for device-only memory or before start.
    pub(crate) fn cpu_ptr(&self) -> Option<*mut u8> {
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
    pub(crate) fn mkey(&self) -> u32 {
        self.mkey
    }

    /// The access permissions (`doca_access_flag` bits).
    pub(crate) fn permissions(&self) -> u32 {
        self.lock().permissions
    }

    /// Whether `dev` was added.
    pub(crate) fn has_dev(&self, dev: &Dev) -> bool {
        self.lock().devs.contains(&(dev as *const Dev as usize))
    }

    /// Records a user (a buffer, a queue): stop and destroy are IN_USE until each user
    /// calls [`MmapShared::remove_user`].
    pub(crate) fn add_user(&self) {
        self.users.add();
    }

    /// Releases a user recorded with [`MmapShared::add_user`].
    pub(crate) fn remove_user(&self) {
        self.users.remove();
    }

    /// Current number of users.
    pub(crate) fn users(&self) -> usize {
        self.users.get()
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
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn write_at(&self, offset: usize, src: &[u8]) -> DocaResult<()> {
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
    pub(crate) fn read_at(&self, offset: usize, dst: &mut [u8]) -> DocaResult<()> {
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

impl Mmap {
    /// IN_USE (logged) while buffers or queues use the mmap: `doca_mmap_destroy` refuses
    /// then.
    pub(crate) fn ensure_unused(&self) -> DocaResult<()> {
        let users = self.users();
        if users > 0 {
            sdk_err!("mmap", "destroying an mmap still used by {users} objects");
            return Err(DocaError::IN_USE);
        }
        Ok(())
    }

    /// The range set (started or not); BAD_STATE when none was set.
    pub(crate) fn memrange(&self) -> DocaResult<(*mut c_void, usize)> {
        let s = self.lock();
        if s.len == 0 {
            return Err(DocaError::BAD_STATE);
        }
        Ok((s.addr as *mut c_void, s.len))
    }

    /// The mkey for `dev` (host order): BAD_STATE before start, NOT_FOUND for a device
    /// that was not added.
    pub(crate) fn mkey_for(&self, dev: &Dev) -> DocaResult<u32> {
        if !self.is_started() {
            return Err(DocaError::BAD_STATE);
        }
        if !self.has_dev(dev) {
            return Err(DocaError::NOT_FOUND);
        }
        Ok(self.mkey())
    }

    /// Sets the application's user data.
    pub(crate) fn set_user_data(&self, user_data: DocaData) {
        self.lock().user_data = user_data;
    }

    /// The application's user data.
    pub(crate) fn user_data(&self) -> DocaData {
        self.lock().user_data
    }

    /// The most devices that may be added.
    pub(crate) fn max_num_devices(&self) -> u32 {
        self.lock().max_devices
    }
}

#[cfg(test)]
mod tests;
