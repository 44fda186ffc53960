//! [`Endpoint`]: a connection to a peer worker (`ucp_ep_h`), with byte-stream transfers.
//!
//! Endpoints made here use peer error handling (`UCP_ERR_HANDLING_MODE_PEER`) unless made
//! with [`PeerFailure::NotDetected`]: a peer that goes away, even killed, shows up as
//! [`Endpoint::failure`] after a progress call. [`Endpoint::transports`] tells which
//! transports UCX put an endpoint on.

use super::listener::ConnRequest;
use super::request::{posted, Posted, Request};
use super::sockaddr::CSockAddr;
use super::worker::{NotSend, Worker, WorkerInner};
use crate::result::{Error, Result, Status};
use crate::sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::ops::Deref;
use std::sync::atomic::{AtomicI8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long closing waits for UCX at most.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);
/// How long dropping an unfinished send waits for its cancellation at most.
const CANCEL_TIMEOUT: Duration = Duration::from_millis(100);

/// Where the error handler records the failure (`UCS_OK`: none yet).
type ErrSlot = AtomicI8;

unsafe extern "C" fn on_ep_error(arg: *mut c_void, _ep: sys::ucp_ep_h, status: sys::ucs_status_t) {
    // SAFETY: `arg` is the endpoint's boxed slot, alive as long as the endpoint.
    let slot = unsafe { &*(arg as *const ErrSlot) };
    let s = if status == sys::ucs_status_t_UCS_OK {
        sys::ucs_status_t_UCS_ERR_CONNECTION_RESET
    } else {
        status
    };
    let _ = slot.compare_exchange(
        sys::ucs_status_t_UCS_OK,
        s,
        Ordering::AcqRel,
        Ordering::Acquire,
    );
}

/// How [`Endpoint::close`] treats data still queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseMode {
    /// Deliver what was sent first (bounded wait).
    Flush,
    /// Drop it and close at once (for failed connections).
    Force,
}

/// Whether UCX watches an endpoint made from a worker address for its peer's failure
/// (`ucp_err_handling_mode_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerFailure {
    /// `UCP_ERR_HANDLING_MODE_PEER`: a peer that dies fails the endpoint
    /// ([`Endpoint::failure`]). UCX then uses only transports that can tell (keepalive):
    /// TCP or RDMA, never shared memory, even between processes of one machine.
    Detected,
    /// `UCP_ERR_HANDLING_MODE_NONE`: UCX may use shared memory between processes of one
    /// machine, but nothing reports a dead peer: the caller must learn it another way (a
    /// socket of its own, say), and should close with [`CloseMode::Force`] only once the
    /// peer is gone (UCX documents a forced close as undefined for a peer that still uses
    /// its side without error handling).
    NotDetected,
}

/// A connection to a peer.
pub struct Endpoint {
    raw: sys::ucp_ep_h,
    // The error handler's argument: lives as long as the endpoint.
    err: Box<ErrSlot>,
    worker: Arc<WorkerInner>,
    closed: bool,
    _not_send: NotSend,
}

impl Endpoint {
    fn create(
        worker: &Arc<WorkerInner>,
        make: impl FnOnce(sys::ucp_err_handler_t) -> sys::ucp_ep_params_t,
    ) -> Result<Endpoint> {
        let err: Box<ErrSlot> = Box::new(AtomicI8::new(sys::ucs_status_t_UCS_OK));
        let params = make(sys::ucp_err_handler_t {
            cb: Some(on_ep_error),
            arg: &*err as *const ErrSlot as *mut c_void,
        });
        let mut raw: sys::ucp_ep_h = std::ptr::null_mut();
        // SAFETY: live worker; params valid for the call; the handler's argument (boxed)
        // lives in the endpoint.
        let s = unsafe { sys::ucp_ep_create(worker.raw, &params, &mut raw) };
        Status(s).check("ucp_ep_create")?;
        Ok(Endpoint {
            raw,
            err,
            worker: worker.clone(),
            closed: false,
            _not_send: PhantomData,
        })
    }

    /// Connects to a [`Listener`](crate::Listener) at `addr`. Completes asynchronously:
    /// sends may be posted at once.
    pub fn connect(worker: &Worker, addr: SocketAddr) -> Result<Endpoint> {
        let sa = CSockAddr::new(addr);
        Self::create(&worker.inner, |eh| sys::ucp_ep_params_t {
            field_mask: (sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_FLAGS
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_SOCK_ADDR
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLER
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE)
                as u64,
            flags: sys::ucp_ep_params_flags_field_UCP_EP_PARAMS_FLAGS_CLIENT_SERVER,
            sockaddr: sa.as_ucs(),
            err_mode: sys::ucp_err_handling_mode_t_UCP_ERR_HANDLING_MODE_PEER,
            err_handler: eh,
            ..Default::default()
        })
    }

    /// Connects to the worker whose address ([`Worker::address`]) is `address`, as peers
    /// that learned each other's addresses out of band do, with peer failure detection
    /// ([`PeerFailure::Detected`]): see [`Endpoint::connect_to_address_with`].
    pub fn connect_to_address(worker: &Worker, address: &[u8]) -> Result<Endpoint> {
        Self::connect_to_address_with(worker, address, PeerFailure::Detected)
    }

    /// Connects to the worker whose address ([`Worker::address`]) is `address`. UCX picks
    /// the transport from everything both workers offer that `failure` allows, where an
    /// endpoint made through a listener carries its data over the listener's TCP
    /// connection manager. When both workers connect to each other this way, UCX pairs the
    /// first endpoint of each into one connection (streams sent on one arrive on the
    /// other). Completes asynchronously: sends may be posted at once.
    ///
    /// UCX parses `address` without defending against malformed bytes: it must come from a
    /// peer the caller trusts to name a worker (an empty one is refused here).
    pub fn connect_to_address_with(
        worker: &Worker,
        address: &[u8],
        failure: PeerFailure,
    ) -> Result<Endpoint> {
        if address.is_empty() {
            return Err(Error::new("ucp_ep_create", Status::ERR_INVALID_PARAM));
        }
        let (err_mode, handler) = match failure {
            PeerFailure::Detected => (
                sys::ucp_err_handling_mode_t_UCP_ERR_HANDLING_MODE_PEER,
                sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLER,
            ),
            PeerFailure::NotDetected => {
                (sys::ucp_err_handling_mode_t_UCP_ERR_HANDLING_MODE_NONE, 0)
            }
        };
        Self::create(&worker.inner, |eh| sys::ucp_ep_params_t {
            field_mask: (sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                | handler
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE)
                as u64,
            address: address.as_ptr() as *const sys::ucp_address_t,
            err_mode,
            err_handler: eh,
            ..Default::default()
        })
    }

    /// Accepts a connection request of a listener of `worker`.
    pub fn accept(worker: &Worker, mut req: ConnRequest) -> Result<Endpoint> {
        if !req.worker().is_some_and(|w| Arc::ptr_eq(w, &worker.inner)) {
            return Err(Error::new("ucp_ep_create", Status::ERR_INVALID_PARAM));
        }
        let raw_req = req.raw;
        // Whatever happens now answers the request: it must not be rejected as well.
        req.listener = None;
        Self::create(&worker.inner, |eh| sys::ucp_ep_params_t {
            field_mask: (sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_CONN_REQUEST
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLER
                | sys::ucp_ep_params_field_UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE)
                as u64,
            conn_request: raw_req,
            err_mode: sys::ucp_err_handling_mode_t_UCP_ERR_HANDLING_MODE_PEER,
            err_handler: eh,
            ..Default::default()
        })
    }

    /// The error that broke the connection, seen by an earlier progress call.
    pub fn failure(&self) -> Option<Status> {
        match self.err.load(Ordering::Acquire) {
            sys::ucs_status_t_UCS_OK => None,
            s => Some(Status(s)),
        }
    }

    /// Posts `buf` on the stream (`ucp_stream_send_nbx`). UCX reads the buffer until the
    /// send completes, so a send in flight keeps it ([`PendingSend`]). A failed endpoint
    /// refuses at once with its failure: UCX must not be given new operations on it (it
    /// may retry them forever).
    pub fn stream_send<B: AsRef<[u8]>>(&self, buf: B) -> Sent<B> {
        if let Some(s) = self.failure() {
            return Sent::Failed(Error::new("ucp_stream_send_nbx", s), buf);
        }
        let bytes = buf.as_ref();
        let param = sys::ucp_request_param_t::default();
        // SAFETY: live endpoint; `buf` stays alive (moved into the pending send) until UCX
        // is done with it.
        let p = unsafe {
            sys::ucp_stream_send_nbx(
                self.raw,
                bytes.as_ptr() as *const c_void,
                bytes.len(),
                &param,
            )
        };
        match posted("ucp_stream_send_nbx", p, &self.worker) {
            Ok(Posted::Done) => Sent::Done(buf),
            Ok(Posted::Pending(req)) => Sent::Pending(PendingSend {
                req: Some(req),
                buf: Some(buf),
            }),
            Err(e) => Sent::Failed(e, buf),
        }
    }

    /// The next bytes received on the stream, in UCX's buffer (released when the returned
    /// value is dropped); `None` when nothing is waiting or the connection failed.
    pub fn stream_recv(&self) -> Option<StreamData<'_>> {
        if self.failure().is_some() {
            return None;
        }
        let mut len = 0usize;
        // SAFETY: live endpoint; len writable.
        let p = unsafe { sys::ucp_stream_recv_data_nb(self.raw, &mut len) };
        if p.is_null() || crate::result::ptr_is_err(p) {
            return None;
        }
        Some(StreamData {
            ep: self,
            ptr: p,
            len,
        })
    }

    /// Closes the endpoint (`ucp_ep_close_nbx`; always [`CloseMode::Force`] once it failed),
    /// waiting for UCX at most a second.
    pub fn close(mut self, mode: CloseMode) {
        self.close_raw(mode);
    }

    fn close_raw(&mut self, mode: CloseMode) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        // Nothing can be delivered on a failed connection: close it at once.
        let mode = if self.failure().is_some() {
            CloseMode::Force
        } else {
            mode
        };
        let param = sys::ucp_request_param_t {
            op_attr_mask: sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_FLAGS,
            flags: match mode {
                CloseMode::Force => sys::ucp_ep_close_flags_t_UCP_EP_CLOSE_FLAG_FORCE,
                CloseMode::Flush => 0,
            },
            ..Default::default()
        };
        // SAFETY: live endpoint, closed once (not used after).
        let p = unsafe { sys::ucp_ep_close_nbx(self.raw, &param) };
        if let Ok(Posted::Pending(req)) = posted("ucp_ep_close_nbx", p, &self.worker) {
            let _ = req.wait("ucp_ep_close_nbx", CLOSE_TIMEOUT);
        }
    }

    /// The transports UCX put this endpoint on (`ucp_ep_query`), one entry per lane, in
    /// UCX's lane order: which transport carries what depends on the operation and the
    /// size (UCX's protocol selection), so callers look for a name rather than a position.
    pub fn transports(&self) -> Result<Vec<Transport>> {
        let mut entries = [sys::ucp_transport_entry_t::default(); MAX_TRANSPORTS];
        let mut attr = sys::ucp_ep_attr_t {
            field_mask: sys::ucp_ep_attr_field_UCP_EP_ATTR_FIELD_TRANSPORTS as u64,
            transports: sys::ucp_transports_t {
                entries: entries.as_mut_ptr(),
                num_entries: MAX_TRANSPORTS as u32,
                entry_size: std::mem::size_of::<sys::ucp_transport_entry_t>(),
            },
            ..Default::default()
        };
        // SAFETY: live endpoint; `attr` asks only for the transports, into `entries`, whose
        // length and element size it states (UCX writes at most that many entries).
        let s = unsafe { sys::ucp_ep_query(self.raw, &mut attr) };
        Status(s).check("ucp_ep_query")?;
        let n = (attr.transports.num_entries as usize).min(MAX_TRANSPORTS);
        Ok(entries[..n]
            .iter()
            .map(|e| Transport {
                name: c_text(e.transport_name),
                device: c_text(e.device_name),
            })
            .collect())
    }

    /// The raw handle (valid while this endpoint lives).
    pub fn as_raw(&self) -> sys::ucp_ep_h {
        self.raw
    }
}

/// Most lanes [`Endpoint::transports`] reports (UCX's own limit is lower).
const MAX_TRANSPORTS: usize = 32;

/// One transport of an endpoint ([`Endpoint::transports`]), by UCX's names: `tcp` on a
/// network interface, `sysv` or `posix` (shared memory) and `cma` on `memory`, `rc_mlx5` on
/// an RDMA port, and so on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transport {
    /// The transport (`UCX_TLS` names it).
    pub name: String,
    /// The device it runs on (`UCX_NET_DEVICES` names network ones).
    pub device: String,
}

impl Transport {
    /// Whether it is one of UCX's TCP transports (`tcp`, or the `tcp_sockcm` connection
    /// manager).
    pub fn is_tcp(&self) -> bool {
        self.name.starts_with("tcp")
    }
}

/// A string UCX returned (empty for a null pointer).
fn c_text(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null; UCX's transport and device names are NUL-terminated strings that
    // live as long as the endpoint's configuration, and are copied here at once.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.close_raw(CloseMode::Force);
        // `err` (the handler's argument) is freed after the close above: UCX calls no
        // handler of a closed endpoint.
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("raw", &self.raw)
            .field("failure", &self.failure())
            .finish()
    }
}

/// What [`Endpoint::stream_send`] did with a buffer.
pub enum Sent<B> {
    /// Sent at once: the buffer is free again.
    Done(B),
    /// In flight: the buffer comes back when the send completes.
    Pending(PendingSend<B>),
    /// Refused: the error, and the buffer.
    Failed(Error, B),
}

/// A send in flight and the buffer UCX reads from.
///
/// Dropped before completion, it cancels the send and waits briefly for UCX to let go of
/// the buffer; a buffer UCX still holds after that is leaked rather than freed under it.
pub struct PendingSend<B> {
    // Both Some until finished or dropped.
    req: Option<Request>,
    buf: Option<B>,
}

impl<B> PendingSend<B> {
    /// Whether the send finished.
    pub fn is_done(&self) -> bool {
        self.req.as_ref().is_none_or(Request::is_done)
    }

    /// The buffer and the final status once finished; the send itself while not.
    pub fn finish(mut self) -> std::result::Result<(B, Status), PendingSend<B>> {
        let req = self.req.as_ref().expect("present until finished");
        let status = req.status();
        if status == Status::INPROGRESS {
            return Err(self);
        }
        drop(self.req.take());
        Ok((self.buf.take().expect("present until finished"), status))
    }
}

impl<B> Drop for PendingSend<B> {
    fn drop(&mut self) {
        let Some(req) = self.req.take() else {
            return;
        };
        if !req.is_done() {
            req.cancel();
            let deadline = Instant::now() + CANCEL_TIMEOUT;
            while !req.is_done() && Instant::now() < deadline {
                req.worker_progress();
            }
            if !req.is_done() {
                // UCX may still read it: never free it under UCX.
                std::mem::forget(self.buf.take());
            }
        }
    }
}

/// Bytes received on a stream, in UCX's buffer (`ucp_stream_data_release` on drop).
pub struct StreamData<'a> {
    ep: &'a Endpoint,
    ptr: *mut c_void,
    len: usize,
}

impl Deref for StreamData<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: UCX handed us `len` readable bytes at `ptr` until they are released.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for StreamData<'_> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from ucp_stream_recv_data_nb on this live endpoint; released
        // once.
        unsafe { sys::ucp_stream_data_release(self.ep.raw, self.ptr) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, Features, ThreadMode};

    fn context(tls: &str) -> Context {
        Context::builder()
            .features(Features::STREAM | Features::WAKEUP)
            .config("WARN_UNUSED_ENV_VARS", "n")
            .config("TLS", tls)
            .build()
            .expect("UCX context")
    }

    /// Progresses both workers until `want` bytes arrived on `ep` (10 s at most).
    fn recv_n(a: &Worker, b: &Worker, ep: &Endpoint, want: usize) -> Vec<u8> {
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while got.len() < want && Instant::now() < deadline {
            a.progress_all();
            b.progress_all();
            while let Some(d) = ep.stream_recv() {
                got.extend_from_slice(&d);
            }
        }
        got
    }

    /// Two workers of one machine (each with a context of its own, as two processes have)
    /// joined by endpoints made from each other's addresses with `failure`; the transports
    /// of the first after a stream went both ways.
    fn transports_between(tls: &str, failure: PeerFailure) -> Vec<Transport> {
        let (ca, cb) = (context(tls), context(tls));
        let a = Worker::new(&ca, ThreadMode::Serialized).unwrap();
        let b = Worker::new(&cb, ThreadMode::Serialized).unwrap();
        let (addr_a, addr_b) = (a.address().unwrap(), b.address().unwrap());
        let ab = Endpoint::connect_to_address_with(&a, &addr_b, failure).unwrap();
        let ba = Endpoint::connect_to_address_with(&b, &addr_a, failure).unwrap();
        let _s = ab.stream_send(b"ping".to_vec());
        assert_eq!(recv_n(&a, &b, &ba, 4), b"ping");
        let _r = ba.stream_send(b"pong".to_vec());
        assert_eq!(recv_n(&a, &b, &ab, 4), b"pong");
        let t = ab.transports().expect("ucp_ep_query");
        assert_eq!(t, ba.transports().expect("ucp_ep_query"), "both ends alike");
        t
    }

    #[test]
    fn unwatched_endpoints_of_one_machine_run_on_shared_memory_and_watched_ones_on_tcp() {
        let unwatched = transports_between("tcp,sm", PeerFailure::NotDetected);
        assert!(!unwatched.is_empty());
        assert!(
            unwatched.iter().all(|t| !t.is_tcp()),
            "no TCP lane: {unwatched:?}"
        );
        assert!(
            unwatched
                .iter()
                .any(|t| ["sysv", "posix"].contains(&t.name.as_str())),
            "a shared-memory lane: {unwatched:?}"
        );
        let watched = transports_between("tcp,sm", PeerFailure::Detected);
        assert!(
            watched.iter().any(Transport::is_tcp),
            "watched: TCP lanes only: {watched:?}"
        );
        assert!(
            watched
                .iter()
                .all(|t| !["sysv", "posix"].contains(&t.name.as_str())),
            "watched: no shared memory: {watched:?}"
        );
    }
}
