//! The RDMA side of memory maps: registration with the soft NIC, `doca_mmap_export_rdma`
//! and `doca_mmap_create_from_export`.
//!
//! * A local mmap whose permissions include an RDMA right (`RDMA_READ`, `RDMA_WRITE`,
//!   `RDMA_ATOMIC`) is registered with the NIC at start, under its own mkey (mkeys are the
//!   NIC's caller-chosen keys), so the keys kernels read from `doca_buf_arr` handles and
//!   the keys peers receive name that registration. Host memory, pinned device-mapped
//!   memory and CUDA device memory are all accepted (see `gpuqp::register_as`). Stop and
//!   destroy deregister it (peers that cached the key are told).
//! * `export_rdma` (started, an RDMA right, the device added) returns the memory blob of
//!   the device's NIC ([`doca_soft_nic::rdma::MemExport`]: NIC GID, key, rights, range, packed UCX
//!   remote key); the bytes stay valid until the mmap is stopped or destroyed. The export
//!   keeps that NIC running.
//! * `from_export` makes an mmap standing for the peer's memory: started at once, its range
//!   the peer's range, its mkey the peer's key; it refuses setters, devices, start, stop
//!   and export. The key is pre-seeded in the device NIC's remote-key cache.

use super::{Mmap, MmapShared, State};
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::gpuqp;
use crate::sync::UseCount;
use crate::types::DocaData;
use doca_soft_nic::rdma::{Access, MemExport, Nic, Registration};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// `DOCA_ACCESS_FLAG_RDMA_READ`.
pub(crate) const ACCESS_RDMA_READ: u32 = 1 << 1;
/// `DOCA_ACCESS_FLAG_RDMA_WRITE`.
pub(crate) const ACCESS_RDMA_WRITE: u32 = 1 << 2;
/// `DOCA_ACCESS_FLAG_RDMA_ATOMIC`.
pub(crate) const ACCESS_RDMA_ATOMIC: u32 = 1 << 3;
const RDMA_BITS: u32 = ACCESS_RDMA_READ | ACCESS_RDMA_WRITE | ACCESS_RDMA_ATOMIC;

/// The NIC rights of DOCA access flags.
pub(crate) fn nic_access(doca: u32) -> Access {
    let mut a = Access::default();
    if doca & super::ACCESS_LOCAL_READ_WRITE != 0 {
        a = a | Access::LOCAL_WRITE;
    }
    if doca & ACCESS_RDMA_READ != 0 {
        a = a | Access::REMOTE_READ;
    }
    if doca & ACCESS_RDMA_WRITE != 0 {
        a = a | Access::REMOTE_WRITE;
    }
    if doca & ACCESS_RDMA_ATOMIC != 0 {
        a = a | Access::REMOTE_ATOMIC;
    }
    a
}

/// The DOCA access flags of NIC rights.
fn doca_access(a: Access) -> u32 {
    let mut d = 0;
    if a.has(Access::LOCAL_WRITE) {
        d |= super::ACCESS_LOCAL_READ_WRITE;
    }
    if a.has(Access::REMOTE_READ) {
        d |= ACCESS_RDMA_READ;
    }
    if a.has(Access::REMOTE_WRITE) {
        d |= ACCESS_RDMA_WRITE;
    }
    if a.has(Access::REMOTE_ATOMIC) {
        d |= ACCESS_RDMA_ATOMIC;
    }
    d
}

/// The next mkey: steps of 0x100 from the NIC's caller-chosen range, wrapping within it.
pub(super) fn next_mkey(next: &AtomicU32) -> u32 {
    let base = doca_soft_nic::rdma::keys::CALLER_KEYS;
    next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
        Some(k.checked_add(0x100).filter(|n| *n >= base).unwrap_or(base))
    })
    .unwrap_or(base)
}

/// What an mmap holds for RDMA.
#[derive(Default)]
pub(super) struct RdmaState {
    reg: Option<Registration>,
    /// (device, blob, the NIC that exported it).
    exports: Vec<(usize, Vec<u8>, Nic)>,
    /// Set for an mmap made from a peer's export.
    remote: Option<Remote>,
}

struct Remote {
    _nic: Nic,
    _export: MemExport,
}

impl RdmaState {
    /// At start: registers the range with the NIC when the permissions ask for RDMA.
    pub(super) fn on_start(
        &mut self,
        mkey: u32,
        addr: u64,
        len: u64,
        perms: u32,
    ) -> DocaResult<()> {
        if perms & RDMA_BITS == 0 {
            return Ok(());
        }
        let reg = gpuqp::register_as(mkey, addr, len, nic_access(perms)).inspect_err(|e| {
            sdk_err!(
                "mmap",
                "could not register {addr:#x}+{len} for RDMA: {}",
                crate::error::name_of(e.0).unwrap_or("?")
            );
        })?;
        self.reg = Some(reg);
        Ok(())
    }

    /// At stop and destroy: deregisters and forgets the exports.
    pub(super) fn on_stop(&mut self) {
        self.exports.clear();
        self.reg = None;
    }

    /// Whether the mmap stands for a peer's memory.
    pub(super) fn is_remote(&self) -> bool {
        self.remote.is_some()
    }
}

impl Mmap {
    /// `doca_mmap_export_rdma`: the memory blob for peers. BAD_STATE before start,
    /// NOT_PERMITTED without an RDMA right (or on a peer's mmap), NOT_FOUND when `dev`
    /// was not added.
    pub(crate) fn export_rdma(&self, dev: &Dev) -> DocaResult<(*const u8, usize)> {
        let mut s = self.lock();
        if s.rdma.is_remote() {
            sdk_err!(
                "mmap",
                "an mmap made from a peer's export cannot be exported"
            );
            return Err(DocaError::NOT_PERMITTED);
        }
        if !s.started {
            return Err(DocaError::BAD_STATE);
        }
        if s.permissions & RDMA_BITS == 0 {
            sdk_err!(
                "mmap",
                "export_rdma needs an RDMA access permission (RDMA_READ, RDMA_WRITE or RDMA_ATOMIC)"
            );
            return Err(DocaError::NOT_PERMITTED);
        }
        let key = dev as *const Dev as usize;
        if !s.devs.contains(&key) {
            return Err(DocaError::NOT_FOUND);
        }
        if let Some((_, b, _)) = s.rdma.exports.iter().find(|(d, _, _)| *d == key) {
            return Ok((b.as_ptr(), b.len()));
        }
        let nic = gpuqp::nic_for(dev.info())?;
        let reg = s.rdma.reg.as_ref().ok_or(DocaError::BAD_STATE)?;
        let blob = nic.export_memory(reg).encode();
        let out = (blob.as_ptr(), blob.len());
        s.rdma.exports.push((key, blob, nic));
        Ok(out)
    }

    /// `doca_mmap_create_from_export`: an mmap standing for a peer's memory, usable at
    /// once. INVALID_VALUE for bytes that are not a memory blob.
    pub(crate) fn from_export(user_data: DocaData, blob: &[u8], dev: &Dev) -> DocaResult<Mmap> {
        let Some(export) = MemExport::decode(blob) else {
            sdk_err!(
                "mmap",
                "create_from_export: {} bytes that are not an RDMA memory export",
                blob.len()
            );
            return Err(DocaError::INVALID_VALUE);
        };
        if (export.addr as usize)
            .checked_add(export.len as usize)
            .is_none()
        {
            return Err(DocaError::INVALID_VALUE);
        }
        let nic = gpuqp::nic_for(dev.info())?;
        nic.import_remote_key(&export)?;
        let state = State {
            started: true,
            addr: export.addr as usize,
            len: export.len as usize,
            dmabuf: None,
            permissions: doca_access(Access(export.access)),
            max_devices: 1,
            devs: Vec::new(),
            gpu: None,
            user_data,
            rdma: RdmaState {
                reg: None,
                exports: Vec::new(),
                remote: None,
            },
        };
        let mkey = export.key;
        let shared = Arc::new(MmapShared {
            state: Mutex::new(state),
            mkey,
            users: UseCount::default(),
        });
        shared.lock().rdma.remote = Some(Remote {
            _nic: nic,
            _export: export,
        });
        Ok(Mmap { shared })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::test_dev;
    use super::*;
    use crate::capi::doca_dev::doca_dev_close;
    use crate::capi::doca_mmap::*;
    use std::ffi::c_void;

    /// A started mmap over `mem` with `perms`, `dev` added.
    unsafe fn started(mem: &mut [u8], perms: u32, dev: *mut Dev) -> *mut Mmap {
        let mut m: *mut Mmap = std::ptr::null_mut();
        // SAFETY: caller's live device; `mem` outlives the mmap (caller).
        unsafe {
            assert_eq!(doca_mmap_create(&mut m), 0);
            assert_eq!(
                doca_mmap_set_memrange(m, mem.as_mut_ptr().cast(), mem.len()),
                0
            );
            assert_eq!(doca_mmap_set_permissions(m, perms), 0);
            assert_eq!(doca_mmap_add_dev(m, dev), 0);
            assert_eq!(doca_mmap_start(m), 0);
        }
        m
    }

    #[test]
    fn export_and_import_carry_key_range_and_rights() {
        let dev = test_dev();
        let other = test_dev();
        let mut mem = vec![0u8; 8192];
        // SAFETY: live devices and mmaps; out-pointers writable; `mem` outlives them.
        unsafe {
            let m = started(&mut mem, 1 | ACCESS_RDMA_WRITE | ACCESS_RDMA_READ, dev);
            let (mut p, mut n): (*const c_void, usize) = (std::ptr::null(), 0);
            assert_eq!(doca_mmap_export_rdma(m, dev, &mut p, &mut n), 0);
            let blob = std::slice::from_raw_parts(p.cast::<u8>(), n).to_vec();
            let e = MemExport::decode(&blob).expect("a memory blob");
            let mut key = 0u32;
            assert_eq!(doca_mmap_get_mkey(m, dev, &mut key), 0);
            assert_eq!(e.key, key);
            assert!(key >= doca_soft_nic::rdma::keys::CALLER_KEYS);
            assert_eq!((e.addr, e.len), (mem.as_ptr() as u64, 8192));
            assert_eq!(
                Access(e.access),
                Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ
            );
            let reg = doca_soft_nic::rdma::keys::lookup(key).expect("registered with the NIC");
            assert_eq!((reg.addr, reg.len), (e.addr, e.len));
            // The same blob again; another device was not added.
            let (mut p2, mut n2): (*const c_void, usize) = (std::ptr::null(), 0);
            assert_eq!(doca_mmap_export_rdma(m, dev, &mut p2, &mut n2), 0);
            assert_eq!((p2, n2), (p, n));
            assert_eq!(
                doca_mmap_export_rdma(m, other, &mut p2, &mut n2),
                DocaError::NOT_FOUND.0
            );

            // The peer's view: started, the peer's range and key, nothing settable.
            let ud = DocaData { u64: 77 };
            let mut r: *mut Mmap = std::ptr::null_mut();
            assert_eq!(doca_mmap_create_from_export(&ud, p, n, other, &mut r), 0);
            let (mut a, mut l) = (std::ptr::null_mut(), 0usize);
            assert_eq!(doca_mmap_get_memrange(r, &mut a, &mut l), 0);
            assert_eq!((a as u64, l), (e.addr, 8192));
            assert_eq!((*r).mkey(), key);
            assert_eq!((*r).user_data().u64, 77);
            assert_eq!(doca_mmap_start(r), DocaError::BAD_STATE.0);
            assert_eq!(doca_mmap_stop(r), DocaError::BAD_STATE.0);
            assert_eq!(doca_mmap_add_dev(r, other), DocaError::BAD_STATE.0);
            assert_eq!(doca_mmap_set_permissions(r, 1), DocaError::BAD_STATE.0);
            assert_eq!(
                doca_mmap_export_rdma(r, other, &mut p2, &mut n2),
                DocaError::NOT_PERMITTED.0
            );
            assert_eq!(doca_mmap_destroy(r), 0);
            // The peer's mmap going away does not touch ours.
            assert!(crate::mmap::mmap_by_mkey(key).is_some());

            // Stop deregisters.
            assert_eq!(doca_mmap_stop(m), 0);
            assert!(doca_soft_nic::rdma::keys::lookup(key).is_none());
            assert_eq!(doca_mmap_destroy(m), 0);
            assert_eq!(doca_dev_close(dev), 0);
            assert_eq!(doca_dev_close(other), 0);
        }
    }

    #[test]
    fn bad_exports_and_blobs_are_refused() {
        let dev = test_dev();
        let mut mem = vec![0u8; 4096];
        // SAFETY: as above; null arguments are rejected before use.
        unsafe {
            let m = started(&mut mem, 1, dev);
            let (mut p, mut n): (*const c_void, usize) = (std::ptr::null(), 0);
            assert_eq!(
                doca_mmap_export_rdma(m, dev, &mut p, &mut n),
                DocaError::NOT_PERMITTED.0,
                "no RDMA permission"
            );
            assert_eq!(
                doca_mmap_export_rdma(m, dev, std::ptr::null_mut(), &mut n),
                DocaError::INVALID_VALUE.0
            );
            assert!(
                doca_soft_nic::rdma::keys::lookup((*m).mkey()).is_none(),
                "not registered"
            );
            let mut idle: *mut Mmap = std::ptr::null_mut();
            assert_eq!(doca_mmap_create(&mut idle), 0);
            assert_eq!(
                doca_mmap_export_rdma(idle, dev, &mut p, &mut n),
                DocaError::BAD_STATE.0
            );
            let mut r: *mut Mmap = std::ptr::null_mut();
            let junk = [0x44u8; 80];
            assert_eq!(
                doca_mmap_create_from_export(
                    std::ptr::null(),
                    junk.as_ptr().cast(),
                    junk.len(),
                    dev,
                    &mut r
                ),
                DocaError::INVALID_VALUE.0
            );
            assert!(r.is_null());
            assert_eq!(
                doca_mmap_create_from_export(
                    std::ptr::null(),
                    junk.as_ptr().cast(),
                    0,
                    dev,
                    &mut r
                ),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_mmap_create_from_export(std::ptr::null(), std::ptr::null(), 10, dev, &mut r),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(doca_mmap_destroy(m), 0);
            assert_eq!(doca_mmap_destroy(idle), 0);
            assert_eq!(doca_dev_close(dev), 0);
        }
    }
}
