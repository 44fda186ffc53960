//! The Cmd/Notify codec: the payload of a [`Msg::Cmd`](super::Msg::Cmd) frame is a
//! `urom_worker_cmd` header and the plugin's command, the payload of a
//! [`Msg::Notify`](super::Msg::Notify) frame a `urom_worker_notify` header and the plugin's
//! notification (what the plugin's `notif_pack` writes). Headers travel little endian, with
//! the fields at the offsets of the plugin ABI's structs (asserted below against the types
//! generated from `doca_urom_plugin.h`).
//!
//! The host library encodes commands and decodes notifications; the worker decodes
//! commands and encodes the notifications it answers itself (errors before a plugin saw the
//! command). Nothing else reads or writes these headers.

use super::{frame_begin, frame_end, KIND_CMD, KIND_NOTIFY};
use crate::error::DocaError;
use crate::plugin_abi::{WorkerCmd, WorkerNotify};
use std::mem::{offset_of, size_of};

/// Size of the command header (`sizeof(struct urom_worker_cmd)`).
pub const CMD_HEADER_LEN: usize = size_of::<WorkerCmd>();
/// Size of the notification header (`sizeof(struct urom_worker_notify)`).
pub const NOTIFY_HEADER_LEN: usize = size_of::<WorkerNotify>();

// The wire offsets used below are the ABI's.
const _: () = {
    assert!(CMD_HEADER_LEN == 24);
    assert!(offset_of!(WorkerCmd, type_) == 0);
    assert!(offset_of!(WorkerCmd, urom_context) == 8);
    assert!(offset_of!(WorkerCmd, len) == 16);
    assert!(NOTIFY_HEADER_LEN == 32);
    assert!(offset_of!(WorkerNotify, type_) == 0);
    assert!(offset_of!(WorkerNotify, urom_context) == 8);
    assert!(offset_of!(WorkerNotify, len) == 16);
    assert!(offset_of!(WorkerNotify, status) == 24);
    assert!(offset_of!(WorkerNotify, reserved) == 28);
};

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// A command header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CmdHeader {
    /// Plugin id (`type`).
    pub plugin: u64,
    /// The host's cookie, echoed by the notification.
    pub urom_context: u64,
    /// Length of the plugin command that follows.
    pub len: u64,
}

impl CmdHeader {
    /// Splits a Cmd payload into its header and the plugin command. INVALID_VALUE when it
    /// is shorter than a header or `len` does not match what follows.
    pub(crate) fn parse(payload: &[u8]) -> Result<(CmdHeader, &[u8]), CmdError> {
        if payload.len() < CMD_HEADER_LEN {
            return Err(CmdError {
                header: None,
                error: DocaError::INVALID_VALUE,
            });
        }
        let h = CmdHeader {
            plugin: u64_at(payload, 0),
            urom_context: u64_at(payload, 8),
            len: u64_at(payload, 16),
        };
        let body = &payload[CMD_HEADER_LEN..];
        if h.len != body.len() as u64 {
            return Err(CmdError {
                header: Some(h),
                error: DocaError::INVALID_VALUE,
            });
        }
        Ok((h, body))
    }

    /// The header as the plugin ABI struct (for a command descriptor).
    pub(crate) fn to_abi(self) -> WorkerCmd {
        WorkerCmd {
            type_: self.plugin,
            urom_context: self.urom_context,
            len: self.len,
            plugin_cmd: Default::default(),
        }
    }
}

/// A Cmd payload that cannot be handed to a plugin: the header when it could be read (the
/// answer goes to that cookie) and the status to answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CmdError {
    /// The header, if the payload held one.
    pub header: Option<CmdHeader>,
    /// The status for the answer.
    pub error: DocaError,
}

/// Appends a complete Cmd frame for `plugin` with cookie `urom_context` and the plugin
/// command `body`, built in place (no allocation beyond `out`'s growth).
pub fn push_cmd(out: &mut Vec<u8>, plugin: u64, urom_context: u64, body: &[u8]) {
    let at = frame_begin(out, KIND_CMD);
    out.extend_from_slice(&plugin.to_le_bytes());
    out.extend_from_slice(&urom_context.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    frame_end(out, at);
}

/// A notification header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotifyHeader {
    /// Plugin id (copied from the command).
    pub plugin: u64,
    /// The command's cookie.
    pub urom_context: u64,
    /// Length of the plugin notification that follows.
    pub len: u64,
    /// `doca_error_t` the plugin reported.
    pub status: u32,
}

impl NotifyHeader {
    /// Splits a Notify payload into its header and the plugin notification; None when it
    /// is shorter than a header. (`len` is the plugin's claim: compare it with the body.)
    pub fn parse(payload: &[u8]) -> Option<(NotifyHeader, &[u8])> {
        if payload.len() < NOTIFY_HEADER_LEN {
            return None;
        }
        let h = NotifyHeader {
            plugin: u64_at(payload, 0),
            urom_context: u64_at(payload, 8),
            len: u64_at(payload, 16),
            status: u32::from_le_bytes(payload[24..28].try_into().expect("4 bytes")),
        };
        Some((h, &payload[NOTIFY_HEADER_LEN..]))
    }
}

/// Appends a complete Notify frame holding only a header: the answer to a command no
/// plugin handled (`status` says why).
pub(crate) fn push_status_notify(
    out: &mut Vec<u8>,
    plugin: u64,
    urom_context: u64,
    status: DocaError,
) {
    let at = frame_begin(out, KIND_NOTIFY);
    out.extend_from_slice(&plugin.to_le_bytes());
    out.extend_from_slice(&urom_context.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&status.0.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    frame_end(out, at);
}

#[cfg(test)]
mod tests {
    use super::super::{Decoder, Msg, HEADER_LEN};
    use super::*;

    #[test]
    fn commands_round_trip_and_bad_ones_are_refused() {
        let mut f = Vec::new();
        push_cmd(&mut f, 4, 77, b"abc");
        assert_eq!(f.len(), HEADER_LEN + CMD_HEADER_LEN + 3);
        let mut d = Decoder::new(1024);
        d.push(&f);
        let (kind, payload) = d.next_frame().unwrap().unwrap();
        assert_eq!(kind, KIND_CMD);
        let (h, body) = CmdHeader::parse(payload).unwrap();
        assert_eq!(
            h,
            CmdHeader {
                plugin: 4,
                urom_context: 77,
                len: 3
            }
        );
        assert_eq!(body, b"abc");
        let abi = h.to_abi();
        assert_eq!((abi.type_, abi.urom_context, abi.len), (4, 77, 3));
        // Short, and a length that lies.
        let short = CmdHeader::parse(&payload[..CMD_HEADER_LEN - 1]).unwrap_err();
        assert_eq!(short.header, None);
        assert_eq!(short.error, DocaError::INVALID_VALUE);
        let lying = CmdHeader::parse(&payload[..payload.len() - 1]).unwrap_err();
        assert_eq!(lying.header.map(|h| h.urom_context), Some(77));
    }

    #[test]
    fn status_notifications_decode() {
        let mut f = Vec::new();
        push_status_notify(&mut f, 2, 9, DocaError::NOT_FOUND);
        let mut d = Decoder::new(1024);
        d.push(&f);
        let Some(Msg::Notify(payload)) = d.next_msg().unwrap() else {
            panic!("a Notify frame");
        };
        assert_eq!(payload.len(), NOTIFY_HEADER_LEN);
        let (h, body) = NotifyHeader::parse(&payload).unwrap();
        assert_eq!(
            h,
            NotifyHeader {
                plugin: 2,
                urom_context: 9,
                len: 0,
                status: DocaError::NOT_FOUND.0
            }
        );
        assert!(body.is_empty());
        assert!(NotifyHeader::parse(&payload[..NOTIFY_HEADER_LEN - 1]).is_none());
    }
}
