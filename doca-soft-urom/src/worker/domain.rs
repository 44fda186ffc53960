//! Domain data pushed by hosts (`DomainInit`) and the lookups the runtime serves to plugins
//! through `urom_domain_lookups_iface`. Process-global: a worker process is one worker.

use crate::error::DocaError;
use crate::plugin_abi::{DomainLookupsIface, WorkerCtx};
use crate::wire::{DomainBuf, DomainPeer};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

#[derive(Default)]
struct Table {
    // (domain id, plugin id) -> address. Boxed slices never move; replaced entries are kept
    // (a plugin may still hold a pointer it looked up earlier).
    addrs: HashMap<(u64, u64), Box<[u8]>>,
    bufs: HashMap<u64, Vec<DomainBuf>>,
    graveyard: Vec<Box<[u8]>>,
    ctx_plugin: HashMap<usize, u64>,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut g = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Table::default))
}

/// Records which plugin a ctx belongs to (lookups answer with that plugin's addresses).
pub(crate) fn register_ctx(ctx: *mut WorkerCtx, plugin_id: u64) {
    with(|t| t.ctx_plugin.insert(ctx as usize, plugin_id));
}

/// Stores a host's domain description.
pub(crate) fn install(peers: Vec<DomainPeer>, bufs: Vec<DomainBuf>) {
    with(|t| {
        for p in peers {
            for (plugin, a) in p.addrs {
                if let Some(old) = t.addrs.insert((p.domain_id, plugin), a.into_boxed_slice()) {
                    t.graveyard.push(old);
                }
            }
        }
        for b in bufs {
            t.bufs.entry(b.domain_id).or_default().push(b);
        }
    })
}

unsafe extern "C" fn addr_lookup(
    ctx: *mut WorkerCtx,
    domain_id: u64,
    addr: *mut *mut c_void,
) -> u32 {
    if addr.is_null() {
        return DocaError::INVALID_VALUE.0;
    }
    with(|t| {
        let Some(plugin) = t.ctx_plugin.get(&(ctx as usize)) else {
            return DocaError::INVALID_VALUE.0;
        };
        match t.addrs.get(&(domain_id, *plugin)) {
            Some(a) => {
                // SAFETY: checked non-null; the plugin passes a writable pointer.
                unsafe { *addr = a.as_ptr() as *mut c_void };
                0
            }
            None => DocaError::NOT_FOUND.0,
        }
    })
}

unsafe extern "C" fn seg_lookup(
    _ctx: *mut WorkerCtx,
    domain_id: u64,
    va: u64,
    seg: *mut i32,
) -> u32 {
    if seg.is_null() {
        return DocaError::INVALID_VALUE.0;
    }
    with(|t| {
        let found = t.bufs.get(&domain_id).and_then(|v| {
            v.iter()
                .position(|b| va >= b.va && va < b.va.saturating_add(b.len))
        });
        match found {
            Some(i) => {
                // SAFETY: checked non-null.
                unsafe { *seg = i as i32 };
                0
            }
            None => DocaError::NOT_FOUND.0,
        }
    })
}

fn blob_lookup(
    domain_id: u64,
    seg: i32,
    len: *mut usize,
    out: *mut *mut c_void,
    mkey: bool,
) -> u32 {
    if len.is_null() || out.is_null() || seg < 0 {
        return DocaError::INVALID_VALUE.0;
    }
    with(
        |t| match t.bufs.get(&domain_id).and_then(|v| v.get(seg as usize)) {
            Some(b) => {
                let blob = if mkey { &b.mkey } else { &b.memh };
                // SAFETY: checked non-null; the plugin passes writable pointers.
                unsafe {
                    *len = blob.len();
                    *out = blob.as_ptr() as *mut c_void;
                }
                0
            }
            None => DocaError::NOT_FOUND.0,
        },
    )
}

unsafe extern "C" fn memh_lookup(
    _c: *mut WorkerCtx,
    d: u64,
    seg: i32,
    len: *mut usize,
    memh: *mut *mut c_void,
) -> u32 {
    blob_lookup(d, seg, len, memh, false)
}

unsafe extern "C" fn mkey_lookup(
    _c: *mut WorkerCtx,
    d: u64,
    seg: i32,
    len: *mut usize,
    rkey: *mut *mut c_void,
) -> u32 {
    blob_lookup(d, seg, len, rkey, true)
}

/// The lookups table given to every plugin.
pub(crate) fn lookups_iface() -> DomainLookupsIface {
    DomainLookupsIface {
        addr_lookup: Some(addr_lookup),
        seg_lookup: Some(seg_lookup),
        memh_lookup: Some(memh_lookup),
        mkey_lookup: Some(mkey_lookup),
    }
}
