//! Buffer inventories (`doca_buf_inventory.h`): a pool of `doca_buf` slots. Buffers are
//! taken with `buf_get_by_args` / `buf_get_by_data` / `buf_dup` (the inventory must be
//! started, the mmap started, the window inside the mmap's range) and come back when
//! their count reaches zero. An empty pool is NO_MEMORY; stop and destroy are IN_USE while
//! buffers are out.

use super::Buf;
use crate::error::{DocaError, DocaResult};
use crate::mmap::Mmap;
use crate::sync::lock;
use crate::types::DocaData;
use std::sync::{Mutex, MutexGuard};

struct Pool {
    started: bool,
    /// Storage chunks (each a leaked boxed slice; freed on destroy).
    chunks: Vec<(*mut Buf, usize)>,
    free: Vec<*mut Buf>,
    total: usize,
    user_data: DocaData,
}

/// The C `struct doca_buf_inventory`.
pub struct BufInventory {
    pool: Mutex<Pool>,
}

// SAFETY: the raw buffer pointers are owned by the pool and only handed out under its lock.
unsafe impl Send for BufInventory {}
// SAFETY: as above.
unsafe impl Sync for BufInventory {}

impl BufInventory {
    fn lock(&self) -> MutexGuard<'_, Pool> {
        lock(&self.pool)
    }

    /// Adds `n` slots; NO_MEMORY (nothing added) when they cannot be allocated or would
    /// make more than `u32::MAX` slots. Every allocation here is fallible: `n` comes from
    /// the caller, and an allocation failure must not abort the caller's process.
    fn grow(&self, n: usize) -> DocaResult<()> {
        let per_slot = std::mem::size_of::<Buf>() + std::mem::size_of::<*mut Buf>();
        if self.lock().total.saturating_add(n) > u32::MAX as usize {
            sdk_err!("buf", "an inventory holds at most {} elements", u32::MAX);
            return Err(DocaError::NO_MEMORY);
        }
        let bytes = n.checked_mul(per_slot).ok_or(DocaError::NO_MEMORY)?;
        // Refuse what the machine cannot hold at all: with overcommit the reservation
        // below may succeed and the process would be killed while filling the slots.
        if bytes as u64 > physical_memory() {
            sdk_err!(
                "buf",
                "inventory of {n} more elements needs {bytes} bytes, more than this machine's memory"
            );
            return Err(DocaError::NO_MEMORY);
        }
        let me = self as *const BufInventory;
        let mut chunk: Vec<Buf> = Vec::new();
        chunk.try_reserve_exact(n).map_err(|_| no_memory(n))?;
        chunk.extend((0..n).map(|_| Buf::empty(me)));
        let mut p = self.lock();
        let total = p
            .total
            .checked_add(n)
            .filter(|&t| t <= u32::MAX as usize)
            .ok_or(DocaError::NO_MEMORY)?;
        p.free.try_reserve_exact(n).map_err(|_| no_memory(n))?;
        let base = Box::into_raw(chunk.into_boxed_slice()) as *mut Buf;
        p.chunks.push((base, n));
        // SAFETY: base points to n slots.
        p.free.extend((0..n).rev().map(|i| unsafe { base.add(i) }));
        p.total = total;
        Ok(())
    }

    /// Number of slots and number of free slots.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let p = self.lock();
        (p.total, p.free.len())
    }

    /// Takes a slot for a window `[addr, addr+len)` of `mmap` with data
    /// `[data, data+data_len)`.
    pub(crate) fn take(
        &self,
        mmap: &Mmap,
        addr: usize,
        len: usize,
        data: usize,
        data_len: usize,
    ) -> DocaResult<*mut Buf> {
        let (base, mlen) = mmap.range()?;
        let base = base as usize;
        let end = addr.checked_add(len).ok_or(DocaError::INVALID_VALUE)?;
        if addr < base || end > base + mlen {
            return Err(DocaError::INVALID_VALUE);
        }
        Buf::check_data(addr, len, data, data_len)?;
        let slot = {
            let mut p = self.lock();
            if !p.started {
                return Err(DocaError::BAD_STATE);
            }
            p.free.pop().ok_or(DocaError::NO_MEMORY)?
        };
        mmap.add_user();
        // SAFETY: `slot` is a free slot of this inventory, now exclusively ours.
        unsafe {
            let b = &mut *slot;
            b.mmap = Some(mmap.shared().clone());
            b.head = addr;
            b.len = len;
            b.data = data;
            b.data_len = data_len;
            b.refcount = 1;
            b.next = std::ptr::null_mut();
            b.prev = std::ptr::null_mut();
        }
        Ok(slot)
    }

    /// Returns a buffer whose count reached zero to its inventory.
    ///
    /// # Safety
    /// `b` is a slot of a live inventory, with refcount 0 and no list links.
    pub(crate) unsafe fn put_back(b: *mut Buf) {
        // SAFETY: caller contract.
        let buf = unsafe { &mut *b };
        if let Some(m) = buf.mmap.take() {
            m.remove_user();
        }
        // Library-owned buffers (UROM task payload/response) belong to no inventory: their
        // task frees them.
        if buf.inv.is_null() {
            return;
        }
        // SAFETY: the inventory outlives its buffers (destroy is IN_USE while any is out).
        let inv = unsafe { &*buf.inv };
        inv.lock().free.push(b);
    }
}

/// NO_MEMORY for a failed allocation of `n` slots (logged: the caller sees only the code).
fn no_memory(n: usize) -> DocaError {
    sdk_err!("buf", "cannot allocate an inventory of {n} more elements");
    DocaError::NO_MEMORY
}

/// Bytes of physical memory (u64::MAX when the system does not say).
fn physical_memory() -> u64 {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || page <= 0 {
        return u64::MAX;
    }
    (pages as u64).saturating_mul(page as u64)
}

impl Drop for BufInventory {
    fn drop(&mut self) {
        let p = self.pool.get_mut().unwrap_or_else(|e| e.into_inner());
        for (base, n) in p.chunks.drain(..) {
            // SAFETY: made by Box::into_raw of a boxed slice of n buffers in grow().
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(base, n)) });
        }
    }
}

impl BufInventory {
    /// An inventory of `num_elements` slots (stopped); INVALID_VALUE for 0 or more than
    /// `u32::MAX`, NO_MEMORY when the slots cannot be allocated. Boxed: its slots point back to it, so it does not move.
    pub(crate) fn new_boxed(num_elements: usize) -> DocaResult<Box<BufInventory>> {
        if num_elements == 0 || num_elements > u32::MAX as usize {
            return Err(DocaError::INVALID_VALUE);
        }
        let inv = Box::new(BufInventory {
            pool: Mutex::new(Pool {
                started: false,
                chunks: Vec::new(),
                free: Vec::new(),
                total: 0,
                user_data: DocaData { u64: 0 },
            }),
        });
        inv.grow(num_elements)?;
        Ok(inv)
    }

    /// IN_USE while buffers are out (`doca_buf_inventory_destroy` refuses then).
    pub(crate) fn ensure_unused(&self) -> DocaResult<()> {
        let (total, free) = self.counts();
        if free != total {
            return Err(DocaError::IN_USE);
        }
        Ok(())
    }

    /// BAD_STATE when started.
    pub(crate) fn start(&self) -> DocaResult<()> {
        let mut p = self.lock();
        if p.started {
            return Err(DocaError::BAD_STATE);
        }
        p.started = true;
        Ok(())
    }

    /// BAD_STATE when stopped, IN_USE with buffers out.
    pub(crate) fn stop(&self) -> DocaResult<()> {
        let mut p = self.lock();
        if !p.started {
            return Err(DocaError::BAD_STATE);
        }
        if p.free.len() != p.total {
            return Err(DocaError::IN_USE);
        }
        p.started = false;
        Ok(())
    }

    /// Adds `num_elements` slots (INVALID_VALUE for 0, NO_MEMORY when they cannot be
    /// allocated or would make more than `u32::MAX`).
    pub(crate) fn expand(&self, num_elements: u32) -> DocaResult<()> {
        if num_elements == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        self.grow(num_elements as usize)
    }

    /// Sets the application's user data.
    pub(crate) fn set_user_data(&self, user_data: DocaData) {
        self.lock().user_data = user_data;
    }

    /// The application's user data.
    pub(crate) fn user_data(&self) -> DocaData {
        self.lock().user_data
    }

    /// A new buffer with the same window and data as `src` (a buffer in use).
    pub(crate) fn dup(&self, src: &Buf) -> DocaResult<*mut Buf> {
        let shared = src.mmap().ok_or(DocaError::BAD_STATE)?.clone();
        let slot = {
            let mut p = self.lock();
            if !p.started {
                return Err(DocaError::BAD_STATE);
            }
            p.free.pop().ok_or(DocaError::NO_MEMORY)?
        };
        shared.add_user();
        // SAFETY: `slot` is a free slot of this inventory, now exclusively ours.
        let d = unsafe { &mut *slot };
        d.mmap = Some(shared);
        d.head = src.head;
        d.len = src.len;
        d.data = src.data;
        d.data_len = src.data_len;
        d.refcount = 1;
        d.next = std::ptr::null_mut();
        d.prev = std::ptr::null_mut();
        Ok(slot)
    }
}

#[cfg(test)]
mod tests;
