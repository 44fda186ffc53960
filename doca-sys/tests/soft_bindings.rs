//! What the soft backend's bindings must contain, and that they call into doca-soft.

use std::ffi::CStr;

#[test]
fn backend_is_soft_by_default() {
    assert_eq!(doca_sys::BACKEND, "soft");
}

#[test]
fn error_strings_come_from_the_runtime() {
    // SAFETY: doca_error_get_name accepts any value and returns a static string.
    let name = unsafe {
        CStr::from_ptr(doca_sys::doca_error_get_name(
            doca_sys::doca_error::DOCA_ERROR_BAD_STATE,
        ))
    };
    assert_eq!(name.to_str().unwrap(), "DOCA_ERROR_BAD_STATE");
}

#[test]
fn flow_plain_names_alias_the_versioned_symbols() {
    // The plain name and the `_v1` symbol are the same function.
    let plain: unsafe extern "C" fn(*mut doca_sys::doca_flow_cfg) -> doca_sys::doca_error_t =
        doca_sys::doca_flow_init;
    let versioned: unsafe extern "C" fn(*mut doca_sys::doca_flow_cfg) -> doca_sys::doca_error_t =
        doca_sys::doca_flow_init_v1;
    assert_eq!(plain as usize, versioned as usize);
    assert!(std::mem::size_of::<doca_sys::doca_flow_match>() > 0);
}
