//! The CQ ring the RDMA engine produces into: whole CQE images
//! (`doca_soft_packet::mlx5::cqe`), written into slot `n & (num - 1)` with `op_own` last
//! (release ordering), the owner bit being the pass parity `(n / num) & 1` that DOCA's
//! pollers expect (rings start with every `op_own` = 0xF1: invalid, owner 1, i.e. "not
//! written" in pass 0).

use doca_soft_packet::mlx5::cqe::{self, Image};

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
        let mut img = *img;
        img[cqe::OP_OWN] |= cqe::owner_of(n, self.num as u32);
        // SAFETY: the slot lies inside the ring (slot < num) and only this proxy thread
        // writes it; see `new`.
        unsafe { cqe::write_image(self.base.add(slot * cqe::CQE_SIZE), &img) };
        self.produced = n + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doca_soft_packet::mlx5::cqe::req;

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
