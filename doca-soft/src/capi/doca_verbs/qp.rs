//! `doca_verbs.h`, queue pairs: create, modify, query, destroy, and their rings and
//! doorbells.

use std::ffi::{c_int, c_void};

use super::{maybe_out, stored, unsupported};
use crate::capi::toolkit::{
    call, call_value, call_void, handle, handle_mut, new_handle, non_null, take_handle, write_out,
};
use crate::error::DocaError;
use crate::verbs::qp::QpParts;
use crate::verbs::{QpAttr, QpInitAttr, Umem, VerbsContext, VerbsCq, VerbsPd, VerbsQp};

/// `doca_verbs_qp_create(ctx, init_attr, &qp)`: see `verbs/qp.rs` for the checks.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_create(
    verbs_ctx: *mut VerbsContext,
    verbs_qp_init_attr: *mut QpInitAttr,
    verbs_qp: *mut *mut VerbsQp,
) -> u32 {
    call("doca_verbs_qp_create", || {
        // SAFETY: C API contract.
        let ctx = unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract.
        let init = unsafe { handle(verbs_qp_init_attr) }?;
        non_null(verbs_qp)?;
        if init.pd == 0 || init.send_cq == 0 {
            sdk_err!(
                "verbs",
                "QP create: the init attribute has no PD or no send CQ"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: the program keeps the objects its init attribute names alive.
        let parts = unsafe {
            QpParts {
                pd: stored::<VerbsPd>(init.pd)?,
                send_cq: stored::<VerbsCq>(init.send_cq)?,
                recv_cq: match init.receive_cq {
                    0 => None,
                    c => Some(stored::<VerbsCq>(c)?),
                },
                umem: match init.umem {
                    Some((u, _)) => Some(stored::<Umem>(u)?),
                    None => None,
                },
                dbr_umem: match init.dbr_umem {
                    Some((u, _)) => Some(stored::<Umem>(u)?),
                    None => None,
                },
            }
        };
        let qp = VerbsQp::new(ctx.shared(), init, parts)?;
        // SAFETY: C API contract (checked non-null).
        unsafe { new_handle(verbs_qp, qp) }
    })
}

/// `doca_verbs_qp_modify(qp, attr, mask)`: the state machine of `verbs/transition.rs`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_modify(
    verbs_qp: *mut VerbsQp,
    verbs_qp_attr: *mut QpAttr,
    attr_mask: c_int,
) -> u32 {
    call("doca_verbs_qp_modify", || {
        // SAFETY: C API contract.
        let qp = unsafe { handle(verbs_qp) }?;
        // SAFETY: C API contract.
        let attr = unsafe { handle(verbs_qp_attr) }?;
        qp.modify(attr, attr_mask)
    })
}

/// `doca_verbs_qp_query(qp, attr, init_attr, &mask)`: fills both attribute objects with
/// what the QP holds; the mask has CURRENT_STATE and every attribute applied so far.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_query(
    verbs_qp: *mut VerbsQp,
    verbs_qp_attr: *mut QpAttr,
    verbs_qp_init_attr: *mut QpInitAttr,
    attr_mask: *mut c_int,
) -> u32 {
    call("doca_verbs_qp_query", || {
        // SAFETY: C API contract.
        let qp = unsafe { handle(verbs_qp) }?;
        // SAFETY: C API contract (null or live, not shared).
        let a = unsafe { handle_mut(verbs_qp_attr) }?;
        // SAFETY: as above.
        let i = unsafe { handle_mut(verbs_qp_init_attr) }?;
        non_null(attr_mask)?;
        let (qa, qi, m) = qp.query();
        *a = qa;
        *i = qi;
        // SAFETY: checked non-null.
        unsafe { write_out(attr_mask, m) }
    })
}

/// `doca_verbs_qp_destroy(qp)`: `IN_USE` while exported to a GPU.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_destroy(verbs_qp: *mut VerbsQp) -> u32 {
    call("doca_verbs_qp_destroy", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_qp) }?.ensure_unused()?;
        // SAFETY: as above.
        drop(unsafe { take_handle(verbs_qp) }?);
        Ok(())
    })
}

/// `doca_verbs_qp_get_qpn(qp)`: 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_get_qpn(verbs_qp: *const VerbsQp) -> u32 {
    call_value("doca_verbs_qp_get_qpn", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_qp) }.map_or(0, VerbsQp::qpn)
    })
}

/// `doca_verbs_qp_get_wq(qp, &sq, &sq_n, &rq, &rq_n, &rwqe_size)`: the rings (CPU
/// addresses; no receive queue: NULL and 0). NULL outputs are skipped.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_get_wq(
    verbs_qp: *const VerbsQp,
    sq_buf: *mut *mut c_void,
    sq_num_entries: *mut u32,
    rq_buf: *mut *mut c_void,
    rq_num_entries: *mut u32,
    rwqe_size_bytes: *mut u32,
) {
    call_void("doca_verbs_qp_get_wq", || {
        // SAFETY: C API contract.
        let qp = unsafe { handle(verbs_qp) }?;
        let g = qp.gpu_qp();
        let (rq, rn) = qp.rq().map_or((std::ptr::null_mut(), 0), |r| {
            (r.ring_cpu().cast(), r.num())
        });
        // SAFETY: C API contract (null or writable).
        unsafe {
            maybe_out(sq_buf, g.sq_cpu().cast());
            maybe_out(sq_num_entries, g.sq_num());
            maybe_out(rq_buf, rq);
            maybe_out(rq_num_entries, rn);
            maybe_out(rwqe_size_bytes, 16);
        }
        Ok(())
    })
}

/// `doca_verbs_qp_get_uar_addr(qp)`: the QP's doorbell register (NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_get_uar_addr(verbs_qp: *const VerbsQp) -> *mut c_void {
    call_value("doca_verbs_qp_get_uar_addr", std::ptr::null_mut(), || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_qp) }.map_or(std::ptr::null_mut(), |q| q.gpu_qp().sq_db_cpu().cast())
    })
}

/// `doca_verbs_qp_get_dbr_addr(qp)`: the QP's doorbell records (word 1 is the send
/// record; receive producers are read from the receive queue's own record).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_get_dbr_addr(verbs_qp: *const VerbsQp) -> *mut c_void {
    call_value("doca_verbs_qp_get_dbr_addr", std::ptr::null_mut(), || {
        // SAFETY: C API contract; the send record is word 1 of the record pair (gpuqp).
        unsafe { handle(verbs_qp) }.map_or(std::ptr::null_mut(), |q| unsafe {
            q.gpu_qp().sq_dbrec_cpu().sub(1).cast()
        })
    })
}

/// `doca_verbs_qp_query_ece(qp)`: 0 (no enhanced connection establishment options).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_query_ece(verbs_qp: *const VerbsQp) -> u32 {
    call_value("doca_verbs_qp_query_ece", 0, || {
        // SAFETY: C API contract (only checked for NULL).
        let _ = unsafe { handle(verbs_qp) };
        0
    })
}

/// `doca_verbs_qp_set_ece(qp, ece)`: 0 accepted; other options `NOT_SUPPORTED`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_set_ece(verbs_qp: *mut VerbsQp, ece: u32) -> u32 {
    call("doca_verbs_qp_set_ece", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_qp) }?;
        if ece != 0 {
            return Err(unsupported(
                "enhanced connection establishment (ECE) options",
            ));
        }
        Ok(())
    })
}
