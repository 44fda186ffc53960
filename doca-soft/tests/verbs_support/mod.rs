//! Shared by the GPU verbs tests (verbs_headers.rs, verbs_gpu.rs): where the headers are,
//! and the mlx5 byte formats of reference §3.12 computed independently of the
//! headers, to compare what the device code writes against.
#![allow(dead_code)]

use std::path::PathBuf;

/// doca-soft's source directory (doca-test-support's search).
pub fn src_dir() -> PathBuf {
    doca_test_support::workspace::doca_soft_src_dir()
}

pub fn include_dir() -> PathBuf {
    src_dir().join("include")
}

// Opcodes and flags (reference §3.1, §3.12).
pub const OP_NOP: u8 = 0x00;
pub const OP_WRITE: u8 = 0x08;
pub const OP_WRITE_IMM: u8 = 0x09;
pub const OP_SEND: u8 = 0x0a;
pub const OP_SEND_IMM: u8 = 0x0b;
pub const OP_WAIT: u8 = 0x0f;
pub const OP_READ: u8 = 0x10;
pub const OP_ATOMIC_FA: u8 = 0x12;
pub const OP_DUMP: u8 = 0x23;
pub const CQ_UPDATE: u8 = 0x08;
pub const INLINE_SEG: u32 = 0x8000_0000;

/// A send WQE as the NIC reads it: 64 bytes, of which the first `ds * 16` are meaningful.
#[derive(Clone, PartialEq, Eq)]
pub struct Wqe {
    pub bytes: [u8; 64],
    pub ds: usize,
}

impl std::fmt::Debug for Wqe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ds {} [", self.ds)?;
        for (i, b) in self.bytes[..self.ds * 16].iter().enumerate() {
            if i % 16 == 0 && i > 0 {
                write!(f, " |")?;
            }
            write!(f, " {b:02x}")?;
        }
        write!(f, " ]")
    }
}

impl Wqe {
    /// The meaningful bytes.
    pub fn used(&self) -> &[u8] {
        &self.bytes[..self.ds * 16]
    }
}

/// A local or remote address with its key. `key` is the logical key; the device code
/// receives it big-endian (`key.to_be()`), as DOCA programs pass `htobe32(mr->lkey)`.
#[derive(Clone, Copy, Debug)]
pub struct Addr {
    pub addr: u64,
    pub key: u32,
}

impl Addr {
    /// `addr` with logical key `key`.
    pub const fn new(addr: u64, key: u32) -> Addr {
        Addr { addr, key }
    }
}

/// Control segment: BE32(idx << 8 | opcode), BE32(qpn << 8 | ds), 3 zero bytes, flags, raw imm.
fn ctrl(w: &mut [u8; 64], idx: u16, opcode: u8, qpn: u32, ds: usize, imm: u32) {
    w[0..4].copy_from_slice(&((u32::from(idx) << 8) | u32::from(opcode)).to_be_bytes());
    w[4..8].copy_from_slice(&((qpn << 8) | ds as u32).to_be_bytes());
    w[8..11].fill(0);
    w[11] = CQ_UPDATE;
    // Immediates are stored raw: the value as the sender's native u32.
    w[12..16].copy_from_slice(&imm.to_ne_bytes());
}

/// Remote address segment: BE64 address, key (big-endian), 4 zero bytes.
fn raddr_seg(w: &mut [u8], a: Addr) {
    w[0..8].copy_from_slice(&a.addr.to_be_bytes());
    w[8..12].copy_from_slice(&a.key.to_be_bytes());
    w[12..16].fill(0);
}

/// Data segment: BE32 byte count, key (big-endian), BE64 address.
pub fn data_seg(w: &mut [u8], a: Addr, bytes: u32) {
    w[0..4].copy_from_slice(&bytes.to_be_bytes());
    w[4..8].copy_from_slice(&a.key.to_be_bytes());
    w[8..16].copy_from_slice(&a.addr.to_be_bytes());
}

/// RDMA write (or write-imm / read with `opcode`) with 1 or 2 local segments.
pub fn rw(idx: u16, qpn: u32, opcode: u8, imm: u32, remote: Addr, local: &[(Addr, u32)]) -> Wqe {
    let mut w = [0u8; 64];
    let ds = 2 + local.len();
    ctrl(&mut w, idx, opcode, qpn, ds, imm);
    raddr_seg(&mut w[16..32], remote);
    for (i, (a, n)) in local.iter().enumerate() {
        data_seg(&mut w[32 + 16 * i..48 + 16 * i], *a, *n);
    }
    Wqe { bytes: w, ds }
}

/// Inline RDMA write of `payload` (<= 28 bytes).
pub fn inline_write(idx: u16, qpn: u32, opcode: u8, imm: u32, remote: Addr, payload: &[u8]) -> Wqe {
    let mut w = [0u8; 64];
    let ds = if payload.len() <= 12 { 3 } else { 4 };
    ctrl(&mut w, idx, opcode, qpn, ds, imm);
    raddr_seg(&mut w[16..32], remote);
    w[32..36].copy_from_slice(&(payload.len() as u32 | INLINE_SEG).to_be_bytes());
    w[36..36 + payload.len()].copy_from_slice(payload);
    Wqe { bytes: w, ds }
}

/// Atomic fetch-add of `add` on `remote`, old value to `result` (8 bytes).
pub fn fetch_add(idx: u16, qpn: u32, remote: Addr, result: Addr, add: u64) -> Wqe {
    let mut w = [0u8; 64];
    ctrl(&mut w, idx, OP_ATOMIC_FA, qpn, 4, 0);
    raddr_seg(&mut w[16..32], remote);
    w[32..40].copy_from_slice(&add.to_be_bytes());
    w[40..48].copy_from_slice(&add.to_be_bytes());
    data_seg(&mut w[48..64], result, 8);
    Wqe { bytes: w, ds: 4 }
}

/// SEND / SEND_IMM with 0-3 segments.
pub fn send(idx: u16, qpn: u32, opcode: u8, imm: u32, segs: &[(Addr, u32)]) -> Wqe {
    let mut w = [0u8; 64];
    let ds = 1 + segs.len();
    ctrl(&mut w, idx, opcode, qpn, ds, imm);
    for (i, (a, n)) in segs.iter().enumerate() {
        data_seg(&mut w[16 + 16 * i..32 + 16 * i], *a, *n);
    }
    Wqe { bytes: w, ds }
}

/// Inline SEND (doca-soft's legacy RDMA API): BE32(len | 0x80000000) at 16, payload at 20.
pub fn inline_send(idx: u16, qpn: u32, opcode: u8, imm: u32, payload: &[u8]) -> Wqe {
    let mut w = [0u8; 64];
    let ds = (20 + payload.len()).div_ceil(16);
    ctrl(&mut w, idx, opcode, qpn, ds, imm);
    w[16..20].copy_from_slice(&(payload.len() as u32 | INLINE_SEG).to_be_bytes());
    w[20..20 + payload.len()].copy_from_slice(payload);
    Wqe { bytes: w, ds }
}

/// WAIT on CQ `cqn` for WQE `max_index`.
pub fn wait(idx: u16, qpn: u32, max_index: u32, cqn: u32) -> Wqe {
    let mut w = [0u8; 64];
    ctrl(&mut w, idx, OP_WAIT, qpn, 2, 0);
    w[16..24].fill(0);
    w[24..28].copy_from_slice(&max_index.to_be_bytes());
    w[28..32].copy_from_slice(&cqn.to_be_bytes());
    Wqe { bytes: w, ds: 2 }
}

/// DUMP of `bytes` at `local`.
pub fn dump(idx: u16, qpn: u32, local: Addr, bytes: u32) -> Wqe {
    let mut w = [0u8; 64];
    ctrl(&mut w, idx, OP_DUMP, qpn, 2, 0);
    data_seg(&mut w[16..32], local, bytes);
    Wqe { bytes: w, ds: 2 }
}

/// NOP (doca-soft's zero-byte put/get/send).
pub fn nop(idx: u16, qpn: u32) -> Wqe {
    let mut w = [0u8; 64];
    ctrl(&mut w, idx, OP_NOP, qpn, 1, 0);
    Wqe { bytes: w, ds: 1 }
}

/// A 16-byte receive WQE.
pub fn recv(local: Addr, bytes: u32) -> [u8; 16] {
    let mut w = [0u8; 16];
    data_seg(&mut w, local, bytes);
    w
}

/// Doorbell record word for producer index `prod`.
pub fn dbr(prod: u64) -> [u8; 4] {
    ((prod & 0xffff) as u32).to_be_bytes()
}

/// Doorbell register bytes for producer index `prod`.
pub fn db(prod: u64, qpn: u32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[0..4].copy_from_slice(&((prod << 8) as u32).to_be_bytes());
    b[4..8].copy_from_slice(&(qpn << 8).to_be_bytes());
    b
}

/// A CQE as the NIC writes it: number `k` of a `cqe_num`-entry ring.
pub struct Cqe {
    pub k: u64,
    pub cqe_num: u32,
    pub opcode: u8,
    pub inline_data: Option<Vec<u8>>,
    pub wqe_counter: u16,
    pub byte_cnt: u32,
    pub imm: u32,
    pub qpn: u32,
}

impl Cqe {
    pub fn bytes(&self) -> [u8; 64] {
        let mut c = [0u8; 64];
        if let Some(d) = &self.inline_data {
            c[..d.len()].copy_from_slice(d);
        }
        c[36..40].copy_from_slice(&self.imm.to_ne_bytes());
        c[44..48].copy_from_slice(&self.byte_cnt.to_be_bytes());
        c[56..60].copy_from_slice(&(self.qpn & 0xff_ffff).to_be_bytes());
        c[60..62].copy_from_slice(&self.wqe_counter.to_be_bytes());
        let owner = u8::from(self.k & u64::from(self.cqe_num) != 0);
        let inl = if self.inline_data.is_some() { 0x4 } else { 0 };
        c[63] = (self.opcode << 4) | inl | owner;
        c
    }
}

/// Parses "k v" hex-dump lines (`name: 0a 0b ...`) printed by the test programs.
pub fn parse_dump(text: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            let bytes = v
                .split_whitespace()
                .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
                .collect();
            (k.trim().to_string(), bytes)
        })
        .collect()
}
