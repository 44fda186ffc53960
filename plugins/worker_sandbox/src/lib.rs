//! `worker_sandbox`: the UROM sandbox sample plugin, written with the doca-urom SDK.
//!
//! Each worker opens its own UCP context and worker (TCP and shared memory unless `UCX_TLS`
//! is set; tag
//! matching) and reports the UCP worker address as the plugin address, so domain members
//! reach each other: endpoints are created lazily from the domain address lookup of
//! `dest`. TAG_SEND / TAG_RECV with inline data (memh_id 0) are served; operations on host
//! memory (memh_id != 0) and MEM_MAP need exported-memory hardware and are answered with
//! NOT_SUPPORTED. Commands are validated as in the sample (`len == sizeof(cmd) + inline`).
//!
//! The UCP worker is created with the WAKEUP feature and its event descriptor is handed to
//! the worker runtime through the SDK's wake-up extension ([`UromPlugin::arm_wakeup`]), so a
//! message from another domain member wakes a sleeping worker at once.
//!
//! ## Two sides, one crate
//!
//! The crate is a `cdylib` (the plugin the UROM daemon loads from `UROM_PLUGIN_PATH`) and an
//! `rlib` whose [`host`] module is the host side: the command and notification layouts and
//! [`host::Sandbox`], which sends commands to a worker running this plugin. Host programs
//! (the `urom_ping_pong` example) depend on this crate for it:
//!
//! ```no_run
//! use doca_urom::{Device, Service, Worker};
//! use worker_sandbox::host::Sandbox;
//!
//! # fn main() -> Result<(), doca_urom::Error> {
//! let service = Service::builder(&Device::open("mlx5_0")?).start()?;
//! let sandbox = Sandbox::find(&service)?;
//! let worker = Worker::builder(&service).plugins(sandbox.plugin.id).start()?;
//! // Worker 0 of a domain: send 5 bytes tagged 7 to member 1.
//! let sent = sandbox.tag_send(&worker, 1, 1, b"hello", 7)?;
//! assert_eq!(sent.ucs_status, 0);
//! # Ok(()) }
//! ```
//!
//! The host side builds with either backend (`soft` or `sdk`, as `doca-urom`).

pub mod host;

use doca_urom::sdk::{Command, PluginContext, Reply, UromPlugin, Wakeup};
use doca_urom::DocaError;
use host::{CMD_SIZE, NOTIFY_SIZE, TAG_RECV, TAG_SEND};
use std::collections::HashMap;
use std::ffi::c_void;
use ucx_sys::result::ptr_is_err;
use ucx_sys::sys;

fn get(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn ptr_status(p: *mut c_void) -> i32 {
    p as isize as i32
}

struct PendingSend {
    req: *mut c_void,
    _data: Vec<u8>,
    reply: Reply,
    context: u64,
}

struct PendingRecv {
    req: *mut c_void,
    buf: Vec<u8>,
    reply: Reply,
    context: u64,
}

/// Plugin state: a UCP context and worker of its own.
pub struct Sandbox {
    context: sys::ucp_context_h,
    worker: sys::ucp_worker_h,
    addr: Vec<u8>,
    // UCP event descriptor (-1 if UCX offers none).
    efd: i32,
    eps: HashMap<u64, sys::ucp_ep_h>,
    sends: Vec<PendingSend>,
    recvs: Vec<PendingRecv>,
}

// SAFETY: the worker runtime calls a plugin from one thread at a time; the UCP worker is
// SINGLE-threaded and only touched through `&mut self`.
unsafe impl Send for Sandbox {}

fn notif_send(context: u64, status: i32) -> Vec<u8> {
    let mut n = vec![0u8; NOTIFY_SIZE];
    n[..8].copy_from_slice(&TAG_SEND.to_le_bytes());
    n[8..16].copy_from_slice(&context.to_le_bytes());
    n[16..20].copy_from_slice(&status.to_le_bytes());
    n
}

fn notif_recv(context: u64, data: &[u8], sender_tag: u64, status: i32) -> Vec<u8> {
    let mut n = vec![0u8; NOTIFY_SIZE];
    n[..8].copy_from_slice(&TAG_RECV.to_le_bytes());
    n[8..16].copy_from_slice(&context.to_le_bytes());
    // Non-null buffer: the data follows inline (the host rewrites the pointer).
    n[16..24].copy_from_slice(&u64::from(!data.is_empty()).to_le_bytes());
    n[24..32].copy_from_slice(&(data.len() as u64).to_le_bytes());
    n[32..40].copy_from_slice(&sender_tag.to_le_bytes());
    n[40..44].copy_from_slice(&status.to_le_bytes());
    n.extend_from_slice(data);
    n
}

impl Sandbox {
    fn ep(&mut self, ctx: &PluginContext, dest: u64) -> Result<sys::ucp_ep_h, DocaError> {
        if let Some(e) = self.eps.get(&dest) {
            return Ok(*e);
        }
        let addr = ctx.domain_addr(dest)?;
        let params = sys::ucp_ep_params_t {
            field_mask: sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_REMOTE_ADDRESS as u64,
            address: addr as *const sys::ucp_address_t,
            ..Default::default()
        };
        let mut ep: sys::ucp_ep_h = std::ptr::null_mut();
        // SAFETY: worker is live; addr is a UCP worker address from the domain.
        let s = unsafe { sys::ucp_ep_create(self.worker, &params, &mut ep) };
        if s != sys::ucs_status_t_UCS_OK {
            return Err(DocaError::CONNECTION_RESET);
        }
        self.eps.insert(dest, ep);
        Ok(ep)
    }

    fn send(
        &mut self,
        ctx: &PluginContext,
        cmd: &Command<'_>,
        out: &mut Vec<Reply>,
    ) -> Result<(), DocaError> {
        let p = cmd.payload;
        let (context, dest, count, tag, memh_id) = (
            get(p, 8),
            get(p, 16),
            get(p, 32) as usize,
            get(p, 40),
            get(p, 48),
        );
        if memh_id != 0 {
            return Err(DocaError::NOT_SUPPORTED);
        }
        if p.len() != CMD_SIZE + count {
            return Err(DocaError::INVALID_VALUE);
        }
        let data = p[CMD_SIZE..].to_vec();
        let ep = self.ep(ctx, dest)?;
        let param = sys::ucp_request_param_t::default();
        // SAFETY: ep is live; data stays alive in the pending entry until completion.
        let r = unsafe {
            sys::ucp_tag_send_nbx(ep, data.as_ptr() as *const c_void, data.len(), tag, &param)
        };
        if r.is_null() {
            out.push(cmd.reply(Ok(()), notif_send(context, 0)));
        } else if ptr_is_err(r) {
            out.push(cmd.reply(Ok(()), notif_send(context, ptr_status(r))));
        } else {
            self.sends.push(PendingSend {
                req: r,
                _data: data,
                reply: cmd.reply(Ok(()), Vec::new()),
                context,
            });
        }
        Ok(())
    }

    fn recv(&mut self, cmd: &Command<'_>, out: &mut Vec<Reply>) -> Result<(), DocaError> {
        let p = cmd.payload;
        let (context, count, tag, mask, memh_id) = (
            get(p, 8),
            get(p, 24) as usize,
            get(p, 32),
            get(p, 40),
            get(p, 48),
        );
        if memh_id != 0 {
            return Err(DocaError::NOT_SUPPORTED);
        }
        if p.len() != CMD_SIZE || count > (1 << 20) {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut buf = vec![0u8; count];
        // Always get a request back: without this flag a message already in the unexpected
        // queue completes the receive immediately and UCX returns NULL (no request to test).
        let param = sys::ucp_request_param_t {
            op_attr_mask: sys::ucp_op_attr_t_UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
            ..Default::default()
        };
        // SAFETY: worker is live; buf stays alive in the pending entry until completion.
        let r = unsafe {
            sys::ucp_tag_recv_nbx(
                self.worker,
                buf.as_mut_ptr() as *mut c_void,
                count,
                tag,
                mask,
                &param,
            )
        };
        if ptr_is_err(r) {
            out.push(cmd.reply(Ok(()), notif_recv(context, &[], 0, ptr_status(r))));
        } else if r.is_null() {
            // Not expected with NO_IMM_CMPL; never keep a NULL request to test later.
            return Err(DocaError::UNEXPECTED);
        } else {
            self.recvs.push(PendingRecv {
                req: r,
                buf,
                reply: cmd.reply(Ok(()), Vec::new()),
                context,
            });
        }
        Ok(())
    }
}

impl UromPlugin for Sandbox {
    fn open(_ctx: &PluginContext) -> Result<Self, DocaError> {
        let mut config: *mut sys::ucp_config_t = std::ptr::null_mut();
        // SAFETY: out pointer; null prefix/file read the environment.
        if unsafe { sys::ucp_config_read(std::ptr::null(), std::ptr::null(), &mut config) }
            != sys::ucs_status_t_UCS_OK
        {
            return Err(DocaError::INITIALIZATION);
        }
        // SAFETY: live config; NUL-terminated literals.
        unsafe {
            sys::ucp_config_modify(config, c"WARN_UNUSED_ENV_VARS".as_ptr(), c"n".as_ptr());
            if std::env::var_os("UCX_TLS").is_none() {
                sys::ucp_config_modify(config, c"TLS".as_ptr(), c"tcp,sm".as_ptr());
            }
        }
        let params = sys::ucp_params_t {
            field_mask: sys::ucp_params_field_UCP_PARAM_FIELD_FEATURES as u64,
            features: (sys::ucp_feature_UCP_FEATURE_TAG | sys::ucp_feature_UCP_FEATURE_WAKEUP)
                as u64,
            ..Default::default()
        };
        let mut context: sys::ucp_context_h = std::ptr::null_mut();
        // SAFETY: valid params/config; out pointer.
        let s = unsafe {
            sys::ucp_init_version(
                sys::UCP_API_MAJOR,
                sys::UCP_API_MINOR,
                &params,
                config,
                &mut context,
            )
        };
        // SAFETY: config not used after.
        unsafe { sys::ucp_config_release(config) };
        if s != sys::ucs_status_t_UCS_OK {
            return Err(DocaError::INITIALIZATION);
        }
        let wparams = sys::ucp_worker_params_t {
            field_mask: sys::ucp_worker_params_field_UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64,
            thread_mode: sys::ucs_thread_mode_t_UCS_THREAD_MODE_SINGLE,
            ..Default::default()
        };
        let mut worker: sys::ucp_worker_h = std::ptr::null_mut();
        // SAFETY: live context; out pointer.
        if unsafe { sys::ucp_worker_create(context, &wparams, &mut worker) }
            != sys::ucs_status_t_UCS_OK
        {
            // SAFETY: live context.
            unsafe { sys::ucp_cleanup(context) };
            return Err(DocaError::INITIALIZATION);
        }
        let mut a: *mut sys::ucp_address_t = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live worker; out pointers.
        let addr = unsafe {
            if sys::ucp_worker_get_address(worker, &mut a, &mut len) != sys::ucs_status_t_UCS_OK {
                sys::ucp_worker_destroy(worker);
                sys::ucp_cleanup(context);
                return Err(DocaError::INITIALIZATION);
            }
            let v = std::slice::from_raw_parts(a as *const u8, len).to_vec();
            sys::ucp_worker_release_address(worker, a);
            v
        };
        let mut efd = -1;
        // SAFETY: live worker (WAKEUP requested); out pointer.
        if unsafe { sys::ucp_worker_get_efd(worker, &mut efd) } != sys::ucs_status_t_UCS_OK {
            efd = -1;
        }
        Ok(Sandbox {
            context,
            worker,
            addr,
            efd,
            eps: HashMap::new(),
            sends: Vec::new(),
            recvs: Vec::new(),
        })
    }

    fn address(&self) -> Vec<u8> {
        self.addr.clone()
    }

    fn command(&mut self, ctx: &PluginContext, cmd: Command<'_>, out: &mut Vec<Reply>) {
        if cmd.payload.len() < CMD_SIZE {
            out.push(cmd.reply(Err(DocaError::INVALID_VALUE), Vec::new()));
            return;
        }
        let r = match get(cmd.payload, 0) {
            TAG_SEND => self.send(ctx, &cmd, out),
            TAG_RECV => self.recv(&cmd, out),
            _ => Err(DocaError::NOT_SUPPORTED),
        };
        if let Err(e) = r {
            out.push(cmd.reply(Err(e), Vec::new()));
        }
    }

    fn progress(&mut self, _ctx: &PluginContext, out: &mut Vec<Reply>) {
        // SAFETY: live worker.
        while unsafe { sys::ucp_worker_progress(self.worker) } != 0 {}
        self.sends.retain_mut(|s| {
            // SAFETY: live request.
            let st = unsafe { sys::ucp_request_check_status(s.req) };
            if st == sys::ucs_status_t_UCS_INPROGRESS {
                return true;
            }
            // SAFETY: completed request, freed once.
            unsafe { sys::ucp_request_free(s.req) };
            let mut r = s.reply.clone();
            r.body = notif_send(s.context, i32::from(st));
            out.push(r);
            false
        });
        self.recvs.retain_mut(|rv| {
            let mut info = sys::ucp_tag_recv_info_t::default();
            // SAFETY: live receive request; info writable.
            let st = unsafe { sys::ucp_tag_recv_request_test(rv.req, &mut info) };
            if st == sys::ucs_status_t_UCS_INPROGRESS {
                return true;
            }
            // SAFETY: completed request, freed once.
            unsafe { sys::ucp_request_free(rv.req) };
            let n = info.length.min(rv.buf.len());
            let mut r = rv.reply.clone();
            r.body = notif_recv(rv.context, &rv.buf[..n], info.sender_tag, i32::from(st));
            out.push(r);
            false
        });
    }

    fn arm_wakeup(&mut self) -> Wakeup {
        if self.efd < 0 {
            return Wakeup::Unknown;
        }
        // SAFETY: live worker; progress drained it just before (the SDK's contract).
        match unsafe { sys::ucp_worker_arm(self.worker) } {
            sys::ucs_status_t_UCS_OK => Wakeup::Fd(self.efd),
            sys::ucs_status_t_UCS_ERR_BUSY => Wakeup::Busy,
            _ => Wakeup::Unknown,
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // SAFETY: everything below belongs to this plugin's UCP worker and is released once.
        unsafe {
            for s in self.sends.drain(..) {
                sys::ucp_request_cancel(self.worker, s.req);
                sys::ucp_request_free(s.req);
            }
            for r in self.recvs.drain(..) {
                sys::ucp_request_cancel(self.worker, r.req);
                sys::ucp_request_free(r.req);
            }
            let param = sys::ucp_request_param_t {
                op_attr_mask: sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_FLAGS,
                flags: sys::ucp_ep_close_flags_t_UCP_EP_CLOSE_FLAG_FORCE,
                ..Default::default()
            };
            for (_, ep) in self.eps.drain() {
                let r = sys::ucp_ep_close_nbx(ep, &param);
                if !r.is_null() && !ptr_is_err(r) {
                    while sys::ucp_request_check_status(r) == sys::ucs_status_t_UCS_INPROGRESS {
                        sys::ucp_worker_progress(self.worker);
                    }
                    sys::ucp_request_free(r);
                }
            }
            sys::ucp_worker_destroy(self.worker);
            sys::ucp_cleanup(self.context);
        }
    }
}

doca_urom::export_plugin!(Sandbox);
