//! `doca_soft_verbs.h` (doca-soft extension): the GID and port attributes of a verbs
//! context, which programs on hardware read from rdma-core.

use super::doca_verbs::VerbsGid;
use super::toolkit::{call, handle, non_null, write_out};
use crate::verbs::VerbsContext;

/// rdma-core's `IBV_LINK_LAYER_ETHERNET`.
pub const LINK_LAYER_ETHERNET: u8 = 2;

/// `doca_soft_verbs_query_gid(ctx, index, &gid)`: the NIC's GID (any index).
#[no_mangle]
pub unsafe extern "C" fn doca_soft_verbs_query_gid(
    verbs_ctx: *mut VerbsContext,
    _gid_index: u32,
    gid: *mut VerbsGid,
) -> u32 {
    call("doca_soft_verbs_query_gid", || {
        // SAFETY: C API contract (null or live).
        let c = unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract (null or writable).
        unsafe {
            write_out(
                gid,
                VerbsGid {
                    raw: c.shared().gid(),
                },
            )
        }
    })
}

/// `doca_soft_verbs_query_port(ctx, &lid, &link_layer)`: LID 0, Ethernet.
#[no_mangle]
pub unsafe extern "C" fn doca_soft_verbs_query_port(
    verbs_ctx: *mut VerbsContext,
    lid: *mut u16,
    link_layer: *mut u8,
) -> u32 {
    call("doca_soft_verbs_query_port", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_ctx) }?;
        non_null(lid)?;
        non_null(link_layer)?;
        // SAFETY: checked non-null.
        unsafe {
            write_out(lid, 0)?;
            write_out(link_layer, LINK_LAYER_ETHERNET)
        }
    })
}
