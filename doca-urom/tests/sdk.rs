//! The plugin SDK's C side, driven in-process the way the worker runtime drives it.

use doca_urom::sdk::abi::{
    self, DomainLookups, ListLink, PluginIface, WorkerCmd, WorkerCmdDesc, WorkerCtx,
    WorkerNotifDesc,
};
use doca_urom::sdk::{get_iface, get_version, Command, PluginContext, Reply, UromPlugin};
use doca_urom::DocaError;
use std::ffi::c_void;

struct Panicky {
    later: Vec<Reply>,
}

impl UromPlugin for Panicky {
    fn open(_ctx: &PluginContext) -> Result<Self, DocaError> {
        Ok(Panicky { later: Vec::new() })
    }
    fn address(&self) -> Vec<u8> {
        b"addr".to_vec()
    }
    fn command(&mut self, _ctx: &PluginContext, cmd: Command<'_>, out: &mut Vec<Reply>) {
        match cmd.payload.first() {
            Some(1) => panic!("plugin bug"),
            Some(2) => self.later.push(cmd.reply(Ok(()), b"later".to_vec())),
            _ => out.push(cmd.reply(Ok(()), cmd.payload.to_vec())),
        }
    }
    fn progress(&mut self, _ctx: &PluginContext, out: &mut Vec<Reply>) {
        out.append(&mut self.later);
    }
}

fn list() -> Box<ListLink> {
    let mut h = Box::new(ListLink {
        prev: std::ptr::null_mut(),
        next: std::ptr::null_mut(),
    });
    let p: *mut ListLink = &mut *h;
    h.prev = p;
    h.next = p;
    h
}

fn cmd_desc(ctx_cookie: u64, payload: &[u8]) -> *mut ListLink {
    let size = std::mem::size_of::<WorkerCmdDesc>() + payload.len();
    // SAFETY: plain allocation handed to the plugin, which frees it.
    unsafe {
        let d = libc::malloc(size) as *mut WorkerCmdDesc;
        std::ptr::addr_of_mut!((*d).dest_id).write(7);
        std::ptr::addr_of_mut!((*d).worker_cmd).write(WorkerCmd {
            type_: 4,
            urom_context: ctx_cookie,
            len: payload.len() as u64,
            plugin_cmd: Default::default(),
        });
        std::ptr::copy_nonoverlapping(
            payload.as_ptr(),
            (d as *mut u8).add(std::mem::size_of::<WorkerCmdDesc>()),
            payload.len(),
        );
        d as *mut ListLink
    }
}

#[test]
fn sdk_drives_commands_replies_and_catches_panics() {
    // SAFETY: the test plays the worker runtime with the ABI's ownership rules.
    unsafe {
        let mut v = 0;
        assert_eq!(get_version::<Panicky>(&mut v), 0);
        assert_eq!(v, 1);
        let mut iface: PluginIface = std::mem::zeroed();
        assert_eq!(get_iface::<Panicky>(&mut iface), 0);
        let lookups: DomainLookups = std::mem::zeroed();
        let mut ctx = WorkerCtx {
            iface,
            domain_iface: lookups,
            plugin_ctx: std::ptr::null_mut(),
        };
        assert_eq!((iface.open.unwrap())(&mut ctx).0, 0);
        assert!(!ctx.plugin_ctx.is_null());

        let mut len = 0usize;
        let mut small = [0u8; 1];
        assert_eq!(
            (iface.addr.unwrap())(&mut ctx, small.as_mut_ptr() as *mut c_void, &mut len).0,
            DocaError::INVALID_VALUE.code()
        );
        assert_eq!(len, 4);
        let mut a = [0u8; 4];
        assert_eq!(
            (iface.addr.unwrap())(&mut ctx, a.as_mut_ptr() as *mut c_void, &mut len).0,
            0
        );
        assert_eq!(&a, b"addr");

        let mut cmds = list();
        abi::add_tail(&mut *cmds, cmd_desc(11, &[0, 9]));
        abi::add_tail(&mut *cmds, cmd_desc(12, &[1]));
        abi::add_tail(&mut *cmds, cmd_desc(13, &[2]));
        assert_eq!((iface.worker_cmd.unwrap())(&mut ctx, &mut *cmds).0, 0);
        assert!(
            abi::pop_head(&mut *cmds).is_null(),
            "plugin consumed every command"
        );

        let mut notifs = list();
        assert_eq!((iface.progress.unwrap())(&mut ctx, &mut *notifs).0, 0);
        let mut got = Vec::new();
        loop {
            let n = abi::pop_head(&mut *notifs) as *mut WorkerNotifDesc;
            if n.is_null() {
                break;
            }
            let h = &(*n).worker_notif;
            let (type_, cookie, body_len, status) = (h.type_, h.urom_context, h.len, h.status.0);
            let mut packed = vec![0u8; 64];
            let mut plen = 8usize;
            assert_eq!(
                (iface.notif_pack.unwrap())(
                    &mut (*n).worker_notif,
                    &mut plen,
                    packed.as_mut_ptr() as *mut c_void
                )
                .0,
                DocaError::INITIALIZATION.code()
            );
            plen = 64;
            assert_eq!(
                (iface.notif_pack.unwrap())(
                    &mut (*n).worker_notif,
                    &mut plen,
                    packed.as_mut_ptr() as *mut c_void
                )
                .0,
                0
            );
            assert_eq!(plen, 32 + body_len as usize);
            assert_eq!((*n).dest_id, 7);
            assert_eq!(type_, 4);
            got.push((cookie, status, packed[32..plen].to_vec()));
            libc::free(n as *mut c_void);
        }
        got.sort();
        assert_eq!(
            got,
            vec![
                (11, 0, vec![0, 9]),
                (12, DocaError::UNEXPECTED.code(), vec![]),
                (13, 0, b"later".to_vec()),
            ],
            "echo, the panic as an error notification, and the deferred reply"
        );
        assert_eq!(
            (iface.progress.unwrap())(&mut ctx, &mut *notifs).0,
            DocaError::EMPTY.code()
        );
        (iface.close.unwrap())(&mut ctx);
        assert!(ctx.plugin_ctx.is_null());
    }
}

/// The wake-up answer of [`Waker`] (one test uses it).
static ANSWER: std::sync::Mutex<doca_urom::sdk::Wakeup> =
    std::sync::Mutex::new(doca_urom::sdk::Wakeup::Unknown);

/// A plugin whose wake-up answer the test chooses.
struct Waker;

impl UromPlugin for Waker {
    fn open(_ctx: &PluginContext) -> Result<Self, DocaError> {
        Ok(Waker)
    }
    fn command(&mut self, _ctx: &PluginContext, cmd: Command<'_>, out: &mut Vec<Reply>) {
        out.push(cmd.reply(Ok(()), Vec::new()));
    }
    fn arm_wakeup(&mut self) -> doca_urom::sdk::Wakeup {
        *ANSWER.lock().unwrap()
    }
}

#[test]
fn sdk_arm_extension_reports_fd_busy_and_unknown() {
    use doca_urom::sdk::{arm, Wakeup};
    let answer = |w| *ANSWER.lock().unwrap() = w;
    // SAFETY: the test plays the worker runtime with the ABI's ownership rules.
    unsafe {
        let mut iface: PluginIface = std::mem::zeroed();
        assert_eq!(get_iface::<Waker>(&mut iface), 0);
        let mut ctx = WorkerCtx {
            iface,
            domain_iface: std::mem::zeroed(),
            plugin_ctx: std::ptr::null_mut(),
        };
        assert_eq!((iface.open.unwrap())(&mut ctx).0, 0);
        let mut fd = 99;
        assert_eq!(
            arm::<Waker>(&mut ctx, std::ptr::null_mut()),
            DocaError::INVALID_VALUE.code()
        );
        assert_eq!(
            arm::<Waker>(&mut ctx, &mut fd),
            DocaError::NOT_SUPPORTED.code()
        );
        assert_eq!(
            fd, -1,
            "default: the plugin cannot say (wake it by timeout)"
        );
        answer(Wakeup::Fd(5));
        assert_eq!(arm::<Waker>(&mut ctx, &mut fd), 0);
        assert_eq!(fd, 5);
        answer(Wakeup::Fd(-3));
        assert_eq!(
            arm::<Waker>(&mut ctx, &mut fd),
            DocaError::NOT_SUPPORTED.code()
        );
        answer(Wakeup::Busy);
        assert_eq!(arm::<Waker>(&mut ctx, &mut fd), DocaError::AGAIN.code());
        answer(Wakeup::CommandsOnly);
        assert_eq!(arm::<Waker>(&mut ctx, &mut fd), 0);
        assert_eq!(fd, -1, "nothing to wait for");
        // A reply not yet collected by progress: the worker must not sleep.
        let mut cmds = list();
        abi::add_tail(&mut *cmds, cmd_desc(1, &[0]));
        assert_eq!((iface.worker_cmd.unwrap())(&mut ctx, &mut *cmds).0, 0);
        assert_eq!(arm::<Waker>(&mut ctx, &mut fd), DocaError::AGAIN.code());
        let mut notifs = list();
        assert_eq!((iface.progress.unwrap())(&mut ctx, &mut *notifs).0, 0);
        libc::free(abi::pop_head(&mut *notifs) as *mut c_void);
        assert_eq!(arm::<Waker>(&mut ctx, &mut fd), 0);
        (iface.close.unwrap())(&mut ctx);
    }
}
