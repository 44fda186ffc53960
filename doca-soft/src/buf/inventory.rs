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

    /// Adds `n` slots.
    fn grow(&self, n: usize) {
        let me = self as *const BufInventory;
        let chunk: Box<[Buf]> = (0..n).map(|_| Buf::empty(me)).collect();
        let base = Box::into_raw(chunk) as *mut Buf;
        let mut p = self.lock();
        p.chunks.push((base, n));
        // SAFETY: base points to n slots.
        p.free.extend((0..n).rev().map(|i| unsafe { base.add(i) }));
        p.total += n;
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
    /// `u32::MAX`. Boxed: its slots point back to it, so it does not move.
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
        inv.grow(num_elements);
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

    /// Adds `num_elements` slots (INVALID_VALUE for 0).
    pub(crate) fn expand(&self, num_elements: u32) -> DocaResult<()> {
        if num_elements == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        self.grow(num_elements as usize);
        Ok(())
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
