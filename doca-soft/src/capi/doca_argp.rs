//! `doca_argp.h`: the command-line parser of DOCA programs (one per process). The
//! parameter setters return nothing: a NULL parameter is logged and ignored.
//!
//! Parameter handles are tracked (see `Handles`): a registered parameter stays allocated
//! until `doca_argp_destroy`, so registering it again, destroying it or setting it after
//! registration is a clear error (BAD_STATE, logged) instead of a double free, and a
//! pointer that is no live parameter is INVALID_VALUE without being read.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

use super::toolkit::{call, call_value, call_void, non_null, str_arg, write_out};
use crate::argp;
use crate::error::{DocaError, DocaResult};
use crate::sync::lock;

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

/// Where a live parameter handle stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    /// Made by `doca_argp_param_create`; the application owns it.
    Created,
    /// Given to `doca_argp_register_param`; argp owns it (freed by `doca_argp_destroy`).
    Registered,
}

/// Every live parameter handle (its address), with its stage. The boxes themselves are
/// owned here: a handle is freed only by `doca_argp_param_destroy` (Created) or
/// `doca_argp_destroy` (Registered).
struct Handles(HashMap<usize, (Stage, Box<Param>)>);

static HANDLES: Mutex<Option<Handles>> = Mutex::new(None);

/// Runs `f` on the handle table (made on first use).
fn with_handles<T>(f: impl FnOnce(&mut HashMap<usize, (Stage, Box<Param>)>) -> T) -> T {
    let mut h = lock(&HANDLES);
    f(&mut h.get_or_insert_with(|| Handles(HashMap::new())).0)
}

/// The live parameter behind `param` at stage `want`: INVALID_VALUE when `param` is no
/// live parameter, BAD_STATE (logged) when it is at the other stage.
fn live<'a>(
    func: &str,
    table: &'a mut HashMap<usize, (Stage, Box<Param>)>,
    param: *mut Param,
    want: Stage,
) -> DocaResult<&'a mut (Stage, Box<Param>)> {
    let entry = table
        .get_mut(&(param as usize))
        .ok_or(DocaError::INVALID_VALUE)?;
    if entry.0 != want {
        sdk_err!(
            "argp",
            "{func}: the parameter is {}",
            match entry.0 {
                Stage::Registered => "registered (argp owns it now)",
                Stage::Created => "not registered",
            }
        );
        return Err(DocaError::BAD_STATE);
    }
    Ok(entry)
}

/// Runs a setter on a parameter that is not registered yet; a NULL, unknown or registered
/// parameter is logged and ignored (the setters return nothing).
fn set(func: &'static str, param: *mut Param, f: impl FnOnce(&mut Param)) {
    call_void(func, || {
        with_handles(|t| {
            f(&mut live(func, t, param, Stage::Created)?.1);
            Ok(())
        })
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
    call("doca_argp_destroy", || {
        argp::destroy()?;
        // The registered parameters go with the parser.
        with_handles(|t| t.retain(|_, (stage, _)| *stage == Stage::Created));
        Ok(())
    })
}

/// `doca_argp_param_create(&param)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_create(param: *mut *mut Param) -> u32 {
    call("doca_argp_param_create", || {
        non_null(param)?;
        let mut b = Box::new(Param::default());
        let p: *mut Param = &mut *b;
        with_handles(|t| t.insert(p as usize, (Stage::Created, b)));
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(param, p) }
    })
}

/// `doca_argp_param_destroy(param)`: for a parameter that was not registered; BAD_STATE
/// (nothing freed) for a registered one, INVALID_VALUE for a pointer that is no live
/// parameter.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_destroy(param: *mut Param) -> u32 {
    call("doca_argp_param_destroy", || {
        with_handles(|t| {
            live("doca_argp_param_destroy", t, param, Stage::Created)?;
            t.remove(&(param as usize));
            Ok(())
        })
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
    set("doca_argp_param_set_callback", param, |p| {
        p.set_callback(callback)
    })
}

/// `doca_argp_param_set_type(param, type)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_type(param: *mut Param, kind: u32) {
    set("doca_argp_param_set_type", param, |p| p.set_type(kind))
}

/// `doca_argp_param_set_mandatory(param)`.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_mandatory(param: *mut Param) {
    set("doca_argp_param_set_mandatory", param, Param::set_mandatory)
}

/// `doca_argp_param_set_cli_only(param)`: every parameter is command-line only here (no
/// JSON configuration); the mark shows in the usage.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_cli_only(param: *mut Param) {
    set("doca_argp_param_set_cli_only", param, Param::set_cli_only)
}

/// `doca_argp_param_set_multiplicity(param)`: the flag may repeat (the callback runs for
/// each); otherwise a repeated flag is a parse error.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_param_set_multiplicity(param: *mut Param) {
    set(
        "doca_argp_param_set_multiplicity",
        param,
        Param::set_multiplicity,
    )
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

/// `doca_argp_register_param(param)`: takes ownership of the parameter (also on error;
/// it is freed by `doca_argp_destroy`); BAD_STATE before `doca_argp_init` and for a
/// parameter registered already, INVALID_VALUE for a pointer that is no live parameter.
#[no_mangle]
pub unsafe extern "C" fn doca_argp_register_param(input_param: *mut Param) -> u32 {
    call("doca_argp_register_param", || {
        let p = with_handles(|t| {
            let entry = live("doca_argp_register_param", t, input_param, Stage::Created)?;
            entry.0 = Stage::Registered;
            Ok::<_, DocaError>(Param::clone(&entry.1))
        })?;
        // Outside the handle lock: argp's own lock is never taken inside it.
        argp::register_param(p)
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
