//! RDMA send WQEs (64 bytes) and receive WQEs (16 bytes) as DOCA 3.3's GPU verbs helpers
//! write them: the control segment of [`super::wqe`], then the remote address segment
//! (BE64 address, BE32 key), data segments, inline data (bit 31 of the segment's first
//! word) or the atomic segment (BE64 swap-or-add, BE64 compare) and the result's data
//! segment. Keys are read into host order; immediates stay raw bytes.
//!
//! A WQE occupies exactly one 64-byte slot (DS 1 to 4 sixteen-byte segments). The parser is
//! total: anything it does not understand is a [`Malformed`] value (the RDMA engine answers
//! it with an error completion), never a panic.

use super::wqe::{Ctrl, DataSeg, SEG};
use super::{be32, be64, opcode};

pub mod build;

pub use build::RemoteSeg;

/// Bit 31 of a segment's first word: an inline data segment.
pub const INLINE_SEG: u32 = 0x8000_0000;
/// A data segment's byte count of 0 means 2 GiB (mlx5).
const ZERO_MEANS: u32 = 0x8000_0000;
/// The "no buffer" key of receive WQEs (`MLX5_INVALID_LKEY`).
pub const INVALID_LKEY: u32 = 0x100;
/// Most inline bytes one slot holds (send: 64 - 16 - 4).
pub const MAX_INLINE: usize = 44;
/// Most inline bytes of an RDMA write (64 - 16 - 16 - 4).
pub const MAX_WRITE_INLINE: usize = 28;
/// Most data segments of one WQE (a send with three).
pub const MAX_SGE: usize = 3;

/// A scatter/gather entry: a local buffer and its key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Address.
    pub addr: u64,
    /// Key (host order).
    pub key: u32,
    /// Bytes (a count of 0 on the wire is 2 GiB here).
    pub len: u32,
}

impl From<DataSeg> for Sge {
    fn from(d: DataSeg) -> Sge {
        let count = d.byte_count & !INLINE_SEG;
        Sge {
            len: if count == 0 { ZERO_MEANS } else { count },
            key: u32::from_be(d.lkey_raw),
            addr: d.addr,
        }
    }
}

impl Sge {
    /// The data segment that carries this entry (key stored big-endian).
    pub fn data_seg(self) -> DataSeg {
        DataSeg {
            byte_count: self.len,
            lkey_raw: self.key.to_be(),
            addr: self.addr,
        }
    }
}

/// Up to [`MAX_SGE`] entries, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sges {
    n: u8,
    e: [Sge; MAX_SGE],
}

impl Sges {
    /// The entries.
    pub fn as_slice(&self) -> &[Sge] {
        &self.e[..self.n as usize]
    }

    /// Total bytes.
    pub fn total(&self) -> u64 {
        self.as_slice().iter().map(|s| s.len as u64).sum()
    }

    fn push(&mut self, s: Sge) {
        self.e[self.n as usize] = s;
        self.n += 1;
    }
}

/// What a send WQE asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Nothing (completes in order).
    Nop,
    /// RDMA write (with immediate when the WQE has one) of the local entries to `raddr`.
    Write {
        /// Remote address.
        raddr: u64,
        /// Remote key (host order).
        rkey: u32,
        /// Local entries.
        src: Sges,
    },
    /// RDMA write of the WQE's inline bytes.
    WriteInline {
        /// Remote address.
        raddr: u64,
        /// Remote key (host order).
        rkey: u32,
        /// Inline bytes ([`Wqe::inline`]).
        len: u8,
    },
    /// RDMA read of remote `raddr` into the local entries.
    Read {
        /// Remote address.
        raddr: u64,
        /// Remote key (host order).
        rkey: u32,
        /// Local entries.
        dst: Sges,
    },
    /// 64-bit fetch-and-add; the old value goes to `result`.
    FetchAdd {
        /// Remote address.
        raddr: u64,
        /// Remote key (host order).
        rkey: u32,
        /// Addend.
        add: u64,
        /// Where the old value goes (8 bytes).
        result: Sge,
    },
    /// 64-bit compare-and-swap; the old value goes to `result`.
    CompareSwap {
        /// Remote address.
        raddr: u64,
        /// Remote key (host order).
        rkey: u32,
        /// Expected value.
        compare: u64,
        /// New value.
        swap: u64,
        /// Where the old value goes (8 bytes).
        result: Sge,
    },
    /// Send of the local entries.
    Send {
        /// Local entries.
        src: Sges,
    },
    /// Send of the WQE's inline bytes.
    SendInline {
        /// Inline bytes ([`Wqe::inline`]).
        len: u8,
    },
    /// Hold the queue until CQ `cqn` has produced CQE number `max_index` (mod 2^32).
    Wait {
        /// The awaited CQE number.
        max_index: u32,
        /// The CQ.
        cqn: u32,
    },
    /// Dump (completes in order).
    Dump,
}

/// A parsed send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wqe {
    /// The opcode byte.
    pub opcode: u8,
    /// Whether it asks for a completion (CE = CQE always / CQE and EQE).
    pub signaled: bool,
    /// The immediate of *_IMM opcodes (raw bytes, as the WQE holds them).
    pub imm: Option<[u8; 4]>,
    /// The operation.
    pub op: Op,
    /// Inline payload (first `len` bytes of WriteInline / SendInline).
    pub inline: [u8; MAX_INLINE],
}

/// Why a WQE cannot run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// The control segment carries another index than the slot's.
    Index {
        /// The slot's index (low 16 bits).
        expected: u16,
        /// The control segment's.
        found: u16,
    },
    /// The control segment names another QP.
    Qpn {
        /// The QP the ring belongs to.
        expected: u32,
        /// The control segment's.
        found: u32,
    },
    /// DS does not fit the opcode or the slot.
    Size {
        /// The opcode byte.
        opcode: u8,
        /// The DS count.
        ds: u8,
    },
    /// An opcode this NIC does not execute.
    Opcode(u8),
    /// A segment is inconsistent (inline length, atomic result size).
    Segment(u8),
}

/// The data segment at byte `o` of `b`.
fn data_seg(b: &[u8], o: usize) -> Sge {
    Sge::from(DataSeg::decode(&b[o..o + SEG]))
}

/// Whether the segment at byte `o` of `b` holds inline data.
fn is_inline(b: &[u8], o: usize) -> bool {
    be32(b, o) & INLINE_SEG != 0
}

/// The data segments `first..ds` of `slot`, none of them inline.
fn gather(slot: &[u8; 64], first: usize, ds: u8, opc: u8) -> Result<Sges, Malformed> {
    let mut sges = Sges::default();
    for i in first..ds as usize {
        if is_inline(slot, i * SEG) {
            return Err(Malformed::Segment(opc));
        }
        sges.push(data_seg(slot, i * SEG));
    }
    Ok(sges)
}

/// The opcode byte of a slot (for error completions of WQEs that do not parse).
pub fn opcode_of(slot: &[u8; 64]) -> u8 {
    slot[3]
}

/// Parses the WQE in `slot`, which must be WQE `index` (low 16 bits) of QP `qpn`.
pub fn parse(slot: &[u8; 64], index: u16, qpn: u32) -> Result<Wqe, Malformed> {
    let ctrl = Ctrl::decode(slot);
    let opc = ctrl.opcode;
    if ctrl.wqe_index != index {
        return Err(Malformed::Index {
            expected: index,
            found: ctrl.wqe_index,
        });
    }
    if ctrl.qpn != qpn {
        return Err(Malformed::Qpn {
            expected: qpn,
            found: ctrl.qpn,
        });
    }
    let ds = ctrl.ds;
    let size = Err(Malformed::Size { opcode: opc, ds });
    if ds == 0 || ds > 4 {
        return size;
    }
    let mut wqe = Wqe {
        opcode: opc,
        signaled: ctrl.notify(),
        imm: None,
        op: Op::Nop,
        inline: [0; MAX_INLINE],
    };
    if matches!(opc, opcode::RDMA_WRITE_IMM | opcode::SEND_IMM) {
        wqe.imm = Some(ctrl.imm.to_ne_bytes());
    }
    let end = ds as usize * SEG;
    // The remote address segment of writes, reads and atomics.
    let remote = RemoteSeg::decode(&slot[SEG..2 * SEG]);
    let (raddr, rkey) = (remote.addr, u32::from_be(remote.rkey_raw));
    match opc {
        opcode::NOP => {}
        opcode::RDMA_WRITE | opcode::RDMA_WRITE_IMM => {
            if ds < 2 {
                return size;
            }
            if ds > 2 && is_inline(slot, 32) {
                let len = (be32(slot, 32) & !INLINE_SEG) as usize;
                if len > MAX_WRITE_INLINE || 36 + len > end {
                    return Err(Malformed::Segment(opc));
                }
                wqe.inline[..len].copy_from_slice(&slot[36..36 + len]);
                wqe.op = Op::WriteInline {
                    raddr,
                    rkey,
                    len: len as u8,
                };
            } else {
                let src = gather(slot, 2, ds, opc)?;
                wqe.op = Op::Write { raddr, rkey, src };
            }
        }
        opcode::RDMA_READ => {
            if ds < 3 {
                return size;
            }
            let dst = gather(slot, 2, ds, opc)?;
            wqe.op = Op::Read { raddr, rkey, dst };
        }
        opcode::ATOMIC_FA | opcode::ATOMIC_CS => {
            if ds != 4 {
                return size;
            }
            let result = data_seg(slot, 48);
            if result.len != 8 || is_inline(slot, 48) {
                return Err(Malformed::Segment(opc));
            }
            let (swap_add, compare) = (be64(slot, 32), be64(slot, 40));
            wqe.op = if opc == opcode::ATOMIC_FA {
                Op::FetchAdd {
                    raddr,
                    rkey,
                    add: swap_add,
                    result,
                }
            } else {
                Op::CompareSwap {
                    raddr,
                    rkey,
                    compare,
                    swap: swap_add,
                    result,
                }
            };
        }
        opcode::SEND | opcode::SEND_IMM => {
            if ds > 1 && is_inline(slot, 16) {
                let len = (be32(slot, 16) & !INLINE_SEG) as usize;
                if len > MAX_INLINE || 20 + len > end {
                    return Err(Malformed::Segment(opc));
                }
                wqe.inline[..len].copy_from_slice(&slot[20..20 + len]);
                wqe.op = Op::SendInline { len: len as u8 };
            } else {
                let src = gather(slot, 1, ds, opc)?;
                wqe.op = Op::Send { src };
            }
        }
        opcode::WAIT => {
            if ds != 2 {
                return size;
            }
            wqe.op = Op::Wait {
                max_index: be32(slot, 24),
                cqn: be32(slot, 28) & 0xff_ffff,
            };
        }
        opcode::DUMP => {
            if ds != 2 {
                return size;
            }
            wqe.op = Op::Dump;
        }
        other => return Err(Malformed::Opcode(other)),
    }
    Ok(wqe)
}

/// A posted receive: where an incoming message may land.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvWqe {
    /// Buffer address.
    pub addr: u64,
    /// Buffer key (host order).
    pub key: u32,
    /// Capacity in bytes (0 for a "no buffer" receive, [`INVALID_LKEY`]).
    pub capacity: u64,
}

/// Parses a 16-byte receive WQE {BE32 length, key, BE64 address}.
pub fn parse_recv(slot: &[u8; 16]) -> RecvWqe {
    let s = data_seg(slot, 0);
    RecvWqe {
        addr: s.addr,
        key: s.key,
        capacity: if s.key == INVALID_LKEY {
            0
        } else {
            s.len as u64
        },
    }
}
