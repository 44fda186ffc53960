//! `doca_verbs.h`, QP attributes: what a QP modify or query carries.

use std::ffi::c_int;

use crate::capi::toolkit::{call, handle, handle_mut, new_handle, take_handle};
use crate::verbs::attr::QpState;
use crate::verbs::{QpAttr, VerbsAhAttr};

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
