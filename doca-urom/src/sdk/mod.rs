//! The plugin SDK: write a UROM worker plugin in Rust.
//!
//! Implement [`UromPlugin`] and call [`export_plugin!`](crate::export_plugin) in a
//! `cdylib` crate; the macro defines `urom_plugin_get_iface` and `urom_plugin_get_version`.
//! The SDK owns the C side: it takes commands off the runtime's list (freeing each desc
//! with `free`), builds notification descs with `malloc`, packs them (32-byte header +
//! body) and catches panics: a panic while handling a command becomes an
//! `DOCA_ERROR_UNEXPECTED` notification for that command; a panic in `progress` is logged
//! and the plugin keeps running.
//!
//! Wake-ups (a doca-soft extension, not in the DOCA plugin interface): the macro also
//! defines `doca_soft_urom_plugin_arm`, which the soft worker runtime calls before it
//! sleeps, so a plugin with event sources of its own (a UCP worker, say) can wake the worker
//! when, for example, a peer's message arrives: see [`UromPlugin::arm_wakeup`] and
//! [`Wakeup`]. Runtimes that do not know the symbol ignore it.
//!
//! Names (a doca-soft extension too): the macro defines `doca_soft_urom_plugin_name`,
//! returning the crate's name. Cargo builds a plugin crate `foo` as `libfoo.so`; the soft
//! daemon offers a file `lib<name>.so` whose library returns `<name>` as plugin `<name>`,
//! so the library can go into `UROM_PLUGIN_PATH` as cargo built it (`foo.so` works too;
//! DOCA's own daemon names plugins by the file name without `.so`).

pub mod abi;

use crate::error::{code_result, DocaError};
use abi::{ListLink, PluginIface, WorkerCmdDesc, WorkerCtx, WorkerNotifDesc, WorkerNotify};
use doca_sys::doca_error_t;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `DOCA_SUCCESS`, as the plugin ABI functions return it.
const SUCCESS: doca_error_t = doca_error_t::DOCA_SUCCESS;

/// One command from a host.
#[derive(Debug, Clone, Copy)]
pub struct Command<'a> {
    /// Host connection the command came from (replies go back there).
    pub dest_id: u64,
    /// Plugin id (`urom_worker_cmd.type`).
    pub plugin_id: u64,
    /// Runtime cookie (echoed in the reply).
    pub urom_context: u64,
    /// Plugin command bytes.
    pub payload: &'a [u8],
}

impl Command<'_> {
    /// A reply to this command.
    pub fn reply(&self, status: Result<(), DocaError>, body: Vec<u8>) -> Reply {
        Reply {
            dest_id: self.dest_id,
            plugin_id: self.plugin_id,
            urom_context: self.urom_context,
            status,
            body,
        }
    }
}

/// One notification for a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Destination connection.
    pub dest_id: u64,
    /// Plugin id.
    pub plugin_id: u64,
    /// Cookie of the command answered.
    pub urom_context: u64,
    /// Status reported to the host task.
    pub status: Result<(), DocaError>,
    /// Notification body.
    pub body: Vec<u8>,
}

/// What the worker runtime offers a plugin (domain lookups).
pub struct PluginContext {
    raw: *mut WorkerCtx,
}

impl PluginContext {
    /// Address of domain member `domain_id`'s worker for this plugin (as that worker's
    /// plugin reported it; its length is the plugin's own convention).
    pub fn domain_addr(&self, domain_id: u64) -> Result<*const u8, DocaError> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: raw is the runtime's live ctx; the lookup function is the runtime's.
        let r = unsafe {
            let f = (*self.raw)
                .domain_iface
                .addr_lookup
                .ok_or(DocaError::NOT_SUPPORTED)?;
            f(self.raw, domain_id, &mut p)
        };
        code_result(r.0).map(|_| p as *const u8)
    }

    /// Segment index of `va` in member `domain_id`'s buffers.
    pub fn domain_seg(&self, domain_id: u64, va: u64) -> Result<i32, DocaError> {
        let mut seg = 0;
        // SAFETY: as above.
        let r = unsafe {
            let f = (*self.raw)
                .domain_iface
                .seg_lookup
                .ok_or(DocaError::NOT_SUPPORTED)?;
            f(self.raw, domain_id, va, &mut seg)
        };
        code_result(r.0).map(|_| seg)
    }
}

/// What [`UromPlugin::arm_wakeup`] tells the worker runtime before it sleeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wakeup {
    /// The plugin cannot say: the runtime wakes it up by a short timeout (the default, as
    /// for plugins without the extension).
    Unknown,
    /// The plugin acts only on commands: nothing to wait for.
    CommandsOnly,
    /// Armed: this descriptor becomes readable when the plugin has work.
    Fd(std::os::raw::c_int),
    /// Work is pending now: progress again instead of sleeping.
    Busy,
}

/// A worker plugin.
pub trait UromPlugin: Send + Sized + 'static {
    /// `urom_plugin_get_version` (hosts expect 0x01).
    const VERSION: u64 = 0x01;
    /// Creates the plugin state (`open`).
    fn open(ctx: &PluginContext) -> Result<Self, DocaError>;
    /// The plugin's worker address (domain members look it up); empty by default.
    fn address(&self) -> Vec<u8> {
        Vec::new()
    }
    /// Handles one command; replies may be pushed now or later from `progress`.
    fn command(&mut self, ctx: &PluginContext, cmd: Command<'_>, out: &mut Vec<Reply>);
    /// Makes progress; pushes replies that became ready.
    fn progress(&mut self, _ctx: &PluginContext, _out: &mut Vec<Reply>) {}
    /// Prepares the plugin's event sources before the worker sleeps (called right after a
    /// `progress` that found nothing). Plugins whose work arrives other than through
    /// commands (their own UCP worker, ...) return [`Wakeup::Fd`] (e.g. the UCP worker's
    /// event descriptor after `ucp_worker_arm`) or [`Wakeup::Busy`]; plugins answering
    /// only commands return [`Wakeup::CommandsOnly`]. Default: [`Wakeup::Unknown`].
    fn arm_wakeup(&mut self) -> Wakeup {
        Wakeup::Unknown
    }
}

struct State<P> {
    plugin: P,
    ready: Vec<Reply>,
    // Scratch for one call's replies (kept: its capacity is reused).
    out: Vec<Reply>,
}

/// # Safety
/// `ctx` is the runtime's live ctx whose plugin_ctx was set by `open::<P>`.
unsafe fn state<'a, P>(ctx: *mut WorkerCtx) -> &'a mut State<P> {
    // SAFETY: caller contract.
    unsafe { &mut *((*ctx).plugin_ctx as *mut State<P>) }
}

unsafe extern "C" fn open<P: UromPlugin>(ctx: *mut WorkerCtx) -> doca_error_t {
    if ctx.is_null() {
        return DocaError::INVALID_VALUE.raw();
    }
    let pc = PluginContext { raw: ctx };
    match catch_unwind(AssertUnwindSafe(|| P::open(&pc))) {
        Ok(Ok(p)) => {
            let st = Box::new(State {
                plugin: p,
                ready: Vec::new(),
                out: Vec::new(),
            });
            // SAFETY: ctx is live.
            unsafe { (*ctx).plugin_ctx = Box::into_raw(st) as *mut c_void };
            SUCCESS
        }
        Ok(Err(e)) => e.raw(),
        Err(_) => DocaError::UNEXPECTED.raw(),
    }
}

unsafe extern "C" fn close<P: UromPlugin>(ctx: *mut WorkerCtx) {
    // SAFETY: ctx is live; plugin_ctx is our Box (or null if open failed).
    unsafe {
        let p = (*ctx).plugin_ctx as *mut State<P>;
        if !p.is_null() {
            let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(p))));
            (*ctx).plugin_ctx = std::ptr::null_mut();
        }
    }
}

unsafe extern "C" fn addr<P: UromPlugin>(
    ctx: *mut WorkerCtx,
    out: *mut c_void,
    len: *mut usize,
) -> doca_error_t {
    if ctx.is_null() || len.is_null() {
        return DocaError::INVALID_VALUE.raw();
    }
    // SAFETY: opened ctx.
    let st = unsafe { state::<P>(ctx) };
    let a = match catch_unwind(AssertUnwindSafe(|| st.plugin.address())) {
        Ok(a) => a,
        Err(_) => return DocaError::UNEXPECTED.raw(),
    };
    // SAFETY: len is writable; out holds *len bytes.
    unsafe {
        if *len < a.len() || (out.is_null() && !a.is_empty()) {
            *len = a.len();
            return DocaError::INVALID_VALUE.raw();
        }
        std::ptr::copy_nonoverlapping(a.as_ptr(), out as *mut u8, a.len());
        *len = a.len();
    }
    SUCCESS
}

unsafe extern "C" fn worker_cmd<P: UromPlugin>(
    ctx: *mut WorkerCtx,
    list: *mut ListLink,
) -> doca_error_t {
    if ctx.is_null() || list.is_null() {
        return DocaError::INVALID_VALUE.raw();
    }
    let pc = PluginContext { raw: ctx };
    // SAFETY: opened ctx.
    let st = unsafe { state::<P>(ctx) };
    loop {
        // SAFETY: the runtime's list of malloc'd descs.
        let n = unsafe { abi::pop_head(list) } as *mut WorkerCmdDesc;
        if n.is_null() {
            break;
        }
        // SAFETY: a desc header followed by `len` payload bytes, read in place (the desc is
        // freed after the plugin's call).
        let cmd = unsafe {
            let h = &(*n).worker_cmd;
            let body = (n as *const u8).add(std::mem::size_of::<WorkerCmdDesc>());
            Command {
                dest_id: (*n).dest_id,
                plugin_id: h.type_,
                urom_context: h.urom_context,
                payload: std::slice::from_raw_parts(body, h.len as usize),
            }
        };
        let mut out = std::mem::take(&mut st.out);
        if catch_unwind(AssertUnwindSafe(|| st.plugin.command(&pc, cmd, &mut out))).is_err() {
            out.push(cmd.reply(Err(DocaError::UNEXPECTED), Vec::new()));
        }
        // SAFETY: the ABI makes the plugin free command descs; `cmd` is not used after.
        unsafe { libc::free(n as *mut c_void) };
        st.ready.append(&mut out);
        st.out = out;
    }
    SUCCESS
}

unsafe extern "C" fn progress<P: UromPlugin>(
    ctx: *mut WorkerCtx,
    list: *mut ListLink,
) -> doca_error_t {
    if ctx.is_null() || list.is_null() {
        return DocaError::INVALID_VALUE.raw();
    }
    let pc = PluginContext { raw: ctx };
    // SAFETY: opened ctx.
    let st = unsafe { state::<P>(ctx) };
    let mut out = std::mem::take(&mut st.out);
    let _ = catch_unwind(AssertUnwindSafe(|| st.plugin.progress(&pc, &mut out)));
    st.ready.append(&mut out);
    st.out = out;
    if st.ready.is_empty() {
        return DocaError::EMPTY.raw();
    }
    for r in st.ready.drain(..) {
        let size = std::mem::size_of::<WorkerNotifDesc>() + r.body.len();
        // SAFETY: plain allocation; the runtime frees it with free().
        let d = unsafe { libc::malloc(size) } as *mut WorkerNotifDesc;
        if d.is_null() {
            return DocaError::NO_MEMORY.raw();
        }
        // SAFETY: d has room for the header and body; list is the runtime's list.
        unsafe {
            std::ptr::addr_of_mut!((*d).dest_id).write(r.dest_id);
            std::ptr::addr_of_mut!((*d).worker_notif).write(WorkerNotify {
                type_: r.plugin_id,
                urom_context: r.urom_context,
                len: r.body.len() as u64,
                status: r.status.err().map_or(SUCCESS, |e| e.raw()),
                reserved: 0,
                plugin_notif: Default::default(),
            });
            let body = (d as *mut u8).add(std::mem::size_of::<WorkerNotifDesc>());
            std::ptr::copy_nonoverlapping(r.body.as_ptr(), body, r.body.len());
            abi::add_tail(list, d as *mut ListLink);
        }
    }
    SUCCESS
}

unsafe extern "C" fn notif_pack(
    notif: *mut WorkerNotify,
    len: *mut usize,
    out: *mut c_void,
) -> doca_error_t {
    if notif.is_null() || len.is_null() || out.is_null() {
        return DocaError::INVALID_VALUE.raw();
    }
    // SAFETY: notif is a desc's notify header followed by `len` body bytes; out holds *len.
    unsafe {
        let need = std::mem::size_of::<WorkerNotify>() + (*notif).len as usize;
        if *len < need {
            return DocaError::INITIALIZATION.raw();
        }
        std::ptr::copy_nonoverlapping(notif as *const u8, out as *mut u8, need);
        *len = need;
    }
    SUCCESS
}

/// `doca_soft_urom_plugin_arm` for `P` (used by [`export_plugin!`](crate::export_plugin)):
/// DOCA_SUCCESS with `*fd` = the descriptor to wait on (-1: nothing to wait for),
/// DOCA_ERROR_AGAIN when work is pending, DOCA_ERROR_NOT_SUPPORTED when the plugin cannot
/// say (the runtime then wakes it by timeout).
///
/// # Safety
/// `ctx` null or a ctx opened by this plugin; `fd` null or writable.
pub unsafe fn arm<P: UromPlugin>(ctx: *mut WorkerCtx, fd: *mut std::os::raw::c_int) -> u32 {
    if ctx.is_null() || fd.is_null() {
        return DocaError::INVALID_VALUE.code();
    }
    // SAFETY: opened ctx (caller contract).
    let st = unsafe { state::<P>(ctx) };
    if !st.ready.is_empty() {
        return DocaError::AGAIN.code();
    }
    let w = catch_unwind(AssertUnwindSafe(|| st.plugin.arm_wakeup())).unwrap_or(Wakeup::Unknown);
    let (code, f) = match w {
        Wakeup::Fd(f) if f >= 0 => (0, f),
        Wakeup::CommandsOnly => (0, -1),
        Wakeup::Busy => (DocaError::AGAIN.code(), -1),
        Wakeup::Fd(_) | Wakeup::Unknown => (DocaError::NOT_SUPPORTED.code(), -1),
    };
    // SAFETY: checked non-null.
    unsafe { *fd = f };
    code
}

/// The interface table for `P` (used by [`export_plugin!`](crate::export_plugin)).
///
/// # Safety
/// `iface` null or writable.
pub unsafe fn get_iface<P: UromPlugin>(iface: *mut PluginIface) -> u32 {
    if iface.is_null() {
        return DocaError::INVALID_VALUE.code();
    }
    let t = PluginIface {
        __doca_api_version: (3 << 24) | (3 << 16),
        open: Some(open::<P>),
        close: Some(close::<P>),
        addr: Some(addr::<P>),
        worker_cmd: Some(worker_cmd::<P>),
        progress: Some(progress::<P>),
        notif_pack: Some(notif_pack),
    };
    // SAFETY: checked non-null.
    unsafe { *iface = t };
    0
}

/// `urom_plugin_get_version` for `P`.
///
/// # Safety
/// `v` null or writable.
pub unsafe fn get_version<P: UromPlugin>(v: *mut u64) -> u32 {
    if v.is_null() {
        return DocaError::INVALID_VALUE.code();
    }
    // SAFETY: checked non-null.
    unsafe { *v = P::VERSION };
    0
}

/// Exports a [`UromPlugin`] type with the C plugin ABI (in a `cdylib` crate).
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        /// `urom_plugin_get_iface`.
        ///
        /// # Safety
        /// `iface` null or writable.
        #[no_mangle]
        pub unsafe extern "C" fn urom_plugin_get_iface(
            iface: *mut $crate::sdk::abi::PluginIface,
        ) -> u32 {
            // SAFETY: forwarded contract.
            unsafe { $crate::sdk::get_iface::<$plugin>(iface) }
        }

        /// `urom_plugin_get_version`.
        ///
        /// # Safety
        /// `version` null or writable.
        #[no_mangle]
        pub unsafe extern "C" fn urom_plugin_get_version(version: *mut u64) -> u32 {
            // SAFETY: forwarded contract.
            unsafe { $crate::sdk::get_version::<$plugin>(version) }
        }

        /// `doca_soft_urom_plugin_name` (doca-soft extension: see the `sdk` module): the
        /// crate's name, so the soft daemon offers cargo's `lib<crate>.so` as `<crate>`.
        #[no_mangle]
        pub extern "C" fn doca_soft_urom_plugin_name() -> *const ::std::os::raw::c_char {
            concat!(env!("CARGO_CRATE_NAME"), "\0").as_ptr().cast()
        }

        /// `doca_soft_urom_plugin_arm` (doca-soft extension: see the `sdk` module).
        ///
        /// # Safety
        /// `ctx` null or opened by this plugin; `fd` null or writable.
        #[no_mangle]
        pub unsafe extern "C" fn doca_soft_urom_plugin_arm(
            ctx: *mut $crate::sdk::abi::WorkerCtx,
            fd: *mut ::std::os::raw::c_int,
        ) -> u32 {
            // SAFETY: forwarded contract.
            unsafe { $crate::sdk::arm::<$plugin>(ctx, fd) }
        }
    };
}
