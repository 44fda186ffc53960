//! Send WQE segments: 16-byte control, Ethernet, data and wait segments, and whole WQEs
//! built from them. A WQE is `ds` 16-byte segments in `ceil(ds / 4)` consecutive 64-byte
//! basic blocks of the ring.

use super::{be32, be64, opcode, CTRL_CQ_UPDATE, OPMOD_WAIT_ON_TIME};

/// Bytes of one WQE basic block (a send ring slot).
pub const WQE_BB: usize = 64;
/// Bytes of one segment.
pub const SEG: usize = 16;

/// Basic blocks a WQE of `ds` segments takes (at least one).
pub fn wqe_bbs(ds: u8) -> u32 {
    (u32::from(ds) * SEG as u32).div_ceil(WQE_BB as u32).max(1)
}

/// Control segment: word 0 = BE32(opmod << 24 | (index & 0xffff) << 8 | opcode), word 1 =
/// BE32(qpn << 8 | ds), byte 11 = `fm_ce_se`, word 3 = immediate (raw).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ctrl {
    /// Opcode ([`opcode`]).
    pub opcode: u8,
    /// Opcode modifier.
    pub opmod: u8,
    /// Low 16 bits of the WQE index.
    pub wqe_index: u16,
    /// QP (send queue) number, 24 bits.
    pub qpn: u32,
    /// Segments in the WQE, control segment included (6 bits).
    pub ds: u8,
    /// Fence, completion and solicited bits ([`CTRL_CQ_UPDATE`]).
    pub fm_ce_se: u8,
    /// Immediate, as stored.
    pub imm: u32,
}

impl Ctrl {
    /// The 16 bytes.
    pub fn encode(&self) -> [u8; SEG] {
        let mut b = [0u8; SEG];
        let w0 = (u32::from(self.opmod) << 24)
            | (u32::from(self.wqe_index) << 8)
            | u32::from(self.opcode);
        let w1 = (self.qpn << 8) | u32::from(self.ds & 0x3f);
        b[0..4].copy_from_slice(&w0.to_be_bytes());
        b[4..8].copy_from_slice(&w1.to_be_bytes());
        b[11] = self.fm_ce_se;
        b[12..16].copy_from_slice(&self.imm.to_ne_bytes());
        b
    }

    /// Reads a control segment (the first 16 bytes of `b`).
    pub fn decode(b: &[u8]) -> Ctrl {
        let w0 = be32(b, 0);
        let w1 = be32(b, 4);
        Ctrl {
            opcode: w0 as u8,
            opmod: (w0 >> 24) as u8,
            wqe_index: (w0 >> 8) as u16,
            qpn: w1 >> 8,
            ds: (w1 & 0x3f) as u8,
            fm_ce_se: b[11],
            imm: u32::from_ne_bytes([b[12], b[13], b[14], b[15]]),
        }
    }

    /// Whether the WQE asks for a completion.
    pub fn notify(&self) -> bool {
        self.fm_ce_se & CTRL_CQ_UPDATE != 0
    }
}

/// Ethernet segment (its first 16 bytes): checksum flags, MSS, inline header size and the
/// first two inline header bytes (the rest follows in the next segments).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EthSeg {
    /// `CS_L3` / `CS_L4`.
    pub cs_flags: u8,
    /// TSO segment size (unused by sends here).
    pub mss: u16,
    /// Inline header bytes.
    pub inline_hdr_sz: u16,
    /// First two inline header bytes.
    pub inline_hdr_start: [u8; 2],
}

impl EthSeg {
    /// The 16 bytes.
    pub fn encode(&self) -> [u8; SEG] {
        let mut b = [0u8; SEG];
        b[4] = self.cs_flags;
        b[6..8].copy_from_slice(&self.mss.to_be_bytes());
        b[12..14].copy_from_slice(&self.inline_hdr_sz.to_be_bytes());
        b[14..16].copy_from_slice(&self.inline_hdr_start);
        b
    }

    /// Reads an Ethernet segment (the first 16 bytes of `b`).
    pub fn decode(b: &[u8]) -> EthSeg {
        EthSeg {
            cs_flags: b[4],
            mss: u16::from_be_bytes([b[6], b[7]]),
            inline_hdr_sz: u16::from_be_bytes([b[12], b[13]]),
            inline_hdr_start: [b[14], b[15]],
        }
    }
}

/// Data (pointer) segment: BE32 byte count, key (raw), BE64 address.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataSeg {
    /// Bytes.
    pub byte_count: u32,
    /// Memory key as stored (big-endian on the wire, as the device API receives it).
    pub lkey_raw: u32,
    /// Address.
    pub addr: u64,
}

impl DataSeg {
    /// The 16 bytes.
    pub fn encode(&self) -> [u8; SEG] {
        let mut b = [0u8; SEG];
        b[0..4].copy_from_slice(&self.byte_count.to_be_bytes());
        b[4..8].copy_from_slice(&self.lkey_raw.to_ne_bytes());
        b[8..16].copy_from_slice(&self.addr.to_be_bytes());
        b
    }

    /// Reads a data segment (the first 16 bytes of `b`).
    pub fn decode(b: &[u8]) -> DataSeg {
        DataSeg {
            byte_count: be32(b, 0),
            lkey_raw: u32::from_ne_bytes([b[4], b[5], b[6], b[7]]),
            addr: be64(b, 8),
        }
    }
}

/// Time (host-order `seconds << 32 | nanoseconds`) of a wait-on-time segment: 8 reserved
/// bytes, then the BE64 time.
pub fn wait_seg_time(b: &[u8]) -> u64 {
    be64(b, 8)
}

/// A wait-on-time segment for `sec_ns` (host-order `seconds << 32 | nanoseconds`).
pub fn wait_seg(sec_ns: u64) -> [u8; SEG] {
    let mut b = [0u8; SEG];
    b[8..16].copy_from_slice(&sec_ns.to_be_bytes());
    b
}

/// One-block send WQE: control (DS 2 + segments), Ethernet segment with `cs_flags`, then
/// one or two data segments (more do not fit one block).
pub fn send_wqe(
    wqe_index: u16,
    qpn: u32,
    cs_flags: u8,
    notify: bool,
    segs: &[DataSeg],
) -> [u8; WQE_BB] {
    assert!(
        (1..=2).contains(&segs.len()),
        "a one-block send holds 1 or 2 data segments"
    );
    let mut w = [0u8; WQE_BB];
    let c = eth_ctrl(opcode::SEND, wqe_index, qpn, notify, segs.len());
    write_eth_wqe(&mut w, c, cs_flags, segs);
    w
}

/// Wait-on-time WQE: WAIT with opmod 1, DS 2, the wait segment holding `sec_ns`.
pub fn wait_wqe(wqe_index: u16, qpn: u32, sec_ns: u64, notify: bool) -> [u8; WQE_BB] {
    let mut w = [0u8; WQE_BB];
    let ctrl = Ctrl {
        opcode: opcode::WAIT,
        opmod: OPMOD_WAIT_ON_TIME,
        wqe_index,
        qpn,
        ds: 2,
        fm_ce_se: if notify { CTRL_CQ_UPDATE } else { 0 },
        ..Ctrl::default()
    };
    w[0..16].copy_from_slice(&ctrl.encode());
    w[16..32].copy_from_slice(&wait_seg(sec_ns));
    w
}

/// Enhanced multi-packet send: control (DS 2 + packets), Ethernet segment, one data
/// segment per packet; `ceil(ds / 4)` blocks (returned contiguous; a ring stores them in
/// consecutive slots, wrapping).
pub fn empw_wqe(wqe_index: u16, qpn: u32, cs_flags: u8, notify: bool, pkts: &[DataSeg]) -> Vec<u8> {
    assert!(!pkts.is_empty() && pkts.len() <= 61, "1 to 61 packets");
    let c = eth_ctrl(opcode::ENHANCED_MPSW, wqe_index, qpn, notify, pkts.len());
    let mut w = vec![0u8; wqe_bbs(c.ds) as usize * WQE_BB];
    write_eth_wqe(&mut w, c, cs_flags, pkts);
    w
}

/// The control segment of an Ethernet send of `opcode` with `segs` data segments.
fn eth_ctrl(opcode: u8, wqe_index: u16, qpn: u32, notify: bool, segs: usize) -> Ctrl {
    Ctrl {
        opcode,
        wqe_index,
        qpn,
        ds: 2 + segs as u8,
        fm_ce_se: if notify { CTRL_CQ_UPDATE } else { 0 },
        ..Ctrl::default()
    }
}

/// Lays out an Ethernet send into `w` (zeroed, whole blocks): `ctrl`, the Ethernet segment
/// with `cs_flags`, one data segment each.
fn write_eth_wqe(w: &mut [u8], ctrl: Ctrl, cs_flags: u8, segs: &[DataSeg]) {
    w[0..16].copy_from_slice(&ctrl.encode());
    w[16..32].copy_from_slice(
        &EthSeg {
            cs_flags,
            ..EthSeg::default()
        }
        .encode(),
    );
    for (k, s) in segs.iter().enumerate() {
        w[32 + 16 * k..48 + 16 * k].copy_from_slice(&s.encode());
    }
}

/// What a send WQE asks the NIC to do, parsed from its `ds * 16` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Send one frame: the inline header bytes, then the data segments' bytes.
    Send {
        /// Checksum flags.
        cs_flags: u8,
        /// Inline header bytes (often none).
        inline: Vec<u8>,
        /// Gather list.
        segs: Vec<DataSeg>,
    },
    /// Send one frame per data segment.
    MultiPacket {
        /// Checksum flags.
        cs_flags: u8,
        /// One segment per frame.
        pkts: Vec<DataSeg>,
    },
    /// Hold the queue until CLOCK_REALTIME reaches the time (host-order sec << 32 | ns).
    WaitOnTime(u64),
    /// Nothing to send (NOP, DUMP).
    Nop,
}

/// Why a WQE cannot be executed (it completes with an error CQE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WqeError {
    /// Opcode (or WAIT opmod) the NIC does not execute.
    Unsupported(u8),
    /// DS too small for the opcode, or inline header larger than the WQE.
    Malformed,
}

/// What kind of work a WQE is, its segments left in the caller's buffers
/// ([`parse_into`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One frame: the inline bytes, then the data segments' bytes.
    Send {
        /// Checksum flags.
        cs_flags: u8,
    },
    /// One frame per data segment.
    MultiPacket {
        /// Checksum flags.
        cs_flags: u8,
    },
    /// Hold until this time (host-order sec << 32 | ns).
    WaitOnTime(u64),
    /// Nothing to send.
    Nop,
}

/// Parses a send WQE from its bytes (`bytes.len() >= ctrl.ds * 16`) without allocating:
/// inline header bytes are appended to `inline`, data segments to `segs` (both only for
/// [`Kind::Send`] / [`Kind::MultiPacket`]; on error nothing is appended).
pub fn parse_into(
    ctrl: &Ctrl,
    bytes: &[u8],
    inline: &mut Vec<u8>,
    segs: &mut Vec<DataSeg>,
) -> Result<Kind, WqeError> {
    let ds = usize::from(ctrl.ds);
    if ds == 0 || bytes.len() < ds * SEG {
        return Err(WqeError::Malformed);
    }
    match ctrl.opcode {
        opcode::NOP | opcode::DUMP => Ok(Kind::Nop),
        opcode::WAIT if ctrl.opmod == OPMOD_WAIT_ON_TIME => {
            if ds < 2 {
                return Err(WqeError::Malformed);
            }
            Ok(Kind::WaitOnTime(wait_seg_time(&bytes[SEG..2 * SEG])))
        }
        opcode::SEND | opcode::ENHANCED_MPSW => {
            if ds < 2 {
                return Err(WqeError::Malformed);
            }
            let eth = EthSeg::decode(&bytes[SEG..2 * SEG]);
            let ihs = usize::from(eth.inline_hdr_sz);
            // Inline header: 2 bytes in the Ethernet segment, the rest in whole segments.
            let first_data = 2 + ihs.saturating_sub(2).div_ceil(SEG);
            if first_data > ds {
                return Err(WqeError::Malformed);
            }
            let multi = ctrl.opcode == opcode::ENHANCED_MPSW;
            if multi && (ihs != 0 || first_data == ds) {
                return Err(WqeError::Malformed);
            }
            if !multi && ihs == 0 && first_data == ds {
                return Err(WqeError::Malformed);
            }
            inline.extend_from_slice(&eth.inline_hdr_start[..ihs.min(2)]);
            if ihs > 2 {
                inline.extend_from_slice(&bytes[2 * SEG..2 * SEG + ihs - 2]);
            }
            segs.extend((first_data..ds).map(|k| DataSeg::decode(&bytes[k * SEG..(k + 1) * SEG])));
            Ok(if multi {
                Kind::MultiPacket {
                    cs_flags: eth.cs_flags,
                }
            } else {
                Kind::Send {
                    cs_flags: eth.cs_flags,
                }
            })
        }
        other => Err(WqeError::Unsupported(other)),
    }
}

/// Parses a send WQE from its bytes (`bytes.len() >= ctrl.ds * 16`).
pub fn parse(ctrl: &Ctrl, bytes: &[u8]) -> Result<Parsed, WqeError> {
    let (mut inline, mut segs) = (Vec::new(), Vec::new());
    Ok(match parse_into(ctrl, bytes, &mut inline, &mut segs)? {
        Kind::Send { cs_flags } => Parsed::Send {
            cs_flags,
            inline,
            segs,
        },
        Kind::MultiPacket { cs_flags } => Parsed::MultiPacket {
            cs_flags,
            pkts: segs,
        },
        Kind::WaitOnTime(t) => Parsed::WaitOnTime(t),
        Kind::Nop => Parsed::Nop,
    })
}
