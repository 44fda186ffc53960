//! Small helpers for the C ABI: reading string arguments, writing out-parameters and
//! copying strings into caller buffers, each with DOCA's error codes.

use crate::error::{DocaError, DocaResult};
use std::ffi::{c_char, CStr};

/// Writes `value` through an out-parameter; INVALID_VALUE when `out` is null.
///
/// # Safety
/// A non-null `out` must be valid for a write of `T`.
pub unsafe fn write_out<T>(out: *mut T, value: T) -> DocaResult<()> {
    if out.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: non-null checked; validity is the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Borrows a NUL-terminated C string as UTF-8; INVALID_VALUE when null or not UTF-8.
///
/// # Safety
/// A non-null `s` must point to a NUL-terminated string that outlives `'a`.
pub unsafe fn str_arg<'a>(s: *const c_char) -> DocaResult<&'a str> {
    if s.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: non-null checked; NUL termination is the caller's contract.
    let c = unsafe { CStr::from_ptr(s) };
    c.to_str().map_err(|_| DocaError::INVALID_VALUE)
}

/// Copies `s` plus a NUL into `buf` of `size` bytes; INVALID_VALUE when `buf` is null or
/// too small for the string and its terminator.
///
/// # Safety
/// A non-null `buf` must be writable for `size` bytes.
pub unsafe fn copy_cstr(buf: *mut c_char, size: usize, s: &str) -> DocaResult<()> {
    if buf.is_null() || size < s.len() + 1 {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: `buf` holds at least len + 1 bytes (checked above, caller contract).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
        *buf.add(s.len()) = 0;
    }
    Ok(())
}

/// Copies `bytes` into `buf` of `size` bytes; INVALID_VALUE when null or too small.
///
/// # Safety
/// A non-null `buf` must be writable for `size` bytes.
pub unsafe fn copy_bytes(buf: *mut u8, size: usize, bytes: &[u8]) -> DocaResult<()> {
    if buf.is_null() || size < bytes.len() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: `buf` holds at least bytes.len() bytes (checked above, caller contract).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len()) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_cstr_checks_room_for_the_terminator() {
        let mut buf = [0x55 as c_char; 4];
        // SAFETY: buf is 4 writable bytes.
        assert_eq!(
            unsafe { copy_cstr(buf.as_mut_ptr(), 4, "abcd") },
            Err(DocaError::INVALID_VALUE)
        );
        // SAFETY: as above.
        assert_eq!(unsafe { copy_cstr(buf.as_mut_ptr(), 4, "abc") }, Ok(()));
        assert_eq!(buf[3], 0);
        // SAFETY: null is rejected before use.
        assert_eq!(
            unsafe { copy_cstr(std::ptr::null_mut(), 10, "a") },
            Err(DocaError::INVALID_VALUE)
        );
    }

    #[test]
    fn write_out_rejects_null() {
        // SAFETY: null is rejected before use.
        assert_eq!(
            unsafe { write_out::<u32>(std::ptr::null_mut(), 1) },
            Err(DocaError::INVALID_VALUE)
        );
        let mut v = 0u32;
        // SAFETY: &mut v is writable.
        assert_eq!(unsafe { write_out(&mut v, 7) }, Ok(()));
        assert_eq!(v, 7);
    }
}
