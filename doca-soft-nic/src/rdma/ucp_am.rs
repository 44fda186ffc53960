//! UCX active messages of the soft NIC: handler registration, sends, and the received
//! messages as the engine sees them ([`AmMsg`]). Part of the UCX layer (see `ucp.rs`).
//!
//! Handlers are registered with `UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA`, so
//! eager data stays valid after the callback and every payload is handed to the engine as a
//! descriptor it either reads ([`AmMsg::data`]), receives into a buffer with
//! `ucp_am_recv_data_nbx` ([`Worker::am_recv_into`], which also serves rendezvous data and
//! device memory), or releases ([`Worker::am_release`]). The callback itself only copies the
//! small header into a thread-local inbox.

use super::ucp::{self, Ep, Issue, MemHandle, Worker};
use crate::error::{DocaError, DocaResult};
use std::cell::RefCell;
use std::ffi::c_void;
use ucx_sys::sys;

/// Largest header the engine accepts (every message of `wire.rs` fits).
pub(crate) const MAX_HEADER: usize = 64;

/// A received active message, its payload still owned by UCX.
pub(crate) struct AmMsg {
    /// Active-message id.
    pub id: u16,
    /// The header bytes (`header_len` of them are valid).
    pub header: [u8; MAX_HEADER],
    /// Valid bytes of `header`.
    pub header_len: usize,
    /// The payload descriptor (null when the message has none).
    desc: *mut c_void,
    /// Payload length.
    pub len: usize,
    /// Whether the payload comes by rendezvous (not readable before it is received).
    pub rndv: bool,
}

impl AmMsg {
    /// The valid header bytes.
    pub(crate) fn header(&self) -> &[u8] {
        &self.header[..self.header_len]
    }

    /// The payload bytes of an eager message (`None` for rendezvous).
    pub(crate) fn data(&self) -> Option<&[u8]> {
        if self.rndv {
            return None;
        }
        if self.desc.is_null() || self.len == 0 {
            return Some(&[]);
        }
        // SAFETY: eager persistent data stays readable until released; `len` bytes.
        Some(unsafe { std::slice::from_raw_parts(self.desc as *const u8, self.len) })
    }
}

thread_local! {
    static INBOX: RefCell<Vec<AmMsg>> = RefCell::new(Vec::with_capacity(256));
}

/// Moves the messages received on this thread into `out`.
pub(crate) fn take_inbox(out: &mut Vec<AmMsg>) {
    INBOX.with(|i| out.append(&mut i.borrow_mut()));
}

unsafe extern "C" fn on_am(
    arg: *mut c_void,
    header: *const c_void,
    header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const sys::ucp_am_recv_param_t,
) -> ucp::Status {
    // SAFETY: UCX passes a valid parameter block for the call.
    let p = unsafe { &*param };
    let rndv = p.recv_attr & sys::ucp_am_recv_attr_t_UCP_AM_RECV_ATTR_FLAG_RNDV as u64 != 0;
    let held = p.recv_attr & sys::ucp_am_recv_attr_t_UCP_AM_RECV_ATTR_FLAG_DATA as u64 != 0;
    if header_length > MAX_HEADER {
        // Not one of ours: drop it (a rendezvous is refused, eager data is not kept).
        return if rndv {
            sys::ucs_status_t_UCS_ERR_INVALID_PARAM
        } else {
            ucp::OK
        };
    }
    let mut msg = AmMsg {
        id: arg as usize as u16,
        header: [0; MAX_HEADER],
        header_len: header_length,
        desc: std::ptr::null_mut(),
        len: length,
        rndv,
    };
    if header_length > 0 {
        // SAFETY: UCX passes `header_length` readable header bytes.
        let h = unsafe { std::slice::from_raw_parts(header as *const u8, header_length) };
        msg.header[..header_length].copy_from_slice(h);
    }
    let keep = (rndv || held) && !data.is_null();
    if keep {
        msg.desc = data;
    } else if length > 0 {
        // Transient eager data (not expected with PERSISTENT_DATA): nothing to hold, so
        // the engine sees an empty payload of the announced length and refuses it.
        msg.len = 0;
    }
    INBOX.with(|i| i.borrow_mut().push(msg));
    if keep {
        sys::ucs_status_t_UCS_INPROGRESS
    } else {
        ucp::OK
    }
}

impl Worker {
    /// Registers the engine's handler for active-message `id`.
    pub(crate) fn set_am_handler(&self, id: u16) -> DocaResult<()> {
        let params = sys::ucp_am_handler_param_t {
            field_mask: (sys::ucp_am_handler_param_field_UCP_AM_HANDLER_PARAM_FIELD_ID
                | sys::ucp_am_handler_param_field_UCP_AM_HANDLER_PARAM_FIELD_FLAGS
                | sys::ucp_am_handler_param_field_UCP_AM_HANDLER_PARAM_FIELD_CB
                | sys::ucp_am_handler_param_field_UCP_AM_HANDLER_PARAM_FIELD_ARG)
                as u64,
            id: id as u32,
            flags: sys::ucp_am_cb_flags_UCP_AM_FLAG_WHOLE_MSG
                | sys::ucp_am_cb_flags_UCP_AM_FLAG_PERSISTENT_DATA,
            cb: Some(on_am),
            arg: id as usize as *mut c_void,
        };
        // SAFETY: the worker is live; the handler is a plain function.
        let s = unsafe { sys::ucp_worker_set_am_recv_handler(self.h, &params) };
        if s != ucp::OK {
            sdk_err!(
                "nic",
                "ucp_worker_set_am_recv_handler({id}): {}",
                ucp::status_str(s)
            );
            return Err(DocaError::DRIVER);
        }
        Ok(())
    }

    /// Receives the payload of `msg` into `dst..dst+len` (host or registered device
    /// memory) and gives the descriptor back to UCX. Completion comes with `token`.
    ///
    /// # Safety
    /// `dst..dst+len` is writable until the operation completes; `len <= msg.len`.
    pub(crate) unsafe fn am_recv_into(
        &self,
        msg: &mut AmMsg,
        dst: *mut u8,
        len: usize,
        memh: Option<&MemHandle>,
        token: u64,
    ) -> Issue {
        let desc = std::mem::replace(&mut msg.desc, std::ptr::null_mut());
        if desc.is_null() {
            return if len == 0 {
                Issue::Done
            } else {
                Issue::Failed(sys::ucs_status_t_UCS_ERR_NO_ELEM)
            };
        }
        let p = ucp::am_data_param(token, memh);
        // SAFETY: desc is a descriptor UCX handed us and we still hold; the caller keeps the
        // buffer valid. UCX owns the descriptor after this call.
        ucp::issue(unsafe { sys::ucp_am_recv_data_nbx(self.h, desc, dst as *mut c_void, len, &p) })
    }

    /// Gives the payload of `msg` back to UCX without receiving it (a rendezvous is then
    /// completed towards the sender without data).
    pub(crate) fn am_release(&self, msg: &mut AmMsg) {
        let desc = std::mem::replace(&mut msg.desc, std::ptr::null_mut());
        if desc.is_null() {
            return;
        }
        // SAFETY: desc is eager data or a rendezvous descriptor this worker handed us and
        // we still hold; released once (a rendezvous then completes towards its sender).
        unsafe { sys::ucp_am_data_release(self.h, desc) };
    }

    /// Sends active message `id` with `header` (copied at once) and `len` payload bytes at
    /// `data`.
    ///
    /// # Safety
    /// `data..data+len` stays readable until the send completes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn am_send(
        &self,
        ep: Ep,
        id: u16,
        header: &[u8],
        data: *const u8,
        len: usize,
        memh: Option<&MemHandle>,
        token: u64,
    ) -> Issue {
        let mut p = ucp::am_send_param(token, memh);
        p.op_attr_mask |= sys::ucp_op_attr_t_UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = sys::ucp_send_am_flags_UCP_AM_SEND_FLAG_COPY_HEADER;
        // SAFETY: the endpoint is live; the header is copied during the call; the caller
        // keeps the payload valid until completion.
        ucp::issue(unsafe {
            sys::ucp_am_send_nbx(
                ep.raw(),
                id as u32,
                header.as_ptr() as *const c_void,
                header.len(),
                data as *const c_void,
                len,
                &p,
            )
        })
    }
}
