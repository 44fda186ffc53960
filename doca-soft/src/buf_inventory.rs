//! Buffer inventories (`doca_buf_inventory.h`): a pool of `doca_buf` slots. Buffers are
//! taken with `buf_get_by_args` / `buf_get_by_data` / `buf_dup` (the inventory must be
//! started, the mmap started, the window inside the mmap's range) and come back when
//! their count reaches zero. An empty pool is NO_MEMORY; stop and destroy are IN_USE while
//! buffers are out.

use crate::buf::{buf_mut, Buf};
use crate::capi::toolkit::write_out;
use crate::error::{to_c, DocaError, DocaResult};
use crate::mmap::{mmap_ref, Mmap};
use crate::types::DocaData;
use std::ffi::c_void;
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
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
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
    pub fn counts(&self) -> (usize, usize) {
        let p = self.lock();
        (p.total, p.free.len())
    }

    /// Takes a slot for a window `[addr, addr+len)` of `mmap` with data
    /// `[data, data+data_len)`.
    pub fn take(
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

/// Borrows an inventory; INVALID_VALUE when null.
///
/// # Safety
/// A non-null `p` points to a live inventory.
unsafe fn inv_ref<'a>(p: *const BufInventory) -> DocaResult<&'a BufInventory> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}

/// Runs `f` on a borrowed inventory and returns the C code.
///
/// # Safety
/// `p` is null or a live inventory.
unsafe fn with_inv(p: *const BufInventory, f: impl FnOnce(&BufInventory) -> DocaResult<()>) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { inv_ref(p) }.and_then(f))
}

/// `doca_buf_inventory_create(num_elements, &inventory)`.
///
/// # Safety
/// `inventory` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_create(
    num_elements: usize,
    inventory: *mut *mut BufInventory,
) -> u32 {
    if num_elements == 0 || num_elements > u32::MAX as usize || inventory.is_null() {
        return DocaError::INVALID_VALUE.0;
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
    // SAFETY: checked non-null; caller guarantees writability.
    unsafe { *inventory = Box::into_raw(inv) };
    0
}

/// `doca_buf_inventory_destroy(inventory)`: IN_USE while buffers are out.
///
/// # Safety
/// `inventory` is null or an inventory from `doca_buf_inventory_create`, not yet destroyed.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_destroy(inventory: *mut BufInventory) -> u32 {
    // SAFETY: caller contract.
    let Ok(inv) = (unsafe { inv_ref(inventory) }) else {
        return DocaError::INVALID_VALUE.0;
    };
    let (total, free) = inv.counts();
    if free != total {
        return DocaError::IN_USE.0;
    }
    // SAFETY: made by Box::into_raw in create; not used after this.
    drop(unsafe { Box::from_raw(inventory) });
    0
}

/// `doca_buf_inventory_start(inventory)`: BAD_STATE when started.
///
/// # Safety
/// `inventory` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_start(inventory: *mut BufInventory) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_inv(inventory, |i| {
            let mut p = i.lock();
            if p.started {
                return Err(DocaError::BAD_STATE);
            }
            p.started = true;
            Ok(())
        })
    }
}

/// `doca_buf_inventory_stop(inventory)`: BAD_STATE when stopped, IN_USE with buffers out.
///
/// # Safety
/// `inventory` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_stop(inventory: *mut BufInventory) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_inv(inventory, |i| {
            let mut p = i.lock();
            if !p.started {
                return Err(DocaError::BAD_STATE);
            }
            if p.free.len() != p.total {
                return Err(DocaError::IN_USE);
            }
            p.started = false;
            Ok(())
        })
    }
}

/// `doca_buf_inventory_expand(inventory, num_elements)`.
///
/// # Safety
/// `inventory` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_expand(
    inventory: *mut BufInventory,
    num_elements: u32,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_inv(inventory, |i| {
            if num_elements == 0 {
                return Err(DocaError::INVALID_VALUE);
            }
            i.grow(num_elements as usize);
            Ok(())
        })
    }
}

/// `doca_buf_inventory_get_num_elements(inventory, &n)`.
///
/// # Safety
/// `inventory` is null or live; `num_of_elements` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_get_num_elements(
    inventory: *const BufInventory,
    num_of_elements: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_inv(inventory, |i| {
            write_out(num_of_elements, i.counts().0 as u32)
        })
    }
}

/// `doca_buf_inventory_get_num_free_elements(inventory, &n)`.
///
/// # Safety
/// `inventory` is null or live; `num_of_free_elements` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_get_num_free_elements(
    inventory: *const BufInventory,
    num_of_free_elements: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_inv(inventory, |i| {
            write_out(num_of_free_elements, i.counts().1 as u32)
        })
    }
}

/// `doca_buf_inventory_set_user_data(inventory, user_data)`.
///
/// # Safety
/// `inventory` is null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_set_user_data(
    inventory: *mut BufInventory,
    user_data: DocaData,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_inv(inventory, |i| {
            i.lock().user_data = user_data;
            Ok(())
        })
    }
}

/// `doca_buf_inventory_get_user_data(inventory, &user_data)`.
///
/// # Safety
/// `inventory` is null or live; `user_data` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_get_user_data(
    inventory: *const BufInventory,
    user_data: *mut DocaData,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_inv(inventory, |i| write_out(user_data, i.lock().user_data)) }
}

/// `doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, data, data_len, &buf)`.
///
/// # Safety
/// `inventory` and `mmap` are null or live; `buf` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_buf_get_by_args(
    inventory: *mut BufInventory,
    mmap: *mut Mmap,
    addr: *mut c_void,
    len: usize,
    data: *mut c_void,
    data_len: usize,
    buf: *mut *mut Buf,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_inv(inventory, |i| {
            let m = mmap_ref(mmap)?;
            if buf.is_null() || addr.is_null() || data.is_null() {
                return Err(DocaError::INVALID_VALUE);
            }
            let b = i.take(m, addr as usize, len, data as usize, data_len)?;
            write_out(buf, b)
        })
    }
}

/// `doca_buf_inventory_buf_get_by_data(inventory, mmap, data, data_len, &buf)`: the
/// buffer's window is exactly its data.
///
/// # Safety
/// `inventory` and `mmap` are null or live; `buf` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_buf_get_by_data(
    inventory: *mut BufInventory,
    mmap: *mut Mmap,
    data: *mut c_void,
    data_len: usize,
    buf: *mut *mut Buf,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf)
    }
}

/// `doca_buf_inventory_buf_dup(inventory, src, &dst)`: a new buffer with the same window
/// and data as `src`.
///
/// # Safety
/// `inventory` and `src_buf` are null or live; `dst_buf` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_buf_dup(
    inventory: *mut BufInventory,
    src_buf: *const Buf,
    dst_buf: *mut *mut Buf,
) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_inv(inventory, |i| {
            let s = buf_mut(src_buf as *mut Buf)?;
            if dst_buf.is_null() {
                return Err(DocaError::INVALID_VALUE);
            }
            let shared = s.mmap().ok_or(DocaError::BAD_STATE)?.clone();
            let slot = {
                let mut p = i.lock();
                if !p.started {
                    return Err(DocaError::BAD_STATE);
                }
                p.free.pop().ok_or(DocaError::NO_MEMORY)?
            };
            shared.add_user();
            let d = &mut *slot;
            d.mmap = Some(shared);
            d.head = s.head;
            d.len = s.len;
            d.data = s.data;
            d.data_len = s.data_len;
            d.refcount = 1;
            d.next = std::ptr::null_mut();
            d.prev = std::ptr::null_mut();
            write_out(dst_buf, slot)
        })
    }
}

#[cfg(test)]
mod tests;
