//! The one way an exported C function is written.
//!
//! Every `#[no_mangle] extern "C"` function of the runtime has the same shape:
//!
//! ```ignore
//! #[no_mangle]
//! pub unsafe extern "C" fn doca_thing_set_size(thing: *mut Thing, size: u32) -> u32 {
//!     call("doca_thing_set_size", || {
//!         // SAFETY: `thing` is null or a live handle (C API contract).
//!         let thing = unsafe { handle(thing) }?;
//!         thing.set_size(size)
//!     })
//! }
//! ```
//!
//! * [`call`], [`call_ptr`] and [`call_value`] run the body and turn its result into the C
//!   return value. A panic never crosses the C boundary (it would abort the caller's
//!   process): it is caught, logged once with the function's name, and returned as
//!   `DOCA_ERROR_UNEXPECTED` (or the fallback value).
//! * [`handle`] / [`handle_mut`] borrow an object from its C pointer, `INVALID_VALUE` when
//!   null; [`new_handle`] boxes a new object into an out-parameter and [`take_handle`] takes
//!   it back in `*_destroy`.
//! * [`call_void`] is the body of a C function that returns nothing: a failure (or a panic)
//!   is logged once with the function's name, since the caller cannot see it.
//! * [`non_null`] rejects a null argument before any work is done (an out-parameter checked
//!   before an object is built, so a bad call leaves nothing behind).
//! * [`write_out`], [`str_arg`], [`str_lossy`], [`copy_cstr`] and [`copy_bytes`] move plain
//!   values across.

use std::any::Any;
use std::borrow::Cow;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{DocaError, DocaResult, SUCCESS};

/// Text of a caught panic's payload.
fn panic_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "non-text panic payload"
    }
}

/// Runs `body` under `catch_unwind`; a panic is logged with `func` and becomes `None`.
fn guarded<T>(func: &'static str, body: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => Some(v),
        Err(payload) => {
            sdk_err!(
                "capi",
                "{func}: internal error, call abandoned: {}",
                panic_text(payload.as_ref())
            );
            None
        }
    }
}

/// Body of a C function returning `doca_error_t`: `Ok` is `DOCA_SUCCESS`, `Err(e)` is
/// `e`'s code, a panic is `DOCA_ERROR_UNEXPECTED` (logged).
pub(crate) fn call(func: &'static str, body: impl FnOnce() -> DocaResult<()>) -> u32 {
    match guarded(func, body) {
        Some(Ok(())) => SUCCESS,
        Some(Err(e)) => e.0,
        None => DocaError::UNEXPECTED.0,
    }
}

/// Body of a C function returning a pointer: NULL on error or panic.
pub(crate) fn call_ptr<T>(func: &'static str, body: impl FnOnce() -> DocaResult<*mut T>) -> *mut T {
    match guarded(func, body) {
        Some(Ok(p)) => p,
        _ => std::ptr::null_mut(),
    }
}

/// Body of a C function returning a plain value: `fallback` on panic.
pub(crate) fn call_value<T>(func: &'static str, fallback: T, body: impl FnOnce() -> T) -> T {
    guarded(func, body).unwrap_or(fallback)
}

/// Body of a C function returning nothing: an error is logged with `func` (the caller has
/// no other way to learn of it); a panic is logged by the guard.
pub(crate) fn call_void(func: &'static str, body: impl FnOnce() -> DocaResult<()>) {
    if let Some(Err(e)) = guarded(func, body) {
        sdk_err!("capi", "{func}: {e:?}");
    }
}

/// `INVALID_VALUE` when `p` is null.
pub(crate) fn non_null<T>(p: *const T) -> DocaResult<()> {
    if p.is_null() {
        Err(DocaError::INVALID_VALUE)
    } else {
        Ok(())
    }
}

/// Borrows the object behind a C handle; `INVALID_VALUE` when null.
///
/// # Safety
/// A non-null `p` must point to a live `T` for `'a` (the C API contract: a handle from
/// the matching `*_create` that was not destroyed).
pub(crate) unsafe fn handle<'a, T>(p: *const T) -> DocaResult<&'a T> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}

/// Mutably borrows the object behind a C handle; `INVALID_VALUE` when null.
///
/// # Safety
/// As [`handle`], and no other reference to the object is live for `'a`.
pub(crate) unsafe fn handle_mut<'a, T>(p: *mut T) -> DocaResult<&'a mut T> {
    // SAFETY: caller contract.
    unsafe { p.as_mut() }.ok_or(DocaError::INVALID_VALUE)
}

/// Boxes `value` and writes the new handle through `out`; `INVALID_VALUE` (and nothing
/// allocated) when `out` is null.
///
/// # Safety
/// A non-null `out` must be valid for a write of a pointer.
pub(crate) unsafe fn new_handle<T>(out: *mut *mut T, value: T) -> DocaResult<()> {
    if out.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: non-null checked; validity is the caller's contract.
    unsafe { out.write(Box::into_raw(Box::new(value))) };
    Ok(())
}

/// Takes back ownership of a handle made by [`new_handle`]; `INVALID_VALUE` when null.
///
/// # Safety
/// A non-null `p` must come from [`new_handle`] for this `T` and not be used afterwards.
pub(crate) unsafe fn take_handle<T>(p: *mut T) -> DocaResult<Box<T>> {
    if p.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: made by Box::into_raw in new_handle (caller contract).
    Ok(unsafe { Box::from_raw(p) })
}

/// Writes `value` through an out-parameter; `INVALID_VALUE` when `out` is null.
///
/// # Safety
/// A non-null `out` must be valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) -> DocaResult<()> {
    if out.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: non-null checked; validity is the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Borrows a NUL-terminated C string as UTF-8; `INVALID_VALUE` when null or not UTF-8.
///
/// # Safety
/// A non-null `s` must point to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn str_arg<'a>(s: *const c_char) -> DocaResult<&'a str> {
    if s.is_null() {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: non-null checked; NUL termination is the caller's contract.
    let c = unsafe { CStr::from_ptr(s) };
    c.to_str().map_err(|_| DocaError::INVALID_VALUE)
}

/// Reads a NUL-terminated C string, replacing bytes that are not UTF-8; `None` when null.
///
/// # Safety
/// A non-null `s` must point to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn str_lossy<'a>(s: *const c_char) -> Option<Cow<'a, str>> {
    if s.is_null() {
        return None;
    }
    // SAFETY: non-null checked; NUL termination is the caller's contract.
    Some(unsafe { CStr::from_ptr(s) }.to_string_lossy())
}

/// Copies `s` plus a NUL into `buf` of `size` bytes; `INVALID_VALUE` when `buf` is null or
/// too small for the string and its terminator.
///
/// # Safety
/// A non-null `buf` must be writable for `size` bytes.
pub(crate) unsafe fn copy_cstr(buf: *mut c_char, size: usize, s: &str) -> DocaResult<()> {
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

/// Copies `bytes` into `buf` of `size` bytes; `INVALID_VALUE` when null or too small.
///
/// # Safety
/// A non-null `buf` must be writable for `size` bytes.
pub(crate) unsafe fn copy_bytes(buf: *mut u8, size: usize, bytes: &[u8]) -> DocaResult<()> {
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
    fn call_maps_results_and_catches_panics() {
        assert_eq!(call("t_ok", || Ok(())), SUCCESS);
        assert_eq!(
            call("t_err", || Err(DocaError::BAD_STATE)),
            DocaError::BAD_STATE.0
        );
        assert_eq!(call("t_panic", || panic!("boom")), DocaError::UNEXPECTED.0);
        let p: *mut u8 = call_ptr("t_ptr_panic", || panic!("boom"));
        assert!(p.is_null());
        let p: *mut u8 = call_ptr("t_ptr_err", || Err(DocaError::NO_MEMORY));
        assert!(p.is_null());
        assert_eq!(call_value("t_val", 7u8, || panic!("boom")), 7);
        assert_eq!(call_value("t_val", 7u8, || 3), 3);
    }

    #[test]
    fn handles_round_trip_and_reject_null() {
        let mut out: *mut u32 = std::ptr::null_mut();
        // SAFETY: &mut out is writable.
        unsafe { new_handle(&mut out, 41u32) }.unwrap();
        // SAFETY: `out` is the live handle made above.
        assert_eq!(unsafe { handle(out) }.copied(), Ok(41));
        // SAFETY: as above; no other reference is live.
        *unsafe { handle_mut(out) }.unwrap() += 1;
        // SAFETY: made by new_handle, not used afterwards.
        assert_eq!(*unsafe { take_handle(out) }.unwrap(), 42);
        // SAFETY: null is rejected before use.
        unsafe {
            assert_eq!(
                new_handle(std::ptr::null_mut(), 1u32),
                Err(DocaError::INVALID_VALUE)
            );
            assert_eq!(
                handle::<u32>(std::ptr::null()),
                Err(DocaError::INVALID_VALUE)
            );
            assert!(take_handle::<u32>(std::ptr::null_mut()).is_err());
        }
    }

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
    fn void_calls_and_null_checks() {
        call_void("t_void_err", || Err(DocaError::BAD_STATE));
        call_void("t_void_panic", || panic!("boom"));
        let mut hit = false;
        call_void("t_void_ok", || {
            hit = true;
            Ok(())
        });
        assert!(hit);
        assert_eq!(
            non_null::<u8>(std::ptr::null()),
            Err(DocaError::INVALID_VALUE)
        );
        assert_eq!(non_null(&1u8), Ok(()));
        // SAFETY: null is rejected; the literal is NUL-terminated.
        unsafe {
            assert!(str_lossy(std::ptr::null()).is_none());
            assert_eq!(str_lossy(c"a\xffb".as_ptr()).unwrap(), "a\u{fffd}b");
        }
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
