//! The work rings and doorbells the device code writes, as the proxy reads them.
//!
//! Producer indices arrive in one of three forms (reference facts §3.12), chosen by the
//! QP's NIC handler:
//! * CPU proxy: the 64-bit producer index, host order, in the `sq_db` slot;
//! * GPU_SM_DB (and BlueFlame, which also writes it): the doorbell record word
//!   `BE32(prod & 0xFFFF)`;
//! * GPU_SM_NO_DBR: the doorbell register image, whose first word is `BE32(prod << 8)`.
//!
//! 16-bit forms are widened against the proxy's own 64-bit count: the device never has
//! more than one ring of WQEs outstanding, so the distance is below 2^16. A distance larger
//! than the ring is a broken doorbell ([`BadDoorbell`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Where a send queue's producer index is published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqDoorbell {
    /// CPU proxy: host-order 64-bit index (8-byte aligned).
    ProxySlot(*const u64),
    /// Doorbell record word BE32(prod & 0xFFFF) (4-byte aligned).
    Record(*const u32),
    /// Doorbell register image: BE32(prod << 8) first (8-byte aligned).
    Register(*const u64),
}

/// A doorbell announced more WQEs than the ring holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BadDoorbell {
    /// What it said (widened).
    pub value: u64,
}

/// Widens a 16-bit producer index against the current 64-bit one.
pub(crate) fn widen16(current: u64, v: u16, ring: u32) -> Result<u64, BadDoorbell> {
    let d = v.wrapping_sub(current as u16) as u64;
    if d > ring as u64 {
        return Err(BadDoorbell { value: current + d });
    }
    Ok(current + d)
}

/// A send queue ring of 64-byte WQE slots.
pub(crate) struct SqRing {
    base: *const u8,
    num: u32,
    doorbell: SqDoorbell,
}

// SAFETY: the memory belongs to the C layer for the QP's life; only the owning proxy thread
// reads it.
unsafe impl Send for SqRing {}

impl SqRing {
    /// A ring of `num` (a power of two) slots at `base`.
    ///
    /// # Safety
    /// `base..base + 64 * num` and the doorbell stay readable while the value lives.
    pub(crate) unsafe fn new(base: *const u8, num: u32, doorbell: SqDoorbell) -> SqRing {
        SqRing {
            base,
            num,
            doorbell,
        }
    }

    /// Slots.
    pub(crate) fn size(&self) -> u32 {
        self.num
    }

    /// The producer index the device published, widened against `consumed` (the first
    /// WQE the proxy has not taken yet).
    pub(crate) fn producer(&self, consumed: u64) -> Result<u64, BadDoorbell> {
        match self.doorbell {
            SqDoorbell::ProxySlot(p) => {
                // SAFETY: an aligned 8-byte slot that outlives the ring (see `new`).
                let v = unsafe { (*(p as *const AtomicU64)).load(Ordering::Acquire) };
                if v <= consumed {
                    return Ok(consumed);
                }
                if v - consumed > self.num as u64 {
                    return Err(BadDoorbell { value: v });
                }
                Ok(v)
            }
            SqDoorbell::Record(p) => {
                // SAFETY: an aligned 4-byte record (see `new`).
                let raw = unsafe { (*(p as *const AtomicU32)).load(Ordering::Acquire) };
                widen16(consumed, u32::from_be(raw) as u16, self.num)
            }
            SqDoorbell::Register(p) => {
                // SAFETY: an aligned 8-byte register image (see `new`).
                let raw = unsafe { (*(p as *const AtomicU64)).load(Ordering::Acquire) };
                // Memory order: the first four bytes are BE32(prod << 8).
                let first = u32::from_be_bytes((raw.to_le_bytes()[..4]).try_into().unwrap());
                widen16(consumed, (first >> 8) as u16, self.num)
            }
        }
    }

    /// A copy of the slot of WQE `index`.
    pub(crate) fn read(&self, index: u64) -> [u8; 64] {
        let slot = (index & (self.num as u64 - 1)) as usize;
        let mut out = [0u8; 64];
        // SAFETY: inside the ring (see `new`); a volatile copy, the device may rewrite the
        // slot only after this WQE completed.
        unsafe {
            let p = self.base.add(slot * 64) as *const u64;
            for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
                chunk.copy_from_slice(&std::ptr::read_volatile(p.add(i)).to_ne_bytes());
            }
        }
        out
    }
}

/// A receive queue ring of 16-byte slots with its doorbell record.
pub(crate) struct RqRing {
    base: *const u8,
    num: u32,
    dbrec: *const u32,
}

// SAFETY: as for SqRing.
unsafe impl Send for RqRing {}

impl RqRing {
    /// A ring of `num` (a power of two) slots at `base`, producer in `dbrec`.
    ///
    /// # Safety
    /// `base..base + 16 * num` and the 4-byte aligned `dbrec` stay readable while the value
    /// lives.
    pub(crate) unsafe fn new(base: *const u8, num: u32, dbrec: *const u32) -> RqRing {
        RqRing { base, num, dbrec }
    }

    /// The posted-receive producer index, widened against `current`.
    pub(crate) fn producer(&self, current: u64) -> Result<u64, BadDoorbell> {
        // SAFETY: see `new`.
        let raw = unsafe { (*(self.dbrec as *const AtomicU32)).load(Ordering::Acquire) };
        widen16(current, u32::from_be(raw) as u16, self.num)
    }

    /// A copy of receive WQE `index`.
    pub(crate) fn read(&self, index: u64) -> [u8; 16] {
        let slot = (index & (self.num as u64 - 1)) as usize;
        let mut out = [0u8; 16];
        // SAFETY: inside the ring (see `new`).
        unsafe {
            let p = self.base.add(slot * 16) as *const u64;
            out[..8].copy_from_slice(&std::ptr::read_volatile(p).to_ne_bytes());
            out[8..].copy_from_slice(&std::ptr::read_volatile(p.add(1)).to_ne_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bit_producers_widen_across_the_wrap() {
        assert_eq!(widen16(0, 0, 64), Ok(0));
        assert_eq!(widen16(10, 12, 64), Ok(12));
        assert_eq!(widen16(0xfff0, 0x0010, 64), Ok(0x1_0010));
        assert_eq!(widen16(0x3_fffe, 0x0001, 64), Ok(0x4_0001));
        assert_eq!(widen16(5, 100, 64), Err(BadDoorbell { value: 100 }));
    }

    #[test]
    fn each_doorbell_form_reads_back_the_producer() {
        let ring = [0u8; 64 * 8];
        let slot = 5u64;
        // SAFETY: ring and slot outlive the SqRing values of this test.
        let sq = unsafe { SqRing::new(ring.as_ptr(), 8, SqDoorbell::ProxySlot(&slot)) };
        assert_eq!(sq.producer(2), Ok(5));
        assert_eq!(sq.producer(6), Ok(6), "a stale slot is no progress");
        assert_eq!(sq.producer(0).ok(), Some(5));
        let huge = 100u64;
        // SAFETY: as above.
        let sq = unsafe { SqRing::new(ring.as_ptr(), 8, SqDoorbell::ProxySlot(&huge)) };
        assert!(sq.producer(0).is_err());
        let rec = 0x0003u32.to_be();
        // SAFETY: as above.
        let sq = unsafe { SqRing::new(ring.as_ptr(), 8, SqDoorbell::Record(&rec)) };
        assert_eq!(sq.producer(0x1_fffe), Ok(0x2_0003));
        // DB register image for prod 0x10002, QPN 0x55: BE32(prod << 8), BE32(QPN << 8).
        let mut img = [0u8; 8];
        img[..4].copy_from_slice(&(0x1_0002u32 << 8).to_be_bytes());
        img[4..].copy_from_slice(&(0x55u32 << 8).to_be_bytes());
        let reg = u64::from_ne_bytes(img);
        // SAFETY: as above.
        let sq = unsafe { SqRing::new(ring.as_ptr(), 8, SqDoorbell::Register(&reg)) };
        assert_eq!(sq.producer(0xffff), Ok(0x1_0002));
    }
}
