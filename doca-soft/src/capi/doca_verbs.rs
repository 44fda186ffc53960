//! `doca_verbs.h`: DOCA Verbs contexts, PDs, CQs, QPs and their attribute objects, on the
//! soft NIC (engine: `verbs/`, whose module documentation says what is supported, how
//! queues are placed, and what a C verbs program takes from rdma-core instead).
//!
//! Conventions: a NULL handle is `INVALID_VALUE` (or the getter's zero value); destroying
//! an object something still uses is `IN_USE`; an unsupported feature is `NOT_SUPPORTED`
//! with one log line naming it.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::toolkit::{call, call_value, call_void, handle, handle_mut, new_handle, non_null};
use super::toolkit::{take_handle, write_out};
use crate::dev::{Dev, DevInfo};
use crate::error::{DocaError, DocaResult};
use crate::verbs::attr::{QpInitAttr as InitAttr, QpState};
use crate::verbs::qp::QpParts;

pub use crate::verbs::{
    AhAttr, CqAttr, DeviceAttr, QpAttr, QpInitAttr, Uar, Umem, VerbsAhAttr, VerbsContext, VerbsCq,
    VerbsPd, VerbsQp,
};

/// `struct doca_verbs_gid`: 16 raw bytes, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerbsGid {
    /// The GID bytes.
    pub raw: [u8; 16],
}

/// The log line of a feature doca-soft does not have; returns `NOT_SUPPORTED`.
fn unsupported(what: &str) -> DocaError {
    sdk_err!("verbs", "{what} is not supported by doca-soft");
    DocaError::NOT_SUPPORTED
}

/// Borrows an object named by a handle address an attribute stored.
///
/// # Safety
/// `p` is 0 or a live handle of type `T` (the program keeps the objects its attributes
/// name alive until the create call).
unsafe fn stored<'a, T>(p: usize) -> DocaResult<&'a T> {
    // SAFETY: caller contract.
    unsafe { handle(p as *const T) }
}

// ---- context and PD ------------------------------------------------------------------

/// `doca_verbs_context_create(devinfo, flags, &ctx)`: opens the device's soft NIC.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_context_create(
    net_dev: *mut DevInfo,
    flags: u32,
    verbs_ctx: *mut *mut VerbsContext,
) -> u32 {
    call("doca_verbs_context_create", || {
        non_null(net_dev)?;
        non_null(verbs_ctx)?;
        // SAFETY: every devinfo handed to C is an Arc pointer (doca_dev.rs); a new strong
        // reference keeps it alive for the context.
        let info = unsafe {
            Arc::increment_strong_count(net_dev as *const DevInfo);
            Arc::from_raw(net_dev as *const DevInfo)
        };
        let ctx = VerbsContext::open(info, flags)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(verbs_ctx, ctx) }
    })
}

/// `doca_verbs_context_destroy(ctx)`: `IN_USE` while PDs, CQs, QPs or AH attributes of it
/// exist.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_context_destroy(verbs_ctx: *mut VerbsContext) -> u32 {
    call("doca_verbs_context_destroy", || {
        // SAFETY: C API contract (null or a live context, given up on success).
        unsafe { handle(verbs_ctx) }?.ensure_unused()?;
        // SAFETY: as above.
        drop(unsafe { take_handle(verbs_ctx) }?);
        Ok(())
    })
}

/// `doca_verbs_pd_create(ctx, &pd)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_pd_create(
    verbs_ctx: *mut VerbsContext,
    verbs_pd: *mut *mut VerbsPd,
) -> u32 {
    call("doca_verbs_pd_create", || {
        // SAFETY: C API contract.
        let c = unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_pd, VerbsPd::new(c)) }
    })
}

/// `doca_verbs_pd_destroy(pd)`: `IN_USE` while QPs on it (or users of its doca_dev) exist.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_pd_destroy(verbs_pd: *mut VerbsPd) -> u32 {
    call("doca_verbs_pd_destroy", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_pd) }?.ensure_unused()?;
        // SAFETY: as above.
        drop(unsafe { take_handle(verbs_pd) }?);
        Ok(())
    })
}

/// `doca_verbs_pd_as_doca_dev(pd, &dev)`: a doca_dev sharing the PD, owned by the PD (do
/// not close it; it goes with the PD).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_pd_as_doca_dev(
    verbs_pd: *mut VerbsPd,
    dev: *mut *mut Dev,
) -> u32 {
    call("doca_verbs_pd_as_doca_dev", || {
        // SAFETY: C API contract.
        let pd = unsafe { handle(verbs_pd) }?;
        non_null(dev)?;
        // SAFETY: C API contract (checked non-null).
        unsafe { write_out(dev, pd.as_doca_dev()) }
    })
}

// ---- device attributes ------------------------------------------------------------------

/// `doca_verbs_query_device(ctx, &attr)`; free with `doca_verbs_device_attr_free`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_query_device(
    verbs_ctx: *mut VerbsContext,
    verbs_device_attr: *mut *mut DeviceAttr,
) -> u32 {
    call("doca_verbs_query_device", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_device_attr, DeviceAttr::soft_nic()) }
    })
}

/// `doca_verbs_device_attr_free(attr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_free(verbs_device_attr: *mut DeviceAttr) -> u32 {
    call("doca_verbs_device_attr_free", || {
        // SAFETY: C API contract (null or from doca_verbs_query_device, given up).
        drop(unsafe { take_handle(verbs_device_attr) }?);
        Ok(())
    })
}

/// `doca_verbs_device_attr_get_max_qp_rd_atom(attr)`: 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_max_qp_rd_atom(
    verbs_device_attr: *const DeviceAttr,
) -> u8 {
    call_value("doca_verbs_device_attr_get_max_qp_rd_atom", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_device_attr) }.map_or(0, |a| a.max_qp_rd_atom)
    })
}

/// `doca_verbs_device_attr_get_max_qp_init_rd_atom(attr)`: 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_max_qp_init_rd_atom(
    verbs_device_attr: *const DeviceAttr,
) -> u8 {
    call_value("doca_verbs_device_attr_get_max_qp_init_rd_atom", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_device_attr) }.map_or(0, |a| a.max_qp_init_rd_atom)
    })
}

/// `doca_verbs_device_attr_get_is_cqe_inline_supported(attr)`: `DOCA_SUCCESS` (supported).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_is_cqe_inline_supported(
    verbs_device_attr: *const DeviceAttr,
) -> u32 {
    call("doca_verbs_device_attr_get_is_cqe_inline_supported", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_device_attr) }?.cqe_inline()
    })
}

/// `doca_verbs_device_attr_get_is_send_dbr_mode_supported(attr, mode)`: `DOCA_SUCCESS` for
/// DBR_VALID and NO_DBR_EXT, `NOT_SUPPORTED` for NO_DBR_INT.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_is_send_dbr_mode_supported(
    verbs_device_attr: *const DeviceAttr,
    send_dbr_mode: u32,
) -> u32 {
    call(
        "doca_verbs_device_attr_get_is_send_dbr_mode_supported",
        || {
            // SAFETY: C API contract.
            unsafe { handle(verbs_device_attr) }?.send_dbr_mode(send_dbr_mode)
        },
    )
}

/// `doca_verbs_device_attr_get_atomic_cap(attr)`: `DOCA_VERBS_ATOMIC_CAP_HCA` (NONE for
/// NULL).
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_device_attr_get_atomic_cap(
    verbs_device_attr: *const DeviceAttr,
) -> u32 {
    call_value("doca_verbs_device_attr_get_atomic_cap", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_device_attr) }.map_or(0, |a| a.atomic_cap())
    })
}

// ---- attribute setters: one shape ------------------------------------------------------

/// A setter `doca_error_t name(T *attr, ARG v)` whose body gets `a: &mut T` and `v`.
macro_rules! setter {
    ($(#[$doc:meta])* $name:ident($ty:ty, $($v:ident: $vt:ty),+) |$a:ident| $body:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(attr: *mut $ty, $($v: $vt),+) -> u32 {
            call(stringify!($name), || {
                // SAFETY: C API contract (null or a live attribute object, not shared).
                let $a = unsafe { handle_mut(attr) }?;
                $body
            })
        }
    };
}

/// A getter `R name(const T *attr)`: `$zero` for NULL.
macro_rules! getter {
    ($(#[$doc:meta])* $name:ident($ty:ty) -> $rt:ty, $zero:expr, |$a:ident| $body:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(attr: *const $ty) -> $rt {
            call_value(stringify!($name), $zero, || {
                // SAFETY: C API contract (null or a live attribute object).
                match unsafe { handle(attr) } {
                    Ok($a) => $body,
                    Err(_) => $zero,
                }
            })
        }
    };
}

// ---- CQ attributes ------------------------------------------------------------------------

/// `doca_verbs_cq_attr_create(&attr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_cq_attr_create(verbs_cq_attr: *mut *mut CqAttr) -> u32 {
    call("doca_verbs_cq_attr_create", || {
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_cq_attr, CqAttr::default()) }
    })
}

/// `doca_verbs_cq_attr_destroy(attr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_cq_attr_destroy(verbs_cq_attr: *mut CqAttr) -> u32 {
    call("doca_verbs_cq_attr_destroy", || {
        // SAFETY: C API contract (null or a live attribute, given up).
        drop(unsafe { take_handle(verbs_cq_attr) }?);
        Ok(())
    })
}

setter!(
    /// `doca_verbs_cq_attr_set_cq_size(attr, n)`: 1 to 2^22 entries (rounded up to a power
    /// of two at create).
    doca_verbs_cq_attr_set_cq_size(CqAttr, cq_size: u32) |a| a.set_cq_size(cq_size)
);
setter!(
    /// `doca_verbs_cq_attr_set_cq_overrun(attr, 0|1)`: kept; the soft NIC never waits for
    /// the consumer (overrun behaviour either way: a full CQ is overwritten, not reported).
    doca_verbs_cq_attr_set_cq_overrun(CqAttr, overrun: u8) |a| {
        a.overrun = overrun != 0;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_cq_attr_set_external_umem(attr, umem, offset)`: the umem is checked at
    /// create (GPU or host memory, room for the ring); see `verbs/` for where the ring lives.
    doca_verbs_cq_attr_set_external_umem(CqAttr, external_umem: *mut Umem, external_umem_offset: u64) |a| {
        non_null(external_umem)?;
        a.umem = Some((external_umem as usize, external_umem_offset));
        Ok(())
    }
);
setter!(
    /// `doca_verbs_cq_attr_set_external_uar(attr, uar)`: kept (`doca_verbs_cq_get_dbr_addr`
    /// reports its register).
    doca_verbs_cq_attr_set_external_uar(CqAttr, external_uar: *mut Uar) |a| {
        non_null(external_uar)?;
        a.uar = Some(external_uar as usize);
        Ok(())
    }
);
setter!(
    /// `doca_verbs_cq_attr_set_external_datapath_en(attr, 0|1)`: 1 for queues GPU code (or a
    /// CPU thread through the rings) drives.
    doca_verbs_cq_attr_set_external_datapath_en(CqAttr, external_datapath_en: u8) |a| {
        a.external_datapath = external_datapath_en != 0;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_cq_attr_set_entry_size(attr, size)`: 64-byte CQEs only (128:
    /// `NOT_SUPPORTED`).
    doca_verbs_cq_attr_set_entry_size(CqAttr, entry_size: u32) |_a| match entry_size {
        0 => Ok(()),
        1 => Err(unsupported("a CQ of 128-byte entries")),
        _ => Err(DocaError::INVALID_VALUE),
    }
);
setter!(
    /// `doca_verbs_cq_attr_set_comp_channel(attr, channel)`: `NOT_SUPPORTED` (no completion
    /// channels: GPU code polls the ring).
    doca_verbs_cq_attr_set_comp_channel(CqAttr, _comp_channel: *mut c_void) |_a| {
        Err(unsupported("a CQ completion channel"))
    }
);
setter!(
    /// `doca_verbs_cq_attr_set_cq_context(attr, ptr)`: kept with the attribute.
    doca_verbs_cq_attr_set_cq_context(CqAttr, cq_context: *mut c_void) |a| {
        a.cq_context = cq_context as usize;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_cq_attr_set_dpa_thread_id(attr, id)`: `NOT_SUPPORTED` (no DPA).
    doca_verbs_cq_attr_set_dpa_thread_id(CqAttr, _dpa_thread_id: u32) |_a| {
        Err(unsupported("a CQ for a DPA thread"))
    }
);

// ---- CQ -------------------------------------------------------------------------------------

/// `doca_verbs_cq_create(ctx, attr, &cq)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_cq_create(
    verbs_ctx: *mut VerbsContext,
    verbs_cq_attr: *mut CqAttr,
    verbs_cq: *mut *mut VerbsCq,
) -> u32 {
    call("doca_verbs_cq_create", || {
        // SAFETY: C API contract.
        let ctx = unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract.
        let attr = unsafe { handle(verbs_cq_attr) }?;
        non_null(verbs_cq)?;
        // SAFETY: the program keeps the umem its attribute names alive.
        let umem = match attr.umem {
            Some((u, _)) => Some(unsafe { stored::<Umem>(u) }?),
            None => None,
        };
        let cq = VerbsCq::new(ctx, attr, umem)?;
        // SAFETY: C API contract (checked non-null).
        unsafe { new_handle(verbs_cq, cq) }
    })
}

/// `doca_verbs_cq_destroy(cq)`: `IN_USE` while a QP uses it.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_cq_destroy(verbs_cq: *mut VerbsCq) -> u32 {
    call("doca_verbs_cq_destroy", || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_cq) }?.ensure_unused()?;
        // SAFETY: as above.
        drop(unsafe { take_handle(verbs_cq) }?);
        Ok(())
    })
}

/// `doca_verbs_cq_get_cqn(cq)`: 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_cq_get_cqn(verbs_cq: *const VerbsCq) -> u32 {
    call_value("doca_verbs_cq_get_cqn", 0, || {
        // SAFETY: C API contract.
        unsafe { handle(verbs_cq) }.map_or(0, VerbsCq::cqn)
    })
}

/// Writes through an out-parameter when it is not NULL.
///
/// # Safety
/// A non-null `out` is writable.
unsafe fn maybe_out<T>(out: *mut T, v: T) {
    if !out.is_null() {
        // SAFETY: caller contract.
        unsafe { out.write(v) };
    }
}

/// `doca_verbs_cq_get_wq(cq, &ring, &entries, &entry_size)`: the CQE ring (CPU address;
/// the same address in GPU code on unified-addressing platforms). NULL outputs are skipped.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_cq_get_wq(
    verbs_cq: *const VerbsCq,
    cq_buf: *mut *mut c_void,
    cq_num_entries: *mut u32,
    cq_entry_size: *mut u8,
) {
    call_void("doca_verbs_cq_get_wq", || {
        // SAFETY: C API contract.
        let cq = unsafe { handle(verbs_cq) }?;
        // SAFETY: C API contract (null or writable).
        unsafe {
            maybe_out(cq_buf, cq.ring().cast());
            maybe_out(cq_num_entries, cq.num());
            maybe_out(cq_entry_size, 64);
        }
        Ok(())
    })
}

/// `doca_verbs_cq_get_dbr_addr(cq, &uar_reg, &ci_dbr, &arm_dbr)`: the external UAR's
/// register (NULL without one), the consumer-index record and the arm record.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_cq_get_dbr_addr(
    verbs_cq: *const VerbsCq,
    uar_db_reg: *mut *mut u64,
    ci_dbr: *mut *mut u32,
    arm_dbr: *mut *mut u32,
) {
    call_void("doca_verbs_cq_get_dbr_addr", || {
        // SAFETY: C API contract.
        let cq = unsafe { handle(verbs_cq) }?;
        let reg = match cq.attr().uar {
            // SAFETY: the program keeps the UAR its CQ was made with alive.
            Some(u) => unsafe { stored::<Uar>(u) }?.reg_addr().cast(),
            None => std::ptr::null_mut(),
        };
        let ci = cq.dbrec();
        // SAFETY: C API contract (null or writable); the arm record is the next word.
        unsafe {
            maybe_out(uar_db_reg, reg);
            maybe_out(ci_dbr, ci);
            maybe_out(arm_dbr, ci.add(1));
        }
        Ok(())
    })
}

// ---- QP init attributes ---------------------------------------------------------------------

/// `doca_verbs_qp_init_attr_create(&attr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_init_attr_create(
    verbs_qp_init_attr: *mut *mut QpInitAttr,
) -> u32 {
    call("doca_verbs_qp_init_attr_create", || {
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_qp_init_attr, InitAttr::default()) }
    })
}

/// `doca_verbs_qp_init_attr_destroy(attr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_init_attr_destroy(
    verbs_qp_init_attr: *mut QpInitAttr,
) -> u32 {
    call("doca_verbs_qp_init_attr_destroy", || {
        // SAFETY: C API contract (null or a live attribute, given up).
        drop(unsafe { take_handle(verbs_qp_init_attr) }?);
        Ok(())
    })
}

setter!(
    /// `doca_verbs_qp_init_attr_set_pd(attr, pd)`.
    doca_verbs_qp_init_attr_set_pd(QpInitAttr, verbs_pd: *mut VerbsPd) |a| {
        non_null(verbs_pd)?;
        a.pd = verbs_pd as usize;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_send_cq(attr, cq)`.
    doca_verbs_qp_init_attr_set_send_cq(QpInitAttr, send_cq: *mut VerbsCq) |a| {
        non_null(send_cq)?;
        a.send_cq = send_cq as usize;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_receive_cq(attr, cq)`.
    doca_verbs_qp_init_attr_set_receive_cq(QpInitAttr, receive_cq: *mut VerbsCq) |a| {
        non_null(receive_cq)?;
        a.receive_cq = receive_cq as usize;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_sq_wr(attr, n)`: at most 32768 (rounded up to a power
    /// of two at create).
    doca_verbs_qp_init_attr_set_sq_wr(QpInitAttr, sq_wr: u32) |a| {
        InitAttr::check_wr(sq_wr)?;
        a.sq_wr = sq_wr;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_rq_wr(attr, n)`: at most 32768; 0 = no receive queue.
    doca_verbs_qp_init_attr_set_rq_wr(QpInitAttr, rq_wr: u32) |a| {
        InitAttr::check_wr(rq_wr)?;
        a.rq_wr = rq_wr;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_send_max_sges(attr, n)`: at most 4.
    doca_verbs_qp_init_attr_set_send_max_sges(QpInitAttr, send_max_sges: u32) |a| {
        InitAttr::check_sges(send_max_sges)?;
        a.send_max_sges = send_max_sges;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_receive_max_sges(attr, n)`: at most 4.
    doca_verbs_qp_init_attr_set_receive_max_sges(QpInitAttr, receive_max_sges: u32) |a| {
        InitAttr::check_sges(receive_max_sges)?;
        a.receive_max_sges = receive_max_sges;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_qp_type(attr, type)`: RC (UC is refused at create).
    doca_verbs_qp_init_attr_set_qp_type(QpInitAttr, qp_type: u32) |a| a.set_qp_type(qp_type)
);
setter!(
    /// `doca_verbs_qp_init_attr_set_external_umem(attr, umem, offset)`: room for the receive
    /// ring (16 B per WQE) then the send ring (64 B per WQE) is checked at create.
    doca_verbs_qp_init_attr_set_external_umem(QpInitAttr, external_umem: *mut Umem, external_umem_offset: u64) |a| {
        non_null(external_umem)?;
        a.umem = Some((external_umem as usize, external_umem_offset));
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_external_dbr_umem(attr, umem, offset)`: room for the two
    /// doorbell records is checked at create.
    doca_verbs_qp_init_attr_set_external_dbr_umem(QpInitAttr, external_dbr_umem: *mut Umem, external_dbr_umem_offset: u64) |a| {
        non_null(external_dbr_umem)?;
        a.dbr_umem = Some((external_dbr_umem as usize, external_dbr_umem_offset));
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_external_uar(attr, uar)`: kept (each QP has doorbell
    /// words of its own, see `verbs/uar.rs`).
    doca_verbs_qp_init_attr_set_external_uar(QpInitAttr, external_uar: *mut Uar) |a| {
        non_null(external_uar)?;
        a.uar = external_uar as usize;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_external_datapath_en(attr, 0|1)`: must match the CQs.
    doca_verbs_qp_init_attr_set_external_datapath_en(QpInitAttr, external_datapath_en: u8) |a| {
        a.external_datapath = external_datapath_en != 0;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_core_direct_master(attr, 0|1)`: the QP may post WAIT
    /// WQEs (needs the external data path).
    doca_verbs_qp_init_attr_set_core_direct_master(QpInitAttr, core_direct_master: u8) |a| {
        a.core_direct_master = core_direct_master != 0;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_cqe_inline(attr, mode)`: NONE or 32B (receives of at
    /// most 32 bytes land in the CQE).
    doca_verbs_qp_init_attr_set_cqe_inline(QpInitAttr, cqe_inline: u32) |a| a.set_cqe_inline(cqe_inline)
);
setter!(
    /// `doca_verbs_qp_init_attr_set_send_dbr_mode(attr, mode)`: DBR_VALID or NO_DBR_EXT
    /// (NO_DBR_INT is refused at create).
    doca_verbs_qp_init_attr_set_send_dbr_mode(QpInitAttr, send_dbr_mode: u32) |a| a.set_send_dbr_mode(send_dbr_mode)
);
setter!(
    /// `doca_verbs_qp_init_attr_set_sq_sig_all(attr, v)`: 0 only (a CQE for every WQE
    /// whatever its flags is `NOT_SUPPORTED`; the device helpers ask for CQEs themselves).
    doca_verbs_qp_init_attr_set_sq_sig_all(QpInitAttr, sq_sig_all: c_int) |a| {
        if sq_sig_all != 0 {
            return Err(unsupported("sq_sig_all (a CQE for every send WQE)"));
        }
        a.sq_sig_all = 0;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_max_inline_data(attr, n)`: kept (at most 256; GPU
    /// inline writes carry up to 28 bytes whatever it says).
    doca_verbs_qp_init_attr_set_max_inline_data(QpInitAttr, max_inline_data: u32) |a| {
        if max_inline_data > 256 {
            return Err(DocaError::INVALID_VALUE);
        }
        a.max_inline_data = max_inline_data;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_user_index(attr, v)`: kept.
    doca_verbs_qp_init_attr_set_user_index(QpInitAttr, user_index: u32) |a| {
        a.user_index = user_index;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_qp_context(attr, ptr)`: kept.
    doca_verbs_qp_init_attr_set_qp_context(QpInitAttr, qp_context: *mut c_void) |a| {
        a.qp_context = qp_context as usize;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_srq(attr, srq)`: `NOT_SUPPORTED` (no SRQs).
    doca_verbs_qp_init_attr_set_srq(QpInitAttr, _srq: *mut c_void) |_a| {
        Err(unsupported("a QP on a shared receive queue"))
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_dpa(attr, dpa)`: `NOT_SUPPORTED` (no DPA).
    doca_verbs_qp_init_attr_set_dpa(QpInitAttr, _dpa: *mut c_void) |_a| {
        Err(unsupported("a QP for the DPA"))
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_send_dpa_completion(attr, c)`: `NOT_SUPPORTED`.
    doca_verbs_qp_init_attr_set_send_dpa_completion(QpInitAttr, _c: *mut c_void) |_a| {
        Err(unsupported("a DPA send completion"))
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_receive_dpa_completion(attr, c)`: `NOT_SUPPORTED`.
    doca_verbs_qp_init_attr_set_receive_dpa_completion(QpInitAttr, _c: *mut c_void) |_a| {
        Err(unsupported("a DPA receive completion"))
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_dbr_umem(attr, umem_id, offset)`: kept; a QP created
    /// with it is `NOT_SUPPORTED` (the DPA path).
    doca_verbs_qp_init_attr_set_dbr_umem(QpInitAttr, dbr_umem_id: u32, dbr_umem_offset: u64) |a| {
        a.dbr_umem_id = Some((dbr_umem_id, dbr_umem_offset));
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_wq_umem(attr, umem_id, offset)`: as `set_dbr_umem`.
    doca_verbs_qp_init_attr_set_wq_umem(QpInitAttr, wq_umem_id: u32, wq_umem_offset: u64) |a| {
        a.wq_umem_id = Some((wq_umem_id, wq_umem_offset));
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_uar_id(attr, id)`: as `set_dbr_umem`.
    doca_verbs_qp_init_attr_set_uar_id(QpInitAttr, uar_id: u32) |a| {
        a.uar_id = Some(uar_id);
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_init_attr_set_pdn(attr, pdn)`: as `set_dbr_umem`.
    doca_verbs_qp_init_attr_set_pdn(QpInitAttr, pdn: u32) |a| {
        a.pdn = Some(pdn);
        Ok(())
    }
);

getter!(
    /// `doca_verbs_qp_init_attr_get_pd(attr)`.
    doca_verbs_qp_init_attr_get_pd(QpInitAttr) -> *mut VerbsPd, std::ptr::null_mut(), |a| a.pd as *mut VerbsPd
);
getter!(
    /// `doca_verbs_qp_init_attr_get_send_cq(attr)`.
    doca_verbs_qp_init_attr_get_send_cq(QpInitAttr) -> *mut VerbsCq, std::ptr::null_mut(), |a| a.send_cq as *mut VerbsCq
);
getter!(
    /// `doca_verbs_qp_init_attr_get_receive_cq(attr)`.
    doca_verbs_qp_init_attr_get_receive_cq(QpInitAttr) -> *mut VerbsCq, std::ptr::null_mut(), |a| a.receive_cq as *mut VerbsCq
);
getter!(
    /// `doca_verbs_qp_init_attr_get_sq_wr(attr)`.
    doca_verbs_qp_init_attr_get_sq_wr(QpInitAttr) -> u32, 0, |a| a.sq_wr
);
getter!(
    /// `doca_verbs_qp_init_attr_get_rq_wr(attr)`.
    doca_verbs_qp_init_attr_get_rq_wr(QpInitAttr) -> u32, 0, |a| a.rq_wr
);
getter!(
    /// `doca_verbs_qp_init_attr_get_send_max_sges(attr)`.
    doca_verbs_qp_init_attr_get_send_max_sges(QpInitAttr) -> u32, 0, |a| a.send_max_sges
);
getter!(
    /// `doca_verbs_qp_init_attr_get_receive_max_sges(attr)`.
    doca_verbs_qp_init_attr_get_receive_max_sges(QpInitAttr) -> u32, 0, |a| a.receive_max_sges
);
getter!(
    /// `doca_verbs_qp_init_attr_get_qp_type(attr)`.
    doca_verbs_qp_init_attr_get_qp_type(QpInitAttr) -> u32, 0, |a| a.qp_type
);
/// `doca_verbs_qp_init_attr_get_external_uar(attr, &uar)`: the UAR set, NULL when none.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_init_attr_get_external_uar(
    attr: *const QpInitAttr,
    external_uar: *mut *mut Uar,
) -> u32 {
    call("doca_verbs_qp_init_attr_get_external_uar", || {
        // SAFETY: C API contract (null or a live attribute object; checked writable below).
        let a = unsafe { handle(attr) }?;
        non_null(external_uar)?;
        // SAFETY: checked non-null; C API contract (writable).
        unsafe { write_out(external_uar, a.uar as *mut Uar) }
    })
}
getter!(
    /// `doca_verbs_qp_init_attr_get_external_datapath_en(attr)`.
    doca_verbs_qp_init_attr_get_external_datapath_en(QpInitAttr) -> u8, 0, |a| a.external_datapath as u8
);
getter!(
    /// `doca_verbs_qp_init_attr_get_core_direct_master(attr)`.
    doca_verbs_qp_init_attr_get_core_direct_master(QpInitAttr) -> u8, 0, |a| a.core_direct_master as u8
);
getter!(
    /// `doca_verbs_qp_init_attr_get_cqe_inline(attr)`.
    doca_verbs_qp_init_attr_get_cqe_inline(QpInitAttr) -> u8, 0, |a| a.cqe_inline as u8
);
getter!(
    /// `doca_verbs_qp_init_attr_get_send_dbr_mode(attr)`.
    doca_verbs_qp_init_attr_get_send_dbr_mode(QpInitAttr) -> u32, 0, |a| a.send_dbr_mode
);
getter!(
    /// `doca_verbs_qp_init_attr_get_sq_sig_all(attr)`.
    doca_verbs_qp_init_attr_get_sq_sig_all(QpInitAttr) -> c_int, 0, |a| a.sq_sig_all
);
getter!(
    /// `doca_verbs_qp_init_attr_get_max_inline_data(attr)`.
    doca_verbs_qp_init_attr_get_max_inline_data(QpInitAttr) -> u32, 0, |a| a.max_inline_data
);
getter!(
    /// `doca_verbs_qp_init_attr_get_user_index(attr)`.
    doca_verbs_qp_init_attr_get_user_index(QpInitAttr) -> u32, 0, |a| a.user_index
);
getter!(
    /// `doca_verbs_qp_init_attr_get_qp_context(attr)`.
    doca_verbs_qp_init_attr_get_qp_context(QpInitAttr) -> *mut c_void, std::ptr::null_mut(), |a| a.qp_context as *mut c_void
);
getter!(
    /// `doca_verbs_qp_init_attr_get_srq(attr)`: always NULL (no SRQs).
    doca_verbs_qp_init_attr_get_srq(QpInitAttr) -> *mut c_void, std::ptr::null_mut(), |_a| std::ptr::null_mut()
);
getter!(
    /// `doca_verbs_qp_init_attr_get_dpa(attr)`: always NULL (no DPA).
    doca_verbs_qp_init_attr_get_dpa(QpInitAttr) -> *mut c_void, std::ptr::null_mut(), |_a| std::ptr::null_mut()
);
getter!(
    /// `doca_verbs_qp_init_attr_get_send_dpa_completion(attr)`: always NULL.
    doca_verbs_qp_init_attr_get_send_dpa_completion(QpInitAttr) -> *mut c_void, std::ptr::null_mut(), |_a| std::ptr::null_mut()
);
getter!(
    /// `doca_verbs_qp_init_attr_get_receive_dpa_completion(attr)`: always NULL.
    doca_verbs_qp_init_attr_get_receive_dpa_completion(QpInitAttr) -> *mut c_void, std::ptr::null_mut(), |_a| std::ptr::null_mut()
);
getter!(
    /// `doca_verbs_qp_init_attr_get_uar_id(attr)`.
    doca_verbs_qp_init_attr_get_uar_id(QpInitAttr) -> u32, 0, |a| a.uar_id.unwrap_or(0)
);
getter!(
    /// `doca_verbs_qp_init_attr_get_pdn(attr)`.
    doca_verbs_qp_init_attr_get_pdn(QpInitAttr) -> u32, 0, |a| a.pdn.unwrap_or(0)
);

/// A two-part getter `doca_error_t name(const attr *, A *, B *)`.
macro_rules! getter2 {
    ($(#[$doc:meta])* $name:ident($p:ident: $pt:ty, $q:ident: $qt:ty) |$a:ident| $body:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(attr: *const QpInitAttr, $p: *mut $pt, $q: *mut $qt) -> u32 {
            call(stringify!($name), || {
                // SAFETY: C API contract.
                let $a = unsafe { handle(attr) }?;
                non_null($p)?;
                non_null($q)?;
                let (x, y): ($pt, $qt) = $body;
                // SAFETY: C API contract (checked non-null).
                unsafe {
                    write_out($p, x)?;
                    write_out($q, y)
                }
            })
        }
    };
}

getter2!(
    /// `doca_verbs_qp_init_attr_get_external_umem(attr, &umem, &offset)` (NULL, 0 if unset).
    doca_verbs_qp_init_attr_get_external_umem(external_umem: *mut Umem, external_umem_offset: u64) |a| {
        a.umem.map_or((std::ptr::null_mut(), 0), |(u, o)| (u as *mut Umem, o))
    }
);
getter2!(
    /// `doca_verbs_qp_init_attr_get_external_dbr_umem(attr, &umem, &offset)`.
    doca_verbs_qp_init_attr_get_external_dbr_umem(external_dbr_umem: *mut Umem, external_dbr_umem_offset: u64) |a| {
        a.dbr_umem.map_or((std::ptr::null_mut(), 0), |(u, o)| (u as *mut Umem, o))
    }
);
getter2!(
    /// `doca_verbs_qp_init_attr_get_dbr_umem(attr, &id, &offset)`.
    doca_verbs_qp_init_attr_get_dbr_umem(dbr_umem_id: u32, dbr_umem_offset: u64) |a| {
        a.dbr_umem_id.unwrap_or((0, 0))
    }
);
getter2!(
    /// `doca_verbs_qp_init_attr_get_wq_umem(attr, &id, &offset)`.
    doca_verbs_qp_init_attr_get_wq_umem(wq_umem_id: u32, wq_umem_offset: u64) |a| {
        a.wq_umem_id.unwrap_or((0, 0))
    }
);

// ---- QP attributes ------------------------------------------------------------------------

/// `doca_verbs_qp_attr_create(&attr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_attr_create(verbs_qp_attr: *mut *mut QpAttr) -> u32 {
    call("doca_verbs_qp_attr_create", || {
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_qp_attr, QpAttr::default()) }
    })
}

/// `doca_verbs_qp_attr_destroy(attr)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_qp_attr_destroy(verbs_qp_attr: *mut QpAttr) -> u32 {
    call("doca_verbs_qp_attr_destroy", || {
        // SAFETY: C API contract (null or a live attribute, given up).
        drop(unsafe { take_handle(verbs_qp_attr) }?);
        Ok(())
    })
}

setter!(
    /// `doca_verbs_qp_attr_set_next_state(attr, state)`.
    doca_verbs_qp_attr_set_next_state(QpAttr, next_state: u32) |a| {
        a.next_state = QpState::from_c(next_state)?;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_current_state(attr, state)`.
    doca_verbs_qp_attr_set_current_state(QpAttr, current_state: u32) |a| {
        a.current_state = QpState::from_c(current_state)?;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_path_mtu(attr, mtu)`: 256 B to 4 KiB.
    doca_verbs_qp_attr_set_path_mtu(QpAttr, path_mtu: u32) |a| a.set_path_mtu(path_mtu)
);
setter!(
    /// `doca_verbs_qp_attr_set_rq_psn(attr, psn)`: 24 bits.
    doca_verbs_qp_attr_set_rq_psn(QpAttr, rq_psn: u32) |a| {
        QpAttr::check_24bit(rq_psn)?;
        a.rq_psn = rq_psn;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_sq_psn(attr, psn)`: 24 bits.
    doca_verbs_qp_attr_set_sq_psn(QpAttr, sq_psn: u32) |a| {
        QpAttr::check_24bit(sq_psn)?;
        a.sq_psn = sq_psn;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_dest_qp_num(attr, qpn)`: 24 bits.
    doca_verbs_qp_attr_set_dest_qp_num(QpAttr, dest_qp_num: u32) |a| {
        QpAttr::check_24bit(dest_qp_num)?;
        a.dest_qp_num = dest_qp_num;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_allow_remote_write(attr, v)`.
    doca_verbs_qp_attr_set_allow_remote_write(QpAttr, allow_remote_write: c_int) |a| {
        a.allow_remote_write = allow_remote_write != 0;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_allow_remote_read(attr, v)`.
    doca_verbs_qp_attr_set_allow_remote_read(QpAttr, allow_remote_read: c_int) |a| {
        a.allow_remote_read = allow_remote_read != 0;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_atomic_mode(attr, mode)`.
    doca_verbs_qp_attr_set_atomic_mode(QpAttr, atomic_mode: u32) |a| a.set_atomic_mode(atomic_mode)
);
setter!(
    /// `doca_verbs_qp_attr_set_max_rd_atomic(attr, n)` (at most the device's 16 at modify).
    doca_verbs_qp_attr_set_max_rd_atomic(QpAttr, max_rd_atomic: u8) |a| {
        a.max_rd_atomic = max_rd_atomic;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_max_dest_rd_atomic(attr, n)` (at most 16 at modify).
    doca_verbs_qp_attr_set_max_dest_rd_atomic(QpAttr, max_dest_rd_atomic: u8) |a| {
        a.max_dest_rd_atomic = max_dest_rd_atomic;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_ah_attr(attr, ah)`: copies the AH attribute as it is now.
    doca_verbs_qp_attr_set_ah_attr(QpAttr, ah_attr: *mut VerbsAhAttr) |a| {
        // SAFETY: C API contract (null or a live AH attribute).
        a.ah = Some(unsafe { handle(ah_attr) }?.attr);
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_pkey_index(attr, i)` (index 0 only, at modify).
    doca_verbs_qp_attr_set_pkey_index(QpAttr, pkey_index: u16) |a| {
        a.pkey_index = pkey_index;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_port_num(attr, port)` (port 1 only, at modify).
    doca_verbs_qp_attr_set_port_num(QpAttr, port_num: u16) |a| {
        a.port_num = port_num;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_ack_timeout(attr, v)`: 5 bits.
    doca_verbs_qp_attr_set_ack_timeout(QpAttr, ack_timeout: u16) |a| {
        QpAttr::check_5bit(ack_timeout)?;
        a.ack_timeout = ack_timeout;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_retry_cnt(attr, v)`: 3 bits.
    doca_verbs_qp_attr_set_retry_cnt(QpAttr, retry_cnt: u16) |a| {
        QpAttr::check_3bit(retry_cnt)?;
        a.retry_cnt = retry_cnt;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_rnr_retry(attr, v)`: 3 bits.
    doca_verbs_qp_attr_set_rnr_retry(QpAttr, rnr_retry: u16) |a| {
        QpAttr::check_3bit(rnr_retry)?;
        a.rnr_retry = rnr_retry;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_qp_attr_set_min_rnr_timer(attr, v)`: 5 bits.
    doca_verbs_qp_attr_set_min_rnr_timer(QpAttr, min_rnr_timer: u16) |a| {
        QpAttr::check_5bit(min_rnr_timer)?;
        a.min_rnr_timer = min_rnr_timer;
        Ok(())
    }
);

// ---- QP -------------------------------------------------------------------------------------

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

// ---- AH attributes --------------------------------------------------------------------------

/// `doca_verbs_ah_attr_create(ctx, &ah)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_ah_attr_create(
    verbs_ctx: *mut VerbsContext,
    verbs_ah_attr: *mut *mut VerbsAhAttr,
) -> u32 {
    call("doca_verbs_ah_attr_create", || {
        // SAFETY: C API contract.
        let c = unsafe { handle(verbs_ctx) }?;
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(verbs_ah_attr, VerbsAhAttr::new(c)) }
    })
}

/// `doca_verbs_ah_attr_destroy(ah)`.
#[no_mangle]
pub unsafe extern "C" fn doca_verbs_ah_attr_destroy(verbs_ah_attr: *mut VerbsAhAttr) -> u32 {
    call("doca_verbs_ah_attr_destroy", || {
        // SAFETY: C API contract (null or a live AH attribute, given up).
        drop(unsafe { take_handle(verbs_ah_attr) }?);
        Ok(())
    })
}

setter!(
    /// `doca_verbs_ah_attr_set_gid(ah, gid)`: the peer NIC's GID.
    doca_verbs_ah_attr_set_gid(VerbsAhAttr, gid: VerbsGid) |a| {
        a.attr.set_gid(gid.raw);
        Ok(())
    }
);
setter!(
    /// `doca_verbs_ah_attr_set_addr_type(ah, type)`.
    doca_verbs_ah_attr_set_addr_type(VerbsAhAttr, addr_type: u32) |a| a.attr.set_addr_type(addr_type)
);
setter!(
    /// `doca_verbs_ah_attr_set_dlid(ah, lid)`: 16 bits.
    doca_verbs_ah_attr_set_dlid(VerbsAhAttr, dlid: u32) |a| a.attr.set_dlid(dlid)
);
setter!(
    /// `doca_verbs_ah_attr_set_sl(ah, sl)`: 4 bits.
    doca_verbs_ah_attr_set_sl(VerbsAhAttr, sl: u8) |a| a.attr.set_sl(sl)
);
setter!(
    /// `doca_verbs_ah_attr_set_sgid_index(ah, i)`: every index names the NIC's one GID.
    doca_verbs_ah_attr_set_sgid_index(VerbsAhAttr, sgid_index: u8) |a| {
        a.attr.sgid_index = sgid_index;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_ah_attr_set_static_rate(ah, rate)`: kept.
    doca_verbs_ah_attr_set_static_rate(VerbsAhAttr, static_rate: u8) |a| {
        a.attr.static_rate = static_rate;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_ah_attr_set_hop_limit(ah, hops)`: kept.
    doca_verbs_ah_attr_set_hop_limit(VerbsAhAttr, hop_limit: u8) |a| {
        a.attr.hop_limit = hop_limit;
        Ok(())
    }
);
setter!(
    /// `doca_verbs_ah_attr_set_traffic_class(ah, tc)`: kept.
    doca_verbs_ah_attr_set_traffic_class(VerbsAhAttr, traffic_class: u8) |a| {
        a.attr.traffic_class = traffic_class;
        Ok(())
    }
);
