//! `doca_argp.h`: the command-line parser of DOCA programs (one per process). The
//! parameter setters return nothing: a NULL parameter is logged and ignored.

use std::ffi::{c_char, c_int, c_void};

use super::toolkit::{call, call_value, call_void, handle_mut, new_handle, non_null};
use super::toolkit::{str_arg, take_handle};
use crate::argp;
use crate::error::DocaError;

pub use crate::argp::{Param, ParamCb, ValidationCb};
pub use crate::argp::{
    TYPE_BOOLEAN, TYPE_DEVICE, TYPE_DEVICE_REP, TYPE_DOUBLE, TYPE_INT, TYPE_STRING, TYPE_UNKNOWN,
};

/// An optional string argument: None for NULL or text that is not UTF-8.
///
/// # Safety
/// A non-null `s` is NUL-terminated.
unsafe fn opt_string(s: *const c_char) -> Option<String> {
    // SAFETY: caller contract.
    unsafe { str_arg(s) }.ok().map(str::to_owned)
}

/// Runs a setter on a parameter; a NULL parameter is logged.
///
/// # Safety
/// `param` is null or a live parameter.
unsafe fn set(func: &'static str, param: *mut Param, f: impl FnOnce(&mut Param)) {
    call_void(func, || {
        // SAFETY: caller contract.
        f(unsafe { handle_mut(param) }?);
        Ok(())
    })
}

/// `doca_argp_init(program_name, program_config)`: BAD_STATE when already initialised;
/// the config pointer is only passed back to the callbacks. The name is optional (as in
/// DOCA 3.3): with NULL the usage text takes it from `argv[0]` at `doca_argp_start`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_init(
    program_name: *const c_char,
    program_config: *mut c_void,
) -> u32 {
    call("doca_argp_init", || {
        let name = if program_name.is_null() {
            None
        } else {
            // SAFETY: C API contract (NUL-terminated when not null).
            Some(unsafe { str_arg(program_name) }?)
        };
        argp::init(name, program_config)
    })
}

/// `doca_argp_destroy()`: forgets every parameter; BAD_STATE when not initialised.
#[no_mangle]
pub extern "C" fn doca_argp_destroy() -> u32 {
    call("doca_argp_destroy", argp::destroy)
}

/// `doca_argp_param_create(&param)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_create(param: *mut *mut Param) -> u32 {
    call("doca_argp_param_create", || {
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(param, Param::default()) }
    })
}

/// `doca_argp_param_destroy(param)`: for a parameter that was not registered.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_destroy(param: *mut Param) -> u32 {
    call("doca_argp_param_destroy", || {
        // SAFETY: C API contract (null or an unregistered parameter, given up).
        drop(unsafe { take_handle(param) }?);
        Ok(())
    })
}

/// `doca_argp_param_set_short_name(param, name)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_short_name(param: *mut Param, name: *const c_char) {
    // SAFETY: C API contract (null or live; null or NUL-terminated).
    unsafe {
        set("doca_argp_param_set_short_name", param, |p| {
            p.set_short_name(opt_string(name))
        })
    }
}

/// `doca_argp_param_set_long_name(param, name)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_long_name(param: *mut Param, name: *const c_char) {
    // SAFETY: C API contract.
    unsafe {
        set("doca_argp_param_set_long_name", param, |p| {
            p.set_long_name(opt_string(name))
        })
    }
}

/// `doca_argp_param_set_arguments(param, arguments)` (shown in the usage).
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_arguments(
    param: *mut Param,
    arguments: *const c_char,
) {
    // SAFETY: C API contract.
    unsafe {
        set("doca_argp_param_set_arguments", param, |p| {
            p.set_arguments(opt_string(arguments))
        })
    }
}

/// `doca_argp_param_set_description(param, description)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_description(
    param: *mut Param,
    description: *const c_char,
) {
    // SAFETY: C API contract.
    unsafe {
        set("doca_argp_param_set_description", param, |p| {
            p.set_description(opt_string(description))
        })
    }
}

/// `doca_argp_param_set_callback(param, callback)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_callback(param: *mut Param, callback: ParamCb) {
    // SAFETY: C API contract.
    unsafe {
        set("doca_argp_param_set_callback", param, |p| {
            p.set_callback(callback)
        })
    }
}

/// `doca_argp_param_set_type(param, type)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_type(param: *mut Param, kind: u32) {
    // SAFETY: C API contract.
    unsafe { set("doca_argp_param_set_type", param, |p| p.set_type(kind)) }
}

/// `doca_argp_param_set_mandatory(param)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_mandatory(param: *mut Param) {
    // SAFETY: C API contract.
    unsafe { set("doca_argp_param_set_mandatory", param, Param::set_mandatory) }
}

/// `doca_argp_param_set_cli_only(param)`: every parameter is command-line only here (no
/// JSON configuration); the mark shows in the usage.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_cli_only(param: *mut Param) {
    // SAFETY: C API contract.
    unsafe { set("doca_argp_param_set_cli_only", param, Param::set_cli_only) }
}

/// `doca_argp_param_set_multiplicity(param)`: the flag may repeat (the callback runs for
/// each); otherwise a repeated flag is a parse error.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_multiplicity(param: *mut Param) {
    // SAFETY: C API contract.
    unsafe {
        set(
            "doca_argp_param_set_multiplicity",
            param,
            Param::set_multiplicity,
        )
    }
}

/// `doca_argp_register_version_callback(cb)`: called for `-v/--version` instead of
/// printing the version; the program then exits 0.
#[no_mangle]
pub extern "C" fn doca_argp_register_version_callback(callback: ParamCb) -> u32 {
    call("doca_argp_register_version_callback", || {
        argp::set_version_callback(callback)
    })
}

/// `doca_argp_register_validation_callback(cb)`: called once with the config after every
/// parameter callback succeeded; its error is `doca_argp_start`'s.
#[no_mangle]
pub extern "C" fn doca_argp_register_validation_callback(callback: ValidationCb) -> u32 {
    call("doca_argp_register_validation_callback", || {
        argp::set_validation_callback(callback)
    })
}

/// `doca_argp_register_param(param)`: takes ownership of the parameter (also on error);
/// BAD_STATE before `doca_argp_init`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_register_param(input_param: *mut Param) -> u32 {
    call("doca_argp_register_param", || {
        // SAFETY: C API contract: a parameter from doca_argp_param_create, given up.
        let p = unsafe { take_handle(input_param) }?;
        argp::register_param(*p)
    })
}

/// `doca_argp_usage()`: prints the usage to stdout.
#[no_mangle]
pub extern "C" fn doca_argp_usage() {
    call_value("doca_argp_usage", (), || {
        if let Some(u) = argp::usage() {
            print!("{u}");
        }
    })
}

/// `doca_argp_start(argc, argv)`: parses the command line and runs the callbacks; `-h`
/// and `-v` exit the process with 0.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_start(argc: c_int, argv: *mut *mut c_char) -> u32 {
    call("doca_argp_start", || {
        if argc < 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        if argc > 0 {
            non_null(argv)?;
        }
        // SAFETY: C API contract: argv holds argc entries, each null or NUL-terminated.
        let argv0 = (argc > 0).then(|| unsafe { opt_string(*argv) }).flatten();
        let args: Vec<String> = (1..argc as usize)
            .map(|i| {
                // SAFETY: C API contract: argv holds argc entries, each null or
                // NUL-terminated (null reads as empty).
                unsafe { opt_string(*argv.add(i)) }.unwrap_or_default()
            })
            .collect();
        argp::start(argv0.as_deref(), &args)
    })
}
