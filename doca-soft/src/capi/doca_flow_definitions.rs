//! `doca_flow_definitions.h`: named fields of an application's own structure for Flow to
//! match and modify. The software runtime's classifier knows only the headers its parser
//! finds, so there are no custom fields: every call checks its arguments (INVALID_VALUE
//! for NULL handles, out-parameters and strings) and then fails with NOT_SUPPORTED and
//! one log line. No definitions object is ever created, so a non-NULL handle passed in
//! is foreign and gets the same refusal.

use std::ffi::c_char;

use super::toolkit::{call, call_value, non_null, write_out};
use crate::error::{DocaError, DocaResult};

/// `struct doca_flow_definitions_cfg` (none is ever created).
pub enum DefinitionsCfg {}

/// `struct doca_flow_definitions` (none is ever created).
pub enum Definitions {}

fn not_supported() -> DocaResult<()> {
    sdk_err!("flow", "Flow definitions (custom fields) are not supported");
    Err(DocaError::NOT_SUPPORTED)
}

/// `doca_flow_definitions_cfg_create(&cfg)`: NOT_SUPPORTED (`*cfg` set to NULL).
///
/// # Safety
/// `cfg` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_definitions_cfg_create(cfg: *mut *mut DefinitionsCfg) -> u32 {
    call("doca_flow_definitions_cfg_create", || {
        // SAFETY: caller contract (NULL or writable).
        unsafe { write_out(cfg, std::ptr::null_mut()) }?;
        not_supported()
    })
}

/// `doca_flow_definitions_cfg_destroy(cfg)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_definitions_cfg_destroy(cfg: *mut DefinitionsCfg) -> u32 {
    call("doca_flow_definitions_cfg_destroy", || {
        non_null(cfg)?;
        not_supported()
    })
}

/// `doca_flow_definitions_create(cfg, &defs)`: NOT_SUPPORTED (`*defs` set to NULL).
///
/// # Safety
/// `defs` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_definitions_create(
    cfg: *mut DefinitionsCfg,
    defs: *mut *mut Definitions,
) -> u32 {
    call("doca_flow_definitions_create", || {
        non_null(cfg)?;
        // SAFETY: caller contract (NULL or writable).
        unsafe { write_out(defs, std::ptr::null_mut()) }?;
        not_supported()
    })
}

/// `doca_flow_definitions_add_field(defs, opcode, offset, length)`: NOT_SUPPORTED.
#[no_mangle]
pub extern "C" fn doca_flow_definitions_add_field(
    defs: *mut Definitions,
    field_opcode: *const c_char,
    _field_offset: u32,
    field_length: u32,
) -> u32 {
    call("doca_flow_definitions_add_field", || {
        non_null(defs)?;
        non_null(field_opcode)?;
        if field_length == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        not_supported()
    })
}

/// `doca_flow_definitions_destroy(defs)`: nothing to destroy; a non-NULL handle logs the
/// refusal once (the call returns nothing).
#[no_mangle]
pub extern "C" fn doca_flow_definitions_destroy(defs: *mut Definitions) {
    call_value("doca_flow_definitions_destroy", (), || {
        if !defs.is_null() {
            let _ = not_supported();
        }
    })
}
