//! The C plugin ABI (`doca_urom_plugin.h`) as seen by plugins.
//!
//! The types are the `doca-sys` bindings of the header itself (one definition: bindgen
//! over the C truth; doca-soft's worker runtime binds the same header), under the names the
//! SDK has always used. [`layout`] states the sizes and offsets the SDK relies on; the
//! `abi_layout` test holds the bindings to them.

use doca_sys as sys;

/// `ucs_list_link_t`: a node of a circular doubly-linked list (a head links to itself when
/// empty).
pub type ListLink = sys::ucs_list_link;
/// `struct urom_plugin_iface`: the operations a plugin gives the worker.
pub type PluginIface = sys::urom_plugin_iface;
/// `struct urom_domain_lookups_iface`: the domain lookups the worker serves.
pub type DomainLookups = sys::urom_domain_lookups_iface;
/// `struct urom_worker_ctx`: the per-plugin context the worker owns.
pub type WorkerCtx = sys::urom_worker_ctx;
/// `struct urom_worker_cmd`: a command header; `len` payload bytes follow it.
pub type WorkerCmd = sys::urom_worker_cmd;
/// `struct urom_worker_cmd_desc`: a command on a worker list; the payload follows it.
pub type WorkerCmdDesc = sys::urom_worker_cmd_desc;
/// `struct urom_worker_notify`: a notification header; `len` payload bytes follow it.
pub type WorkerNotify = sys::urom_worker_notify;
/// `struct urom_worker_notif_desc`: a notification on a worker list; the payload follows it.
pub type WorkerNotifDesc = sys::urom_worker_notif_desc;

/// Sizes and offsets (LP64) of the plugin ABI that the SDK's code depends on: descriptor
/// payloads start at the end of the descriptor, a packed notification is the 32-byte
/// header followed by the body.
pub mod layout {
    /// `sizeof(ucs_list_link_t)`.
    pub const LIST_LINK_SIZE: usize = 16;
    /// `sizeof(struct urom_plugin_iface)`.
    pub const PLUGIN_IFACE_SIZE: usize = 56;
    /// `sizeof(struct urom_domain_lookups_iface)`.
    pub const DOMAIN_LOOKUPS_SIZE: usize = 32;
    /// `sizeof(struct urom_worker_ctx)`.
    pub const WORKER_CTX_SIZE: usize = 96;
    /// `offsetof(struct urom_worker_ctx, domain_iface)`.
    pub const WORKER_CTX_DOMAIN_IFACE: usize = 56;
    /// `offsetof(struct urom_worker_ctx, plugin_ctx)`.
    pub const WORKER_CTX_PLUGIN_CTX: usize = 88;
    /// `sizeof(struct urom_worker_cmd)` (the header; the payload follows).
    pub const CMD_SIZE: usize = 24;
    /// `offsetof(struct urom_worker_cmd_desc, dest_id)`.
    pub const CMD_DESC_DEST_ID: usize = 16;
    /// `offsetof(struct urom_worker_cmd_desc, worker_cmd)`.
    pub const CMD_DESC_WORKER_CMD: usize = 24;
    /// `sizeof(struct urom_worker_cmd_desc)`: where the command payload starts.
    pub const CMD_DESC_SIZE: usize = 48;
    /// `sizeof(struct urom_worker_notify)`: the packed notification header.
    pub const NOTIFY_SIZE: usize = 32;
    /// `offsetof(struct urom_worker_notify, status)`.
    pub const NOTIFY_STATUS: usize = 24;
    /// `offsetof(struct urom_worker_notif_desc, dest_id)`.
    pub const NOTIF_DESC_DEST_ID: usize = 16;
    /// `offsetof(struct urom_worker_notif_desc, worker_notif)`.
    pub const NOTIF_DESC_WORKER_NOTIF: usize = 24;
    /// `sizeof(struct urom_worker_notif_desc)`: where the notification body starts.
    pub const NOTIF_DESC_SIZE: usize = 56;
}

/// Removes and returns the first node of `head`, or null.
///
/// # Safety
/// `head` is an initialised list of valid nodes.
pub unsafe fn pop_head(head: *mut ListLink) -> *mut ListLink {
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

/// Appends `node` to `head`.
///
/// # Safety
/// `head` initialised; `node` valid and on no list.
pub unsafe fn add_tail(head: *mut ListLink, node: *mut ListLink) {
    // SAFETY: caller contract.
    unsafe {
        let prev = (*head).prev;
        (*node).prev = prev;
        (*node).next = head;
        (*prev).next = node;
        (*head).prev = node;
    }
}
