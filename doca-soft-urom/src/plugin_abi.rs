//! The worker side of the plugin ABI: the types of `include/doca_urom_plugin.h`, generated
//! from the header by the build script (`build/urom.rs`; the header is the one definition,
//! the doca-urom SDK binds the same one), under the names the runtime uses, plus the
//! intrusive list (`ucs_list_link_t`) operations the runtime needs.
//!
//! bindgen's layout assertions hold the generated structs to clang's view of the header;
//! `tests/urom_headers.rs` holds the header to the DOCA facts.

#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    missing_docs,
    unreachable_pub,
    clippy::all
)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/urom_plugin_bindings.rs"));
}

/// `ucs_list_link_t`: circular doubly-linked list node (a head is a node that links to
/// itself when empty).
pub(crate) type ListLink = generated::ucs_list_link_t;
/// `struct urom_plugin_iface`: the operations a plugin gives the worker.
pub(crate) type PluginIface = generated::urom_plugin_iface;
/// `struct urom_domain_lookups_iface`: the domain lookups the worker serves.
pub(crate) type DomainLookupsIface = generated::urom_domain_lookups_iface;
/// `struct urom_worker_ctx`: the per-plugin context the worker owns.
pub(crate) type WorkerCtx = generated::urom_worker_ctx;
/// `struct urom_worker_cmd`: a command header; `len` payload bytes follow it.
pub(crate) type WorkerCmd = generated::urom_worker_cmd;
/// `struct urom_worker_cmd_desc`: a command on a list; the payload follows it.
pub(crate) type WorkerCmdDesc = generated::urom_worker_cmd_desc;
/// `struct urom_worker_notify`: a notification header; `len` payload bytes follow it.
pub(crate) type WorkerNotify = generated::urom_worker_notify;
/// `struct urom_worker_notif_desc`: a notification on a list; the payload follows it.
pub(crate) type WorkerNotifDesc = generated::urom_worker_notif_desc;

/// The optional plugin export of the doca-soft wake-up extension (not part of the DOCA
/// plugin interface; see the header): `doca_error_t doca_soft_urom_plugin_arm(struct
/// urom_worker_ctx *ctx, int *fd)`. The worker calls it before sleeping: DOCA_SUCCESS with
/// `*fd` = a descriptor that becomes readable when the plugin has work (-1: it acts on
/// commands only), DOCA_ERROR_AGAIN when work is pending now; anything else (or no such
/// export) and the worker wakes the plugin by a short timeout.
pub(crate) const ARM_SYMBOL: &[u8] = b"doca_soft_urom_plugin_arm\0";

/// The optional plugin export naming the plugin (doca-soft extension, see the header):
/// `const char *doca_soft_urom_plugin_name(void)`. The daemon offers a file `lib<name>.so`
/// whose library returns `<name>` as plugin `<name>` (cargo's naming of a Rust plugin);
/// without it a plugin is named by its file name without `.so`.
pub(crate) const NAME_SYMBOL: &[u8] = b"doca_soft_urom_plugin_name\0";

/// An empty list head, to be initialised in place with [`list_init`] (a head links to
/// itself, so it cannot be built by value).
pub(crate) fn list_head() -> ListLink {
    ListLink {
        prev: std::ptr::null_mut(),
        next: std::ptr::null_mut(),
    }
}

/// Makes `head` an empty list.
///
/// # Safety
/// `head` is valid for writes.
pub(crate) unsafe fn list_init(head: *mut ListLink) {
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
pub(crate) unsafe fn list_add_tail(head: *mut ListLink, node: *mut ListLink) {
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
pub(crate) unsafe fn list_pop_head(head: *mut ListLink) -> *mut ListLink {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_order_and_empty_out() {
        let mut head = list_head();
        let mut a = list_head();
        let mut b = list_head();
        // SAFETY: all three are live locals; head is initialised before use.
        unsafe {
            list_init(&mut head);
            assert!(list_pop_head(&mut head).is_null());
            list_add_tail(&mut head, &mut a);
            list_add_tail(&mut head, &mut b);
            assert_eq!(list_pop_head(&mut head), &mut a as *mut ListLink);
            assert_eq!(list_pop_head(&mut head), &mut b as *mut ListLink);
            assert!(list_pop_head(&mut head).is_null());
        }
    }
}
