//! Completion records: 64-byte mlx5 CQEs (the `mlx5_cqe64` / `mlx5_err_cqe_ex` layouts of
//! reference facts §3.1 and §3.12) and the ring the proxy writes them into.
//!
//! A CQE image is built whole, written into slot `n & (num - 1)` of the ring, and its last
//! byte `op_own` = `opcode << 4 | inline bit | owner` is stored last with release ordering,
//! the owner bit being the pass parity `(n / num) & 1` that DOCA's pollers expect (rings
//! start with every `op_own` = 0xF1: invalid, owner 1, i.e. "not written" in pass 0).

use std::sync::atomic::{fence, AtomicU8, Ordering};

/// CQE opcodes (high nibble of `op_own`).
pub mod op {
    /// Requester completion (any successful send-queue WQE).
    pub(crate) const REQ: u8 = 0x0;
    /// Responder: RDMA write with immediate.
    pub(crate) const RESP_WR_IMM: u8 = 0x1;
    /// Responder: send.
    pub(crate) const RESP_SEND: u8 = 0x2;
    /// Responder: send with immediate.
    pub(crate) const RESP_SEND_IMM: u8 = 0x3;
    /// Requester error.
    pub(crate) const REQ_ERR: u8 = 0xd;
    /// Responder error.
    pub(crate) const RESP_ERR: u8 = 0xe;
}

/// Error syndromes (byte 55 of an error CQE).
pub mod syndrome {
    /// A receive buffer was too small.
    pub(crate) const LOCAL_LENGTH: u8 = 0x01;
    /// The WQE could not be executed (malformed, unknown opcode, bad doorbell).
    pub(crate) const LOCAL_QP_OP: u8 = 0x02;
    /// A local key did not cover the buffer.
    pub(crate) const LOCAL_PROT: u8 = 0x04;
    /// Flushed: the QP was in error or destroyed.
    pub(crate) const WR_FLUSH: u8 = 0x05;
    /// The peer refused the request (its receive buffer was too small, no such QP).
    pub(crate) const REMOTE_INVAL_REQ: u8 = 0x12;
    /// The remote key is unknown or does not cover the range / lacks the right.
    pub(crate) const REMOTE_ACCESS: u8 = 0x13;
    /// The peer failed to execute the request.
    pub(crate) const REMOTE_OP: u8 = 0x14;
    /// The peer is gone (no response).
    pub(crate) const TRANSPORT_RETRY_EXC: u8 = 0x15;
    /// The peer had no receive posted and no room to hold the message.
    pub(crate) const RNR_RETRY_EXC: u8 = 0x16;
}

/// Bit 2 of `op_own`: the data is inside the CQE (32-byte inline scatter).
pub(crate) const INLINE_SCATTER_32: u8 = 0x4;

/// A CQE image, `op_own` without the owner bit.
pub(crate) type Image = [u8; 64];

fn tail(img: &mut Image, qpn_word: u32, wqe_counter: u16, op_own: u8) {
    img[56..60].copy_from_slice(&qpn_word.to_be_bytes());
    img[60..62].copy_from_slice(&wqe_counter.to_be_bytes());
    img[63] = op_own;
}

/// A successful requester CQE for WQE `wqe_counter` of QP `qpn` (`byte_cnt`: bytes read
/// or fetched, 0 otherwise).
pub(crate) fn req(wqe_counter: u16, qpn: u32, byte_cnt: u32) -> Image {
    let mut img = [0u8; 64];
    img[44..48].copy_from_slice(&byte_cnt.to_be_bytes());
    tail(&mut img, qpn & 0xff_ffff, wqe_counter, op::REQ << 4);
    img
}

/// A successful responder CQE: `opcode` RESP_SEND / RESP_SEND_IMM / RESP_WR_IMM for receive
/// WQE `wqe_counter` of QP `qpn`, `byte_cnt` bytes, the raw immediate, and (inline
/// receive) the data itself in bytes 0-31.
pub(crate) fn resp(
    opcode: u8,
    wqe_counter: u16,
    qpn: u32,
    byte_cnt: u32,
    imm: Option<[u8; 4]>,
    inline: Option<&[u8]>,
) -> Image {
    let mut img = [0u8; 64];
    let mut op_own = opcode << 4;
    if let Some(d) = inline {
        let n = d.len().min(32);
        img[..n].copy_from_slice(&d[..n]);
        op_own |= INLINE_SCATTER_32;
    }
    if let Some(i) = imm {
        img[36..40].copy_from_slice(&i);
    }
    img[44..48].copy_from_slice(&byte_cnt.to_be_bytes());
    tail(&mut img, qpn & 0xff_ffff, wqe_counter, op_own);
    img
}

/// An error CQE (`mlx5_err_cqe_ex`): `opcode` REQ_ERR or RESP_ERR, the syndrome, the
/// failed WQE's opcode (requester) and counter, the QP.
pub(crate) fn error(opcode: u8, synd: u8, wqe_opcode: u8, wqe_counter: u16, qpn: u32) -> Image {
    let mut img = [0u8; 64];
    img[55] = synd;
    tail(
        &mut img,
        ((wqe_opcode as u32) << 24) | (qpn & 0xff_ffff),
        wqe_counter,
        opcode << 4,
    );
    img
}

/// A CQ ring the proxy produces into.
pub(crate) struct CqRing {
    base: *mut u8,
    num: u64,
    /// The number of the next CQE to write (monotonic).
    produced: u64,
}

// SAFETY: the ring memory is owned by the C layer for the CQ's life and written only by the
// one proxy thread that owns this value.
unsafe impl Send for CqRing {}

impl CqRing {
    /// A ring of `num` (a power of two) 64-byte CQEs at `base`.
    ///
    /// # Safety
    /// `base..base + 64 * num` is writable, 64-byte aligned memory that outlives the value.
    pub(crate) unsafe fn new(base: *mut u8, num: u32) -> CqRing {
        CqRing {
            base,
            num: num as u64,
            produced: 0,
        }
    }

    /// CQEs written so far.
    pub(crate) fn produced(&self) -> u64 {
        self.produced
    }

    /// Writes `img` as the next CQE, `op_own` (with the owner bit) last.
    pub(crate) fn push(&mut self, img: &Image) {
        let n = self.produced;
        let slot = (n & (self.num - 1)) as usize;
        let owner = ((n / self.num) & 1) as u8;
        // SAFETY: the slot lies inside the ring (slot < num); see `new`.
        unsafe {
            let p = self.base.add(slot * 64);
            std::ptr::copy_nonoverlapping(img.as_ptr(), p, 63);
            fence(Ordering::Release);
            (*(p.add(63) as *const AtomicU8)).store(img[63] | owner, Ordering::Release);
        }
        self.produced = n + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_bit_follows_the_pass_parity_and_op_own_is_complete() {
        let mut ring = vec![0u8; 64 * 4];
        for c in ring.chunks_mut(64) {
            c[63] = 0xf1;
        }
        // SAFETY: 4 slots of writable memory, alive for the test (alignment is irrelevant
        // for byte stores).
        let mut cq = unsafe { CqRing::new(ring.as_mut_ptr(), 4) };
        for i in 0..6u16 {
            cq.push(&req(i, 0x12, 0));
        }
        // CQEs 4 and 5 overwrote slots 0 and 1 in pass 1 (owner 1); 2 and 3 are pass 0.
        assert_eq!(ring[63], 0x01);
        assert_eq!(&ring[60..62], &[0, 4]);
        assert_eq!(ring[64 + 63], 0x01);
        assert_eq!(ring[128 + 63], 0x00);
        assert_eq!(&ring[128 + 60..128 + 62], &[0, 2]);
        assert_eq!(ring[192 + 63], 0x00);
        assert_eq!(&ring[192 + 56..192 + 60], &[0, 0, 0, 0x12]);
        assert_eq!(cq.produced(), 6);
    }
}
