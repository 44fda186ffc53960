//! The out-of-band collective a domain start runs ([`Oob`]), and the C callbacks that hand
//! it to the runtime.
//!
//! The runtime sizes its receive buffer from the participant count this crate gives it
//! (`n_oob_indexes`). That count is read from the [`Oob`] once, when the domain starts, and
//! the allgather callback uses the stored value: an `Oob` whose `size()` or `index()` answer
//! changes later is refused with `DOCA_ERROR_INVALID_VALUE` (the domain start fails), never
//! trusted with a buffer sized for another answer.

use crate::error::{DocaError, Error, Result};
use doca_sys as sys;
use std::ffi::c_void;
use std::sync::Arc;

/// The out-of-band collective (MPI, sockets, threads: [`ThreadOob`](crate::ThreadOob)).
/// `allgather` is blocking: every participant contributes `send` (same length everywhere)
/// and `recv` receives all contributions in index order.
///
/// [`Domain::start`](crate::Domain::start) reads [`size`](Oob::size) and
/// [`index`](Oob::index) once; they must not change while the domain starts (a change is
/// reported as an error).
pub trait Oob: Send + Sync {
    /// Number of participants (at least 1).
    fn size(&self) -> u32;
    /// This participant's index (below [`size`](Oob::size)).
    fn index(&self) -> u32;
    /// All-gathers `send` into `recv` (`recv.len() == size * send.len()`); this
    /// participant's `send` must land at `recv[index * send.len()..]`.
    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> std::result::Result<(), DocaError>;
}

/// What the allgather callback receives as `coll_info`: the collective with the shape read
/// once at start.
pub(crate) struct OobInfo {
    oob: Arc<dyn Oob>,
    size: u32,
    index: u32,
}

impl OobInfo {
    /// Reads `oob`'s size and index once; an empty collective or an index outside it is an
    /// [`Error::InvalidArgument`].
    pub(crate) fn new(oob: Arc<dyn Oob>) -> Result<OobInfo> {
        let (size, index) = (oob.size(), oob.index());
        if size == 0 || index >= size {
            return Err(Error::InvalidArgument(format!(
                "out-of-band collective of {size} participants with index {index}"
            )));
        }
        Ok(OobInfo { oob, size, index })
    }

    pub(crate) fn size(&self) -> u32 {
        self.size
    }

    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// The C description of this collective, valid while `self` does not move.
    pub(crate) fn coll(&self) -> sys::doca_urom_domain_oob_coll {
        sys::doca_urom_domain_oob_coll {
            allgather: Some(oob_allgather),
            req_test: Some(oob_done),
            req_free: Some(oob_done),
            coll_info: self as *const OobInfo as *mut c_void,
            n_oob_indexes: self.size,
            oob_index: self.index,
        }
    }

    /// One allgather of `send` into `recv` (`recv.len() == size * send.len()`), checked: the
    /// collective still reports the shape it had at start, and this participant's part came
    /// back where it belongs.
    pub(crate) fn allgather(
        &self,
        send: &[u8],
        recv: &mut [u8],
    ) -> std::result::Result<(), DocaError> {
        if self.oob.size() != self.size || self.oob.index() != self.index {
            return Err(DocaError::INVALID_VALUE);
        }
        let len = send.len();
        if Some(recv.len()) != len.checked_mul(self.size as usize) {
            return Err(DocaError::INVALID_VALUE);
        }
        self.oob.allgather(send, recv)?;
        let at = self.index as usize * len;
        if recv[at..at + len] != *send {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }
}

/// `doca_urom_domain_allgather_cb_t`: runs the gather synchronously.
unsafe extern "C" fn oob_allgather(
    sbuf: *mut c_void,
    rbuf: *mut c_void,
    len: usize,
    info: *mut c_void,
    req: *mut *mut c_void,
) -> sys::doca_error_t {
    if info.is_null() || req.is_null() {
        return DocaError::INVALID_VALUE.raw();
    }
    // SAFETY: `info` is the OobInfo the Domain owns (boxed, so it does not move) for as long
    // as the runtime may call this.
    let info = unsafe { &*(info as *const OobInfo) };
    // The receive buffer holds `size * len` bytes for the size this crate gave the runtime
    // (the stored one: never a fresh answer of the collective).
    let Some(total) = len.checked_mul(info.size as usize) else {
        return DocaError::INVALID_VALUE.raw();
    };
    if (len > 0 && sbuf.is_null()) || (total > 0 && rbuf.is_null()) {
        return DocaError::INVALID_VALUE.raw();
    }
    // The contribution is copied first, so the mutable view of `rbuf` below aliases nothing
    // even if the runtime passed overlapping buffers.
    let send: Vec<u8> = if len == 0 {
        Vec::new()
    } else {
        // SAFETY: `sbuf` holds `len` readable bytes (the callback contract).
        unsafe { std::slice::from_raw_parts(sbuf as *const u8, len) }.to_vec()
    };
    let recv: &mut [u8] = if total == 0 {
        &mut []
    } else {
        // SAFETY: `rbuf` holds `n_oob_indexes * len` writable bytes, and `n_oob_indexes` is
        // `info.size` (set from it in `coll`).
        unsafe { std::slice::from_raw_parts_mut(rbuf as *mut u8, total) }
    };
    let res =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| info.allgather(&send, recv)));
    // The gather completed synchronously: any non-null request means "done".
    // SAFETY: `req` is non-null and writable (the callback contract).
    unsafe { *req = std::ptr::dangling_mut::<c_void>() };
    match res {
        Ok(Ok(())) => sys::doca_error_t::DOCA_SUCCESS,
        Ok(Err(e)) => e.raw(),
        Err(_) => DocaError::UNEXPECTED.raw(),
    }
}

/// `req_test` / `req_free`: the gathers complete synchronously, so there is nothing to wait
/// for or free.
unsafe extern "C" fn oob_done(_req: *mut c_void) -> sys::doca_error_t {
    sys::doca_error_t::DOCA_SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A one-participant collective whose size answer can be changed.
    struct Shifty {
        size: AtomicU32,
    }

    impl Oob for Shifty {
        fn size(&self) -> u32 {
            self.size.load(Ordering::SeqCst)
        }
        fn index(&self) -> u32 {
            0
        }
        fn allgather(&self, send: &[u8], recv: &mut [u8]) -> std::result::Result<(), DocaError> {
            recv[..send.len()].copy_from_slice(send);
            Ok(())
        }
    }

    /// A collective that leaves the receive buffer untouched.
    struct Lazy;

    impl Oob for Lazy {
        fn size(&self) -> u32 {
            2
        }
        fn index(&self) -> u32 {
            1
        }
        fn allgather(&self, _: &[u8], _: &mut [u8]) -> std::result::Result<(), DocaError> {
            Ok(())
        }
    }

    fn call(info: &OobInfo, send: &mut [u8], recv: &mut [u8]) -> sys::doca_error_t {
        let coll = info.coll();
        let mut req = std::ptr::null_mut();
        // SAFETY: what the runtime does: buffers of `len` and `n_oob_indexes * len` bytes.
        unsafe {
            (coll.allgather.unwrap())(
                send.as_mut_ptr().cast(),
                recv.as_mut_ptr().cast(),
                send.len(),
                coll.coll_info,
                &mut req,
            )
        }
    }

    #[test]
    fn shape_is_read_once_and_a_changed_answer_is_an_error() {
        let oob = Arc::new(Shifty {
            size: AtomicU32::new(1),
        });
        let info = OobInfo::new(oob.clone()).unwrap();
        assert_eq!(info.coll().n_oob_indexes, 1);
        let (mut send, mut recv) = ([7u8, 8, 9], [0u8; 3]);
        assert_eq!(
            call(&info, &mut send, &mut recv),
            sys::doca_error_t::DOCA_SUCCESS
        );
        assert_eq!(recv, [7, 8, 9]);
        // The buffer stays sized for one participant: the new answer is refused, not used.
        oob.size.store(1000, Ordering::SeqCst);
        let mut recv = [0u8; 3];
        assert_eq!(
            call(&info, &mut send, &mut recv),
            DocaError::INVALID_VALUE.raw()
        );
        assert_eq!(recv, [0; 3]);
    }

    #[test]
    fn bad_shapes_and_lost_contributions_are_refused() {
        let empty = Arc::new(Shifty {
            size: AtomicU32::new(0),
        });
        assert!(matches!(
            OobInfo::new(empty),
            Err(Error::InvalidArgument(_))
        ));
        let info = OobInfo::new(Arc::new(Lazy)).unwrap();
        let (mut send, mut recv) = ([1u8, 2], [0u8; 4]);
        // Our part did not land at index 1: the gather did not do its job.
        assert_eq!(
            call(&info, &mut send, &mut recv),
            DocaError::INVALID_VALUE.raw()
        );
        let mut req = std::ptr::null_mut();
        // SAFETY: null info is rejected before anything is read.
        let rc = unsafe {
            oob_allgather(
                send.as_mut_ptr().cast(),
                recv.as_mut_ptr().cast(),
                2,
                std::ptr::null_mut(),
                &mut req,
            )
        };
        assert_eq!(rc, DocaError::INVALID_VALUE.raw());
    }
}
