//! Host helpers and wire layout of the `worker_sandbox` plugin (UCX tag send/recv offload
//! between workers of a domain). Layouts follow the sample (LP64):
//!
//! Command `{ u64 type; union { .. } }`:
//! * MEM_MAP (0): `u64 context; ucp_mem_map_params_t map_params; size_t exported_memh_buffer_len`
//!   (+ packed memh bytes);
//! * TAG_SEND (1): `u64 context, dest, buffer, count, tag, memh_id` (memh_id 0: `count`
//!   inline bytes follow the struct);
//! * TAG_RECV (2): `u64 context, buffer, count, tag, tag_mask, memh_id`.
//!
//! The struct size includes the largest member (MEM_MAP), which depends on UCX's
//! `ucp_mem_map_params_t`: host and worker must use the same UCX headers.
//! Notification (48 bytes) `{ u64 type; union { .. } }`: MEM_MAP `{context, memh_id}`,
//! TAG_SEND `{context, i32 status}`, TAG_RECV `{context, void *buffer, count, sender_tag,
//! i32 status}`; a received message's bytes follow when `buffer` is non-null.

use doca_urom::service::{PluginInfo, Service};
use doca_urom::worker::{Notification, Worker};
use doca_urom::{DocaError, Error, Result};

/// Plugin name.
pub const PLUGIN_NAME: &str = "worker_sandbox";
/// `UROM_WORKER_CMD_SANDBOX_MEM_MAP` (and its notification type).
pub const MEM_MAP: u64 = 0;
/// `UROM_WORKER_CMD_SANDBOX_TAG_SEND`.
pub const TAG_SEND: u64 = 1;
/// `UROM_WORKER_CMD_SANDBOX_TAG_RECV`.
pub const TAG_RECV: u64 = 2;

/// `sizeof(ucp_mem_map_params_t)` of the UCX we build against.
pub const UCP_MEM_MAP_PARAMS_SIZE: usize =
    std::mem::size_of::<ucx_sys::sys::ucp_mem_map_params_t>();
/// `sizeof(struct urom_worker_sandbox_cmd)`.
pub const CMD_SIZE: usize = {
    let mem_map = 8 + UCP_MEM_MAP_PARAMS_SIZE + 8;
    let tag = 48;
    8 + if mem_map > tag { mem_map } else { tag }
};
/// `sizeof(struct urom_worker_notify_sandbox)`.
pub const NOTIFY_SIZE: usize = 48;

fn put(buf: &mut [u8], at: usize, v: u64) {
    buf[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

/// Encodes an inline TAG_SEND command.
pub fn tag_send_cmd(context: u64, dest: u64, data: &[u8], tag: u64) -> Vec<u8> {
    let mut c = vec![0u8; CMD_SIZE + data.len()];
    put(&mut c, 0, TAG_SEND);
    for (i, v) in [context, dest, 0, data.len() as u64, tag, 0]
        .into_iter()
        .enumerate()
    {
        put(&mut c, 8 + 8 * i, v);
    }
    c[CMD_SIZE..].copy_from_slice(data);
    c
}

/// Encodes an inline TAG_RECV command (up to `count` bytes).
pub fn tag_recv_cmd(context: u64, count: u64, tag: u64, tag_mask: u64) -> Vec<u8> {
    let mut c = vec![0u8; CMD_SIZE];
    put(&mut c, 0, TAG_RECV);
    for (i, v) in [context, 0, count, tag, tag_mask, 0]
        .into_iter()
        .enumerate()
    {
        put(&mut c, 8 + 8 * i, v);
    }
    c
}

/// A completed send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendDone {
    /// The command's context value.
    pub context: u64,
    /// UCX status of the send (0 = UCS_OK).
    pub ucs_status: i32,
}

/// A completed receive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The command's context value.
    pub context: u64,
    /// The message.
    pub data: Vec<u8>,
    /// The sender's tag.
    pub sender_tag: u64,
    /// UCX status of the receive (0 = UCS_OK).
    pub ucs_status: i32,
}

/// Decodes a TAG_SEND notification.
pub fn parse_send(n: &Notification) -> std::result::Result<SendDone, DocaError> {
    n.status?;
    if n.data.len() != NOTIFY_SIZE || get(&n.data, 0) != TAG_SEND {
        return Err(DocaError::UNEXPECTED);
    }
    Ok(SendDone {
        context: get(&n.data, 8),
        ucs_status: i32::from_le_bytes(n.data[16..20].try_into().expect("4")),
    })
}

/// Decodes a TAG_RECV notification (inline data after the struct).
pub fn parse_recv(n: &Notification) -> std::result::Result<Received, DocaError> {
    n.status?;
    if n.data.len() < NOTIFY_SIZE || get(&n.data, 0) != TAG_RECV {
        return Err(DocaError::UNEXPECTED);
    }
    let count = get(&n.data, 24) as usize;
    let has_inline = get(&n.data, 16) != 0;
    let data = if has_inline {
        n.data
            .get(NOTIFY_SIZE..NOTIFY_SIZE + count)
            .ok_or(DocaError::UNEXPECTED)?
            .to_vec()
    } else {
        Vec::new()
    };
    Ok(Received {
        context: get(&n.data, 8),
        data,
        sender_tag: get(&n.data, 32),
        ucs_status: i32::from_le_bytes(n.data[40..44].try_into().expect("4")),
    })
}

/// The sandbox plugin as offered by a service.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// Plugin info.
    pub plugin: PluginInfo,
}

impl Sandbox {
    /// Finds the plugin; UNSUPPORTED_VERSION unless version 1.
    pub fn find(service: &Service) -> Result<Sandbox> {
        let plugin = service.plugin(PLUGIN_NAME)?;
        if plugin.version != 0x01 {
            return Err(Error::doca("Sandbox::find", DocaError::UNSUPPORTED_VERSION));
        }
        Ok(Sandbox { plugin })
    }

    /// Sends `data` with `tag` to domain member `dest` (callback form).
    pub fn tag_send_with(
        &self,
        w: &Worker,
        context: u64,
        dest: u64,
        data: &[u8],
        tag: u64,
        cb: impl FnOnce(std::result::Result<SendDone, DocaError>) + Send + 'static,
    ) -> Result<()> {
        w.submit(
            self.plugin.id,
            &tag_send_cmd(context, dest, data, tag),
            move |n| cb(parse_send(&n)),
        )
    }

    /// Posts a receive of up to `count` bytes matching `tag`/`tag_mask` (callback form).
    pub fn tag_recv_with(
        &self,
        w: &Worker,
        context: u64,
        count: u64,
        tag: u64,
        tag_mask: u64,
        cb: impl FnOnce(std::result::Result<Received, DocaError>) + Send + 'static,
    ) -> Result<()> {
        w.submit(
            self.plugin.id,
            &tag_recv_cmd(context, count, tag, tag_mask),
            move |n| cb(parse_recv(&n)),
        )
    }

    /// Sends, blocking until the worker reports local completion.
    pub fn tag_send(
        &self,
        w: &Worker,
        context: u64,
        dest: u64,
        data: &[u8],
        tag: u64,
    ) -> Result<SendDone> {
        let n = w.command(self.plugin.id, &tag_send_cmd(context, dest, data, tag))?;
        parse_send(&n).map_err(|code| Error::doca("sandbox tag_send", code))
    }
}
