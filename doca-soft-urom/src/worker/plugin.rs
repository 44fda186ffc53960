//! Loading one plugin `.so` through the C plugin ABI and driving its interface.

use super::domain;
use crate::error::{DocaError, DocaResult};
use crate::plugin_abi::{self, PluginIface, WorkerCtx, WorkerNotifDesc, WorkerNotify};
use std::ffi::c_void;
use std::path::Path;

type GetIfaceFn = unsafe extern "C" fn(*mut PluginIface) -> u32;
type GetVersionFn = unsafe extern "C" fn(*mut u64) -> u32;
/// `doca_soft_urom_plugin_arm` (doca-soft extension, optional): see [`plugin_abi::ARM_SYMBOL`].
type ArmFn = unsafe extern "C" fn(*mut WorkerCtx, *mut libc::c_int) -> u32;

/// What a plugin said before the worker sleeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arm {
    /// Armed: wait on this descriptor too.
    Fd(i32),
    /// Nothing to wait for (the plugin acts on commands only).
    CommandsOnly,
    /// Work pending: do not sleep.
    Busy,
    /// The plugin cannot say (no extension): wake it by timeout.
    Unknown,
}

/// A plugin's `notif_pack` (needs no ctx, so it can run while the plugin is borrowed).
#[derive(Clone, Copy)]
pub(crate) struct Packer(unsafe extern "C" fn(*mut WorkerNotify, *mut usize, *mut c_void) -> u32);

impl Packer {
    /// Packs a notification into `out`; returns the packed length.
    ///
    /// # Safety
    /// `desc` is a live notification desc produced by the plugin this packer came from.
    pub(crate) unsafe fn pack(
        self,
        desc: *mut WorkerNotifDesc,
        out: &mut [u8],
    ) -> DocaResult<usize> {
        let mut len = out.len();
        // SAFETY: desc is live (caller contract); out is writable for `len` bytes.
        ok(unsafe {
            (self.0)(
                &mut (*desc).worker_notif,
                &mut len,
                out.as_mut_ptr() as *mut c_void,
            )
        })?;
        if len > out.len() {
            return Err(DocaError::TOO_BIG);
        }
        Ok(len)
    }
}

/// A plugin loaded into this worker process.
pub(crate) struct LoadedPlugin {
    /// Daemon-assigned id (the command `type`).
    pub id: u64,
    /// Plugin worker address (from `addr`).
    pub addr: Vec<u8>,
    // Boxed: the plugin keeps pointers to its ctx.
    ctx: Box<WorkerCtx>,
    arm: Option<ArmFn>,
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
pub(crate) fn probe(lib: &libloading::Library) -> DocaResult<(u64, PluginIface)> {
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

/// The name a plugin library declares through the doca-soft extension
/// ([`plugin_abi::NAME_SYMBOL`]), if it does and the name is plain (letters, digits, `_`,
/// `-`, `.`; at most 47 bytes).
pub(crate) fn declared_name(lib: &libloading::Library) -> Option<String> {
    type NameFn = unsafe extern "C" fn() -> *const libc::c_char;
    // SAFETY: the extension's signature; absent in most plugins.
    let f = unsafe { lib.get::<NameFn>(plugin_abi::NAME_SYMBOL) }.ok()?;
    // SAFETY: the plugin returns a static NUL-terminated string (or null).
    let p = unsafe { f() };
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated (extension contract); strnlen reads up to the
    // NUL, 48 bytes at most.
    let n = unsafe { libc::strnlen(p, 48) };
    if n >= 48 {
        return None;
    }
    // SAFETY: the `n` bytes before the NUL are readable.
    let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
    let name = std::str::from_utf8(bytes).ok()?;
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    plain.then(|| name.to_owned())
}

impl LoadedPlugin {
    /// dlopens `path`, gets its interface, opens it and fetches its address.
    pub(crate) fn load(path: &Path, id: u64) -> DocaResult<LoadedPlugin> {
        // SAFETY: loading a plugin runs its initialisers; plugins come only from the
        // daemon's UROM_PLUGIN_PATH (the operator's choice).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
            sdk_err!("urom_worker", "cannot load {}: {e}", path.display());
            DocaError::NOT_FOUND
        })?;
        let (_version, iface) = probe(&lib)?;
        // SAFETY: the extension's signature (plugin_abi::ARM_SYMBOL); absent in most plugins.
        let arm: Option<ArmFn> = unsafe { lib.get::<ArmFn>(plugin_abi::ARM_SYMBOL) }
            .ok()
            .map(|f| *f);
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
            arm,
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
    pub(crate) unsafe fn worker_cmd(&mut self, list: *mut plugin_abi::ListLink) -> DocaResult<()> {
        let f = self.ctx.iface.worker_cmd.expect("checked at load");
        // SAFETY: ctx is open; list is an initialised list of malloc'd descs.
        ok(unsafe { f(&mut *self.ctx, list) })
    }

    /// Runs the plugin's progress and hands each ready notification to `f`, freeing it
    /// after (the ABI makes the runtime free them). Returns how many there were.
    pub(crate) fn progress_each(&mut self, mut f: impl FnMut(*mut WorkerNotifDesc)) -> usize {
        let progress = self.ctx.iface.progress.expect("checked at load");
        let mut head = plugin_abi::list_head();
        // SAFETY: head is a local list head, initialised before use.
        unsafe { plugin_abi::list_init(&mut head) };
        // SAFETY: ctx is open; head is an empty list.
        let _ = unsafe { progress(&mut *self.ctx, &mut head) };
        let mut n = 0;
        loop {
            // SAFETY: the plugin appended valid descs (entry is their first field).
            let d = unsafe { plugin_abi::list_pop_head(&mut head) } as *mut WorkerNotifDesc;
            if d.is_null() {
                return n;
            }
            n += 1;
            f(d);
            // SAFETY: the plugin malloc'd the desc; the runtime frees it, once.
            unsafe { libc::free(d as *mut c_void) };
        }
    }

    /// The plugin's `notif_pack`.
    pub(crate) fn packer(&self) -> Packer {
        Packer(self.ctx.iface.notif_pack.expect("checked at load"))
    }

    /// Asks the plugin (extension `doca_soft_urom_plugin_arm`) how it wakes the worker.
    pub(crate) fn arm(&mut self) -> Arm {
        let Some(arm) = self.arm else {
            return Arm::Unknown;
        };
        let mut fd: libc::c_int = -1;
        // SAFETY: ctx is open; fd is writable.
        match unsafe { arm(&mut *self.ctx, &mut fd) } {
            0 if fd >= 0 => Arm::Fd(fd),
            0 => Arm::CommandsOnly,
            r if r == DocaError::AGAIN.0 => Arm::Busy,
            _ => Arm::Unknown,
        }
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
