//! Library-owned data buffers for UROM command tasks (`struct doca_buf`): the payload area
//! a client packs a command into and the response area holding a notification body.
//!
//! Stand-in: doca-soft's general `doca_buf` (inventories over mmaps) belongs to the core
//! runtime. Until it lands, this module exports the `doca_buf` data accessors over a plain
//! (head, len, data, data_len) view; when the core `doca_buf` exists it must offer a
//! library-owned buffer over runtime memory and this module goes away.

use crate::error::{to_c, DocaError, DocaResult};
use std::ffi::c_void;

/// The C `struct doca_buf` (stand-in layout: not visible to C).
#[repr(C)]
#[derive(Debug)]
pub struct Buf {
    head: *mut u8,
    len: usize,
    data: *mut u8,
    data_len: usize,
}

impl Buf {
    /// A buffer over `mem` with the data region covering all of it.
    pub fn over(mem: &mut [u8]) -> Buf {
        Buf {
            head: mem.as_mut_ptr(),
            len: mem.len(),
            data: mem.as_mut_ptr(),
            data_len: mem.len(),
        }
    }

    /// The data region.
    pub fn data(&self) -> &[u8] {
        // SAFETY: data..data+data_len lies inside head..head+len (set_data checks), which
        // the owner keeps alive as long as this Buf.
        unsafe { std::slice::from_raw_parts(self.data, self.data_len) }
    }

    /// Replaces the data region with a copy of `bytes` at the head (truncated to capacity).
    pub fn fill(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.len);
        // SAFETY: head has room for len >= n bytes; regions do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.head, n) };
        self.data = self.head;
        self.data_len = n;
    }

    /// Resets the data region to the whole buffer.
    pub fn reset(&mut self) {
        self.data = self.head;
        self.data_len = self.len;
    }

    fn set_data(&mut self, data: *mut u8, data_len: usize) -> DocaResult<()> {
        let start = self.head as usize;
        let d = data as usize;
        if d < start
            || d.checked_add(data_len)
                .map_or(true, |e| e > start + self.len)
        {
            return Err(DocaError::INVALID_VALUE);
        }
        self.data = data;
        self.data_len = data_len;
        Ok(())
    }
}

/// # Safety
/// `buf` is null or a live Buf.
unsafe fn buf_ref<'a>(buf: *const Buf) -> DocaResult<&'a Buf> {
    // SAFETY: caller contract.
    unsafe { buf.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}

fn out<T>(p: *mut T, v: T) -> DocaResult<()> {
    if p.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: checked non-null; callers pass writable pointers.
    unsafe { *p = v };
    Ok(())
}

/// `doca_buf_get_data`.
///
/// # Safety
/// `buf` null or live; `data` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_data(buf: *const Buf, data: *mut *mut c_void) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { buf_ref(buf) }.and_then(|b| out(data, b.data as *mut c_void)))
}

/// `doca_buf_get_data_len`.
///
/// # Safety
/// `buf` null or live; `len` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_data_len(buf: *const Buf, len: *mut usize) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { buf_ref(buf) }.and_then(|b| out(len, b.data_len)))
}

/// `doca_buf_get_head`.
///
/// # Safety
/// `buf` null or live; `head` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_head(buf: *const Buf, head: *mut *mut c_void) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { buf_ref(buf) }.and_then(|b| out(head, b.head as *mut c_void)))
}

/// `doca_buf_get_len`.
///
/// # Safety
/// `buf` null or live; `len` null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_get_len(buf: *const Buf, len: *mut usize) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { buf_ref(buf) }.and_then(|b| out(len, b.len)))
}

/// `doca_buf_set_data`: the region must lie inside the buffer.
///
/// # Safety
/// `buf` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_set_data(
    buf: *mut Buf,
    data: *mut c_void,
    data_len: usize,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { buf.as_mut() }
        .ok_or(DocaError::INVALID_VALUE)
        .and_then(|b| b.set_data(data as *mut u8, data_len));
    to_c(r)
}

/// `doca_buf_set_data_len`: keeps the data start.
///
/// # Safety
/// `buf` null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_set_data_len(buf: *mut Buf, data_len: usize) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { buf.as_mut() }
        .ok_or(DocaError::INVALID_VALUE)
        .and_then(|b| b.set_data(b.data, data_len));
    to_c(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_data_stays_inside_the_buffer() {
        let mut mem = vec![0u8; 16];
        let mut b = Buf::over(&mut mem);
        let base = b.head;
        // SAFETY: b is live; pointers are inside or just outside `mem`.
        unsafe {
            assert_eq!(doca_buf_set_data(&mut b, base.add(4) as *mut c_void, 12), 0);
            assert_eq!(
                doca_buf_set_data(&mut b, base.add(4) as *mut c_void, 13),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_buf_set_data(&mut b, base.wrapping_sub(1) as *mut c_void, 1),
                DocaError::INVALID_VALUE.0
            );
            let mut n = 0;
            assert_eq!(doca_buf_get_data_len(&b, &mut n), 0);
            assert_eq!(n, 12);
            assert_eq!(
                doca_buf_get_data_len(std::ptr::null(), &mut n),
                DocaError::INVALID_VALUE.0
            );
        }
        b.fill(b"abc");
        assert_eq!(b.data(), b"abc");
    }
}
