//! Buffers (`doca_buf.h`): a window (head, len) of an mmap with a data section
//! (data, data_len) inside it, a reference count, and a linked list of buffers.
//!
//! Buffers live in their inventory's storage ([`inventory`]); a buffer whose count drops
//! to zero goes back to the inventory together with the rest of its list. As in DOCA, one
//! buffer is not thread-safe: the application serialises calls on it. GPU buffer arrays
//! ([`array`]) describe an mmap as fixed-size elements for the device API.

pub(crate) mod array;
pub(crate) mod inventory;

use crate::error::{DocaError, DocaResult};
use crate::mmap::MmapShared;
use inventory::BufInventory;
use std::sync::Arc;

// The UROM buffer tests (urom/buf.rs) name these calls here until UROM moves to capi.
#[cfg(test)]
pub(crate) use crate::capi::doca_buf::{doca_buf_get_data_len, doca_buf_set_data};

/// The C `struct doca_buf`.
pub struct Buf {
    pub(crate) inv: *const BufInventory,
    pub(crate) mmap: Option<Arc<MmapShared>>,
    pub(crate) head: usize,
    pub(crate) len: usize,
    pub(crate) data: usize,
    pub(crate) data_len: usize,
    pub(crate) refcount: u16,
    pub(crate) next: *mut Buf,
    pub(crate) prev: *mut Buf,
}

impl Buf {
    /// An unused slot of `inv`.
    pub(crate) fn empty(inv: *const BufInventory) -> Buf {
        Buf {
            inv,
            mmap: None,
            head: 0,
            len: 0,
            data: 0,
            data_len: 0,
            refcount: 0,
            next: std::ptr::null_mut(),
            prev: std::ptr::null_mut(),
        }
    }

    /// Whether the buffer is handed out (not in its inventory's free pool).
    pub(crate) fn in_use(&self) -> bool {
        self.refcount > 0
    }

    /// The mmap this buffer points into.
    pub(crate) fn mmap(&self) -> Option<&Arc<MmapShared>> {
        self.mmap.as_ref()
    }

    /// (head, len).
    pub(crate) fn head_len(&self) -> (*mut u8, usize) {
        (self.head as *mut u8, self.len)
    }

    /// (data, data_len).
    pub(crate) fn data(&self) -> (*mut u8, usize) {
        (self.data as *mut u8, self.data_len)
    }

    /// Checks that `[data, data + data_len)` lies inside `[head, head + len)`.
    pub(crate) fn check_data(
        head: usize,
        len: usize,
        data: usize,
        data_len: usize,
    ) -> DocaResult<()> {
        let end = data.checked_add(data_len).ok_or(DocaError::INVALID_VALUE)?;
        if data < head || end > head + len {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }

    /// Sets the data section (bounds checked).
    pub(crate) fn set_data(&mut self, data: usize, data_len: usize) -> DocaResult<()> {
        Self::check_data(self.head, self.len, data, data_len)?;
        self.data = data;
        self.data_len = data_len;
        Ok(())
    }
}

/// Borrows a buffer in use; INVALID_VALUE when null, BAD_STATE when it was released
/// (a stale handle of a slot back in its inventory).
///
/// # Safety
/// A non-null `p` must point into a live inventory's storage.
pub(crate) unsafe fn buf_mut<'a>(p: *mut Buf) -> DocaResult<&'a mut Buf> {
    // SAFETY: caller contract.
    let b = unsafe { p.as_mut() }.ok_or(DocaError::INVALID_VALUE)?;
    if !b.in_use() {
        return Err(DocaError::BAD_STATE);
    }
    Ok(b)
}

impl Buf {
    /// One more reference; TOO_BIG at the counter's limit. Returns the new count.
    pub(crate) fn inc_refcount(&mut self) -> DocaResult<u16> {
        self.refcount = self.refcount.checked_add(1).ok_or(DocaError::TOO_BIG)?;
        Ok(self.refcount)
    }

    /// The reference count.
    pub(crate) fn refcount(&self) -> u16 {
        self.refcount
    }

    /// Sets the data length (data start unchanged), bounds checked.
    pub(crate) fn set_data_len(&mut self, data_len: usize) -> DocaResult<()> {
        self.set_data(self.data, data_len)
    }

    /// Whether the buffer heads its list.
    pub(crate) fn is_first_in_list(&self) -> bool {
        self.prev.is_null()
    }

    /// Whether the buffer ends its list.
    pub(crate) fn is_last_in_list(&self) -> bool {
        self.next.is_null()
    }

    /// Whether the buffer has neighbours.
    pub(crate) fn is_in_list(&self) -> bool {
        !self.prev.is_null() || !self.next.is_null()
    }

    /// The next buffer of the list (null at the end).
    pub(crate) fn next_in_list(&self) -> *mut Buf {
        self.next
    }

    /// Buffers from this one to the end of its list.
    pub(crate) fn list_len(&self) -> u32 {
        let mut n = 1u32;
        let mut cur = self.next;
        while !cur.is_null() {
            n += 1;
            // SAFETY: list links point to buffers in use.
            cur = unsafe { (*cur).next };
        }
        n
    }
}

/// Drops a reference; at zero the buffer and the rest of its list return to their
/// inventories. Returns the count left.
///
/// # Safety
/// `b` is a buffer in use of a live inventory; its list links are valid.
pub(crate) unsafe fn dec_refcount(b: *mut Buf) -> DocaResult<u16> {
    // SAFETY: caller contract.
    let buf = unsafe { buf_mut(b) }?;
    buf.refcount -= 1;
    let left = buf.refcount;
    if left == 0 {
        // SAFETY: a valid buffer whose count reached zero.
        unsafe { release_list(b) };
    }
    Ok(left)
}

/// The last buffer of the list `b` belongs to (following `next`).
///
/// # Safety
/// `b` is a buffer in use; list links point to buffers in use.
pub(crate) unsafe fn last_of(mut b: *mut Buf) -> *mut Buf {
    // SAFETY: list links are valid buffers (caller contract).
    while !unsafe { (*b).next }.is_null() {
        b = unsafe { (*b).next };
    }
    b
}

/// Returns `b` and the buffers after it to their inventories (each following buffer
/// loses the list's reference and is freed when that was its last).
///
/// # Safety
/// `b` is a buffer with refcount 0; its list links are valid.
unsafe fn release_list(b: *mut Buf) {
    // SAFETY: caller contract; links are valid buffers.
    unsafe {
        let prev = (*b).prev;
        if !prev.is_null() {
            (*prev).next = std::ptr::null_mut();
        }
        let mut cur = b;
        while !cur.is_null() {
            let next = (*cur).next;
            (*cur).next = std::ptr::null_mut();
            (*cur).prev = std::ptr::null_mut();
            if cur != b {
                (*cur).refcount = (*cur).refcount.saturating_sub(1);
            }
            if (*cur).refcount == 0 {
                BufInventory::put_back(cur);
            }
            cur = next;
        }
    }
}

/// Appends list `list2` (which must be a list head, different from `list1`'s list) after
/// `tail`, the last buffer of `list1`.
///
/// # Safety
/// All three are buffers in use with valid links.
unsafe fn append(list1: *mut Buf, tail: *mut Buf, list2: *mut Buf) -> DocaResult<()> {
    // SAFETY: caller contract.
    unsafe {
        if !(*list1).prev.is_null() || !(*list2).prev.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        if last_of(list2) == tail {
            return Err(DocaError::INVALID_VALUE);
        }
        (*tail).next = list2;
        (*list2).prev = tail;
    }
    Ok(())
}

/// `doca_buf_chain_list`: appends list `list2` to list `list1` (both list heads).
///
/// # Safety
/// Both are null or buffers of live inventories.
pub(crate) unsafe fn chain(list1: *mut Buf, list2: *mut Buf) -> DocaResult<()> {
    // SAFETY: caller contract.
    unsafe {
        buf_mut(list1)?;
        buf_mut(list2)?;
        append(list1, last_of(list1), list2)
    }
}

/// `doca_buf_chain_list_tail`: as [`chain`], with `list1`'s last buffer given.
///
/// # Safety
/// All are null or buffers of live inventories.
pub(crate) unsafe fn chain_tail(
    list1_tail: *mut Buf,
    list1: *mut Buf,
    list2: *mut Buf,
) -> DocaResult<()> {
    // SAFETY: caller contract.
    unsafe {
        buf_mut(list1_tail)?;
        buf_mut(list1)?;
        buf_mut(list2)?;
        if last_of(list1) != list1_tail {
            return Err(DocaError::INVALID_VALUE);
        }
        append(list1, list1_tail, list2)
    }
}

/// `doca_buf_unchain_list`: splits list `list1` before its element `list2`.
///
/// # Safety
/// Both are null or buffers of live inventories.
pub(crate) unsafe fn unchain(list1: *mut Buf, list2: *mut Buf) -> DocaResult<()> {
    // SAFETY: caller contract.
    unsafe {
        buf_mut(list1)?;
        buf_mut(list2)?;
        if list1 == list2 || !(*list1).prev.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut cur = (*list1).next;
        while !cur.is_null() && cur != list2 {
            cur = (*cur).next;
        }
        if cur.is_null() {
            return Err(DocaError::NOT_FOUND);
        }
        (*(*list2).prev).next = std::ptr::null_mut();
        (*list2).prev = std::ptr::null_mut();
        Ok(())
    }
}
