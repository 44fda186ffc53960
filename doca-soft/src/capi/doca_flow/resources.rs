//! `doca_flow.h`, shared resources (configure, bind, get, put, query) and the counter
//! queries of entries and pipe misses.

use std::ffi::c_void;

use super::{opt, write_query};
use crate::capi::toolkit::{call, non_null, write_out};
use crate::error::{DocaError, DocaResult};
use crate::flow::cfg::RESOURCE_KINDS;
use crate::flow::handles::FlowPort;
use crate::flow::state::state;
use crate::flow::sys::*;

/// Reads `n` ids.
///
/// # Safety
/// A non-null `ids` holds `n` readable ids.
unsafe fn ids_arg<'a>(ids: *const u32, n: u32) -> DocaResult<&'a [u32]> {
    if ids.is_null() || n == 0 {
        return Err(DocaError::INVALID_VALUE);
    }
    // SAFETY: caller contract.
    Ok(unsafe { std::slice::from_raw_parts(ids, n as usize) })
}

/// Writes counter results into `out[..n]`.
///
/// # Safety
/// A non-null `out` holds `results.len()` writable structs.
unsafe fn write_results(
    out: *mut doca_flow_resource_query_v1,
    results: &[(u64, u64)],
) -> DocaResult<()> {
    for (i, r) in results.iter().enumerate() {
        // SAFETY: caller contract.
        unsafe { write_query(out.add(i), *r) }?;
    }
    Ok(())
}

/// `doca_flow_shared_resource_set_cfg(type, id, cfg)` (`_v1`): SYSTEM mode; counters and
/// RSS.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_shared_resource_set_cfg_v1(
    kind: u32,
    id: u32,
    cfg: *mut doca_flow_shared_resource_cfg_v1,
) -> u32 {
    call("doca_flow_shared_resource_set_cfg", || {
        // SAFETY: C API contract (null or valid).
        let c = unsafe { opt(cfg) };
        state().set_shared_cfg(kind, id, c)
    })
}

/// `doca_flow_shared_resources_bind(type, ids, n, obj)`: to NULL (global), a port or a
/// pipe.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_shared_resources_bind(
    kind: u32,
    ids: *mut u32,
    n: u32,
    obj: *mut c_void,
) -> u32 {
    call("doca_flow_shared_resources_bind", || {
        // SAFETY: C API contract.
        let ids = unsafe { ids_arg(ids, n) }?;
        state().bind_shared(kind, ids, obj as usize)
    })
}

/// `doca_flow_shared_resources_query(type, ids, data, n)` (`_v1`): SYSTEM mode counters.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_shared_resources_query_v1(
    kind: u32,
    ids: *mut u32,
    data: *mut doca_flow_resource_query_v1,
    n: u32,
) -> u32 {
    call("doca_flow_shared_resources_query", || {
        non_null(data)?;
        // SAFETY: C API contract.
        let ids = unsafe { ids_arg(ids, n) }?;
        let r = state().query_shared(kind, ids)?;
        // SAFETY: C API contract (n writable results).
        unsafe { write_results(data, &r) }
    })
}

/// `doca_flow_port_shared_resource_get(port, type, &id)`: PORT mode; EMPTY when none left.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_shared_resource_get(
    port: *mut FlowPort,
    kind: u32,
    id: *mut u32,
) -> u32 {
    call("doca_flow_port_shared_resource_get", || {
        non_null(port)?;
        non_null(id)?;
        let x = state().take_port_shared(port as usize, kind)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(id, x) }
    })
}

/// `doca_flow_port_shared_resource_put(port, type, id)`: PORT mode.
#[no_mangle]
pub extern "C" fn doca_flow_port_shared_resource_put(
    port: *mut FlowPort,
    kind: u32,
    id: u32,
) -> u32 {
    call("doca_flow_port_shared_resource_put", || {
        non_null(port)?;
        state().put_port_shared(port as usize, kind, id)
    })
}

/// `doca_flow_port_shared_resource_set_cfg(port, type, id, cfg)` (`_v1`): PORT mode.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_shared_resource_set_cfg_v1(
    port: *mut FlowPort,
    kind: u32,
    id: u32,
    cfg: *mut doca_flow_shared_resource_cfg_v1,
) -> u32 {
    call("doca_flow_port_shared_resource_set_cfg", || {
        non_null(port)?;
        // SAFETY: C API contract.
        let c = unsafe { opt(cfg) };
        state().set_port_shared_cfg(port as usize, kind, id, c)
    })
}

/// `doca_flow_port_shared_resources_query(port, type, ids, data, n)` (`_v1`): PORT mode.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_port_shared_resources_query_v1(
    port: *mut FlowPort,
    kind: u32,
    ids: *mut u32,
    data: *mut doca_flow_resource_query_v1,
    n: u32,
) -> u32 {
    call("doca_flow_port_shared_resources_query", || {
        non_null(port)?;
        non_null(data)?;
        // SAFETY: C API contract.
        let ids = unsafe { ids_arg(ids, n) }?;
        let r = state().query_port_shared(port as usize, kind, ids)?;
        // SAFETY: C API contract.
        unsafe { write_results(data, &r) }
    })
}

const _: () = assert!(RESOURCE_KINDS == 7);

// ---- queries ---------------------------------------------------------------------------

/// `doca_flow_resource_query_entry(entry, &query)` (`_v1`): packets and bytes of a counting
/// entry; NOT_SUPPORTED when the entry has no counter.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_resource_query_entry_v1(
    entry: *mut doca_flow_pipe_entry,
    query: *mut doca_flow_resource_query_v1,
) -> u32 {
    call("doca_flow_resource_query_entry", || {
        non_null(entry)?;
        non_null(query)?;
        let counts = state().query_entry(entry as usize)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_query(query, counts) }
    })
}

/// `doca_flow_resource_query_pipe_miss(pipe, &query)` (`_v1`): NOT_SUPPORTED without a miss
/// counter.
#[no_mangle]
pub unsafe extern "C" fn doca_flow_resource_query_pipe_miss_v1(
    pipe: *mut doca_flow_pipe,
    query: *mut doca_flow_resource_query_v1,
) -> u32 {
    call("doca_flow_resource_query_pipe_miss", || {
        non_null(pipe)?;
        non_null(query)?;
        let counts = state().query_pipe_miss(pipe as usize)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_query(query, counts) }
    })
}
