//! `doca_verbs.h`, completion queues and their attribute objects.

use std::ffi::c_void;

use super::{maybe_out, stored, unsupported};
use crate::capi::toolkit::{
    call, call_value, call_void, handle, handle_mut, new_handle, non_null, take_handle,
};
use crate::error::DocaError;
use crate::verbs::{CqAttr, Uar, Umem, VerbsContext, VerbsCq};

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
