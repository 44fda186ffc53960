//! `doca_verbs.h`, QP init attributes: what a QP is created with.

use std::ffi::{c_int, c_void};

use super::unsupported;
use crate::capi::toolkit::{
    call, call_value, handle, handle_mut, new_handle, non_null, take_handle, write_out,
};
use crate::error::DocaError;
use crate::verbs::attr::QpInitAttr as InitAttr;
use crate::verbs::{QpInitAttr, Uar, Umem, VerbsCq, VerbsPd};

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
