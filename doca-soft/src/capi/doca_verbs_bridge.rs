//! `doca_verbs_bridge.h`: bridges between DOCA Verbs and rdma-core. doca-soft has no
//! libibverbs (see `verbs/` for what programs use instead), so:
//!
//! * what works on doca-soft's own stand-ins works: `doca_verbs_bridge_verbs_pd_get_ibv_pd`
//!   and `doca_verbs_bridge_get_ibv_ctx` return them, and `..._verbs_context_import`,
//!   `..._verbs_query_device` and `..._verbs_pd_import` accept them (anything else:
//!   `INVALID_VALUE`); `doca_verbs_bridge_get_qp_attr_mask` translates masks;
//! * what needs a real rdma-core object (`..._verbs_context_create` from an
//!   `ibv_device`, `..._qp_attr_set/get` on `struct ibv_qp_attr`) and the CPU data path
//!   (`post_send`, `post_recv`, `poll_cq`, ...: queues here are driven through their rings)
//!   fail with `NOT_SUPPORTED` (or `EOPNOTSUPP`/`-EOPNOTSUPP` where an int is returned) and
//!   one log line.

use std::ffi::{c_int, c_void};

use super::toolkit::{call, call_ptr, call_value, handle, new_handle, non_null};
use crate::error::DocaError;
use crate::verbs::context::{ctx_of_ibv_context, pd_of_ibv_pd, SoftIbvContext, SoftIbvPd};
use crate::verbs::{DeviceAttr, QpAttr, VerbsContext, VerbsCq, VerbsPd, VerbsQp};

fn unsupported(what: &str) -> DocaError {
    sdk_err!(
        "verbs",
        "{what} is not supported by doca-soft (it has no libibverbs)"
    );
    DocaError::NOT_SUPPORTED
}

/// `doca_verbs_bridge_verbs_context_create(ibv_device, flags, &ctx)`: `NOT_SUPPORTED` (an
/// `ibv_device` cannot come from doca-soft; use `doca_verbs_context_create(devinfo, ...)`).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_verbs_context_create(
    _ibv_dev: *mut c_void,
    _flags: u32,
    _verbs_ctx: *mut *mut VerbsContext,
) -> u32 {
    call("doca_verbs_bridge_verbs_context_create", || {
        Err(unsupported(
            "opening a verbs context on an rdma-core ibv_device (use doca_verbs_context_create)",
        ))
    })
}

/// `doca_verbs_bridge_verbs_context_import(ibv_ctx, flags, &ctx)`: a new context on the
/// device of a doca-soft `ibv_context` stand-in.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_verbs_context_import(
    ibv_ctx: *mut c_void,
    flags: u32,
    verbs_ctx: *mut *mut VerbsContext,
) -> u32 {
    call("doca_verbs_bridge_verbs_context_import", || {
        // SAFETY: C API contract: NULL, a stand-in from this runtime, or a foreign object
        // (whose magic does not match).
        let c = unsafe { ctx_of_ibv_context(ibv_ctx as *const SoftIbvContext) }?;
        if flags != 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_ctx, VerbsContext::import(c)) }
    })
}

/// `doca_verbs_bridge_verbs_query_device(ibv_ctx, &attr)`: the soft NIC's attributes.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_verbs_query_device(
    ibv_ctx: *mut c_void,
    verbs_device_attr: *mut *mut DeviceAttr,
) -> u32 {
    call("doca_verbs_bridge_verbs_query_device", || {
        // SAFETY: as in doca_verbs_bridge_verbs_context_import.
        unsafe { ctx_of_ibv_context(ibv_ctx as *const SoftIbvContext) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_device_attr, DeviceAttr::soft_nic()) }
    })
}

/// `doca_verbs_bridge_verbs_pd_import(ibv_pd, &pd)`: another handle of the PD behind a
/// doca-soft `ibv_pd` stand-in (destroy it with `doca_verbs_pd_destroy`).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_verbs_pd_import(
    ibv_pd: *mut c_void,
    verbs_pd: *mut *mut VerbsPd,
) -> u32 {
    call("doca_verbs_bridge_verbs_pd_import", || {
        non_null(verbs_pd)?;
        // SAFETY: as in doca_verbs_bridge_verbs_context_import.
        let pd = unsafe { pd_of_ibv_pd(ibv_pd as *const SoftIbvPd) }?;
        // SAFETY: C API contract (checked non-null).
        unsafe { new_handle(verbs_pd, VerbsPd::wrap(pd)) }
    })
}

/// `doca_verbs_bridge_verbs_pd_get_ibv_pd(pd)`: doca-soft's `ibv_pd` stand-in (for
/// `doca_rdma_bridge_*`; never pass it to libibverbs), valid while the PD lives.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_verbs_pd_get_ibv_pd(
    verbs_pd: *const VerbsPd,
) -> *mut c_void {
    call_ptr("doca_verbs_bridge_verbs_pd_get_ibv_pd", || {
        // SAFETY: C API contract.
        Ok(unsafe { handle(verbs_pd) }?.ibv_pd().cast())
    })
}

/// `doca_verbs_bridge_get_ibv_ctx(ctx)`: doca-soft's `ibv_context` stand-in.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_get_ibv_ctx(
    verbs_ctx: *const VerbsContext,
) -> *mut c_void {
    call_ptr("doca_verbs_bridge_get_ibv_ctx", || {
        // SAFETY: C API contract.
        Ok(unsafe { handle(verbs_ctx) }?.shared().ibv_context().cast())
    })
}

/// `doca_verbs_bridge_qp_attr_set(attr, ibv_qp_attr, mask)`: `NOT_SUPPORTED`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_qp_attr_set(
    _verbs_qp_attr: *mut QpAttr,
    _ibv_qp_attr: *const c_void,
    _ibv_attr_mask: c_int,
) -> u32 {
    call("doca_verbs_bridge_qp_attr_set", || {
        Err(unsupported("reading an rdma-core struct ibv_qp_attr"))
    })
}

/// `doca_verbs_bridge_qp_attr_get(attr, ibv_qp_attr)`: `NOT_SUPPORTED`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_qp_attr_get(
    _verbs_qp_attr: *const QpAttr,
    _ibv_qp_attr: *mut c_void,
) -> u32 {
    call("doca_verbs_bridge_qp_attr_get", || {
        Err(unsupported("writing an rdma-core struct ibv_qp_attr"))
    })
}

/// rdma-core's `IBV_QP_*` mask bits and their DOCA Verbs equivalents (IBV_QP_ACCESS_FLAGS
/// is the three DOCA rights; bits without an equivalent, such as QKEY, ALT_PATH,
/// PATH_MIG_STATE, CAP, EN_SQD_ASYNC_NOTIFY, are dropped).
const IBV_TO_DOCA: [(u32, u32); 16] = [
    (1 << 0, 1 << 5),                          // STATE -> NEXT_STATE
    (1 << 1, 1 << 6),                          // CUR_STATE
    (1 << 3, (1 << 0) | (1 << 1) | (1 << 15)), // ACCESS_FLAGS -> rights
    (1 << 4, 1 << 2),                          // PKEY_INDEX
    (1 << 5, 1 << 4),                          // PORT
    (1 << 7, 1 << 14),                         // AV -> AH_ATTR
    (1 << 8, 1 << 7),                          // PATH_MTU
    (1 << 9, 1 << 11),                         // TIMEOUT -> ACK_TIMEOUT
    (1 << 10, 1 << 12),                        // RETRY_CNT
    (1 << 11, 1 << 13),                        // RNR_RETRY
    (1 << 12, 1 << 8),                         // RQ_PSN
    (1 << 13, 1 << 16),                        // MAX_QP_RD_ATOMIC
    (1 << 15, 1 << 3),                         // MIN_RNR_TIMER
    (1 << 16, 1 << 9),                         // SQ_PSN
    (1 << 17, 1 << 17),                        // MAX_DEST_RD_ATOMIC
    (1 << 20, 1 << 10),                        // DEST_QPN -> DEST_QP_NUM
];

/// `doca_verbs_bridge_get_qp_attr_mask(ibv_mask)`: the equivalent `DOCA_VERBS_QP_ATTR_*`
/// mask (see `IBV_TO_DOCA`).
#[no_mangle]
pub extern "C" fn doca_verbs_bridge_get_qp_attr_mask(ibv_attr_mask: c_int) -> c_int {
    let m = ibv_attr_mask as u32;
    IBV_TO_DOCA
        .iter()
        .filter(|(ibv, _)| m & ibv != 0)
        .fold(0u32, |acc, (_, d)| acc | d) as c_int
}

/// `doca_verbs_bridge_poll_cq(cq, n, wc)`: `-EOPNOTSUPP` (GPU code and the tests poll the
/// ring).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_poll_cq(
    _verbs_cq: *mut VerbsCq,
    _num_entries: c_int,
    _wc: *mut c_void,
) -> c_int {
    call_value("doca_verbs_bridge_poll_cq", -libc::EOPNOTSUPP, || {
        let _ = unsupported("the CPU data path (doca_verbs_bridge_poll_cq)");
        -libc::EOPNOTSUPP
    })
}

/// `doca_verbs_bridge_post_recv(qp, wr, &bad)`: `EOPNOTSUPP`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_post_recv(
    _verbs_qp: *mut VerbsQp,
    _wr: *mut c_void,
    _bad_wr: *mut *mut c_void,
) -> c_int {
    call_value("doca_verbs_bridge_post_recv", libc::EOPNOTSUPP, || {
        let _ = unsupported("the CPU data path (doca_verbs_bridge_post_recv)");
        libc::EOPNOTSUPP
    })
}

/// `doca_verbs_bridge_post_send(qp, wr, &bad)`: `EOPNOTSUPP`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_post_send(
    _verbs_qp: *mut VerbsQp,
    _wr: *mut c_void,
    _bad_wr: *mut *mut c_void,
) -> c_int {
    call_value("doca_verbs_bridge_post_send", libc::EOPNOTSUPP, || {
        let _ = unsupported("the CPU data path (doca_verbs_bridge_post_send)");
        libc::EOPNOTSUPP
    })
}

/// `doca_verbs_bridge_get_current_cq_ci(cq)`: 0, with the log line of an unsupported call.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_get_current_cq_ci(_verbs_cq: *mut VerbsCq) -> u32 {
    call_value("doca_verbs_bridge_get_current_cq_ci", 0, || {
        let _ = unsupported("the CPU data path (doca_verbs_bridge_get_current_cq_ci)");
        0
    })
}

/// `doca_verbs_bridge_set_wait_cq_pi_wr(cq, pi, wr)`: `EOPNOTSUPP`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_set_wait_cq_pi_wr(
    _verbs_cq: *mut VerbsCq,
    _wait_pi: u32,
    _wr: *mut c_void,
) -> c_int {
    call_value(
        "doca_verbs_bridge_set_wait_cq_pi_wr",
        libc::EOPNOTSUPP,
        || {
            let _ = unsupported("the CPU data path (doca_verbs_bridge_set_wait_cq_pi_wr)");
            libc::EOPNOTSUPP
        },
    )
}

/// `doca_verbs_bridge_post_srq_recv(srq, wr, &bad)`: `EOPNOTSUPP` (no SRQs).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_bridge_post_srq_recv(
    _verbs_srq: *mut c_void,
    _wr: *mut c_void,
    _bad_wr: *mut *mut c_void,
) -> c_int {
    call_value("doca_verbs_bridge_post_srq_recv", libc::EOPNOTSUPP, || {
        let _ = unsupported("shared receive queues (doca_verbs_bridge_post_srq_recv)");
        libc::EOPNOTSUPP
    })
}
