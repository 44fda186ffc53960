//! The UROM plugin ABI is declared in three places: the C header (bound by `doca-sys`), the
//! SDK (which uses those bindings, `doca_urom::sdk::abi`) and the worker runtime's own copy
//! (`doca_soft::urom::abi`, which cannot use `doca-sys`: doca-sys depends on doca-soft).
//! These tests hold the three to one layout, and check that the runtime's types really
//! drive a plugin built with the SDK.
#![cfg(feature = "soft")]

use doca_soft::urom::abi as rt;
use doca_sys as sys;
use doca_urom::sdk::abi::layout;
use doca_urom::sdk::{get_iface, Command, PluginContext, Reply, UromPlugin};
use doca_urom::DocaError;
use std::ffi::c_void;
use std::mem::{align_of, offset_of, size_of};

/// Asserts that two struct types have the same size, alignment and the given field offsets.
macro_rules! same_layout {
    ($a:ty, $b:ty, [$(($fa:ident, $fb:ident)),* $(,)?]) => {{
        assert_eq!(size_of::<$a>(), size_of::<$b>(), "size of {}", stringify!($a));
        assert_eq!(align_of::<$a>(), align_of::<$b>(), "align of {}", stringify!($a));
        $(
            assert_eq!(
                offset_of!($a, $fa),
                offset_of!($b, $fb),
                "{}.{}",
                stringify!($a),
                stringify!($fa)
            );
        )*
    }};
}

#[test]
fn header_bindings_have_the_layout_the_sdk_expects() {
    assert_eq!(size_of::<sys::ucs_list_link_t>(), layout::LIST_LINK_SIZE);
    assert_eq!(
        size_of::<sys::urom_plugin_iface>(),
        layout::PLUGIN_IFACE_SIZE
    );
    assert_eq!(
        size_of::<sys::urom_domain_lookups_iface>(),
        layout::DOMAIN_LOOKUPS_SIZE
    );
    assert_eq!(size_of::<sys::urom_worker_ctx>(), layout::WORKER_CTX_SIZE);
    assert_eq!(
        offset_of!(sys::urom_worker_ctx, domain_iface),
        layout::WORKER_CTX_DOMAIN_IFACE
    );
    assert_eq!(
        offset_of!(sys::urom_worker_ctx, plugin_ctx),
        layout::WORKER_CTX_PLUGIN_CTX
    );
    assert_eq!(size_of::<sys::urom_worker_cmd>(), layout::CMD_SIZE);
    assert_eq!(
        offset_of!(sys::urom_worker_cmd_desc, dest_id),
        layout::CMD_DESC_DEST_ID
    );
    assert_eq!(
        offset_of!(sys::urom_worker_cmd_desc, worker_cmd),
        layout::CMD_DESC_WORKER_CMD
    );
    assert_eq!(
        size_of::<sys::urom_worker_cmd_desc>(),
        layout::CMD_DESC_SIZE
    );
    assert_eq!(size_of::<sys::urom_worker_notify>(), layout::NOTIFY_SIZE);
    assert_eq!(
        offset_of!(sys::urom_worker_notify, status),
        layout::NOTIFY_STATUS
    );
    assert_eq!(
        offset_of!(sys::urom_worker_notif_desc, dest_id),
        layout::NOTIF_DESC_DEST_ID
    );
    assert_eq!(
        offset_of!(sys::urom_worker_notif_desc, worker_notif),
        layout::NOTIF_DESC_WORKER_NOTIF
    );
    assert_eq!(
        size_of::<sys::urom_worker_notif_desc>(),
        layout::NOTIF_DESC_SIZE
    );
    // The flexible payload arrays start right after the headers.
    assert_eq!(
        offset_of!(sys::urom_worker_cmd, plugin_cmd),
        layout::CMD_SIZE
    );
    assert_eq!(
        offset_of!(sys::urom_worker_notify, plugin_notif),
        layout::NOTIFY_SIZE
    );
}

#[test]
fn runtime_copy_has_the_header_layout_field_by_field() {
    same_layout!(
        rt::ListLink,
        sys::ucs_list_link_t,
        [(prev, prev), (next, next)]
    );
    same_layout!(
        rt::PluginIface,
        sys::urom_plugin_iface,
        [
            (api_version, __doca_api_version),
            (open, open),
            (close, close),
            (addr, addr),
            (worker_cmd, worker_cmd),
            (progress, progress),
            (notif_pack, notif_pack),
        ]
    );
    same_layout!(
        rt::DomainLookupsIface,
        sys::urom_domain_lookups_iface,
        [
            (addr_lookup, addr_lookup),
            (seg_lookup, seg_lookup),
            (memh_lookup, memh_lookup),
            (mkey_lookup, mkey_lookup),
        ]
    );
    same_layout!(
        rt::WorkerCtx,
        sys::urom_worker_ctx,
        [
            (iface, iface),
            (domain_iface, domain_iface),
            (plugin_ctx, plugin_ctx)
        ]
    );
    same_layout!(
        rt::WorkerCmd,
        sys::urom_worker_cmd,
        [(type_, type_), (urom_context, urom_context), (len, len)]
    );
    same_layout!(
        rt::WorkerCmdDesc,
        sys::urom_worker_cmd_desc,
        [(entry, entry), (dest_id, dest_id), (worker_cmd, worker_cmd)]
    );
    same_layout!(
        rt::WorkerNotify,
        sys::urom_worker_notify,
        [
            (type_, type_),
            (urom_context, urom_context),
            (len, len),
            (status, status),
            (reserved, reserved),
        ]
    );
    same_layout!(
        rt::WorkerNotifDesc,
        sys::urom_worker_notif_desc,
        [
            (entry, entry),
            (dest_id, dest_id),
            (worker_notif, worker_notif)
        ]
    );
    assert_eq!(rt::CMD_HEADER_LEN, layout::CMD_SIZE);
    assert_eq!(rt::NOTIFY_HEADER_LEN, layout::NOTIFY_SIZE);
}

/// Replies to each command with its payload reversed; payload `[0xff]` fails with NOT_FOUND.
struct Reverse;

impl UromPlugin for Reverse {
    fn open(_ctx: &PluginContext) -> Result<Self, DocaError> {
        Ok(Reverse)
    }
    fn command(&mut self, _ctx: &PluginContext, cmd: Command<'_>, out: &mut Vec<Reply>) {
        if cmd.payload == [0xff] {
            out.push(cmd.reply(Err(DocaError::NOT_FOUND), Vec::new()));
        } else {
            let mut body = cmd.payload.to_vec();
            body.reverse();
            out.push(cmd.reply(Ok(()), body));
        }
    }
}

/// A command descriptor built with the runtime's types, as the worker builds it.
fn runtime_cmd(dest_id: u64, cookie: u64, payload: &[u8]) -> *mut rt::ListLink {
    let size = size_of::<rt::WorkerCmdDesc>() + payload.len();
    // SAFETY: a plain allocation the plugin releases with free(); every header field is
    // written before the pointer is handed out.
    unsafe {
        let d = libc::malloc(size) as *mut rt::WorkerCmdDesc;
        assert!(!d.is_null());
        std::ptr::addr_of_mut!((*d).dest_id).write(dest_id);
        std::ptr::addr_of_mut!((*d).worker_cmd).write(rt::WorkerCmd {
            type_: 9,
            urom_context: cookie,
            len: payload.len() as u64,
        });
        let body = (d as *mut u8).add(size_of::<rt::WorkerCmdDesc>());
        std::ptr::copy_nonoverlapping(payload.as_ptr(), body, payload.len());
        d as *mut rt::ListLink
    }
}

#[test]
fn runtime_types_drive_an_sdk_plugin() {
    // SAFETY: the test plays the worker runtime: it reads the plugin's interface table
    // through its own declaration (as after dlopen), and follows the ABI's ownership rules
    // (commands are freed by the plugin, notifications by the worker).
    unsafe {
        let mut iface = rt::PluginIface::default();
        assert_eq!(
            get_iface::<Reverse>(&mut iface as *mut rt::PluginIface as *mut sys::urom_plugin_iface),
            0
        );
        let mut ctx = rt::WorkerCtx {
            iface,
            domain_iface: rt::DomainLookupsIface::default(),
            plugin_ctx: std::ptr::null_mut(),
        };
        assert_eq!((iface.open.unwrap())(&mut ctx), 0);

        let mut cmds = rt::ListLink {
            prev: std::ptr::null_mut(),
            next: std::ptr::null_mut(),
        };
        rt::list_init(&mut cmds);
        rt::list_add_tail(&mut cmds, runtime_cmd(5, 100, &[1, 2, 3]));
        rt::list_add_tail(&mut cmds, runtime_cmd(6, 101, &[0xff]));
        assert_eq!((iface.worker_cmd.unwrap())(&mut ctx, &mut cmds), 0);
        assert!(
            rt::list_pop_head(&mut cmds).is_null(),
            "plugin took every command"
        );

        let mut notifs = rt::ListLink {
            prev: std::ptr::null_mut(),
            next: std::ptr::null_mut(),
        };
        rt::list_init(&mut notifs);
        assert_eq!((iface.progress.unwrap())(&mut ctx, &mut notifs), 0);
        let mut got = Vec::new();
        loop {
            let n = rt::list_pop_head(&mut notifs) as *mut rt::WorkerNotifDesc;
            if n.is_null() {
                break;
            }
            let h = (*n).worker_notif;
            let body = std::slice::from_raw_parts(
                (n as *const u8).add(size_of::<rt::WorkerNotifDesc>()),
                h.len as usize,
            )
            .to_vec();
            let mut packed = vec![0u8; 64];
            let mut plen = packed.len();
            assert_eq!(
                (iface.notif_pack.unwrap())(
                    &mut (*n).worker_notif,
                    &mut plen,
                    packed.as_mut_ptr() as *mut c_void
                ),
                0
            );
            assert_eq!(plen, rt::NOTIFY_HEADER_LEN + body.len());
            assert_eq!(&packed[..8], &9u64.to_ne_bytes(), "packed type");
            assert_eq!(
                &packed[8..16],
                &h.urom_context.to_ne_bytes(),
                "packed cookie"
            );
            assert_eq!(
                &packed[layout::NOTIFY_STATUS..layout::NOTIFY_STATUS + 4],
                &h.status.to_ne_bytes(),
                "packed status"
            );
            assert_eq!(&packed[rt::NOTIFY_HEADER_LEN..plen], &body[..]);
            assert_eq!(h.type_, 9);
            got.push(((*n).dest_id, h.urom_context, h.status, body));
            libc::free(n as *mut c_void);
        }
        got.sort();
        assert_eq!(
            got,
            vec![
                (5, 100, 0, vec![3, 2, 1]),
                (6, 101, DocaError::NOT_FOUND.code(), vec![]),
            ]
        );
        (iface.close.unwrap())(&mut ctx);
        assert!(ctx.plugin_ctx.is_null());
    }
}
