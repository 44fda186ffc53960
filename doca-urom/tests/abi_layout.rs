//! The plugin ABI has one definition, the header `doca_urom_plugin.h`: the SDK's types are
//! doca-sys's bindings of it (and doca-soft's worker runtime generates its own from the same
//! file). This test holds the generated types to the sizes and offsets of the facts
//! (`doca_urom::sdk::abi::layout`, LP64), which the SDK's pointer arithmetic relies on.

use doca_urom::sdk::abi::{
    layout, DomainLookups, ListLink, PluginIface, WorkerCmd, WorkerCmdDesc, WorkerCtx,
    WorkerNotifDesc, WorkerNotify,
};
use std::mem::{align_of, offset_of, size_of};

#[test]
fn generated_types_have_the_headers_sizes() {
    let sizes = [
        (
            "ucs_list_link_t",
            size_of::<ListLink>(),
            layout::LIST_LINK_SIZE,
        ),
        (
            "urom_plugin_iface",
            size_of::<PluginIface>(),
            layout::PLUGIN_IFACE_SIZE,
        ),
        (
            "urom_domain_lookups_iface",
            size_of::<DomainLookups>(),
            layout::DOMAIN_LOOKUPS_SIZE,
        ),
        (
            "urom_worker_ctx",
            size_of::<WorkerCtx>(),
            layout::WORKER_CTX_SIZE,
        ),
        ("urom_worker_cmd", size_of::<WorkerCmd>(), layout::CMD_SIZE),
        (
            "urom_worker_cmd_desc",
            size_of::<WorkerCmdDesc>(),
            layout::CMD_DESC_SIZE,
        ),
        (
            "urom_worker_notify",
            size_of::<WorkerNotify>(),
            layout::NOTIFY_SIZE,
        ),
        (
            "urom_worker_notif_desc",
            size_of::<WorkerNotifDesc>(),
            layout::NOTIF_DESC_SIZE,
        ),
    ];
    for (name, got, want) in sizes {
        assert_eq!(got, want, "sizeof(struct {name})");
    }
    // Every struct is 8-byte aligned: descriptors are malloc'd and walked as headers.
    assert_eq!(align_of::<WorkerCmdDesc>(), 8);
    assert_eq!(align_of::<WorkerNotifDesc>(), 8);
}

#[test]
fn generated_types_have_the_headers_offsets() {
    let offsets = [
        (
            "urom_worker_ctx.domain_iface",
            offset_of!(WorkerCtx, domain_iface),
            layout::WORKER_CTX_DOMAIN_IFACE,
        ),
        (
            "urom_worker_ctx.plugin_ctx",
            offset_of!(WorkerCtx, plugin_ctx),
            layout::WORKER_CTX_PLUGIN_CTX,
        ),
        (
            "urom_worker_cmd_desc.dest_id",
            offset_of!(WorkerCmdDesc, dest_id),
            layout::CMD_DESC_DEST_ID,
        ),
        (
            "urom_worker_cmd_desc.worker_cmd",
            offset_of!(WorkerCmdDesc, worker_cmd),
            layout::CMD_DESC_WORKER_CMD,
        ),
        (
            "urom_worker_notify.status",
            offset_of!(WorkerNotify, status),
            layout::NOTIFY_STATUS,
        ),
        (
            "urom_worker_notif_desc.dest_id",
            offset_of!(WorkerNotifDesc, dest_id),
            layout::NOTIF_DESC_DEST_ID,
        ),
        (
            "urom_worker_notif_desc.worker_notif",
            offset_of!(WorkerNotifDesc, worker_notif),
            layout::NOTIF_DESC_WORKER_NOTIF,
        ),
        // The flexible payload arrays start right after the headers.
        (
            "urom_worker_cmd.plugin_cmd",
            offset_of!(WorkerCmd, plugin_cmd),
            layout::CMD_SIZE,
        ),
        (
            "urom_worker_notify.plugin_notif",
            offset_of!(WorkerNotify, plugin_notif),
            layout::NOTIFY_SIZE,
        ),
        // The interface table: the version stamp, then the six operations.
        ("urom_plugin_iface.open", offset_of!(PluginIface, open), 8),
        (
            "urom_plugin_iface.notif_pack",
            offset_of!(PluginIface, notif_pack),
            48,
        ),
    ];
    for (name, got, want) in offsets {
        assert_eq!(got, want, "offsetof({name})");
    }
}
