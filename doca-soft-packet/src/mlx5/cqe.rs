//! `struct mlx5_cqe64`: the 64-byte completion. Offsets: `byte_cnt` BE32 @44, `timestamp`
//! BE64 @48, `sop_drop_qpn` BE32 @56 (low 24 bits QPN), `wqe_counter` BE16 @60,
//! `signature` @62, `op_own` @63 (opcode << 4 | inline-scatter bits | owner bit 0). Error
//! CQEs carry `vendor_err_synd` @54 and `syndrome` @55 (and, requester errors, the failed
//! WQE's opcode in the top byte of `sop_drop_qpn`). Responder CQEs carry the immediate
//! (raw) @36, and with [`INLINE_SCATTER_32`] up to 32 received bytes @0.

use super::cqe_opcode;

/// Bytes of one completion.
pub const CQE_SIZE: usize = 64;
/// Offset of `byte_cnt`.
pub const BYTE_CNT: usize = 44;
/// Offset of `timestamp`.
pub const TIMESTAMP: usize = 48;
/// Offset of `sop_drop_qpn`.
pub const SOP_DROP_QPN: usize = 56;
/// Offset of `wqe_counter`.
pub const WQE_COUNTER: usize = 60;
/// Offset of `syndrome` (error CQEs).
pub const SYNDROME: usize = 55;
/// Offset of `op_own`.
pub const OP_OWN: usize = 63;
/// Offset of the immediate (responder CQEs, raw bytes).
pub const IMM: usize = 36;
/// Bit 2 of `op_own`: the data is inside the CQE (32-byte inline scatter).
pub const INLINE_SCATTER_32: u8 = 0x4;
/// `op_own` of an entry not written yet: opcode INVALID, owner 1 (so that pass 0, which
/// expects owner 0, does not see it).
pub const OP_OWN_INIT: u8 = (cqe_opcode::INVALID << 4) | 1;

/// The fields of a completion a soft NIC writes and a poller reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cqe {
    /// CQE opcode ([`cqe_opcode`]).
    pub opcode: u8,
    /// Owner bit: parity of the pass over the ring (`(index / cqe_num) & 1`).
    pub owner: u8,
    /// Bytes received (or sent).
    pub byte_cnt: u32,
    /// Host-order `seconds << 32 | nanoseconds`.
    pub timestamp: u64,
    /// QP number (24 bits).
    pub qpn: u32,
    /// WQE index (low 16 bits) that completed.
    pub wqe_counter: u16,
    /// Error syndrome (error CQEs).
    pub syndrome: u8,
}

impl Cqe {
    /// The 64 bytes (`op_own` last; a writer makes it visible last, see [`Cqe::op_own`]).
    pub fn encode(&self) -> [u8; CQE_SIZE] {
        let mut b = [0u8; CQE_SIZE];
        b[BYTE_CNT..BYTE_CNT + 4].copy_from_slice(&self.byte_cnt.to_be_bytes());
        b[TIMESTAMP..TIMESTAMP + 8].copy_from_slice(&self.timestamp.to_be_bytes());
        b[SOP_DROP_QPN..SOP_DROP_QPN + 4].copy_from_slice(&(self.qpn & 0xff_ffff).to_be_bytes());
        b[WQE_COUNTER..WQE_COUNTER + 2].copy_from_slice(&self.wqe_counter.to_be_bytes());
        if is_error(self.opcode) {
            b[SYNDROME] = self.syndrome;
        }
        b[OP_OWN] = self.op_own();
        b
    }

    /// Byte 63.
    pub fn op_own(&self) -> u8 {
        (self.opcode << 4) | (self.owner & 1)
    }

    /// Reads a completion.
    pub fn decode(b: &[u8; CQE_SIZE]) -> Cqe {
        let op_own = b[OP_OWN];
        let opcode = op_own >> 4;
        Cqe {
            opcode,
            owner: op_own & 1,
            byte_cnt: u32::from_be_bytes(b[BYTE_CNT..BYTE_CNT + 4].try_into().unwrap()),
            timestamp: u64::from_be_bytes(b[TIMESTAMP..TIMESTAMP + 8].try_into().unwrap()),
            qpn: u32::from_be_bytes(b[SOP_DROP_QPN..SOP_DROP_QPN + 4].try_into().unwrap())
                & 0xff_ffff,
            wqe_counter: u16::from_be_bytes([b[WQE_COUNTER], b[WQE_COUNTER + 1]]),
            syndrome: if is_error(opcode) { b[SYNDROME] } else { 0 },
        }
    }
}

/// Whether a CQE opcode reports an error.
pub fn is_error(opcode: u8) -> bool {
    opcode == cqe_opcode::REQ_ERR || opcode == cqe_opcode::RESP_ERR
}

/// Owner bit completion number `index` carries in a ring of `cqe_num` (a power of two).
pub fn owner_of(index: u64, cqe_num: u32) -> u8 {
    ((index >> cqe_num.trailing_zeros()) & 1) as u8
}

/// Whether completion number `index` is present, given its slot's `op_own` byte.
pub fn present(op_own: u8, index: u64, cqe_num: u32) -> bool {
    op_own >> 4 != cqe_opcode::INVALID && op_own & 1 == owner_of(index, cqe_num)
}

/// Writes completion `c` into the 64-byte slot `slot`: every byte but `op_own` first, then
/// `op_own` with release ordering, so a poller that sees the owner bit sees the rest.
///
/// # Safety
/// `slot` points to 64 writable bytes that no one else writes meanwhile.
pub unsafe fn write(slot: *mut u8, c: &Cqe) {
    // SAFETY: per contract.
    unsafe { write_image(slot, &c.encode()) }
}

/// Writes the completion image `img` into the 64-byte slot `slot` as [`write()`] does: every
/// byte but `op_own`, then `op_own` with release ordering.
///
/// # Safety
/// `slot` points to 64 writable bytes that no one else writes meanwhile.
pub unsafe fn write_image(slot: *mut u8, img: &Image) {
    // SAFETY: per contract. A plain copy: the release store below orders it before the
    // op_own byte the poller (GPU or thread) acquires.
    unsafe {
        std::ptr::copy_nonoverlapping(img.as_ptr(), slot, OP_OWN);
        std::sync::atomic::AtomicU8::from_ptr(slot.add(OP_OWN))
            .store(img[OP_OWN], std::sync::atomic::Ordering::Release);
    }
}

/// Reads the 64-byte slot `slot` after an acquire load of its `op_own`.
///
/// # Safety
/// `slot` points to 64 readable bytes.
pub unsafe fn read(slot: *const u8) -> [u8; CQE_SIZE] {
    let mut b = [0u8; CQE_SIZE];
    // SAFETY: per contract; the acquire load orders the copy after it.
    unsafe {
        b[OP_OWN] = load_op_own(slot);
        std::ptr::copy_nonoverlapping(slot, b.as_mut_ptr(), OP_OWN);
    }
    b
}

/// Initialises a ring of `cqe_num` slots at `ring` ([`OP_OWN_INIT`] in every `op_own`).
///
/// # Safety
/// `ring` points to `cqe_num * 64` writable bytes.
pub unsafe fn init_ring(ring: *mut u8, cqe_num: u32) {
    for k in 0..cqe_num as usize {
        // SAFETY: per contract.
        unsafe {
            std::ptr::write_bytes(ring.add(k * CQE_SIZE), 0, CQE_SIZE);
            *ring.add(k * CQE_SIZE + OP_OWN) = OP_OWN_INIT;
        }
    }
}

/// The `op_own` byte of the 64-byte slot `slot`, with acquire ordering (the bytes before
/// it that its writer wrote are visible after it).
///
/// # Safety
/// `slot` points to 64 readable bytes.
pub unsafe fn load_op_own(slot: *const u8) -> u8 {
    // SAFETY: per contract.
    unsafe { std::sync::atomic::AtomicU8::from_ptr(slot.add(OP_OWN) as *mut u8) }
        .load(std::sync::atomic::Ordering::Acquire)
}

/// Writes every field of completion `c` but `op_own` (bytes 44 to 62: the only ones a
/// completion written by [`write()`] or here sets; the rest of a slot stays as
/// [`init_ring`] left it). [`publish`] makes it visible later.
///
/// # Safety
/// `slot` points to 64 writable bytes that no one else writes meanwhile, and its `op_own`
/// does not make it present yet.
pub unsafe fn write_body(slot: *mut u8, c: &Cqe) {
    let b = c.encode();
    // SAFETY: per contract.
    unsafe {
        std::ptr::copy_nonoverlapping(
            b.as_ptr().add(BYTE_CNT),
            slot.add(BYTE_CNT),
            OP_OWN - BYTE_CNT,
        )
    };
}

/// Stores `op_own` with release ordering (after [`write_body`]): the completion becomes
/// present.
///
/// # Safety
/// `slot` points to a 64-byte completion slot.
pub unsafe fn publish(slot: *mut u8, op_own: u8) {
    // SAFETY: per contract.
    unsafe { std::sync::atomic::AtomicU8::from_ptr(slot.add(OP_OWN)) }
        .store(op_own, std::sync::atomic::Ordering::Release);
}

/// `byte_cnt` and `timestamp` (host order) of the slot `slot`, read as a receiver reads
/// them after seeing the completion present.
///
/// # Safety
/// `slot` points to 64 readable bytes.
pub unsafe fn read_len_ts(slot: *const u8) -> (u32, u64) {
    let mut b = [0u8; 12];
    // SAFETY: per contract.
    unsafe { std::ptr::copy_nonoverlapping(slot.add(BYTE_CNT), b.as_mut_ptr(), 12) };
    (
        u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        u64::from_be_bytes([b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]]),
    )
}

/// A whole completion image (the RDMA engine's: built whole, its owner bit added when it is
/// written, [`write_image`]).
pub type Image = [u8; CQE_SIZE];

fn tail(img: &mut Image, qpn_word: u32, wqe_counter: u16, op_own: u8) {
    img[SOP_DROP_QPN..SOP_DROP_QPN + 4].copy_from_slice(&qpn_word.to_be_bytes());
    img[WQE_COUNTER..WQE_COUNTER + 2].copy_from_slice(&wqe_counter.to_be_bytes());
    img[OP_OWN] = op_own;
}

/// A successful requester CQE for WQE `wqe_counter` of QP `qpn` (`byte_cnt`: bytes read
/// or fetched, 0 otherwise), owner bit 0.
pub fn req(wqe_counter: u16, qpn: u32, byte_cnt: u32) -> Image {
    let mut img = [0u8; CQE_SIZE];
    img[BYTE_CNT..BYTE_CNT + 4].copy_from_slice(&byte_cnt.to_be_bytes());
    tail(&mut img, qpn & 0xff_ffff, wqe_counter, cqe_opcode::REQ << 4);
    img
}

/// A successful responder CQE, owner bit 0: `opcode` RESP_SEND / RESP_SEND_IMM /
/// RESP_WR_IMM for receive WQE `wqe_counter` of QP `qpn`, `byte_cnt` bytes, the raw
/// immediate, and (inline receive) the data itself in bytes 0-31.
pub fn resp(
    opcode: u8,
    wqe_counter: u16,
    qpn: u32,
    byte_cnt: u32,
    imm: Option<[u8; 4]>,
    inline: Option<&[u8]>,
) -> Image {
    let mut img = [0u8; CQE_SIZE];
    let mut op_own = opcode << 4;
    if let Some(d) = inline {
        let n = d.len().min(32);
        img[..n].copy_from_slice(&d[..n]);
        op_own |= INLINE_SCATTER_32;
    }
    if let Some(i) = imm {
        img[IMM..IMM + 4].copy_from_slice(&i);
    }
    img[BYTE_CNT..BYTE_CNT + 4].copy_from_slice(&byte_cnt.to_be_bytes());
    tail(&mut img, qpn & 0xff_ffff, wqe_counter, op_own);
    img
}

/// An error CQE (`mlx5_err_cqe_ex`), owner bit 0: `opcode` REQ_ERR or RESP_ERR, the
/// syndrome, the failed WQE's opcode (requester) and counter, the QP.
pub fn error(opcode: u8, synd: u8, wqe_opcode: u8, wqe_counter: u16, qpn: u32) -> Image {
    let mut img = [0u8; CQE_SIZE];
    img[SYNDROME] = synd;
    tail(
        &mut img,
        ((wqe_opcode as u32) << 24) | (qpn & 0xff_ffff),
        wqe_counter,
        opcode << 4,
    );
    img
}
