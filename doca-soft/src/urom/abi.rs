//! The worker-side plugin ABI of `doca_urom_plugin.h`, as Rust `#[repr(C)]` types with the
//! layout asserted against the facts (LP64), plus the intrusive list (`ucs_list_link_t`)
//! operations the runtime needs.

use std::ffi::c_void;

/// `ucs_list_link_t`: circular doubly-linked list node (a head is a node that links to
/// itself when empty).
#[repr(C)]
#[derive(Debug)]
pub struct ListLink {
    /// Previous node.
    pub prev: *mut ListLink,
    /// Next node.
    pub next: *mut ListLink,
}

/// `struct urom_plugin_iface`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct PluginIface {
    /// `DOCA_STRUCT_START`: API version stamp.
    pub api_version: usize,
    /// Allocates plugin state into `ctx->plugin_ctx`.
    pub open: Option<unsafe extern "C" fn(ctx: *mut WorkerCtx) -> u32>,
    /// Releases plugin state.
    pub close: Option<unsafe extern "C" fn(ctx: *mut WorkerCtx)>,
    /// Worker address of the plugin (length query, then copy).
    pub addr: Option<
        unsafe extern "C" fn(ctx: *mut WorkerCtx, addr: *mut c_void, len: *mut usize) -> u32,
    >,
    /// Takes the commands on `cmd_list` (frees each desc with `free`).
    pub worker_cmd:
        Option<unsafe extern "C" fn(ctx: *mut WorkerCtx, cmd_list: *mut ListLink) -> u32>,
    /// Appends malloc'd notification descs to `notif_list`; EMPTY if none.
    pub progress:
        Option<unsafe extern "C" fn(ctx: *mut WorkerCtx, notif_list: *mut ListLink) -> u32>,
    /// Packs one notification (32-byte header + body) into `packed`.
    pub notif_pack: Option<
        unsafe extern "C" fn(notif: *mut WorkerNotify, len: *mut usize, packed: *mut c_void) -> u32,
    >,
}

/// `struct urom_domain_lookups_iface`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct DomainLookupsIface {
    /// Worker address of a domain member.
    pub addr_lookup: Option<
        unsafe extern "C" fn(ctx: *mut WorkerCtx, domain_id: u64, addr: *mut *mut c_void) -> u32,
    >,
    /// Segment index holding `va` of a domain member.
    pub seg_lookup: Option<
        unsafe extern "C" fn(ctx: *mut WorkerCtx, domain_id: u64, va: u64, seg: *mut i32) -> u32,
    >,
    /// Packed memory handle of a segment.
    pub memh_lookup: Option<
        unsafe extern "C" fn(
            ctx: *mut WorkerCtx,
            domain_id: u64,
            seg: i32,
            len: *mut usize,
            memh: *mut *mut c_void,
        ) -> u32,
    >,
    /// Packed remote key of a segment.
    pub mkey_lookup: Option<
        unsafe extern "C" fn(
            ctx: *mut WorkerCtx,
            domain_id: u64,
            seg: i32,
            len: *mut usize,
            rkey: *mut *mut c_void,
        ) -> u32,
    >,
}

/// `struct urom_worker_ctx`.
#[repr(C)]
pub struct WorkerCtx {
    /// The plugin's interface.
    pub iface: PluginIface,
    /// Domain lookups served by the runtime.
    pub domain_iface: DomainLookupsIface,
    /// The plugin's state.
    pub plugin_ctx: *mut c_void,
}

/// `struct urom_worker_cmd` (header; `len` payload bytes follow).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WorkerCmd {
    /// Plugin id.
    pub type_: u64,
    /// Runtime cookie.
    pub urom_context: u64,
    /// Payload length.
    pub len: u64,
}

/// `struct urom_worker_cmd_desc` (header; payload follows).
#[repr(C)]
pub struct WorkerCmdDesc {
    /// List link.
    pub entry: ListLink,
    /// Host connection id.
    pub dest_id: u64,
    /// The command.
    pub worker_cmd: WorkerCmd,
}

/// `struct urom_worker_notify` (header; `len` payload bytes follow).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WorkerNotify {
    /// Plugin id (copied from the command).
    pub type_: u64,
    /// Runtime cookie (copied from the command).
    pub urom_context: u64,
    /// Payload length.
    pub len: u64,
    /// `doca_error_t` status.
    pub status: u32,
    /// Reserved.
    pub reserved: u32,
}

/// `struct urom_worker_notif_desc` (header; payload follows).
#[repr(C)]
pub struct WorkerNotifDesc {
    /// List link.
    pub entry: ListLink,
    /// Host connection id.
    pub dest_id: u64,
    /// The notification.
    pub worker_notif: WorkerNotify,
}

const _: () = {
    assert!(std::mem::size_of::<ListLink>() == 16);
    assert!(std::mem::size_of::<PluginIface>() == 56);
    assert!(std::mem::size_of::<DomainLookupsIface>() == 32);
    assert!(std::mem::size_of::<WorkerCtx>() == 96);
    assert!(std::mem::offset_of!(WorkerCtx, domain_iface) == 56);
    assert!(std::mem::offset_of!(WorkerCtx, plugin_ctx) == 88);
    assert!(std::mem::size_of::<WorkerCmd>() == 24);
    assert!(std::mem::offset_of!(WorkerCmdDesc, dest_id) == 16);
    assert!(std::mem::offset_of!(WorkerCmdDesc, worker_cmd) == 24);
    assert!(std::mem::size_of::<WorkerCmdDesc>() == 48);
    assert!(std::mem::size_of::<WorkerNotify>() == 32);
    assert!(std::mem::offset_of!(WorkerNotify, status) == 24);
    assert!(std::mem::offset_of!(WorkerNotifDesc, worker_notif) == 24);
    assert!(std::mem::size_of::<WorkerNotifDesc>() == 56);
};

/// `urom_worker_cmd` header size on the wire.
pub const CMD_HEADER_LEN: usize = 24;
/// `urom_worker_notify` header size on the wire.
pub const NOTIFY_HEADER_LEN: usize = 32;
/// The optional plugin export of the doca-soft wake-up extension (not part of the DOCA
/// plugin interface): `doca_error_t doca_soft_urom_plugin_arm(struct urom_worker_ctx *ctx,
/// int *fd)`. The worker calls it before sleeping: DOCA_SUCCESS with `*fd` = a descriptor
/// that becomes readable when the plugin has work (-1: it acts on commands only),
/// DOCA_ERROR_AGAIN when work is pending now; anything else (or no such export) and the
/// worker wakes the plugin by a short timeout.
pub const ARM_SYMBOL: &[u8] = b"doca_soft_urom_plugin_arm\0";
/// Version plugins report and hosts expect.
pub const PLUGIN_VERSION: u64 = 0x01;

/// Makes `head` an empty list.
///
/// # Safety
/// `head` is valid for writes.
pub unsafe fn list_init(head: *mut ListLink) {
    // SAFETY: caller contract.
    unsafe {
        (*head).prev = head;
        (*head).next = head;
    }
}

/// Appends `node` at the tail of `head`.
///
/// # Safety
/// Both are valid; `head` is an initialised list; `node` is on no list.
pub unsafe fn list_add_tail(head: *mut ListLink, node: *mut ListLink) {
    // SAFETY: caller contract.
    unsafe {
        let prev = (*head).prev;
        (*node).prev = prev;
        (*node).next = head;
        (*prev).next = node;
        (*head).prev = node;
    }
}

/// Removes and returns the first node, or null when empty.
///
/// # Safety
/// `head` is an initialised list of valid nodes.
pub unsafe fn list_pop_head(head: *mut ListLink) -> *mut ListLink {
    // SAFETY: caller contract.
    unsafe {
        let n = (*head).next;
        if n == head {
            return std::ptr::null_mut();
        }
        (*head).next = (*n).next;
        (*(*n).next).prev = head;
        n
    }
}
