//! The CPU TCP path's logic (`-s`): what to do with a frame that had SYN, FIN or RST set,
//! the session table, and the offload interface that installs and removes a session's
//! Flow entry. Pure logic over byte slices, so the tests drive it with floods, bad options
//! and malformed frames without a NIC or a GPU.
//!
//! As the original: a SYN creates a session keyed by (src IP, dst IP, src port, dst port)
//! as received (direction-sensitive) and installs a Flow entry that sends the session's
//! later packets to the GPU, then gets a SYN-ACK; a FIN removes it and gets an ACK; an RST
//! removes it without a reply. Fixed on purpose (see the example's docs): a full table or a
//! failed Flow entry refuses the SYN (no reply, nothing leaked); a repeated SYN keeps the
//! session and is answered again; a SYN-ACK is not a connection request and is dropped.

#![allow(dead_code)]

use super::packets::{self, tcp_flags, FrameError, TcpView};
use std::collections::HashMap;
use std::fmt;

/// Capacity of the session table (`TCP_SESSION_MAX_ENTRIES`).
pub const TCP_SESSION_MAX_ENTRIES: usize = 4096;

/// A session: the 4-tuple of the SYN as received (host-order numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionKey {
    /// Client address.
    pub src_ip: u32,
    /// Server address.
    pub dst_ip: u32,
    /// Client port.
    pub src_port: u16,
    /// Server port.
    pub dst_port: u16,
}

impl SessionKey {
    /// The key of a frame as received.
    pub fn of(v: &TcpView) -> SessionKey {
        SessionKey {
            src_ip: v.src_ip,
            dst_ip: v.dst_ip,
            src_port: v.src_port,
            dst_port: v.dst_port,
        }
    }
}

impl fmt::Display for SessionKey {
    /// `a.b.c.d:p>e.f.g.h:p`, as the original's log lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}>{}:{}",
            packets::dotted(self.src_ip),
            self.src_port,
            packets::dotted(self.dst_ip),
            self.dst_port
        )
    }
}

/// Installs and removes the Flow entry of a session (`enable_tcp_gpu_offload` /
/// `disable_tcp_gpu_offload`).
pub trait Offload {
    /// What an installed session holds (its Flow entry).
    type Entry;
    /// Installs the entry that sends `key`'s packets to the GPU TCP queues.
    fn enable(&mut self, key: &SessionKey) -> Result<Self::Entry, String>;
    /// Removes it; it no longer matches when this returns.
    fn disable(&mut self, entry: Self::Entry) -> Result<(), String>;
}

/// Sessions with their entries, at most `capacity`.
pub struct SessionTable<E> {
    map: HashMap<SessionKey, E>,
    capacity: usize,
}

impl<E> SessionTable<E> {
    /// An empty table for `capacity` sessions.
    pub fn new(capacity: usize) -> Self {
        SessionTable {
            map: HashMap::new(),
            capacity,
        }
    }

    /// Open sessions.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Whether `key` is open.
    pub fn contains(&self, key: &SessionKey) -> bool {
        self.map.contains_key(key)
    }

    /// Removes every session, handing back their entries (at teardown).
    pub fn drain(&mut self) -> Vec<E> {
        self.map.drain().map(|(_, e)| e).collect()
    }
}

/// Log level of a line the logic wants printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `ERR`.
    Error,
    /// `WARN`.
    Warn,
    /// `INFO`.
    Info,
}

/// What happened to one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not an IPv4/TCP frame the path can use (counted, dropped).
    Malformed(FrameError),
    /// TCP without SYN, FIN or RST, or a SYN-ACK (counted, dropped).
    Unexpected(u8),
    /// RST: the session was removed (`true`) or was not open.
    Reset(SessionKey, bool),
    /// FIN: the session was removed (`true`) or was not open; the ACK to send.
    Finished(SessionKey, bool, Vec<u8>),
    /// SYN: a session was opened (or was open already); the SYN-ACK to send.
    Opened(SessionKey, bool, Vec<u8>),
    /// SYN refused: the table is full (no reply; the client retries).
    TableFull(SessionKey),
    /// SYN refused: the Flow entry could not be installed (no reply).
    OffloadFailed(SessionKey, String),
}

impl Outcome {
    /// The frame to send back, if any.
    pub fn reply(&self) -> Option<&[u8]> {
        match self {
            Outcome::Finished(_, _, r) | Outcome::Opened(_, _, r) => Some(r),
            _ => None,
        }
    }
}

/// A frame whose flags open or close nothing: logged as the original does.
fn unexpected(flags: u8, log: &mut dyn FnMut(Level, String)) -> Outcome {
    log(
        Level::Warn,
        format!("Unexpected TCP packet flags: 0x{flags:x}, expected SYN/RST/FIN"),
    );
    Outcome::Unexpected(flags)
}

/// Handles one frame that the root pipe sent to the CPU (`frame`: its first bytes, which
/// must hold the whole TCP header). `tsval` is the SYN-ACK's timestamp (seconds); `log`
/// gets the lines the original prints.
pub fn handle_frame<O: Offload>(
    frame: &[u8],
    table: &mut SessionTable<O::Entry>,
    offload: &mut O,
    tsval: u32,
    log: &mut dyn FnMut(Level, String),
) -> Outcome {
    let v = match packets::parse_tcp(frame) {
        Ok(v) => v,
        Err(e) => {
            log(Level::Warn, format!("Not a TCP packet: {e}"));
            return Outcome::Malformed(e);
        }
    };
    let key = SessionKey::of(&v);
    if v.flags & (tcp_flags::SYN | tcp_flags::FIN | tcp_flags::RST) == 0 {
        return unexpected(v.flags, log);
    }
    if v.flags & tcp_flags::RST != 0 {
        log(Level::Info, format!("Received RST for TCP {key}"));
        let removed = destroy(&key, table, offload, log);
        return Outcome::Reset(key, removed);
    }
    if v.flags & tcp_flags::FIN != 0 {
        log(Level::Info, format!("Received FIN for TCP {key}"));
        let removed = destroy(&key, table, offload, log);
        return Outcome::Finished(key, removed, packets::build_cpu_reply(&v, false, 0, 0));
    }
    if v.flags & tcp_flags::ACK != 0 {
        // A SYN-ACK opens nothing here (the original answered it like a SYN).
        return unexpected(v.flags, log);
    }
    log(Level::Info, format!("Received SYN for TCP {key}"));
    let tsecr = packets::tcp_timestamp(frame, &v).unwrap_or(0);
    let reply = packets::build_cpu_reply(&v, true, tsval, tsecr);
    if table.map.contains_key(&key) {
        // A retransmitted SYN: same session, same entry, answered again.
        return Outcome::Opened(key, false, reply);
    }
    if table.map.len() >= table.capacity {
        log(
            Level::Warn,
            format!(
                "TCP session table full ({} sessions): SYN for {key} dropped",
                table.capacity
            ),
        );
        return Outcome::TableFull(key);
    }
    match offload.enable(&key) {
        Ok(entry) => {
            log(Level::Info, format!("Created TCP offload session {key}"));
            table.map.insert(key, entry);
            Outcome::Opened(key, true, reply)
        }
        Err(e) => {
            log(
                Level::Error,
                format!("Failed to create TCP offload session; error = {e}, session = {key}"),
            );
            Outcome::OffloadFailed(key, e)
        }
    }
}

fn destroy<O: Offload>(
    key: &SessionKey,
    table: &mut SessionTable<O::Entry>,
    offload: &mut O,
    log: &mut dyn FnMut(Level, String),
) -> bool {
    let Some(entry) = table.map.remove(key) else {
        return false;
    };
    match offload.disable(entry) {
        Ok(()) => log(Level::Info, format!("Destroyed TCP offload session {key}")),
        Err(e) => log(
            Level::Error,
            format!("Failed to destroy TCP offload session; error = {e}, session = {key}"),
        ),
    }
    true
}
