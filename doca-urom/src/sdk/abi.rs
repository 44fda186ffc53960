//! The C plugin ABI (`doca_urom_plugin.h`) as seen by plugins, with layout checks.
#![allow(missing_docs)]

use std::ffi::c_void;

#[repr(C)]
pub struct ListLink {
    pub prev: *mut ListLink,
    pub next: *mut ListLink,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PluginIface {
    pub api_version: usize,
    pub open: Option<unsafe extern "C" fn(*mut WorkerCtx) -> u32>,
    pub close: Option<unsafe extern "C" fn(*mut WorkerCtx)>,
    pub addr: Option<unsafe extern "C" fn(*mut WorkerCtx, *mut c_void, *mut usize) -> u32>,
    pub worker_cmd: Option<unsafe extern "C" fn(*mut WorkerCtx, *mut ListLink) -> u32>,
    pub progress: Option<unsafe extern "C" fn(*mut WorkerCtx, *mut ListLink) -> u32>,
    pub notif_pack: Option<unsafe extern "C" fn(*mut WorkerNotify, *mut usize, *mut c_void) -> u32>,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DomainLookups {
    pub addr_lookup: Option<unsafe extern "C" fn(*mut WorkerCtx, u64, *mut *mut c_void) -> u32>,
    pub seg_lookup: Option<unsafe extern "C" fn(*mut WorkerCtx, u64, u64, *mut i32) -> u32>,
    pub memh_lookup:
        Option<unsafe extern "C" fn(*mut WorkerCtx, u64, i32, *mut usize, *mut *mut c_void) -> u32>,
    pub mkey_lookup:
        Option<unsafe extern "C" fn(*mut WorkerCtx, u64, i32, *mut usize, *mut *mut c_void) -> u32>,
}

#[repr(C)]
pub struct WorkerCtx {
    pub iface: PluginIface,
    pub domain_iface: DomainLookups,
    pub plugin_ctx: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct WorkerCmd {
    pub type_: u64,
    pub urom_context: u64,
    pub len: u64,
}

#[repr(C)]
pub struct WorkerCmdDesc {
    pub entry: ListLink,
    pub dest_id: u64,
    pub worker_cmd: WorkerCmd,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct WorkerNotify {
    pub type_: u64,
    pub urom_context: u64,
    pub len: u64,
    pub status: u32,
    pub reserved: u32,
}

#[repr(C)]
pub struct WorkerNotifDesc {
    pub entry: ListLink,
    pub dest_id: u64,
    pub worker_notif: WorkerNotify,
}

const _: () = {
    assert!(std::mem::size_of::<PluginIface>() == 56);
    assert!(std::mem::size_of::<WorkerCtx>() == 96);
    assert!(std::mem::size_of::<WorkerCmdDesc>() == 48);
    assert!(std::mem::size_of::<WorkerNotify>() == 32);
    assert!(std::mem::size_of::<WorkerNotifDesc>() == 56);
};

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
