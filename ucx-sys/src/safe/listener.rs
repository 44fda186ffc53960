//! [`Listener`]: accepts client/server connections on a socket address
//! (`ucp_listener_create`); peers connect with [`Endpoint::connect`](crate::Endpoint::connect).

use super::sockaddr::{from_storage, CSockAddr};
use super::worker::{NotSend, Worker, WorkerInner};
use crate::result::{Error, Result, Status};
use crate::sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// Connection requests the listener callback queued (raw `ucp_conn_request_h` values).
type Queue = Mutex<Vec<usize>>;

pub(crate) struct ListenerInner {
    pub(crate) raw: sys::ucp_listener_h,
    // The callback's argument: lives as long as the listener.
    queue: Box<Queue>,
    pub(crate) worker: Arc<WorkerInner>,
}

impl Drop for ListenerInner {
    fn drop(&mut self) {
        // SAFETY: live listener, destroyed once; no conn request of it is left (each holds
        // an Arc of this).
        unsafe { sys::ucp_listener_destroy(self.raw) };
    }
}

unsafe extern "C" fn on_conn_request(req: sys::ucp_conn_request_h, arg: *mut c_void) {
    // SAFETY: `arg` is the listener's queue, alive as long as the listener.
    let q = unsafe { &*(arg as *const Queue) };
    q.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(req as usize);
}

/// A listening socket of a worker.
pub struct Listener {
    inner: Rc<ListenerInner>,
    _not_send: NotSend,
}

impl Listener {
    /// Listens on `addr` (port 0 picks a free one; see [`Listener::local_addr`]).
    pub fn bind(worker: &Worker, addr: SocketAddr) -> Result<Listener> {
        let queue: Box<Queue> = Box::default();
        let sa = CSockAddr::new(addr);
        let params = sys::ucp_listener_params_t {
            field_mask: (sys::ucp_listener_params_field_UCP_LISTENER_PARAM_FIELD_SOCK_ADDR
                | sys::ucp_listener_params_field_UCP_LISTENER_PARAM_FIELD_CONN_HANDLER)
                as u64,
            sockaddr: sa.as_ucs(),
            conn_handler: sys::ucp_listener_conn_handler_t {
                cb: Some(on_conn_request),
                arg: &*queue as *const Queue as *mut c_void,
            },
            ..Default::default()
        };
        let mut raw: sys::ucp_listener_h = std::ptr::null_mut();
        // SAFETY: live worker; params valid for the call; the callback argument (boxed)
        // lives in the listener.
        let s = unsafe { sys::ucp_listener_create(worker.inner.raw, &params, &mut raw) };
        Status(s).check("ucp_listener_create")?;
        Ok(Listener {
            inner: Rc::new(ListenerInner {
                raw,
                queue,
                worker: worker.inner.clone(),
            }),
            _not_send: PhantomData,
        })
    }

    /// The address it listens on (with the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> Result<SocketAddr> {
        let mut attr = sys::ucp_listener_attr_t {
            field_mask: sys::ucp_listener_attr_field_UCP_LISTENER_ATTR_FIELD_SOCKADDR as u64,
            ..Default::default()
        };
        // SAFETY: live listener; attr writable.
        let s = unsafe { sys::ucp_listener_query(self.inner.raw, &mut attr) };
        Status(s).check("ucp_listener_query")?;
        // SAFETY: UCX wrote a socket address into the storage.
        unsafe { from_storage(&attr.sockaddr as *const _ as *const libc::sockaddr_storage) }
            .ok_or(Error::new("ucp_listener_query", Status::ERR_INVALID_ADDR))
    }

    /// The connection requests that arrived during earlier progress calls.
    pub fn take_requests(&self) -> Vec<ConnRequest> {
        let raw = std::mem::take(&mut *self.inner.queue.lock().unwrap_or_else(|p| p.into_inner()));
        raw.into_iter()
            .map(|r| ConnRequest {
                raw: r as sys::ucp_conn_request_h,
                listener: Some(self.inner.clone()),
                _not_send: PhantomData,
            })
            .collect()
    }

    /// The raw handle (valid while this listener lives).
    pub fn as_raw(&self) -> sys::ucp_listener_h {
        self.inner.raw
    }
}

/// A peer asking to connect: [`Endpoint::accept`](crate::Endpoint::accept) it, or drop it to
/// reject it (`ucp_listener_reject`).
pub struct ConnRequest {
    pub(crate) raw: sys::ucp_conn_request_h,
    // None once accepted.
    pub(crate) listener: Option<Rc<ListenerInner>>,
    _not_send: NotSend,
}

impl ConnRequest {
    /// The worker this request arrived on.
    pub(crate) fn worker(&self) -> Option<&Arc<WorkerInner>> {
        self.listener.as_ref().map(|l| &l.worker)
    }
}

impl Drop for ConnRequest {
    fn drop(&mut self) {
        if let Some(l) = self.listener.take() {
            // SAFETY: a pending request of this live listener, answered once.
            unsafe { sys::ucp_listener_reject(l.raw, self.raw) };
        }
    }
}
