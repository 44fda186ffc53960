//! Buffers (`doca_buf.h`): a window (head, len) of an mmap with a data section
//! (data, data_len) inside it, a reference count, and a singly linked list of buffers.
//!
//! Buffers live in their inventory's storage ([`crate::buf_inventory`]); a buffer whose
//! count drops to zero goes back to the inventory together with the rest of its list.
//! As in DOCA, one buffer is not thread-safe: the application serialises calls on it.

use crate::buf_inventory::BufInventory;
use crate::capi::toolkit::write_out;
use crate::error::{to_c, DocaError, DocaResult};
use crate::mmap::MmapShared;
use std::ffi::c_void;
use std::sync::Arc;

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
    pub fn in_use(&self) -> bool {
        self.refcount > 0
    }

    /// The mmap this buffer points into.
    pub fn mmap(&self) -> Option<&Arc<MmapShared>> {
        self.mmap.as_ref()
    }

    /// (head, len).
    pub fn head_len(&self) -> (*mut u8, usize) {
        (self.head as *mut u8, self.len)
    }

    /// (data, data_len).
    pub fn data(&self) -> (*mut u8, usize) {
        (self.data as *mut u8, self.data_len)
    }

    /// Checks that `[data, data + data_len)` lies inside `[head, head + len)`.
    pub fn check_data(head: usize, len: usize, data: usize, data_len: usize) -> DocaResult<()> {
        let end = data.checked_add(data_len).ok_or(DocaError::INVALID_VALUE)?;
        if data < head || end > head + len {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }

    /// Sets the data section (bounds checked).
    pub fn set_data(&mut self, data: usize, data_len: usize) -> DocaResult<()> {
        Self::check_data(self.head, self.len, data, data_len)?;
        self.data = data;
        self.data_len = data_len;
        Ok(())
    }
}

/// Borrows a buffer in use; INVALID_VALUE when null, BAD_STATE when it was released.
///
/// # Safety
/// A non-null `p` must point into a live inventory's storage.
pub unsafe fn buf_mut<'a>(p: *mut Buf) -> DocaResult<&'a mut Buf> {
    // SAFETY: caller contract.
    let b = unsafe { p.as_mut() }.ok_or(DocaError::INVALID_VALUE)?;
    if !b.in_use() {
        return Err(DocaError::BAD_STATE);
    }
    Ok(b)
}

/// Runs `f` on a borrowed buffer and returns the C code.
///
/// # Safety
/// `p` is null or a buffer of a live inventory.
unsafe fn with_buf(p: *const Buf, f: impl FnOnce(&mut Buf) -> DocaResult<()>) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { buf_mut(p as *mut Buf) }.and_then(f))
}

/// The last buffer of the list `b` belongs to (following `next`).
///
/// # Safety
/// `b` is a buffer in use; list links point to buffers in use.
unsafe fn last_of(mut b: *mut Buf) -> *mut Buf {
    // SAFETY: list links are valid buffers (caller contract).
    while !unsafe { (*b).next }.is_null() {
        b = unsafe { (*b).next };
    }
    b
}

/// `doca_buf_inc_refcount(buf, &refcount)` (`refcount` may be NULL).
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `refcount` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inc_refcount(buf: *mut Buf, refcount: *mut u16) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_buf(buf, |b| {
            b.refcount = b.refcount.checked_add(1).ok_or(DocaError::TOO_BIG)?;
            if !refcount.is_null() {
                *refcount = b.refcount;
            }
            Ok(())
        })
    }
}

/// `doca_buf_dec_refcount(buf, &refcount)`: at zero the buffer and the rest of its list
/// return to their inventories.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `refcount` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_dec_refcount(buf: *mut Buf, refcount: *mut u16) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { buf_mut(buf) }.map(|b| {
        b.refcount -= 1;
        b.refcount
    });
    let left = match r {
        Ok(n) => n,
        Err(e) => return e.0,
    };
    if !refcount.is_null() {
        // SAFETY: caller contract.
        unsafe { *refcount = left };
    }
    if left == 0 {
        // SAFETY: buf is a valid buffer whose count reached zero.
        unsafe { release_list(buf) };
    }
    0
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

/// `doca_buf_get_refcount(buf, &refcount)`.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `refcount` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_refcount(buf: *const Buf, refcount: *mut u16) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| write_out(refcount, b.refcount)) }
}

/// `doca_buf_get_len(buf, &len)`.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `len` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_len(buf: *const Buf, len: *mut usize) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| write_out(len, b.len)) }
}

/// `doca_buf_get_head(buf, &head)`.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `head` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_head(buf: *const Buf, head: *mut *mut c_void) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| write_out(head, b.head as *mut c_void)) }
}

/// `doca_buf_get_data_len(buf, &data_len)`.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `data_len` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_data_len(buf: *const Buf, data_len: *mut usize) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| write_out(data_len, b.data_len)) }
}

/// `doca_buf_get_data(buf, &data)`.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `data` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_data(buf: *const Buf, data: *mut *mut c_void) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| write_out(data, b.data as *mut c_void)) }
}

/// `doca_buf_set_data(buf, data, data_len)`: INVALID_VALUE when outside [head, head+len).
///
/// # Safety
/// `buf` is null or a buffer of a live inventory.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_set_data(
    buf: *mut Buf,
    data: *mut c_void,
    data_len: usize,
) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| b.set_data(data as usize, data_len)) }
}

/// `doca_buf_set_data_len(buf, data_len)`: INVALID_VALUE past the end of the buffer.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_set_data_len(buf: *mut Buf, data_len: usize) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| b.set_data(b.data, data_len)) }
}

/// `doca_buf_reset_data_len(buf)`: data length 0.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_reset_data_len(buf: *mut Buf) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_buf(buf, |b| {
            b.data_len = 0;
            Ok(())
        })
    }
}

/// `doca_buf_get_list_len(buf, &n)`: buffers from `buf` to the end of its list.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `num_elements` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_list_len(buf: *const Buf, num_elements: *mut u32) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_buf(buf, |b| {
            let mut n = 1u32;
            let mut cur = b.next;
            while !cur.is_null() {
                n += 1;
                cur = (*cur).next;
            }
            write_out(num_elements, n)
        })
    }
}

/// `doca_buf_get_next_in_list(buf, &next)` (NULL at the end).
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `next_buf` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_next_in_list(buf: *mut Buf, next_buf: *mut *mut Buf) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| write_out(next_buf, b.next)) }
}

/// `doca_buf_get_last_in_list(buf, &last)`.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `last_buf` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_last_in_list(buf: *mut Buf, last_buf: *mut *mut Buf) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |_| write_out(last_buf, last_of(buf))) }
}

/// `doca_buf_is_first_in_list(buf, &is_first)`.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `is_first` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_is_first_in_list(buf: *const Buf, is_first: *mut u8) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| write_out(is_first, u8::from(b.prev.is_null()))) }
}

/// `doca_buf_is_last_in_list(buf, &is_last)`.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `is_last` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_is_last_in_list(buf: *const Buf, is_last: *mut u8) -> u32 {
    // SAFETY: caller contract.
    unsafe { with_buf(buf, |b| write_out(is_last, u8::from(b.next.is_null()))) }
}

/// `doca_buf_is_in_list(buf, &is_in_list)`: whether the buffer has neighbours.
///
/// # Safety
/// `buf` is null or a buffer of a live inventory; `is_in_list` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_is_in_list(buf: *const Buf, is_in_list: *mut u8) -> u32 {
    // SAFETY: caller contract.
    unsafe {
        with_buf(buf, |b| {
            write_out(is_in_list, u8::from(!b.prev.is_null() || !b.next.is_null()))
        })
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

/// `doca_buf_chain_list(list1, list2)`: appends list2 to list1 (both list heads).
///
/// # Safety
/// Both are null or buffers of live inventories.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_chain_list(list1: *mut Buf, list2: *mut Buf) -> u32 {
    let r = (|| {
        // SAFETY: caller contract.
        unsafe {
            buf_mut(list1)?;
            buf_mut(list2)?;
            append(list1, last_of(list1), list2)
        }
    })();
    to_c(r)
}

/// `doca_buf_chain_list_tail(list1_tail, list1, list2)`.
///
/// # Safety
/// All are null or buffers of live inventories.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_chain_list_tail(
    list1_tail: *mut Buf,
    list1: *mut Buf,
    list2: *mut Buf,
) -> u32 {
    let r = (|| {
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
    })();
    to_c(r)
}

/// `doca_buf_unchain_list(list1, list2)`: splits list1 before its element list2.
///
/// # Safety
/// Both are null or buffers of live inventories.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_unchain_list(list1: *mut Buf, list2: *mut Buf) -> u32 {
    let r = (|| {
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
    })();
    to_c(r)
}
