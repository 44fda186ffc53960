//! Every UCX call of the soft NIC (with `ucp_am.rs`, the only files that touch
//! `ucx_sys::sys`).
//!
//! * One UCP context per process ([`context`]), shared by every NIC instance and by the
//!   memory registry: memory is mapped once and its packed remote key serves every worker.
//!   Features: RMA, active messages, wake-up (atomics run in the target's proxy, see
//!   `sq/issue.rs`); workers share it from
//!   several threads (`mt_workers_shared`). UCX picks the transports (`UCX_TLS` as usual);
//!   peer failure is found by keepalive within `UCX_KEEPALIVE_INTERVAL`, which the NIC sets
//!   to 1 s unless the environment sets it.
//! * One [`Worker`] per NIC instance, created and used only on its proxy thread
//!   (`UCS_THREAD_MODE_SINGLE`).
//! * Completions never call back into the engine: the request callbacks (which UCX runs
//!   inside `ucp_worker_progress` on the proxy thread) append `(token, status)` to a
//!   thread-local list that the engine drains after each progress call ([`take_done`]).
//!   Endpoint errors and connection requests land in thread-local lists the same way.

use crate::error::{DocaError, DocaResult};
use std::cell::RefCell;
use std::ffi::c_void;
use std::net::SocketAddrV4;
use ucx_sys::result::ptr_is_err;
use ucx_sys::sys;

/// A raw UCX status (`ucs_status_t`, 0 = OK, negative = error).
pub(crate) type Status = sys::ucs_status_t;

/// `UCS_OK`.
pub(crate) const OK: Status = sys::ucs_status_t_UCS_OK;

/// Human-readable UCX status.
pub(crate) fn status_str(s: Status) -> String {
    ucx_sys::Status(s).description().to_owned()
}

/// The status inside an error pointer (`UCS_PTR_STATUS`).
fn ptr_status(p: *mut c_void) -> Status {
    p as isize as Status
}

/// A connection request of our listener (accepted with [`Worker::accept`]).
pub(crate) type ConnRequest = sys::ucp_conn_request_h;

/// What a failed UCX operation means for its completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The request itself was unusable here (bad parameter, unsupported memory).
    Local,
    /// The remote address was refused.
    RemoteAccess,
    /// The transport failed (peer gone, connection reset, cancelled by a close).
    Transport,
}

/// Classifies a failed status.
pub(crate) fn failure_of(s: Status) -> Failure {
    match s {
        sys::ucs_status_t_UCS_ERR_INVALID_PARAM | sys::ucs_status_t_UCS_ERR_UNSUPPORTED => {
            Failure::Local
        }
        sys::ucs_status_t_UCS_ERR_INVALID_ADDR => Failure::RemoteAccess,
        _ => Failure::Transport,
    }
}

/// How a non-blocking operation started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Issue {
    /// Finished already (the callback will not run).
    Done,
    /// Running; the token comes back through [`take_done`].
    Pending,
    /// Failed at once.
    Failed(Status),
}

fn issue_of(p: sys::ucs_status_ptr_t) -> Issue {
    if p.is_null() {
        Issue::Done
    } else if ptr_is_err(p) {
        Issue::Failed(ptr_status(p))
    } else {
        Issue::Pending
    }
}

/// What the network told the proxy thread, collected by the UCX callbacks.
pub(crate) enum NetEvent {
    /// A peer connected to the listener.
    ConnRequest(ConnRequest),
    /// An endpoint failed; the value is the token given at its creation.
    EpFailed(u64, Status),
}

thread_local! {
    // (token, status) of finished requests; appended by `on_request_done`.
    static DONE: RefCell<Vec<(u64, Status)>> = RefCell::new(Vec::with_capacity(1024));
    static EVENTS: RefCell<Vec<NetEvent>> = const { RefCell::new(Vec::new()) };
}

/// Moves the finished requests of this thread into `out` (kept allocated by the caller).
pub(crate) fn take_done(out: &mut Vec<(u64, Status)>) {
    DONE.with(|d| {
        let mut d = d.borrow_mut();
        out.append(&mut d);
    });
}

/// Moves this thread's network events into `out`.
pub(crate) fn take_events(out: &mut Vec<NetEvent>) {
    EVENTS.with(|e| out.append(&mut e.borrow_mut()));
}

unsafe extern "C" fn on_request_done(req: *mut c_void, status: Status, user_data: *mut c_void) {
    DONE.with(|d| d.borrow_mut().push((user_data as u64, status)));
    // SAFETY: UCX hands us a live request it created for an operation we started with a
    // callback; it is freed once, here.
    unsafe { sys::ucp_request_free(req) };
}

unsafe extern "C" fn on_am_data_done(
    req: *mut c_void,
    status: Status,
    _length: usize,
    user_data: *mut c_void,
) {
    DONE.with(|d| d.borrow_mut().push((user_data as u64, status)));
    // SAFETY: as in on_request_done.
    unsafe { sys::ucp_request_free(req) };
}

unsafe extern "C" fn on_conn_request(req: sys::ucp_conn_request_h, _arg: *mut c_void) {
    EVENTS.with(|e| e.borrow_mut().push(NetEvent::ConnRequest(req)));
}

unsafe extern "C" fn on_ep_error(arg: *mut c_void, _ep: sys::ucp_ep_h, status: Status) {
    EVENTS.with(|e| e.borrow_mut().push(NetEvent::EpFailed(arg as u64, status)));
}

/// Request parameters with the completion callback and `token` as user data.
fn send_param(token: u64) -> sys::ucp_request_param_t {
    let mut p = sys::ucp_request_param_t {
        op_attr_mask: sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_CALLBACK
            | sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_USER_DATA,
        user_data: token as *mut c_void,
        ..Default::default()
    };
    p.cb.send = Some(on_request_done);
    p
}

/// Adds the local memory handle of a registered buffer (UCX then knows its memory type
/// and needs no registration of its own).
fn with_memh(
    mut p: sys::ucp_request_param_t,
    memh: Option<&MemHandle>,
) -> sys::ucp_request_param_t {
    if let Some(m) = memh {
        p.op_attr_mask |= sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_MEMH;
        p.memh = m.h;
    }
    p
}

/// The process-wide UCP context.
pub(crate) struct Context {
    h: sys::ucp_context_h,
}

// SAFETY: created with mt_workers_shared = 1; context-level calls (mem_map, rkey_pack,
// worker_create) are thread-safe in that mode. It lives for the whole process.
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

static CONTEXT: once_cell::sync::Lazy<Result<Context, DocaError>> =
    once_cell::sync::Lazy::new(Context::create);

/// The process-wide UCP context of the soft NIC, created on first use.
pub(crate) fn context() -> DocaResult<&'static Context> {
    CONTEXT.as_ref().map_err(|e| *e)
}

impl Context {
    fn create() -> DocaResult<Context> {
        let mut config: *mut sys::ucp_config_t = std::ptr::null_mut();
        // SAFETY: out pointer is valid; null prefix/file read the environment.
        let s = unsafe { sys::ucp_config_read(std::ptr::null(), std::ptr::null(), &mut config) };
        if s != OK {
            sdk_err!("nic", "ucp_config_read: {}", status_str(s));
            return Err(DocaError::DRIVER);
        }
        // SAFETY: config is live; strings are NUL-terminated literals.
        unsafe { sys::ucp_config_modify(config, c"WARN_UNUSED_ENV_VARS".as_ptr(), c"n".as_ptr()) };
        if std::env::var_os("UCX_KEEPALIVE_INTERVAL").is_none() {
            // Peer loss over transports without a connection (shared memory) is found by
            // keepalive; the default (20 s) is too slow for error completions.
            // SAFETY: as above.
            unsafe {
                sys::ucp_config_modify(config, c"KEEPALIVE_INTERVAL".as_ptr(), c"1s".as_ptr())
            };
        }
        let params = sys::ucp_params_t {
            field_mask: (sys::ucp_params_field_UCP_PARAM_FIELD_FEATURES
                | sys::ucp_params_field_UCP_PARAM_FIELD_MT_WORKERS_SHARED
                | sys::ucp_params_field_UCP_PARAM_FIELD_NAME) as u64,
            features: (sys::ucp_feature_UCP_FEATURE_RMA
                | sys::ucp_feature_UCP_FEATURE_AM
                | sys::ucp_feature_UCP_FEATURE_WAKEUP) as u64,
            mt_workers_shared: 1,
            name: c"doca-soft-nic".as_ptr(),
            ..Default::default()
        };
        let mut h: sys::ucp_context_h = std::ptr::null_mut();
        // SAFETY: params and config are valid for the call; h is an out pointer.
        let s = unsafe {
            sys::ucp_init_version(
                sys::UCP_API_MAJOR,
                sys::UCP_API_MINOR,
                &params,
                config,
                &mut h,
            )
        };
        // SAFETY: config came from ucp_config_read and is released once.
        unsafe { sys::ucp_config_release(config) };
        if s != OK {
            sdk_err!("nic", "ucp_init: {}", status_str(s));
            return Err(DocaError::DRIVER);
        }
        Ok(Context { h })
    }

    /// Registers `[addr, addr + len)` (host memory, or CUDA device memory when `cuda`)
    /// and packs its remote key.
    pub(crate) fn mem_map(
        &self,
        addr: u64,
        len: u64,
        cuda: bool,
    ) -> DocaResult<(MemHandle, Vec<u8>)> {
        let mut params = sys::ucp_mem_map_params_t {
            field_mask: (sys::ucp_mem_map_params_field_UCP_MEM_MAP_PARAM_FIELD_ADDRESS
                | sys::ucp_mem_map_params_field_UCP_MEM_MAP_PARAM_FIELD_LENGTH)
                as u64,
            address: addr as *mut c_void,
            length: len as usize,
            ..Default::default()
        };
        if cuda {
            params.field_mask |=
                sys::ucp_mem_map_params_field_UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE as u64;
            params.memory_type = sys::ucs_memory_type_UCS_MEMORY_TYPE_CUDA;
        }
        let mut memh: sys::ucp_mem_h = std::ptr::null_mut();
        // SAFETY: the context is live; params describe memory the caller vouches for.
        let s = unsafe { sys::ucp_mem_map(self.h, &params, &mut memh) };
        if s != OK {
            sdk_err!(
                "nic",
                "ucp_mem_map of {len} bytes at {addr:#x}: {}",
                status_str(s)
            );
            return Err(if cuda {
                DocaError::NOT_SUPPORTED
            } else {
                DocaError::DRIVER
            });
        }
        let handle = MemHandle { h: memh };
        let mut buf: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: memh is live; out pointers are valid.
        let s = unsafe { sys::ucp_rkey_pack(self.h, memh, &mut buf, &mut size) };
        if s != OK {
            sdk_err!("nic", "ucp_rkey_pack: {}", status_str(s));
            return Err(DocaError::DRIVER);
        }
        // SAFETY: UCX returned `size` readable bytes at `buf`.
        let packed = unsafe { std::slice::from_raw_parts(buf as *const u8, size) }.to_vec();
        // SAFETY: buf came from ucp_rkey_pack and is released once.
        unsafe { sys::ucp_rkey_buffer_release(buf) };
        Ok((handle, packed))
    }
}

/// A registered memory range (`ucp_mem_h`); unmapped on drop.
pub struct MemHandle {
    h: sys::ucp_mem_h,
}

// SAFETY: a memory handle of the shared context may be used and unmapped from any thread.
unsafe impl Send for MemHandle {}
// SAFETY: as above; UCX only reads it when it is passed to an operation.
unsafe impl Sync for MemHandle {}

impl Drop for MemHandle {
    fn drop(&mut self) {
        if let Ok(c) = context() {
            // SAFETY: the handle came from ucp_mem_map on this context; unmapped once.
            unsafe { sys::ucp_mem_unmap(c.h, self.h) };
        }
    }
}

/// A remote key unpacked on an endpoint; destroyed on drop (before its endpoint closes).
pub(crate) struct RemoteKey {
    h: sys::ucp_rkey_h,
}

impl Drop for RemoteKey {
    fn drop(&mut self) {
        // SAFETY: the key came from ucp_ep_rkey_unpack and is destroyed once.
        unsafe { sys::ucp_rkey_destroy(self.h) };
    }
}

/// An endpoint. Closed explicitly with [`Worker::close_ep`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Ep {
    h: sys::ucp_ep_h,
}

impl Ep {
    /// Unpacks a peer's packed remote key for use on this endpoint.
    pub(crate) fn unpack_rkey(&self, packed: &[u8]) -> Option<RemoteKey> {
        if packed.is_empty() {
            return None;
        }
        let mut h: sys::ucp_rkey_h = std::ptr::null_mut();
        // SAFETY: the endpoint is live; the buffer is readable for the call.
        let s =
            unsafe { sys::ucp_ep_rkey_unpack(self.h, packed.as_ptr() as *const c_void, &mut h) };
        if s != OK {
            sdk_warn!("nic", "ucp_ep_rkey_unpack: {}", status_str(s));
            return None;
        }
        Some(RemoteKey { h })
    }

    /// `ucp_put_nbx` of `len` bytes from local `src` to remote `raddr`.
    ///
    /// # Safety
    /// `src..src+len` stays readable until the operation completes; `memh` (if any)
    /// covers it.
    pub(crate) unsafe fn put(
        &self,
        src: *const u8,
        len: usize,
        raddr: u64,
        rkey: &RemoteKey,
        memh: Option<&MemHandle>,
        token: u64,
    ) -> Issue {
        let p = with_memh(send_param(token), memh);
        // SAFETY: the caller keeps the buffer valid until completion; ep and rkey are live.
        issue_of(unsafe { sys::ucp_put_nbx(self.h, src as *const c_void, len, raddr, rkey.h, &p) })
    }

    /// `ucp_get_nbx` of `len` bytes from remote `raddr` into local `dst`.
    ///
    /// # Safety
    /// `dst..dst+len` stays writable until the operation completes.
    pub(crate) unsafe fn get(
        &self,
        dst: *mut u8,
        len: usize,
        raddr: u64,
        rkey: &RemoteKey,
        memh: Option<&MemHandle>,
        token: u64,
    ) -> Issue {
        let p = with_memh(send_param(token), memh);
        // SAFETY: the caller keeps the buffer valid until completion.
        issue_of(unsafe { sys::ucp_get_nbx(self.h, dst as *mut c_void, len, raddr, rkey.h, &p) })
    }

    /// `ucp_ep_flush_nbx`: completes once every operation issued before on this endpoint is
    /// complete at the target.
    pub(crate) fn flush(&self, token: u64) -> Issue {
        let p = send_param(token);
        // SAFETY: the endpoint is live.
        issue_of(unsafe { sys::ucp_ep_flush_nbx(self.h, &p) })
    }

    /// The raw handle (for the active-message layer).
    pub(super) fn raw(&self) -> sys::ucp_ep_h {
        self.h
    }
}

/// A listener; destroyed on drop.
pub(crate) struct Listener {
    h: sys::ucp_listener_h,
}

impl Drop for Listener {
    fn drop(&mut self) {
        // SAFETY: created by ucp_listener_create, destroyed once, before its worker.
        unsafe { sys::ucp_listener_destroy(self.h) };
    }
}

/// A UCP worker of one NIC instance (proxy thread only).
pub(crate) struct Worker {
    pub(super) h: sys::ucp_worker_h,
    efd: i32,
}

impl Worker {
    /// A worker on the process context (single-threaded: the proxy thread owns it).
    pub(crate) fn new() -> DocaResult<Worker> {
        let ctx = context()?;
        let params = sys::ucp_worker_params_t {
            field_mask: sys::ucp_worker_params_field_UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64,
            thread_mode: sys::ucs_thread_mode_t_UCS_THREAD_MODE_SINGLE,
            ..Default::default()
        };
        let mut h: sys::ucp_worker_h = std::ptr::null_mut();
        // SAFETY: the context is live; h is an out pointer.
        let s = unsafe { sys::ucp_worker_create(ctx.h, &params, &mut h) };
        if s != OK {
            sdk_err!("nic", "ucp_worker_create: {}", status_str(s));
            return Err(DocaError::DRIVER);
        }
        let mut efd = -1;
        // SAFETY: the worker is live (WAKEUP requested); efd is an out pointer.
        if unsafe { sys::ucp_worker_get_efd(h, &mut efd) } != OK {
            efd = -1;
        }
        Ok(Worker { h, efd })
    }

    /// One `ucp_worker_progress`; returns whether it did anything.
    pub(crate) fn progress(&self) -> bool {
        // SAFETY: the worker is live and used from its own thread only.
        unsafe { sys::ucp_worker_progress(self.h) != 0 }
    }

    /// The worker's event descriptor, if it has one.
    pub(crate) fn event_fd(&self) -> Option<i32> {
        (self.efd >= 0).then_some(self.efd)
    }

    /// Arms the event descriptor before a sleep; `false` when events are pending.
    pub(crate) fn arm(&self) -> bool {
        // SAFETY: the worker is live.
        unsafe { sys::ucp_worker_arm(self.h) == OK }
    }

    /// The worker's address (what peers create endpoints from).
    pub(crate) fn address(&self) -> DocaResult<Vec<u8>> {
        let mut a: *mut sys::ucp_address_t = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: the worker is live; out pointers are valid.
        let s = unsafe { sys::ucp_worker_get_address(self.h, &mut a, &mut len) };
        if s != OK {
            sdk_err!("nic", "ucp_worker_get_address: {}", status_str(s));
            return Err(DocaError::DRIVER);
        }
        // SAFETY: UCX returned `len` readable bytes at `a`.
        let v = unsafe { std::slice::from_raw_parts(a as *const u8, len) }.to_vec();
        // SAFETY: released once, with the worker that gave it.
        unsafe { sys::ucp_worker_release_address(self.h, a) };
        Ok(v)
    }

    /// `ucp_worker_fence`: operations issued after complete at their targets after those
    /// issued before.
    pub(crate) fn fence(&self) {
        // SAFETY: the worker is live.
        let s = unsafe { sys::ucp_worker_fence(self.h) };
        if s != OK {
            sdk_warn!("nic", "ucp_worker_fence: {}", status_str(s));
        }
    }

    /// Listens on `addr` (port 0: any); connection requests arrive as
    /// [`NetEvent::ConnRequest`]. Returns the bound port.
    pub(crate) fn listen(&self, addr: SocketAddrV4) -> DocaResult<(Listener, u16)> {
        let sa = sockaddr_of(addr);
        let params = sys::ucp_listener_params_t {
            field_mask: (sys::ucp_listener_params_field_UCP_LISTENER_PARAM_FIELD_SOCK_ADDR
                | sys::ucp_listener_params_field_UCP_LISTENER_PARAM_FIELD_CONN_HANDLER)
                as u64,
            sockaddr: sys::ucs_sock_addr_t {
                addr: &sa as *const libc::sockaddr_in as *const sys::sockaddr,
                addrlen: std::mem::size_of::<libc::sockaddr_in>() as u32,
            },
            conn_handler: sys::ucp_listener_conn_handler_t {
                cb: Some(on_conn_request),
                arg: std::ptr::null_mut(),
            },
            ..Default::default()
        };
        let mut l: sys::ucp_listener_h = std::ptr::null_mut();
        // SAFETY: the worker is live; params point to data valid for the call.
        let s = unsafe { sys::ucp_listener_create(self.h, &params, &mut l) };
        if s != OK {
            sdk_err!("nic", "listen on {addr}: {}", status_str(s));
            return Err(DocaError::IO_FAILED);
        }
        let listener = Listener { h: l };
        let mut attr = sys::ucp_listener_attr_t {
            field_mask: sys::ucp_listener_attr_field_UCP_LISTENER_ATTR_FIELD_SOCKADDR as u64,
            ..Default::default()
        };
        // SAFETY: the listener is live; attr is writable.
        let s = unsafe { sys::ucp_listener_query(l, &mut attr) };
        if s != OK {
            sdk_err!("nic", "ucp_listener_query: {}", status_str(s));
            return Err(DocaError::DRIVER);
        }
        // SAFETY: the listener is IPv4, so the storage holds a sockaddr_in.
        let sin = unsafe { &*(&attr.sockaddr as *const _ as *const libc::sockaddr_in) };
        Ok((listener, u16::from_be(sin.sin_port)))
    }

    fn create_ep(&self, mut params: sys::ucp_ep_params_t, token: u64) -> DocaResult<Ep> {
        params.field_mask |= (sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLER
            | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE)
            as u64;
        params.err_mode = sys::ucp_err_handling_mode_t_UCP_ERR_HANDLING_MODE_PEER;
        params.err_handler = sys::ucp_err_handler_t {
            cb: Some(on_ep_error),
            arg: token as *mut c_void,
        };
        let mut ep: sys::ucp_ep_h = std::ptr::null_mut();
        // SAFETY: the worker is live; params are valid for the call.
        let s = unsafe { sys::ucp_ep_create(self.h, &params, &mut ep) };
        if s != OK {
            sdk_warn!("nic", "ucp_ep_create: {}", status_str(s));
            return Err(DocaError::CONNECTION_ABORTED);
        }
        Ok(Ep { h: ep })
    }

    /// An endpoint to a peer's listener (client side of the handshake).
    pub(crate) fn connect(&self, addr: SocketAddrV4, token: u64) -> DocaResult<Ep> {
        let sa = sockaddr_of(addr);
        let params = sys::ucp_ep_params_t {
            field_mask: (sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_FLAGS
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_SOCK_ADDR)
                as u64,
            flags: sys::ucp_ep_params_flags_field_UCP_EP_PARAMS_FLAGS_CLIENT_SERVER,
            sockaddr: sys::ucs_sock_addr_t {
                addr: &sa as *const libc::sockaddr_in as *const sys::sockaddr,
                addrlen: std::mem::size_of::<libc::sockaddr_in>() as u32,
            },
            ..Default::default()
        };
        self.create_ep(params, token)
    }

    /// An endpoint accepting a connection request of our listener.
    pub(crate) fn accept(&self, req: ConnRequest, token: u64) -> DocaResult<Ep> {
        let params = sys::ucp_ep_params_t {
            field_mask: sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_CONN_REQUEST as u64,
            conn_request: req,
            ..Default::default()
        };
        self.create_ep(params, token)
    }

    /// An endpoint to a peer worker from its full address (lets UCX use every transport
    /// the two workers share: shared memory, CUDA IPC, RDMA).
    pub(crate) fn connect_address(&self, address: &[u8], token: u64) -> DocaResult<Ep> {
        let params = sys::ucp_ep_params_t {
            field_mask: sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_REMOTE_ADDRESS as u64,
            address: address.as_ptr() as *const sys::ucp_address_t,
            ..Default::default()
        };
        self.create_ep(params, token)
    }

    /// Starts closing an endpoint (force: outstanding operations are cancelled with an
    /// error). Returns the close request to wait for, if any.
    pub(crate) fn close_ep(&self, ep: Ep, force: bool) -> Option<CloseReq> {
        let param = sys::ucp_request_param_t {
            op_attr_mask: sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_FLAGS,
            flags: if force {
                sys::ucp_ep_close_flags_t_UCP_EP_CLOSE_FLAG_FORCE
            } else {
                0
            },
            ..Default::default()
        };
        // SAFETY: the endpoint is live and not used after this call.
        let r = unsafe { sys::ucp_ep_close_nbx(ep.h, &param) };
        (!r.is_null() && !ptr_is_err(r)).then_some(CloseReq(r))
    }

    /// Whether a close request finished (then it is released).
    pub(crate) fn close_done(&self, r: &CloseReq) -> bool {
        // SAFETY: r is a live request from ucp_ep_close_nbx.
        let s = unsafe { sys::ucp_request_check_status(r.0) };
        if s == sys::ucs_status_t_UCS_INPROGRESS {
            return false;
        }
        // SAFETY: finished; released once (the caller drops its CloseReq after this).
        unsafe { sys::ucp_request_free(r.0) };
        true
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // SAFETY: the worker is live; its endpoints and listener are gone.
        unsafe { sys::ucp_worker_destroy(self.h) };
    }
}

/// A pending endpoint close.
pub(crate) struct CloseReq(*mut c_void);

/// The completion callback of `ucp_am_recv_data_nbx`, with `token` as user data.
pub(super) fn am_data_param(token: u64, memh: Option<&MemHandle>) -> sys::ucp_request_param_t {
    let mut p = sys::ucp_request_param_t {
        op_attr_mask: sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_CALLBACK
            | sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_USER_DATA,
        user_data: token as *mut c_void,
        ..Default::default()
    };
    p.cb.recv_am = Some(on_am_data_done);
    with_memh(p, memh)
}

/// Request parameters with the send callback and `token` (for the active-message layer).
pub(super) fn am_send_param(token: u64, memh: Option<&MemHandle>) -> sys::ucp_request_param_t {
    with_memh(send_param(token), memh)
}

/// Converts a started operation into an [`Issue`] (for the active-message layer).
pub(super) fn issue(p: sys::ucs_status_ptr_t) -> Issue {
    issue_of(p)
}

fn sockaddr_of(addr: SocketAddrV4) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data; all-zero is a valid value.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sa.sin_family = libc::AF_INET as libc::sa_family_t;
    sa.sin_port = addr.port().to_be();
    sa.sin_addr.s_addr = u32::from(*addr.ip()).to_be();
    sa
}
