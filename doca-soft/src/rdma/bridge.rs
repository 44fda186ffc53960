//! The protection domains `doca_rdma_bridge.h` speaks of. doca-soft has no libibverbs: a PD
//! is whatever object the DOCA Verbs layer hands programs as `struct ibv_pd *`
//! (`doca_verbs_bridge_verbs_pd_get_ibv_pd`). That layer records each PD here with the
//! device it belongs to ([`register_pd`] / [`forget_pd`]); `doca_rdma_bridge_open_dev_from_pd`
//! then opens that device, and the other bridge calls map devices and mmaps to keys.
//! A PD nobody recorded is NOT_SUPPORTED (logged).

use crate::dev::{Dev, DevInfo};
use crate::error::{DocaError, DocaResult};
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

struct Pds {
    /// PD address -> its device.
    by_pd: HashMap<usize, Arc<DevInfo>>,
    /// Devices opened from a PD (address of the `Dev`) -> the PD and the device's info
    /// (a later `Dev` at the same address has other info: the entry is stale then).
    opened: HashMap<usize, (usize, Arc<DevInfo>)>,
}

static PDS: Mutex<Option<Pds>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Pds) -> R) -> R {
    let mut g = lock(&PDS);
    f(g.get_or_insert_with(|| Pds {
        by_pd: HashMap::new(),
        opened: HashMap::new(),
    }))
}

/// Records a PD of `info`'s device (the verbs layer, when it creates one).
#[allow(dead_code)] // called by the DOCA Verbs layer
pub(crate) fn register_pd(pd: usize, info: Arc<DevInfo>) {
    with(|p| p.by_pd.insert(pd, info));
}

/// Forgets a PD (the verbs layer, when it destroys it).
#[allow(dead_code)] // called by the DOCA Verbs layer
pub(crate) fn forget_pd(pd: usize) {
    with(|p| {
        p.by_pd.remove(&pd);
        p.opened.retain(|_, v| v.0 != pd);
    });
}

/// Whether `pd` was recorded.
pub(crate) fn is_known(pd: usize) -> bool {
    with(|p| p.by_pd.contains_key(&pd))
}

fn unknown(pd: usize) -> DocaError {
    sdk_err!(
        "rdma",
        "ibv_pd {pd:#x} is not a protection domain of DOCA Verbs (doca-soft has no libibverbs of its own)"
    );
    DocaError::NOT_SUPPORTED
}

/// `doca_rdma_bridge_open_dev_from_pd`: a new device handle on `pd`'s device.
pub(crate) fn open_dev_from_pd(pd: usize) -> DocaResult<Box<Dev>> {
    let info = with(|p| p.by_pd.get(&pd).cloned()).ok_or_else(|| unknown(pd))?;
    let dev = Box::new(Dev::new(info));
    with(|p| {
        p.opened
            .insert(&*dev as *const Dev as usize, (pd, dev.info().clone()))
    });
    Ok(dev)
}

/// `doca_rdma_bridge_get_dev_pd`: the PD a device was opened from.
pub(crate) fn dev_pd(dev: &Dev) -> DocaResult<usize> {
    with(|p| {
        p.opened
            .get(&(dev as *const Dev as usize))
            .filter(|(_, info)| Arc::ptr_eq(info, dev.info()))
            .map(|(pd, _)| *pd)
    })
    .ok_or_else(|| {
        sdk_err!(
            "rdma",
            "doca_rdma_bridge_get_dev_pd: the device was not opened from an ibv_pd (doca-soft has no libibverbs PD for it)"
        );
        DocaError::NOT_SUPPORTED
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::doca_dev::doca_dev_close;
    use crate::capi::doca_mmap::*;
    use crate::capi::doca_rdma_bridge::*;
    use std::ffi::c_void;

    #[test]
    fn a_recorded_pd_opens_its_device_and_names_keys() {
        let info = crate::dev::list_devices()
            .into_iter()
            .find(|d| d.iface == "lo")
            .expect("lo");
        let fake_pd = Box::into_raw(Box::new(0u64)) as *mut c_void;
        let mut dev: *mut Dev = std::ptr::null_mut();
        let mut pd: *mut c_void = std::ptr::null_mut();
        let mut key = 0u32;
        let mut mem = vec![0u8; 64];
        // SAFETY: valid out-pointers; the devices and mmap are live until closed below.
        unsafe {
            assert_eq!(
                doca_rdma_bridge_open_dev_from_pd(fake_pd, &mut dev),
                DocaError::NOT_SUPPORTED.0
            );
            register_pd(fake_pd as usize, info.clone());
            assert_eq!(doca_rdma_bridge_open_dev_from_pd(fake_pd, &mut dev), 0);
            assert_eq!(doca_rdma_bridge_get_dev_pd(dev, &mut pd), 0);
            assert_eq!(pd, fake_pd);
            let mut m = std::ptr::null_mut();
            assert_eq!(doca_mmap_create(&mut m), 0);
            assert_eq!(
                doca_rdma_bridge_get_mmap_mkey_from_pd(m, fake_pd, &mut key),
                DocaError::BAD_STATE.0
            );
            assert_eq!(doca_mmap_set_memrange(m, mem.as_mut_ptr().cast(), 64), 0);
            assert_eq!(doca_mmap_start(m), 0);
            assert_eq!(
                doca_rdma_bridge_get_mmap_mkey_from_pd(m, fake_pd, &mut key),
                0
            );
            assert_eq!(key, (*m).mkey());
            forget_pd(fake_pd as usize);
            assert_eq!(
                doca_rdma_bridge_get_mmap_mkey_from_pd(m, fake_pd, &mut key),
                DocaError::NOT_SUPPORTED.0
            );
            assert_eq!(
                doca_rdma_bridge_get_dev_pd(dev, &mut pd),
                DocaError::NOT_SUPPORTED.0
            );
            assert_eq!(doca_mmap_destroy(m), 0);
            assert_eq!(doca_dev_close(dev), 0);
            drop(Box::from_raw(fake_pd as *mut u64));
        }
    }
}
