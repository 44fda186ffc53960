//! Loading one plugin `.so` through the C plugin ABI and driving its interface.

use super::domain;
use crate::error::{DocaError, DocaResult};
use crate::urom::abi::{self, ListLink, PluginIface, WorkerCtx, WorkerNotifDesc};
use std::ffi::c_void;
use std::path::Path;

type GetIfaceFn = unsafe extern "C" fn(*mut PluginIface) -> u32;
type GetVersionFn = unsafe extern "C" fn(*mut u64) -> u32;

/// A plugin loaded into this worker process.
pub struct LoadedPlugin {
    /// Daemon-assigned id (the command `type`).
    pub id: u64,
    /// Plugin worker address (from `addr`).
    pub addr: Vec<u8>,
    // Boxed: the plugin keeps pointers to its ctx.
    ctx: Box<WorkerCtx>,
    // Keeps the code mapped; dropped last.
    _lib: libloading::Library,
}

fn ok(code: u32) -> DocaResult<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(DocaError(code))
    }
}

/// Resolves the two exported symbols of a plugin library and returns its version.
pub fn probe(lib: &libloading::Library) -> DocaResult<(u64, PluginIface)> {
    // SAFETY: the symbol types are the plugin ABI's; a library exporting these names with
    // other types is not a plugin and breaks its contract.
    let (get_version, get_iface) = unsafe {
        let v: libloading::Symbol<GetVersionFn> = lib
            .get(b"urom_plugin_get_version\0")
            .map_err(|_| DocaError::NOT_SUPPORTED)?;
        let i: libloading::Symbol<GetIfaceFn> = lib
            .get(b"urom_plugin_get_iface\0")
            .map_err(|_| DocaError::NOT_SUPPORTED)?;
        (*v, *i)
    };
    let mut version = 0u64;
    // SAFETY: valid out pointer.
    ok(unsafe { get_version(&mut version) })?;
    let mut iface = PluginIface::default();
    // SAFETY: valid out pointer of the ABI type.
    ok(unsafe { get_iface(&mut iface) })?;
    Ok((version, iface))
}

impl LoadedPlugin {
    /// dlopens `path`, gets its interface, opens it and fetches its address.
    pub fn load(path: &Path, id: u64) -> DocaResult<LoadedPlugin> {
        // SAFETY: loading a plugin runs its initialisers; plugins come only from the
        // daemon's UROM_PLUGIN_PATH (the operator's choice).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
            sdk_err!("urom_worker", "cannot load {}: {e}", path.display());
            DocaError::NOT_FOUND
        })?;
        let (_version, iface) = probe(&lib)?;
        if iface.open.is_none()
            || iface.worker_cmd.is_none()
            || iface.progress.is_none()
            || iface.notif_pack.is_none()
        {
            return Err(DocaError::NOT_SUPPORTED);
        }
        let mut ctx = Box::new(WorkerCtx {
            iface,
            domain_iface: domain::lookups_iface(),
            plugin_ctx: std::ptr::null_mut(),
        });
        domain::register_ctx(&mut *ctx, id);
        let open = iface.open.expect("checked");
        // SAFETY: ctx is a valid, boxed worker ctx that outlives the plugin.
        ok(unsafe { open(&mut *ctx) })?;
        let mut p = LoadedPlugin {
            id,
            addr: Vec::new(),
            ctx,
            _lib: lib,
        };
        p.addr = p.fetch_addr()?;
        Ok(p)
    }

    fn fetch_addr(&mut self) -> DocaResult<Vec<u8>> {
        let Some(addr) = self.ctx.iface.addr else {
            return Ok(Vec::new());
        };
        let mut probe = [0u8; 8];
        let mut len = 0usize;
        // SAFETY: ctx is open; `probe` is writable for `len` (0) bytes.
        let r = unsafe { addr(&mut *self.ctx, probe.as_mut_ptr() as *mut c_void, &mut len) };
        if r == 0 {
            return Ok(probe[..len.min(8)].to_vec());
        }
        if r != DocaError::INVALID_VALUE.0 || len == 0 || len > (1 << 20) {
            return Err(DocaError(r));
        }
        let mut buf = vec![0u8; len];
        // SAFETY: buf is writable for `len` bytes.
        ok(unsafe { addr(&mut *self.ctx, buf.as_mut_ptr() as *mut c_void, &mut len) })?;
        buf.truncate(len);
        Ok(buf)
    }

    /// Hands a list of malloc'd command descs to the plugin (which frees them).
    ///
    /// # Safety
    /// `list` is an initialised list of descs allocated with `malloc`.
    pub unsafe fn worker_cmd(&mut self, list: *mut ListLink) -> DocaResult<()> {
        let f = self.ctx.iface.worker_cmd.expect("checked at load");
        // SAFETY: ctx is open; list is an initialised list of malloc'd descs.
        ok(unsafe { f(&mut *self.ctx, list) })
    }

    /// Collects the plugin's ready notifications (malloc'd descs the caller frees).
    pub fn progress(&mut self) -> Vec<*mut WorkerNotifDesc> {
        let f = self.ctx.iface.progress.expect("checked at load");
        let mut head = ListLink {
            prev: std::ptr::null_mut(),
            next: std::ptr::null_mut(),
        };
        // SAFETY: head is a local list head, initialised before use.
        unsafe { abi::list_init(&mut head) };
        // SAFETY: ctx is open; head is an empty list.
        let _ = unsafe { f(&mut *self.ctx, &mut head) };
        let mut out = Vec::new();
        loop {
            // SAFETY: the plugin appended valid descs (entry is their first field).
            let n = unsafe { abi::list_pop_head(&mut head) };
            if n.is_null() {
                break;
            }
            out.push(n as *mut WorkerNotifDesc);
        }
        out
    }

    /// Packs a notification into at most `cap` bytes.
    ///
    /// # Safety
    /// `desc` is a live notification desc produced by this plugin.
    pub unsafe fn notif_pack(&self, desc: *mut WorkerNotifDesc, cap: usize) -> DocaResult<Vec<u8>> {
        let f = self.ctx.iface.notif_pack.expect("checked at load");
        let mut buf = vec![0u8; cap];
        let mut len = cap;
        // SAFETY: desc is a live desc from this plugin; buf is writable for `len` bytes.
        ok(unsafe {
            f(
                &mut (*desc).worker_notif,
                &mut len,
                buf.as_mut_ptr() as *mut c_void,
            )
        })?;
        if len > cap {
            return Err(DocaError::TOO_BIG);
        }
        buf.truncate(len);
        Ok(buf)
    }
}

impl Drop for LoadedPlugin {
    fn drop(&mut self) {
        if let Some(close) = self.ctx.iface.close {
            // SAFETY: ctx was opened and is closed once.
            unsafe { close(&mut *self.ctx) };
        }
    }
}
