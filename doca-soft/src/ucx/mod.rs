//! UCX over our own bindgen module (`sys`), and [`Node`]: one UCP context and worker with
//! connections reached through listeners (client/server sockaddr), carrying byte streams.
//!
//! UROM's host library, daemon and workers all talk through `Node`s. A node is not
//! thread-safe on its own; owners keep it behind a mutex (the UCX worker is created
//! SERIALIZED so that handing the node between threads is allowed).
//!
//! Stream semantics: [`Node::poll`] progresses the worker, accepts pending connection
//! requests, and returns received bytes per connection as they arrive; framing belongs to
//! the caller (see `urom::wire`). Sends copy their buffer and keep it until UCX reports
//! completion. A peer that dies (even by SIGKILL) shows up as [`Event::Closed`] through the
//! endpoint error handler (error handling mode PEER).

pub mod sys;

use crate::error::{DocaError, DocaResult};
use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{Arc, Mutex};

/// A connection handle inside one node.
pub type ConnId = u64;

/// Something that happened on a node.
#[derive(Debug)]
pub enum Event {
    /// A peer connected to our listener.
    Accepted(ConnId),
    /// Bytes arrived on a connection (in order; frames may be split or merged).
    Data(ConnId, Vec<u8>),
    /// The connection failed or the peer went away.
    Closed(ConnId),
}

/// [`Event`] without owning the bytes: what [`Node::poll_with`] reports (the data is UCX's
/// receive buffer, valid for the call only, so the steady path copies nothing it need not).
#[derive(Debug)]
pub enum EventRef<'a> {
    /// A peer connected to our listener.
    Accepted(ConnId),
    /// Bytes arrived on a connection.
    Data(ConnId, &'a [u8]),
    /// The connection failed or the peer went away.
    Closed(ConnId),
}

/// Most send buffers a node keeps for reuse (each as large as the largest frame sent).
const SPARE_BUFS: usize = 32;

/// UCS pointer-status helpers (the C macros are not visible to bindgen).
fn ptr_is_err(p: *mut c_void) -> bool {
    (p as usize) >= (sys::ucs_status_t_UCS_ERR_LAST as isize as usize)
}

/// Human-readable UCX status.
pub fn status_str(s: sys::ucs_status_t) -> String {
    // SAFETY: ucs_status_string returns a static NUL-terminated string for any value.
    unsafe { CStr::from_ptr(sys::ucs_status_string(s)) }
        .to_string_lossy()
        .into_owned()
}

/// The UCX version string of the library we run against.
pub fn version() -> String {
    // SAFETY: returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(sys::ucp_get_version_string()) }
        .to_string_lossy()
        .into_owned()
}

#[derive(Default)]
struct Shared {
    conn_requests: Vec<usize>,
    failed: Vec<ConnId>,
}

struct ErrArg {
    shared: Arc<Mutex<Shared>>,
    id: ConnId,
}

struct Conn {
    ep: sys::ucp_ep_h,
    // Keeps the error-handler argument alive as long as the endpoint.
    _err_arg: Box<ErrArg>,
    closed: bool,
}

struct PendingSend {
    req: *mut c_void,
    buf: Vec<u8>,
}

/// One UCP context + worker, an optional listener and its connections.
pub struct Node {
    context: sys::ucp_context_h,
    worker: sys::ucp_worker_h,
    listener: sys::ucp_listener_h,
    shared: Arc<Mutex<Shared>>,
    conns: HashMap<ConnId, Conn>,
    sends: Vec<PendingSend>,
    // Buffers of completed sends, reused by `send_with` (steady sends allocate nothing).
    spare: Vec<Vec<u8>>,
    next_id: ConnId,
    efd: i32,
}

// SAFETY: the UCX worker is created with UCS_THREAD_MODE_SERIALIZED, so it may be used from
// any thread as long as calls do not overlap, which `&mut self` guarantees.
unsafe impl Send for Node {}

fn check(s: sys::ucs_status_t, what: &str) -> DocaResult<()> {
    if s == sys::ucs_status_t_UCS_OK {
        Ok(())
    } else {
        sdk_err!("ucx", "{what}: {}", status_str(s));
        Err(DocaError::DRIVER)
    }
}

fn sockaddr_of(addr: SocketAddrV4) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data; all-zero is a valid value.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sa.sin_family = libc::AF_INET as libc::sa_family_t;
    sa.sin_port = addr.port().to_be();
    sa.sin_addr.s_addr = u32::from(*addr.ip()).to_be();
    sa
}

unsafe extern "C" fn on_conn_request(req: sys::ucp_conn_request_h, arg: *mut c_void) {
    // SAFETY: `arg` is the node's shared state, alive as long as the listener.
    let shared = unsafe { &*(arg as *const Mutex<Shared>) };
    shared
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .conn_requests
        .push(req as usize);
}

unsafe extern "C" fn on_ep_error(arg: *mut c_void, _ep: sys::ucp_ep_h, _status: sys::ucs_status_t) {
    // SAFETY: `arg` is the boxed ErrArg owned by the connection for the endpoint's life.
    let a = unsafe { &*(arg as *const ErrArg) };
    a.shared
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .failed
        .push(a.id);
}

impl Node {
    /// A new node. Unless `UCX_TLS` is set, connections use TCP and shared memory (`tcp,sm`;
    /// connection establishment always goes through the TCP sockaddr CM).
    pub fn new() -> DocaResult<Node> {
        let mut config: *mut sys::ucp_config_t = std::ptr::null_mut();
        // SAFETY: out pointer is valid; null prefix/file mean "from the environment".
        check(
            unsafe { sys::ucp_config_read(std::ptr::null(), std::ptr::null(), &mut config) },
            "ucp_config_read",
        )?;
        // UCX_HOME is ours, not UCX's: keep UCX from warning about it.
        // SAFETY: config is live; strings are NUL-terminated literals.
        unsafe { sys::ucp_config_modify(config, c"WARN_UNUSED_ENV_VARS".as_ptr(), c"n".as_ptr()) };
        if std::env::var_os("UCX_TLS").is_none() {
            // SAFETY: config is live; strings are NUL-terminated literals.
            unsafe { sys::ucp_config_modify(config, c"TLS".as_ptr(), c"tcp,sm".as_ptr()) };
        }
        let params = sys::ucp_params_t {
            field_mask: sys::ucp_params_field_UCP_PARAM_FIELD_FEATURES as u64,
            features: (sys::ucp_feature_UCP_FEATURE_STREAM | sys::ucp_feature_UCP_FEATURE_WAKEUP)
                as u64,
            ..Default::default()
        };
        let mut context: sys::ucp_context_h = std::ptr::null_mut();
        // SAFETY: params and config are valid; context is an out pointer.
        let s = unsafe {
            sys::ucp_init_version(
                sys::UCP_API_MAJOR,
                sys::UCP_API_MINOR,
                &params,
                config,
                &mut context,
            )
        };
        // SAFETY: config came from ucp_config_read and is not used after this.
        unsafe { sys::ucp_config_release(config) };
        check(s, "ucp_init")?;
        let wparams = sys::ucp_worker_params_t {
            field_mask: sys::ucp_worker_params_field_UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64,
            thread_mode: sys::ucs_thread_mode_t_UCS_THREAD_MODE_SERIALIZED,
            ..Default::default()
        };
        let mut worker: sys::ucp_worker_h = std::ptr::null_mut();
        // SAFETY: context is live; worker is an out pointer.
        let s = unsafe { sys::ucp_worker_create(context, &wparams, &mut worker) };
        if let Err(e) = check(s, "ucp_worker_create") {
            // SAFETY: context is live and unused elsewhere.
            unsafe { sys::ucp_cleanup(context) };
            return Err(e);
        }
        let mut efd = -1;
        // SAFETY: worker is live (WAKEUP feature requested); efd is an out pointer.
        if unsafe { sys::ucp_worker_get_efd(worker, &mut efd) } != sys::ucs_status_t_UCS_OK {
            efd = -1;
        }
        Ok(Node {
            context,
            worker,
            listener: std::ptr::null_mut(),
            shared: Arc::new(Mutex::new(Shared::default())),
            conns: HashMap::new(),
            sends: Vec::new(),
            spare: Vec::new(),
            next_id: 1,
            efd,
        })
    }

    /// Listens on `addr` (port 0 picks one); returns the bound port.
    pub fn listen(&mut self, addr: SocketAddrV4) -> DocaResult<u16> {
        if !self.listener.is_null() {
            return Err(DocaError::BAD_STATE);
        }
        let sa = sockaddr_of(addr);
        // The listener callback gets the shared state's address: `self.shared` lives as
        // long as the listener.
        let arg = Arc::as_ptr(&self.shared);
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
                arg: arg as *mut c_void,
            },
            ..Default::default()
        };
        let mut l: sys::ucp_listener_h = std::ptr::null_mut();
        // SAFETY: worker is live; params point to data valid for the call; the callback
        // argument (boxed) is kept in self for the listener's lifetime.
        let s = unsafe { sys::ucp_listener_create(self.worker, &params, &mut l) };
        if s != sys::ucs_status_t_UCS_OK {
            sdk_err!("ucx", "listen on {addr}: {}", status_str(s));
            return Err(DocaError::IO_FAILED);
        }
        self.listener = l;
        let mut attr = sys::ucp_listener_attr_t {
            field_mask: sys::ucp_listener_attr_field_UCP_LISTENER_ATTR_FIELD_SOCKADDR as u64,
            ..Default::default()
        };
        // SAFETY: listener is live; attr is writable.
        check(
            unsafe { sys::ucp_listener_query(l, &mut attr) },
            "ucp_listener_query",
        )?;
        // SAFETY: the listener is IPv4, so the storage holds a sockaddr_in.
        let sin = unsafe { &*(&attr.sockaddr as *const _ as *const libc::sockaddr_in) };
        Ok(u16::from_be(sin.sin_port))
    }

    fn add_conn(
        &mut self,
        make: impl FnOnce(sys::ucp_err_handler_t) -> sys::ucp_ep_params_t,
    ) -> DocaResult<ConnId> {
        let id = self.next_id;
        self.next_id += 1;
        let err_arg = Box::new(ErrArg {
            shared: self.shared.clone(),
            id,
        });
        let params = make(sys::ucp_err_handler_t {
            cb: Some(on_ep_error),
            arg: &*err_arg as *const ErrArg as *mut c_void,
        });
        let mut ep: sys::ucp_ep_h = std::ptr::null_mut();
        // SAFETY: worker is live; params valid for the call; err_arg outlives the endpoint.
        let s = unsafe { sys::ucp_ep_create(self.worker, &params, &mut ep) };
        if s != sys::ucs_status_t_UCS_OK {
            sdk_warn!("ucx", "endpoint create failed: {}", status_str(s));
            return Err(DocaError::CONNECTION_ABORTED);
        }
        self.conns.insert(
            id,
            Conn {
                ep,
                _err_arg: err_arg,
                closed: false,
            },
        );
        Ok(id)
    }

    /// Connects to a listener at `addr`. The connection completes asynchronously; sends may
    /// be posted at once.
    pub fn connect(&mut self, addr: SocketAddrV4) -> DocaResult<ConnId> {
        let sa = sockaddr_of(addr);
        self.add_conn(|eh| sys::ucp_ep_params_t {
            field_mask: (sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_FLAGS
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_SOCK_ADDR
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLER
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE)
                as u64,
            flags: sys::ucp_ep_params_flags_field_UCP_EP_PARAMS_FLAGS_CLIENT_SERVER,
            sockaddr: sys::ucs_sock_addr_t {
                addr: &sa as *const libc::sockaddr_in as *const sys::sockaddr,
                addrlen: std::mem::size_of::<libc::sockaddr_in>() as u32,
            },
            err_mode: sys::ucp_err_handling_mode_t_UCP_ERR_HANDLING_MODE_PEER,
            err_handler: eh,
            ..Default::default()
        })
    }

    /// Queues `bytes` on `conn`.
    pub fn send(&mut self, conn: ConnId, bytes: Vec<u8>) -> DocaResult<()> {
        self.post(conn, bytes)
    }

    /// Queues the bytes `fill` writes on `conn`, in a buffer reused from completed sends
    /// (no allocation once the node has sent frames of this size before).
    pub fn send_with(&mut self, conn: ConnId, fill: impl FnOnce(&mut Vec<u8>)) -> DocaResult<()> {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        fill(&mut buf);
        self.post(conn, buf)
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < SPARE_BUFS && buf.capacity() > 0 {
            self.spare.push(buf);
        }
    }

    fn post(&mut self, conn: ConnId, bytes: Vec<u8>) -> DocaResult<()> {
        let c = match self.conns.get(&conn) {
            Some(c) if !c.closed => c,
            _ => {
                self.recycle(bytes);
                return Err(DocaError::NOT_CONNECTED);
            }
        };
        let param = sys::ucp_request_param_t::default();
        // SAFETY: ep is live; the buffer is kept alive in `sends` until completion.
        let r = unsafe {
            sys::ucp_stream_send_nbx(c.ep, bytes.as_ptr() as *const c_void, bytes.len(), &param)
        };
        if r.is_null() {
            self.recycle(bytes);
            return Ok(());
        }
        if ptr_is_err(r) {
            self.recycle(bytes);
            return Err(DocaError::CONNECTION_RESET);
        }
        self.sends.push(PendingSend { req: r, buf: bytes });
        Ok(())
    }

    /// Progresses UCX and returns what happened since the last call.
    pub fn poll(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        self.poll_with(|e| {
            events.push(match e {
                EventRef::Accepted(c) => Event::Accepted(c),
                EventRef::Data(c, b) => Event::Data(c, b.to_vec()),
                EventRef::Closed(c) => Event::Closed(c),
            })
        });
        events
    }

    /// Progresses UCX and hands what happened since the last call to `f`, received bytes
    /// straight from UCX's buffers. Allocates nothing unless a connection is accepted.
    /// Returns whether anything happened (an event, or a send completing).
    pub fn poll_with(&mut self, mut f: impl FnMut(EventRef<'_>)) -> bool {
        let mut busy = false;
        // SAFETY: worker is live.
        while unsafe { sys::ucp_worker_progress(self.worker) } != 0 {
            busy = true;
        }
        let (reqs, failed) = {
            let mut g = self.shared.lock().unwrap_or_else(|p| p.into_inner());
            (
                std::mem::take(&mut g.conn_requests),
                std::mem::take(&mut g.failed),
            )
        };
        for r in reqs {
            let req = r as sys::ucp_conn_request_h;
            let made = self.add_conn(|eh| sys::ucp_ep_params_t {
                field_mask: (sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_CONN_REQUEST
                    | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLER
                    | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE)
                    as u64,
                conn_request: req,
                err_mode: sys::ucp_err_handling_mode_t_UCP_ERR_HANDLING_MODE_PEER,
                err_handler: eh,
                ..Default::default()
            });
            if let Ok(id) = made {
                busy = true;
                f(EventRef::Accepted(id));
            }
        }
        for id in failed {
            if let Some(c) = self.conns.get_mut(&id) {
                if !c.closed {
                    c.closed = true;
                    busy = true;
                    f(EventRef::Closed(id));
                }
            }
        }
        for (&id, c) in self.conns.iter() {
            if c.closed {
                continue;
            }
            loop {
                let mut len = 0usize;
                // SAFETY: ep is live; len is writable.
                let p = unsafe { sys::ucp_stream_recv_data_nb(c.ep, &mut len) };
                if p.is_null() || ptr_is_err(p) {
                    break;
                }
                // SAFETY: UCX hands us `len` readable bytes at `p` until we release them.
                let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, len) };
                busy = true;
                f(EventRef::Data(id, bytes));
                // SAFETY: `p` came from ucp_stream_recv_data_nb on this endpoint; `bytes`
                // is not used after this.
                unsafe { sys::ucp_stream_data_release(c.ep, p) };
            }
        }
        let mut i = 0;
        while i < self.sends.len() {
            let req = self.sends[i].req;
            // SAFETY: req is a live request from ucp_stream_send_nbx.
            if unsafe { sys::ucp_request_check_status(req) } == sys::ucs_status_t_UCS_INPROGRESS {
                i += 1;
                continue;
            }
            // SAFETY: the request completed; we own it and release it once.
            unsafe { sys::ucp_request_free(req) };
            let done = self.sends.swap_remove(i);
            self.recycle(done.buf);
            busy = true;
        }
        busy
    }

    /// Whether sends are still waiting for UCX.
    pub fn sends_pending(&self) -> bool {
        !self.sends.is_empty()
    }

    /// The UCX event descriptor (readable when the worker has something to do after
    /// [`Node::arm`]), if the worker has one.
    pub fn event_fd(&self) -> Option<i32> {
        (self.efd >= 0).then_some(self.efd)
    }

    /// Arms the event descriptor for a sleep: `true` when armed, `false` when UCX has
    /// work pending (progress again instead of sleeping).
    pub fn arm(&mut self) -> bool {
        // SAFETY: worker is live.
        unsafe { sys::ucp_worker_arm(self.worker) == sys::ucs_status_t_UCS_OK }
    }

    /// Blocks until UCX has something to do or `timeout_ms` passes.
    pub fn wait(&mut self, timeout_ms: i32) {
        let Some(efd) = self.event_fd() else {
            std::thread::sleep(std::time::Duration::from_millis(timeout_ms.max(0) as u64));
            return;
        };
        if !self.arm() {
            return;
        }
        let mut pfd = libc::pollfd {
            fd: efd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    }

    /// Closes one connection at once (force close: unsent data is dropped). Used for
    /// connections that already failed.
    pub fn close(&mut self, conn: ConnId) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        self.close_ep(c.ep, true);
    }

    /// Closes one connection after delivering what was sent on it (bounded wait).
    pub fn close_flushed(&mut self, conn: ConnId) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        let force = c.closed;
        self.close_ep(c.ep, force);
    }

    fn close_ep(&mut self, ep: sys::ucp_ep_h, force: bool) {
        let param = sys::ucp_request_param_t {
            op_attr_mask: sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_FLAGS,
            flags: if force {
                sys::ucp_ep_close_flags_t_UCP_EP_CLOSE_FLAG_FORCE
            } else {
                0
            },
            ..Default::default()
        };
        // SAFETY: ep is live and not used after this call.
        let r = unsafe { sys::ucp_ep_close_nbx(ep, &param) };
        if r.is_null() || ptr_is_err(r) {
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        // SAFETY: r is a live request; the worker is live.
        while unsafe { sys::ucp_request_check_status(r) } == sys::ucs_status_t_UCS_INPROGRESS
            && std::time::Instant::now() < deadline
        {
            // SAFETY: worker is live.
            unsafe { sys::ucp_worker_progress(self.worker) };
        }
        // SAFETY: we own the request.
        unsafe { sys::ucp_request_free(r) };
    }

    /// Progresses until queued sends complete (bounded), e.g. before closing.
    pub fn flush(&mut self, timeout: std::time::Duration) {
        let deadline = std::time::Instant::now() + timeout;
        while self.sends_pending() && std::time::Instant::now() < deadline {
            let _ = self.poll();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.flush(std::time::Duration::from_millis(200));
        let conns: Vec<ConnId> = self.conns.keys().copied().collect();
        for c in conns {
            self.close(c);
        }
        for s in self.sends.drain(..) {
            // SAFETY: requests are live; cancel then free releases them.
            unsafe {
                sys::ucp_request_cancel(self.worker, s.req);
                sys::ucp_request_free(s.req);
            }
        }
        if !self.listener.is_null() {
            // SAFETY: listener is live and destroyed once.
            unsafe { sys::ucp_listener_destroy(self.listener) };
        }
        // SAFETY: worker and context are live; everything using them is gone.
        unsafe {
            sys::ucp_worker_destroy(self.worker);
            sys::ucp_cleanup(self.context);
        }
    }
}

/// Loopback address helper.
pub fn loopback(port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_nodes_exchange_bytes_and_see_close() {
        let mut server = Node::new().expect("server node");
        let port = server.listen(loopback(0)).expect("listen");
        assert_ne!(port, 0);
        let mut client = Node::new().expect("client node");
        let c = client.connect(loopback(port)).expect("connect");
        client.send(c, b"hello".to_vec()).expect("send");
        let mut got = Vec::new();
        let mut accepted = None;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while got.len() < 5 && std::time::Instant::now() < deadline {
            let _ = client.poll();
            for e in server.poll() {
                match e {
                    Event::Accepted(id) => accepted = Some(id),
                    Event::Data(_, b) => got.extend(b),
                    Event::Closed(_) => {}
                }
            }
        }
        assert_eq!(got, b"hello");
        let sid = accepted.expect("accepted");
        server.send(sid, b"back".to_vec()).expect("reply");
        let mut back = Vec::new();
        while back.len() < 4 && std::time::Instant::now() < deadline {
            let _ = server.poll();
            for e in client.poll() {
                if let Event::Data(_, b) = e {
                    back.extend(b);
                }
            }
        }
        assert_eq!(back, b"back");
        drop(client);
        let mut closed = false;
        while !closed && std::time::Instant::now() < deadline {
            closed = server
                .poll()
                .iter()
                .any(|e| matches!(e, Event::Closed(id) if *id == sid));
        }
        assert!(closed, "server saw the client go away");
    }
}
