//! mlx5 work queue and completion queue encodings, byte-exact: what DOCA 3.3's device
//! helpers write into a send queue (control, Ethernet, data, wait-on-time segments, DS
//! counts, WQE basic blocks) and what a NIC writes back (`struct mlx5_cqe64`: byte count,
//! timestamp, WQE counter, opcode and owner bit, error syndromes). The soft NIC that plays a
//! ConnectX on these rings (the Ethernet proxies here, the GPU verbs proxies later) builds
//! and parses them with these functions, and the tests check them against the device
//! headers' builders.
//!
//! Every multi-byte field is big-endian on the wire; keys (`lkey`) are carried as the raw
//! 32-bit word the device wrote (already big-endian there), so callers compare them with
//! `u32::from_be` only where they need the number.

// The builders and decoders the runtime itself does not call (CQE decoding, WQE building)
// are the tests' and the CPU-side producers' (feature `testing`), and the soft NIC's.
#![cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]

pub mod cqe;
pub mod wqe;

#[cfg(test)]
mod tests;

pub use cqe::{Cqe, CQE_SIZE};
pub use wqe::{Ctrl, DataSeg};

/// WQE opcodes (low byte of control word 0).
pub mod opcode {
    /// No operation (completes like any WQE).
    pub const NOP: u8 = 0x00;
    /// Ethernet send.
    pub const SEND: u8 = 0x0a;
    /// WAIT; with opmod [`super::OPMOD_WAIT_ON_TIME`] it holds the queue until a time.
    pub const WAIT: u8 = 0x0f;
    /// DUMP (a one-byte read; a memory-ordering barrier for pre-Hopper GPUs).
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
    /// Send completed.
    pub const REQ: u8 = 0x0;
    /// Packet received.
    pub const RESP_SEND: u8 = 0x2;
    /// Send failed (syndrome says why).
    pub const REQ_ERR: u8 = 0xd;
    /// Receive failed.
    pub const RESP_ERR: u8 = 0xe;
    /// Not written yet (ring initialisation).
    pub const INVALID: u8 = 0xf;
}

/// Error syndromes (byte 55 of an error CQE).
pub mod syndrome {
    /// Length error (empty or oversized frame).
    pub const LOCAL_LENGTH_ERR: u8 = 0x01;
    /// Malformed or unsupported WQE.
    pub const LOCAL_QP_OP_ERR: u8 = 0x02;
    /// Bad key or address.
    pub const LOCAL_PROT_ERR: u8 = 0x04;
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
