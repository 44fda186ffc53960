//! Parsing the 64-byte mlx5 send WQEs and 16-byte receive WQEs that DOCA 3.3's device
//! helpers write (reference facts §3.12). All multi-byte fields are big-endian; keys are
//! stored big-endian too (they are read here into host order); immediates are raw bytes.
//!
//! A WQE occupies exactly one 64-byte slot (DS 1 to 4 sixteen-byte segments). The parser is
//! total: anything it does not understand is a [`Malformed`] value (the engine answers it
//! with an error completion), never a panic.

/// Send WQE opcodes (low byte of the control segment's first word).
pub(crate) mod opcode {
    /// No operation.
    pub(crate) const NOP: u8 = 0x00;
    /// RDMA write.
    pub(crate) const RDMA_WRITE: u8 = 0x08;
    /// RDMA write with immediate.
    pub(crate) const RDMA_WRITE_IMM: u8 = 0x09;
    /// Send.
    pub(crate) const SEND: u8 = 0x0a;
    /// Send with immediate.
    pub(crate) const SEND_IMM: u8 = 0x0b;
    /// Core-direct wait on a completion queue.
    pub(crate) const WAIT: u8 = 0x0f;
    /// RDMA read.
    pub(crate) const RDMA_READ: u8 = 0x10;
    /// 64-bit compare-and-swap.
    pub(crate) const ATOMIC_CS: u8 = 0x11;
    /// 64-bit fetch-and-add.
    pub(crate) const ATOMIC_FA: u8 = 0x12;
    /// Dump (a memory-ordering barrier that completes in order).
    pub(crate) const DUMP: u8 = 0x23;
}

/// Bit 31 of a segment's first word: an inline data segment.
const INLINE_SEG: u32 = 0x8000_0000;
/// A data segment's byte count of 0 means 2 GiB (mlx5).
const ZERO_MEANS: u32 = 0x8000_0000;
/// The "no buffer" key of receive WQEs (`MLX5_INVALID_LKEY`).
pub(crate) const INVALID_LKEY: u32 = 0x100;
/// Most inline bytes one slot holds (send: 64 - 16 - 4).
pub(crate) const MAX_INLINE: usize = 44;
/// Most data segments of one WQE (a send with three).
pub(crate) const MAX_SGE: usize = 3;

/// A scatter/gather entry: a local buffer and its key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sge {
    /// Address.
    pub addr: u64,
    /// Key (host order).
    pub key: u32,
    /// Bytes (a count of 0 on the wire is 2 GiB here).
    pub len: u32,
}

/// Up to [`MAX_SGE`] entries, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sges {
    n: u8,
    e: [Sge; MAX_SGE],
}

impl Sges {
    /// The entries.
    pub(crate) fn as_slice(&self) -> &[Sge] {
        &self.e[..self.n as usize]
    }

    /// Total bytes (the WQE image tests).
    #[cfg(test)]
    pub(crate) fn total(&self) -> u64 {
        self.as_slice().iter().map(|s| s.len as u64).sum()
    }

    fn push(&mut self, s: Sge) {
        self.e[self.n as usize] = s;
        self.n += 1;
    }
}

/// What a send WQE asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Nothing (completes in order).
    Nop,
    /// RDMA write (with immediate when the WQE has one) of the local entries to `raddr`.
    Write { raddr: u64, rkey: u32, src: Sges },
    /// RDMA write of the WQE's inline bytes.
    WriteInline { raddr: u64, rkey: u32, len: u8 },
    /// RDMA read of remote `raddr` into the local entries.
    Read { raddr: u64, rkey: u32, dst: Sges },
    /// 64-bit fetch-and-add; the old value goes to `result`.
    FetchAdd {
        raddr: u64,
        rkey: u32,
        add: u64,
        result: Sge,
    },
    /// 64-bit compare-and-swap; the old value goes to `result`.
    CompareSwap {
        raddr: u64,
        rkey: u32,
        compare: u64,
        swap: u64,
        result: Sge,
    },
    /// Send of the local entries.
    Send { src: Sges },
    /// Send of the WQE's inline bytes.
    SendInline { len: u8 },
    /// Hold the queue until CQ `cqn` has produced CQE number `max_index` (mod 2^32).
    Wait { max_index: u32, cqn: u32 },
    /// Dump (completes in order).
    Dump,
}

/// A parsed send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wqe {
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
pub(crate) enum Malformed {
    /// The control segment carries another index than the slot's.
    Index { expected: u16, found: u16 },
    /// The control segment names another QP.
    Qpn { expected: u32, found: u32 },
    /// DS does not fit the opcode or the slot.
    Size { opcode: u8, ds: u8 },
    /// An opcode this NIC does not execute.
    Opcode(u8),
    /// A segment is inconsistent (inline length, atomic result size).
    Segment(u8),
}

fn be32(b: &[u8], o: usize) -> u32 {
    u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn be64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_be_bytes(a)
}

fn data_seg(b: &[u8], o: usize) -> Sge {
    let count = be32(b, o) & !INLINE_SEG;
    Sge {
        len: if count == 0 { ZERO_MEANS } else { count },
        key: be32(b, o + 4),
        addr: be64(b, o + 8),
    }
}

/// The opcode byte of a slot (for error completions of WQEs that do not parse).
pub(crate) fn opcode_of(slot: &[u8; 64]) -> u8 {
    slot[3]
}

/// Parses the WQE in `slot`, which must be WQE `index` (low 16 bits) of QP `qpn`.
pub(crate) fn parse(slot: &[u8; 64], index: u16, qpn: u32) -> Result<Wqe, Malformed> {
    let w0 = be32(slot, 0);
    let opc = (w0 & 0xff) as u8;
    let found = ((w0 >> 8) & 0xffff) as u16;
    if found != index {
        return Err(Malformed::Index {
            expected: index,
            found,
        });
    }
    let w1 = be32(slot, 4);
    if w1 >> 8 != qpn {
        return Err(Malformed::Qpn {
            expected: qpn,
            found: w1 >> 8,
        });
    }
    let ds = (w1 & 0x3f) as u8;
    let size = Err(Malformed::Size { opcode: opc, ds });
    if ds == 0 || ds > 4 {
        return size;
    }
    let ce = (slot[11] >> 2) & 3;
    let mut wqe = Wqe {
        opcode: opc,
        signaled: ce >= 2,
        imm: None,
        op: Op::Nop,
        inline: [0; MAX_INLINE],
    };
    if matches!(opc, opcode::RDMA_WRITE_IMM | opcode::SEND_IMM) {
        wqe.imm = Some([slot[12], slot[13], slot[14], slot[15]]);
    }
    let end = ds as usize * 16;
    match opc {
        opcode::NOP => {}
        opcode::RDMA_WRITE | opcode::RDMA_WRITE_IMM => {
            if ds < 2 {
                return size;
            }
            let raddr = be64(slot, 16);
            let rkey = be32(slot, 24);
            if ds > 2 && be32(slot, 32) & INLINE_SEG != 0 {
                let len = (be32(slot, 32) & !INLINE_SEG) as usize;
                if len > 28 || 36 + len > end {
                    return Err(Malformed::Segment(opc));
                }
                wqe.inline[..len].copy_from_slice(&slot[36..36 + len]);
                wqe.op = Op::WriteInline {
                    raddr,
                    rkey,
                    len: len as u8,
                };
            } else {
                let mut src = Sges::default();
                for i in 2..ds as usize {
                    if be32(slot, i * 16) & INLINE_SEG != 0 {
                        return Err(Malformed::Segment(opc));
                    }
                    src.push(data_seg(slot, i * 16));
                }
                wqe.op = Op::Write { raddr, rkey, src };
            }
        }
        opcode::RDMA_READ => {
            if ds < 3 {
                return size;
            }
            let mut dst = Sges::default();
            for i in 2..ds as usize {
                if be32(slot, i * 16) & INLINE_SEG != 0 {
                    return Err(Malformed::Segment(opc));
                }
                dst.push(data_seg(slot, i * 16));
            }
            wqe.op = Op::Read {
                raddr: be64(slot, 16),
                rkey: be32(slot, 24),
                dst,
            };
        }
        opcode::ATOMIC_FA | opcode::ATOMIC_CS => {
            if ds != 4 {
                return size;
            }
            let result = data_seg(slot, 48);
            if result.len != 8 || be32(slot, 48) & INLINE_SEG != 0 {
                return Err(Malformed::Segment(opc));
            }
            let (raddr, rkey) = (be64(slot, 16), be32(slot, 24));
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
            if ds > 1 && be32(slot, 16) & INLINE_SEG != 0 {
                let len = (be32(slot, 16) & !INLINE_SEG) as usize;
                if len > MAX_INLINE || 20 + len > end {
                    return Err(Malformed::Segment(opc));
                }
                wqe.inline[..len].copy_from_slice(&slot[20..20 + len]);
                wqe.op = Op::SendInline { len: len as u8 };
            } else {
                let mut src = Sges::default();
                for i in 1..ds as usize {
                    if be32(slot, i * 16) & INLINE_SEG != 0 {
                        return Err(Malformed::Segment(opc));
                    }
                    src.push(data_seg(slot, i * 16));
                }
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
pub(crate) struct RecvWqe {
    /// Buffer address.
    pub addr: u64,
    /// Buffer key (host order).
    pub key: u32,
    /// Capacity in bytes (0 for a "no buffer" receive, [`INVALID_LKEY`]).
    pub capacity: u64,
}

/// Parses a 16-byte receive WQE {BE32 length, key, BE64 address}.
pub(crate) fn parse_recv(slot: &[u8; 16]) -> RecvWqe {
    let s = data_seg(slot, 0);
    if s.key == INVALID_LKEY {
        return RecvWqe {
            addr: s.addr,
            key: s.key,
            capacity: 0,
        };
    }
    RecvWqe {
        addr: s.addr,
        key: s.key,
        capacity: s.len as u64,
    }
}
