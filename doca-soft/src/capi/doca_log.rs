//! `doca_log.h`: `doca_log` itself, log sources, backends and level limits, and
//! `doca_soft_log_emit`, which prints a message already formatted.

use std::ffi::{c_char, c_int};

use super::toolkit::{call, call_value, handle, non_null, str_arg, str_lossy, write_out};
use crate::log::{global, BackendTarget};

pub use crate::log::LogBackend;

/// Creates a backend and writes it through `backend` when given (it may be NULL).
///
/// # Safety
/// `backend` is null or writable.
unsafe fn create(
    func: &'static str,
    target: BackendTarget,
    sdk: bool,
    backend: *mut *mut LogBackend,
) -> u32 {
    call(func, || {
        let b = global().create_backend(target, sdk)?;
        if !backend.is_null() {
            // SAFETY: caller contract; backends are never freed, C gets a plain pointer.
            unsafe { write_out(backend, b as *const LogBackend as *mut LogBackend) }?;
        }
        Ok(())
    })
}

/// `doca_soft_log_emit(level, source, file, line, func, msg)`: one application message,
/// already formatted; NULL strings print as empty.
#[no_mangle]
pub unsafe extern "C" fn doca_soft_log_emit(
    level: u32,
    source: c_int,
    file: *const c_char,
    line: c_int,
    func: *const c_char,
    msg: *const c_char,
) {
    call_value("doca_soft_log_emit", (), || {
        // SAFETY: C API contract: each string is null or NUL-terminated.
        let (file, func, msg) = unsafe { (str_lossy(file), str_lossy(func), str_lossy(msg)) };
        global().emit_app(
            level,
            source,
            file.as_deref().unwrap_or(""),
            line,
            func.as_deref().unwrap_or(""),
            msg.as_deref().unwrap_or(""),
        );
    })
}

/// Longest message in bytes, NUL included (`DOCA_LOG_MAX_MSG_SIZE`); longer ones are cut.
#[cfg(target_arch = "x86_64")]
const MAX_MSG_SIZE: usize = 2048;

#[cfg(target_arch = "x86_64")]
extern "C" {
    // The C library's, with the va_list as x86-64 passes one: a pointer to its only tag.
    fn vsnprintf(
        buf: *mut c_char,
        size: usize,
        format: *const c_char,
        args: *mut std::ffi::c_void,
    ) -> c_int;
}

/// What `doca_log` does once its entry has made the `va_list` (`args`) of the caller's
/// variadic arguments: formats the message and prints it as `doca_soft_log_emit` does.
///
/// # Safety
/// `format` is null or a printf format whose conversions match the arguments behind
/// `args`; `file` and `func` are null or NUL-terminated.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn log_formatted(
    level: u32,
    source: c_int,
    file: *const c_char,
    line: c_int,
    func: *const c_char,
    format: *const c_char,
    args: *mut std::ffi::c_void,
) -> u32 {
    if format.is_null() {
        return crate::error::DocaError::INVALID_VALUE.0;
    }
    let mut msg = [0 as c_char; MAX_MSG_SIZE];
    // SAFETY: `msg` is writable for its length (vsnprintf cuts and NUL-terminates within
    // it); `format` and `args` are the caller's, under the contract above.
    unsafe { vsnprintf(msg.as_mut_ptr(), msg.len(), format, args) };
    // SAFETY: `msg` is NUL-terminated; the other strings are the caller's.
    unsafe { doca_soft_log_emit(level, source, file, line, func, msg.as_ptr()) };
    crate::error::SUCCESS
}

/// `doca_log(level, source, file, line, func, format, ...)`: formats like printf and
/// prints from `source`, exported as DOCA 3.3 exports it (programs may take its address;
/// libraries built against the SDK link to it). Returns `DOCA_ERROR_INVALID_VALUE` when
/// `format` is NULL.
///
/// Stable Rust cannot define a C-variadic function, so this entry is a few instructions
/// for the x86-64 System V ABI: the six named arguments all travel in general registers,
/// so the variadic ones are the floating-point registers (saved here when `al`, the count
/// of vector registers used, is not zero) and the caller's stack. It builds the `va_list`
/// over them (`gp_offset` 48: no general register left; `fp_offset` 48: xmm0 first;
/// `overflow_arg_area` the caller's stack arguments; `reg_save_area` the frame) and calls
/// `log_formatted` with it as a seventh argument, on the stack.
///
/// # Safety
/// As `log_formatted`: a printf format matching the arguments, strings null or
/// NUL-terminated. Called from C only.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn doca_log() -> u32 {
    std::arch::naked_asm!(
        "push rbp",
        "mov rbp, rsp",
        // [rsp, rsp+176): register save area (48 bytes of general registers, never read,
        // then xmm0..xmm7); [rsp+176, rsp+200): the va_list tag; 16-byte aligned.
        "sub rsp, 208",
        "test al, al",
        "je 2f",
        "movaps [rsp + 48], xmm0",
        "movaps [rsp + 64], xmm1",
        "movaps [rsp + 80], xmm2",
        "movaps [rsp + 96], xmm3",
        "movaps [rsp + 112], xmm4",
        "movaps [rsp + 128], xmm5",
        "movaps [rsp + 144], xmm6",
        "movaps [rsp + 160], xmm7",
        "2:",
        "mov dword ptr [rsp + 176], 48",
        "mov dword ptr [rsp + 180], 48",
        "lea rax, [rbp + 16]",
        "mov [rsp + 184], rax",
        "mov [rsp + 192], rsp",
        "lea rax, [rsp + 176]",
        // The seventh argument at the bottom of an aligned frame.
        "sub rsp, 16",
        "mov [rsp], rax",
        "call {formatted}",
        "leave",
        "ret",
        formatted = sym log_formatted,
    )
}

/// `doca_log_register_source(name, &source)`.
#[no_mangle]
pub unsafe extern "C" fn doca_log_register_source(name: *const c_char, source: *mut c_int) -> u32 {
    call("doca_log_register_source", || {
        // SAFETY: C API contract (null or NUL-terminated).
        let n = unsafe { str_arg(name) }?;
        non_null(source)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(source, global().register_source(n)) }
    })
}

/// `doca_log_unregister_source(source)`: NOT_FOUND for an unknown id.
#[no_mangle]
pub extern "C" fn doca_log_unregister_source(source: c_int) -> u32 {
    call("doca_log_unregister_source", || {
        global().unregister_source(source)
    })
}

/// `doca_log_backend_create_standard()`: application messages to stdout (CRIT and ERROR to
/// stderr).
#[no_mangle]
pub extern "C" fn doca_log_backend_create_standard() -> u32 {
    // SAFETY: no out-parameter.
    unsafe {
        create(
            "doca_log_backend_create_standard",
            BackendTarget::Standard,
            false,
            std::ptr::null_mut(),
        )
    }
}

/// `doca_log_backend_create_with_file(FILE *, &backend)`: application messages to a FILE
/// that stays open while the process logs.
#[no_mangle]
pub unsafe extern "C" fn doca_log_backend_create_with_file(
    fe: *mut libc::FILE,
    backend: *mut *mut LogBackend,
) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        create(
            "doca_log_backend_create_with_file",
            BackendTarget::File(fe),
            false,
            backend,
        )
    }
}

/// `doca_log_backend_create_with_file_sdk(FILE *, &backend)`: SDK messages to a FILE.
#[no_mangle]
pub unsafe extern "C" fn doca_log_backend_create_with_file_sdk(
    fe: *mut libc::FILE,
    backend: *mut *mut LogBackend,
) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        create(
            "doca_log_backend_create_with_file_sdk",
            BackendTarget::File(fe),
            true,
            backend,
        )
    }
}

/// `doca_log_backend_create_with_fd(fd, &backend)`: application messages to a descriptor.
#[no_mangle]
pub unsafe extern "C" fn doca_log_backend_create_with_fd(
    fd: c_int,
    backend: *mut *mut LogBackend,
) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        create(
            "doca_log_backend_create_with_fd",
            BackendTarget::Fd(fd),
            false,
            backend,
        )
    }
}

/// `doca_log_backend_create_with_fd_sdk(fd, &backend)`: SDK messages to a descriptor.
#[no_mangle]
pub unsafe extern "C" fn doca_log_backend_create_with_fd_sdk(
    fd: c_int,
    backend: *mut *mut LogBackend,
) -> u32 {
    // SAFETY: C API contract.
    unsafe {
        create(
            "doca_log_backend_create_with_fd_sdk",
            BackendTarget::Fd(fd),
            true,
            backend,
        )
    }
}

/// `doca_log_backend_set_sdk_level(backend, level)`.
#[no_mangle]
pub unsafe extern "C" fn doca_log_backend_set_sdk_level(
    backend: *mut LogBackend,
    level: u32,
) -> u32 {
    call("doca_log_backend_set_sdk_level", || {
        // SAFETY: C API contract (null or a backend of this library; never freed).
        unsafe { handle(backend) }?.set_sdk_level(level)
    })
}

/// `doca_log_backend_get_sdk_level(backend, &level)`.
#[no_mangle]
pub unsafe extern "C" fn doca_log_backend_get_sdk_level(
    backend: *const LogBackend,
    level: *mut u32,
) -> u32 {
    call("doca_log_backend_get_sdk_level", || {
        // SAFETY: C API contract.
        unsafe { write_out(level, handle(backend)?.sdk_level()) }
    })
}

/// `doca_log_backend_set_level_lower_limit(backend, level)`.
#[no_mangle]
pub unsafe extern "C" fn doca_log_backend_set_level_lower_limit(
    backend: *mut LogBackend,
    level: u32,
) -> u32 {
    call("doca_log_backend_set_level_lower_limit", || {
        // SAFETY: C API contract.
        unsafe { handle(backend) }?.set_lower(level)
    })
}

/// `doca_log_backend_set_level_upper_limit(backend, level)`.
#[no_mangle]
pub unsafe extern "C" fn doca_log_backend_set_level_upper_limit(
    backend: *mut LogBackend,
    level: u32,
) -> u32 {
    call("doca_log_backend_set_level_upper_limit", || {
        // SAFETY: C API contract.
        unsafe { handle(backend) }?.set_upper(level)
    })
}

/// `doca_log_level_set_global_lower_limit(level)`: every application backend, and the
/// default of new ones.
#[no_mangle]
pub extern "C" fn doca_log_level_set_global_lower_limit(level: u32) -> u32 {
    call("doca_log_level_set_global_lower_limit", || {
        global().set_global_lower(level)
    })
}

/// `doca_log_level_set_global_upper_limit(level)`.
#[no_mangle]
pub extern "C" fn doca_log_level_set_global_upper_limit(level: u32) -> u32 {
    call("doca_log_level_set_global_upper_limit", || {
        global().set_global_upper(level)
    })
}

/// `doca_log_level_set_global_sdk_limit(level)`.
#[no_mangle]
pub extern "C" fn doca_log_level_set_global_sdk_limit(level: u32) -> u32 {
    call("doca_log_level_set_global_sdk_limit", || {
        global().set_global_sdk(level)
    })
}

/// `doca_log_level_get_global_lower_limit()`.
#[no_mangle]
pub extern "C" fn doca_log_level_get_global_lower_limit() -> u32 {
    call_value("doca_log_level_get_global_lower_limit", 0, || {
        global().global_lower()
    })
}

/// `doca_log_level_get_global_upper_limit()`.
#[no_mangle]
pub extern "C" fn doca_log_level_get_global_upper_limit() -> u32 {
    call_value("doca_log_level_get_global_upper_limit", 0, || {
        global().global_upper()
    })
}

/// `doca_log_level_get_global_sdk_limit()`.
#[no_mangle]
pub extern "C" fn doca_log_level_get_global_sdk_limit() -> u32 {
    call_value("doca_log_level_get_global_sdk_limit", 0, || {
        global().global_sdk()
    })
}

/// The process-wide logger of doca-soft-base driven through this C API.
#[cfg(test)]
mod tests {
    use super::*;
    use doca_soft_base::error::DocaError;
    use doca_soft_base::log::{global, LEVEL_DEBUG, LEVEL_ERROR, LEVEL_INFO, LEVEL_TRACE};
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;

    /// A FILE* over a fresh temp file, plus the file to read it back.
    fn temp_file_stream() -> (std::fs::File, *mut libc::FILE) {
        let f = tempfile::tempfile().unwrap();
        // SAFETY: dup of a valid descriptor.
        let fd = unsafe { libc::dup(f.as_raw_fd()) };
        assert!(fd >= 0);
        // SAFETY: `fd` is a valid descriptor; mode is a NUL-terminated string.
        let fe = unsafe { libc::fdopen(fd, c"w".as_ptr()) };
        assert!(!fe.is_null());
        (f, fe)
    }

    fn read_all(mut f: &std::fs::File) -> String {
        f.rewind().unwrap();
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn null_arguments_are_rejected() {
        // SAFETY: null arguments are rejected before use.
        unsafe {
            assert_eq!(
                doca_log_register_source(std::ptr::null(), std::ptr::null_mut()),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_log_backend_create_with_file(std::ptr::null_mut(), std::ptr::null_mut()),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_log_backend_set_sdk_level(std::ptr::null_mut(), LEVEL_DEBUG),
                DocaError::INVALID_VALUE.0
            );
        }
    }

    #[test]
    fn c_emit_reaches_a_global_file_backend_with_the_source_name() {
        let (f, fe) = temp_file_stream();
        let mut src = -1;
        let mut b: *mut LogBackend = std::ptr::null_mut();
        // SAFETY: valid FILE, strings and out-pointers. The FILE stays open for the rest of
        // the process because the global backend keeps it.
        unsafe {
            assert_eq!(doca_log_backend_create_with_file(fe, &mut b), 0);
            assert!(!b.is_null());
            assert_eq!(
                doca_log_register_source(c"C_EMIT_UNIT".as_ptr(), &mut src),
                0
            );
            let file = c"dir/prog.c".as_ptr();
            doca_soft_log_emit(
                LEVEL_ERROR,
                src,
                file,
                7,
                c"main".as_ptr(),
                c"c-error".as_ptr(),
            );
            doca_soft_log_emit(
                LEVEL_TRACE,
                src,
                file,
                8,
                c"main".as_ptr(),
                c"c-trace".as_ptr(),
            );
            doca_soft_log_emit(
                LEVEL_INFO,
                99_999,
                file,
                9,
                c"f".as_ptr(),
                c"c-nosrc".as_ptr(),
            );
            assert_eq!(
                doca_log_backend_set_level_lower_limit(b, 55),
                DocaError::INVALID_VALUE.0
            );
        }
        let out = read_all(&f);
        assert!(out.contains("[ERR][C_EMIT_UNIT:7][main] c-error"), "{out}");
        assert!(out.contains("[INFO][prog.c:9][f] c-nosrc"), "{out}");
        assert!(!out.contains("c-trace"));
    }

    #[test]
    fn c_register_source_returns_distinct_ids() {
        let (mut a, mut b) = (-1, -1);
        // SAFETY: valid C strings and writable ints.
        unsafe {
            assert_eq!(doca_log_register_source(c"A".as_ptr(), &mut a), 0);
            assert_eq!(doca_log_register_source(c"B".as_ptr(), &mut b), 0);
        }
        assert!(a >= 0 && b >= 0 && a != b);
        assert_eq!(global().source_name(b).as_deref(), Some("B"));
    }
}
