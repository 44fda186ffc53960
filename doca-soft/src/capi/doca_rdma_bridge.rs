//! `doca_rdma_bridge.h`: doca_dev and memory keys for rdma-core PDs. doca-soft has no
//! libibverbs; the PDs these functions accept are the stand-ins of
//! `doca_verbs_bridge_verbs_pd_get_ibv_pd` (see `verbs/` for the whole picture). The key of
//! an mmap is the soft NIC's key of its registration, which exists for started mmaps with an
//! RDMA permission (`mmap/rdma.rs`); it is lkey and rkey at once.

use std::ffi::c_void;
use std::sync::Arc;

use super::toolkit::{call, handle, new_handle, non_null, write_out};
use crate::buf::Buf;
use crate::dev::Dev;
use crate::error::DocaError;
use crate::mmap::Mmap;
use crate::verbs::context::{pd_of_ibv_pd, SoftIbvPd};

/// `doca_rdma_bridge_open_dev_from_pd(ibv_pd, &dev)`: a doca_dev on the device of a
/// doca-soft PD stand-in; close it with `doca_dev_close`.
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_open_dev_from_pd(
    pd: *mut c_void,
    dev: *mut *mut Dev,
) -> u32 {
    call("doca_rdma_bridge_open_dev_from_pd", || {
        non_null(dev)?;
        // SAFETY: C API contract: NULL, a stand-in of this runtime whose PD lives, or a
        // foreign object (refused by its magic).
        let pd = unsafe { pd_of_ibv_pd(pd as *const SoftIbvPd) }?;
        let d = Dev::new(Arc::clone(pd.ctx().info()));
        // SAFETY: C API contract (checked non-null).
        unsafe { new_handle(dev, d) }
    })
}

/// `doca_rdma_bridge_get_dev_pd(dev, &pd)`: `NOT_SUPPORTED` (doca-soft devices have no
/// rdma-core PD; DOCA Verbs PDs give theirs through `doca_verbs_bridge_verbs_pd_get_ibv_pd`).
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_get_dev_pd(
    _dev: *const Dev,
    _pd: *mut *mut c_void,
) -> u32 {
    call("doca_rdma_bridge_get_dev_pd", || {
        sdk_err!(
            "verbs",
            "doca_rdma_bridge_get_dev_pd is not supported by doca-soft (no rdma-core PD behind a doca_dev)"
        );
        Err(DocaError::NOT_SUPPORTED)
    })
}

/// `doca_rdma_bridge_get_buf_mkey(buf, dev, &mkey)`: the mkey of the buffer's mmap on
/// `dev` (BAD_STATE before start, NOT_FOUND when `dev` was not added).
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_get_buf_mkey(
    buf: *const Buf,
    dev: *mut Dev,
    mkey: *mut u32,
) -> u32 {
    call("doca_rdma_bridge_get_buf_mkey", || {
        // SAFETY: C API contract (null or live).
        let b = unsafe { handle(buf) }?;
        // SAFETY: as above.
        let d = unsafe { handle(dev) }?;
        non_null(mkey)?;
        let m = b.mmap().ok_or(DocaError::INVALID_VALUE)?;
        if !m.is_started() {
            return Err(DocaError::BAD_STATE);
        }
        if !m.has_dev(d) {
            return Err(DocaError::NOT_FOUND);
        }
        let k = m.mkey();
        // SAFETY: checked non-null.
        unsafe { write_out(mkey, k) }
    })
}

/// `doca_rdma_bridge_get_mmap_mkey_from_pd(mmap, ibv_pd, &mkey)`: the key of a started
/// mmap's NIC registration (BAD_STATE before start; NOT_PERMITTED when it has no RDMA
/// permission, so no registration).
#[no_mangle]
pub unsafe extern "C" fn doca_rdma_bridge_get_mmap_mkey_from_pd(
    mmap: *const Mmap,
    pd: *mut c_void,
    mkey: *mut u32,
) -> u32 {
    call("doca_rdma_bridge_get_mmap_mkey_from_pd", || {
        // SAFETY: C API contract (null or live).
        let m = unsafe { handle(mmap) }?;
        // SAFETY: as in doca_rdma_bridge_open_dev_from_pd.
        unsafe { pd_of_ibv_pd(pd as *const SoftIbvPd) }?;
        non_null(mkey)?;
        if !m.is_started() {
            return Err(DocaError::BAD_STATE);
        }
        let k = m.mkey();
        if doca_soft_nic::rdma::keys::lookup(k).is_none() {
            sdk_err!(
                "verbs",
                "mmap {k:#x} has no RDMA permission, so no NIC registration (doca-soft registers mmaps for RDMA only)"
            );
            return Err(DocaError::NOT_PERMITTED);
        }
        // SAFETY: checked non-null.
        unsafe { write_out(mkey, k) }
    })
}
