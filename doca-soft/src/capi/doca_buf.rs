//! `doca_buf.h`: buffers (a window of an mmap with a data section inside it), their
//! reference counts and lists. A handle of a buffer that went back to its inventory is
//! BAD_STATE, never undefined behaviour while the inventory lives.

use std::ffi::c_void;

use super::toolkit::{call, write_out};
use crate::buf::{buf_mut, chain, chain_tail, dec_refcount, last_of, unchain};

pub use crate::buf::Buf;

/// Runs `f` on a buffer in use.
///
/// # Safety
/// `p` is null or a buffer of a live inventory.
unsafe fn with_buf(
    func: &'static str,
    p: *const Buf,
    f: impl FnOnce(&mut Buf) -> crate::error::DocaResult<()>,
) -> u32 {
    call(func, || {
        // SAFETY: caller contract.
        f(unsafe { buf_mut(p as *mut Buf) }?)
    })
}

/// `doca_buf_inc_refcount(buf, &refcount)` (`refcount` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inc_refcount(buf: *mut Buf, refcount: *mut u16) -> u32 {
    // SAFETY: C API contract (null or a buffer of a live inventory).
    unsafe {
        with_buf("doca_buf_inc_refcount", buf, |b| {
            let n = b.inc_refcount()?;
            if !refcount.is_null() {
                write_out(refcount, n)?;
            }
            Ok(())
        })
    }
}

/// `doca_buf_dec_refcount(buf, &refcount)` (`refcount` may be NULL): at zero the buffer and
/// the rest of its list return to their inventories.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_dec_refcount(buf: *mut Buf, refcount: *mut u16) -> u32 {
    call("doca_buf_dec_refcount", || {
        // SAFETY: C API contract.
        let left = unsafe { dec_refcount(buf) }?;
        if !refcount.is_null() {
            // SAFETY: C API contract (writable when non-null).
            unsafe { write_out(refcount, left) }?;
        }
        Ok(())
    })
}

/// `doca_buf_get_refcount(buf, &refcount)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_refcount(buf: *const Buf, refcount: *mut u16) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_get_refcount", buf, |b| {
            write_out(refcount, b.refcount())
        })
    }
}

/// `doca_buf_get_len(buf, &len)`: the window's length.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_len(buf: *const Buf, len: *mut usize) -> u32 {
    // SAFETY: C API contract.
    unsafe { with_buf("doca_buf_get_len", buf, |b| write_out(len, b.head_len().1)) }
}

/// `doca_buf_get_head(buf, &head)`: the window's start.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_head(buf: *const Buf, head: *mut *mut c_void) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_get_head", buf, |b| {
            write_out(head, b.head_len().0.cast())
        })
    }
}

/// `doca_buf_get_data_len(buf, &data_len)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_data_len(buf: *const Buf, data_len: *mut usize) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_get_data_len", buf, |b| {
            write_out(data_len, b.data().1)
        })
    }
}

/// `doca_buf_get_data(buf, &data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_data(buf: *const Buf, data: *mut *mut c_void) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_get_data", buf, |b| {
            write_out(data, b.data().0.cast())
        })
    }
}

/// `doca_buf_set_data(buf, data, data_len)`: INVALID_VALUE outside the window.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_set_data(
    buf: *mut Buf,
    data: *mut c_void,
    data_len: usize,
) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_set_data", buf, |b| {
            b.set_data(data as usize, data_len)
        })
    }
}

/// `doca_buf_set_data_len(buf, data_len)`: INVALID_VALUE past the end of the window.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_set_data_len(buf: *mut Buf, data_len: usize) -> u32 {
    // SAFETY: C API contract.
    unsafe { with_buf("doca_buf_set_data_len", buf, |b| b.set_data_len(data_len)) }
}

/// `doca_buf_reset_data_len(buf)`: data length 0.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_reset_data_len(buf: *mut Buf) -> u32 {
    // SAFETY: C API contract.
    unsafe { with_buf("doca_buf_reset_data_len", buf, |b| b.set_data_len(0)) }
}

/// `doca_buf_get_list_len(buf, &n)`: buffers from `buf` to the end of its list.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_list_len(buf: *const Buf, num_elements: *mut u32) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_get_list_len", buf, |b| {
            write_out(num_elements, b.list_len())
        })
    }
}

/// `doca_buf_get_next_in_list(buf, &next)` (NULL at the end).
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_next_in_list(buf: *mut Buf, next_buf: *mut *mut Buf) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_get_next_in_list", buf, |b| {
            write_out(next_buf, b.next_in_list())
        })
    }
}

/// `doca_buf_get_last_in_list(buf, &last)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_last_in_list(buf: *mut Buf, last_buf: *mut *mut Buf) -> u32 {
    // SAFETY: C API contract; a buffer in use has valid list links.
    unsafe {
        with_buf("doca_buf_get_last_in_list", buf, |_| {
            write_out(last_buf, last_of(buf))
        })
    }
}

/// `doca_buf_is_first_in_list(buf, &is_first)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_is_first_in_list(buf: *const Buf, is_first: *mut u8) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_is_first_in_list", buf, |b| {
            write_out(is_first, u8::from(b.is_first_in_list()))
        })
    }
}

/// `doca_buf_is_last_in_list(buf, &is_last)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_is_last_in_list(buf: *const Buf, is_last: *mut u8) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_is_last_in_list", buf, |b| {
            write_out(is_last, u8::from(b.is_last_in_list()))
        })
    }
}

/// `doca_buf_is_in_list(buf, &is_in_list)`: whether the buffer has neighbours.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_is_in_list(buf: *const Buf, is_in_list: *mut u8) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        with_buf("doca_buf_is_in_list", buf, |b| {
            write_out(is_in_list, u8::from(b.is_in_list()))
        })
    }
}

/// `doca_buf_chain_list(list1, list2)`: appends list2 to list1 (both list heads).
#[no_mangle]
pub unsafe extern "C" fn doca_buf_chain_list(list1: *mut Buf, list2: *mut Buf) -> u32 {
    call("doca_buf_chain_list", || {
        // SAFETY: C API contract (null or buffers of live inventories).
        unsafe { chain(list1, list2) }
    })
}

/// `doca_buf_chain_list_tail(list1_tail, list1, list2)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_chain_list_tail(
    list1_tail: *mut Buf,
    list1: *mut Buf,
    list2: *mut Buf,
) -> u32 {
    call("doca_buf_chain_list_tail", || {
        // SAFETY: C API contract.
        unsafe { chain_tail(list1_tail, list1, list2) }
    })
}

/// `doca_buf_unchain_list(list1, list2)`: splits list1 before its element list2.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_unchain_list(list1: *mut Buf, list2: *mut Buf) -> u32 {
    call("doca_buf_unchain_list", || {
        // SAFETY: C API contract.
        unsafe { unchain(list1, list2) }
    })
}
