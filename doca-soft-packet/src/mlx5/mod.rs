//! mlx5 work queue and completion queue encodings, byte-exact, and the only place that
//! knows them: what DOCA 3.3's device helpers write into a send queue (control, Ethernet,
//! data, wait-on-time segments, DS counts, WQE basic blocks; the RDMA segments, inline data
//! and atomics of GPU verbs WQEs; 16-byte receive WQEs) and what a NIC writes back (`struct
//! mlx5_cqe64`: byte count, timestamp, WQE counter, opcode and owner bit, immediate, inline
//! scatter, error syndromes). The soft NIC that plays a ConnectX on these rings (its
//! Ethernet proxies and its RDMA engine) builds and parses them with these functions, and
//! the tests check them against the device headers' builders.
//!
//! Every multi-byte field is big-endian on the wire; keys (`lkey`) are carried as the raw
//! 32-bit word the device wrote (already big-endian there), so callers compare them with
//! `u32::from_be` only where they need the number.

// The builders and decoders the runtime itself does not call (CQE decoding, WQE building)
// are the tests' and the CPU-side producers' (feature `testing`), and the soft NIC's.
#![cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]

pub mod cqe;
pub mod rdma;
pub mod wqe;

#[cfg(test)]
mod tests;

pub use cqe::{Cqe, CQE_SIZE};
pub use wqe::{Ctrl, DataSeg};

/// WQE opcodes (low byte of control word 0).
pub mod opcode {
    /// No operation (completes like any WQE).
    pub const NOP: u8 = 0x00;
    /// RDMA write.
    pub const RDMA_WRITE: u8 = 0x08;
    /// RDMA write with immediate.
    pub const RDMA_WRITE_IMM: u8 = 0x09;
    /// Send (Ethernet frame, or RDMA send).
    pub const SEND: u8 = 0x0a;
    /// RDMA send with immediate.
    pub const SEND_IMM: u8 = 0x0b;
    /// WAIT; with opmod [`super::OPMOD_WAIT_ON_TIME`] it holds the queue until a time, with
    /// opmod 0 (core direct) until a CQ has produced a given completion.
    pub const WAIT: u8 = 0x0f;
    /// RDMA read.
    pub const RDMA_READ: u8 = 0x10;
    /// 64-bit compare-and-swap.
    pub const ATOMIC_CS: u8 = 0x11;
    /// 64-bit fetch-and-add.
    pub const ATOMIC_FA: u8 = 0x12;
    /// DUMP (a one-byte read; a memory-ordering barrier that completes in order).
    pub const DUMP: u8 = 0x23;
    /// Enhanced multi-packet send: one data segment per packet.
    pub const ENHANCED_MPSW: u8 = 0x29;
}

/// Opmod of a WAIT WQE that waits for a time (its wait segment holds the time).
pub const OPMOD_WAIT_ON_TIME: u8 = 0x01;
/// `fm_ce_se` bit asking for a completion (CE = CQE always).
pub const CTRL_CQ_UPDATE: u8 = 0x08;
/// Ethernet segment `cs_flags`: IPv4 header checksum.
pub const CS_L3: u8 = 0x40;
/// Ethernet segment `cs_flags`: UDP/TCP checksum.
pub const CS_L4: u8 = 0x80;

/// CQE opcodes (high nibble of `op_own`).
pub mod cqe_opcode {
    /// Requester completion (any successful send-queue WQE).
    pub const REQ: u8 = 0x0;
    /// Responder: RDMA write with immediate.
    pub const RESP_WR_IMM: u8 = 0x1;
    /// Responder: packet or send received.
    pub const RESP_SEND: u8 = 0x2;
    /// Responder: send with immediate received.
    pub const RESP_SEND_IMM: u8 = 0x3;
    /// Requester error (the syndrome says why).
    pub const REQ_ERR: u8 = 0xd;
    /// Responder error.
    pub const RESP_ERR: u8 = 0xe;
    /// Not written yet (ring initialisation).
    pub const INVALID: u8 = 0xf;
}

/// Error syndromes (byte 55 of an error CQE).
pub mod syndrome {
    /// Length error (empty or oversized frame, receive buffer too small).
    pub const LOCAL_LENGTH_ERR: u8 = 0x01;
    /// Malformed or unsupported WQE, or a bad doorbell.
    pub const LOCAL_QP_OP_ERR: u8 = 0x02;
    /// A local key did not cover the buffer.
    pub const LOCAL_PROT_ERR: u8 = 0x04;
    /// Flushed: the QP was in error or destroyed.
    pub const WR_FLUSH_ERR: u8 = 0x05;
    /// The peer refused the request (its receive buffer was too small, no such QP).
    pub const REMOTE_INVAL_REQ_ERR: u8 = 0x12;
    /// The remote key is unknown or does not cover the range / lacks the right.
    pub const REMOTE_ACCESS_ERR: u8 = 0x13;
    /// The peer failed to execute the request.
    pub const REMOTE_OP_ERR: u8 = 0x14;
    /// The peer is gone (no response).
    pub const TRANSPORT_RETRY_EXC_ERR: u8 = 0x15;
    /// The peer had no receive posted and no room to hold the message.
    pub const RNR_RETRY_EXC_ERR: u8 = 0x16;
}

/// The big-endian 32-bit word at `off` of `b`.
pub(crate) fn be32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// The big-endian 64-bit word at `off` of `b`.
pub(crate) fn be64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_be_bytes(a)
}

/// Wait-on-time value (and CQE timestamp) of CLOCK_REALTIME nanoseconds: the host-order
/// `seconds << 32 | nanoseconds` (store it big-endian).
pub fn time_to_sec_ns(ns: u64) -> u64 {
    ((ns / 1_000_000_000) << 32) | (ns % 1_000_000_000)
}

/// Nanoseconds of a host-order `seconds << 32 | nanoseconds` value.
pub fn sec_ns_to_time(v: u64) -> u64 {
    (v >> 32) * 1_000_000_000 + (v & 0xffff_ffff)
}
