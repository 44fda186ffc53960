//! The public GPU-side descriptors of `doca_gpunetio_verbs_def.h` as Rust structs:
//! `struct doca_gpu_dev_verbs_cq` ([`DevVerbsCq`], 56 bytes) and `struct
//! doca_gpu_dev_verbs_qp` ([`DevVerbsQp`], 312 bytes). Every offset is asserted at compile
//! time against the numbers the header's own static asserts pin, so the two cannot drift
//! apart silently. Pointers are device addresses (`u64`).

use std::mem::{align_of, offset_of, size_of};

/// `enum doca_gpu_dev_verbs_nic_handler` values.
pub(crate) mod nic_handler {
    /// Chosen by the library (never stored in a descriptor: it resolves to a concrete one).
    pub(crate) const AUTO: u32 = 0;
    /// The producer index goes to a host slot the proxy watches.
    pub(crate) const CPU_PROXY: u32 = 1;
    /// Doorbell record + doorbell register.
    pub(crate) const GPU_SM_DB: u32 = 2;
    /// BlueFlame (whole WQE through the UAR).
    pub(crate) const GPU_SM_BF: u32 = 3;
    /// Doorbell register only.
    pub(crate) const GPU_SM_NO_DBR: u32 = 4;
}

/// `DOCA_GPUNETIO_VERBS_MEM_TYPE_HOST`: where our rings live.
pub(crate) const MEM_TYPE_HOST: u32 = 1;

/// `struct doca_gpu_dev_verbs_cq`.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DevVerbsCq {
    /// CQE ring (device address).
    pub cqe_daddr: u64,
    /// CQ number.
    pub cq_num: u32,
    /// CQEs in the ring (a power of two).
    pub cqe_num: u32,
    /// CQ doorbell record (device address).
    pub dbrec: u64,
    /// Next CQE number not yet consumed (device-updated).
    pub cqe_ci: u64,
    /// `cqe_num - 1`.
    pub cqe_mask: u32,
    /// 64.
    pub cqe_size: u8,
    /// Reservation counter of `poll_cq(count)` (device-updated).
    pub cqe_rsvd: u64,
    /// `enum doca_gpu_dev_verbs_mem_type` of the ring.
    pub mem_type: u32,
}

const _: () = {
    assert!(size_of::<DevVerbsCq>() == 56);
    assert!(align_of::<DevVerbsCq>() == 8);
    assert!(offset_of!(DevVerbsCq, cq_num) == 8);
    assert!(offset_of!(DevVerbsCq, cqe_num) == 12);
    assert!(offset_of!(DevVerbsCq, dbrec) == 16);
    assert!(offset_of!(DevVerbsCq, cqe_ci) == 24);
    assert!(offset_of!(DevVerbsCq, cqe_mask) == 32);
    assert!(offset_of!(DevVerbsCq, cqe_size) == 36);
    assert!(offset_of!(DevVerbsCq, cqe_rsvd) == 40);
    assert!(offset_of!(DevVerbsCq, mem_type) == 48);
};

/// `struct doca_gpu_dev_verbs_qp`.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DevVerbsQp {
    /// Next SQ WQE index handed out (device-updated).
    pub sq_rsvd_index: u64,
    /// Every SQ WQE below is written (device-updated).
    pub sq_ready_index: u64,
    /// Highest SQ producer index submitted (device-updated).
    pub sq_wqe_pi: u64,
    /// QP number.
    pub sq_num: u32,
    /// `QPN << 8`.
    pub sq_num_shift8: u32,
    /// `BE32(QPN << 8)`.
    pub sq_num_shift8_be: u32,
    /// `BE32(QPN << 8 | 1)`.
    pub sq_num_shift8_be_1ds: u32,
    /// `BE32(QPN << 8 | 2)`.
    pub sq_num_shift8_be_2ds: u32,
    /// `BE32(QPN << 8 | 3)`.
    pub sq_num_shift8_be_3ds: u32,
    /// `BE32(QPN << 8 | 4)`.
    pub sq_num_shift8_be_4ds: u32,
    /// SQ lock (device).
    pub sq_lock: i32,
    /// SQ slots (a power of two).
    pub sq_wqe_num: u16,
    /// `sq_wqe_num - 1`.
    pub sq_wqe_mask: u16,
    /// SQ ring of 64-byte WQEs.
    pub sq_wqe_daddr: u64,
    /// Send doorbell record word.
    pub sq_dbrec: u64,
    /// Doorbell register, or the CPU-proxy slot.
    pub sq_db: u64,
    /// RQ number (the QPN).
    pub rq_num: u32,
    /// Highest RQ producer index submitted (device-updated).
    pub rq_wqe_pi: u64,
    /// RQ slots (a power of two).
    pub rq_wqe_num: u32,
    /// `rq_wqe_num - 1`.
    pub rq_wqe_mask: u32,
    /// RQ ring of 16-byte receive WQEs.
    pub rq_wqe_daddr: u64,
    /// Receive doorbell record word.
    pub rq_dbrec: u64,
    /// 16.
    pub rcv_wqe_size: u32,
    /// Next RQ WQE index handed out (device-updated).
    pub rq_rsvd_index: u64,
    /// Every RQ WQE below is written (device-updated).
    pub rq_ready_index: u64,
    /// RQ lock (device).
    pub rq_lock: i32,
    /// Send CQ.
    pub cq_sq: DevVerbsCq,
    /// Receive CQ.
    pub cq_rq: DevVerbsCq,
    /// The concrete `enum doca_gpu_dev_verbs_nic_handler`.
    pub nic_handler: u32,
    /// `enum doca_gpu_dev_verbs_mem_type` of the rings.
    pub mem_type: u32,
    /// Whether reads/receives need a DUMP WQE (never, here).
    pub need_mcst: bool,
    /// Unused by the 3.3 device code.
    pub last_get_wqe_idx: u64,
    /// Unused by the 3.3 device code.
    pub last_dump_wqe_idx: u64,
    /// Unused by the 3.3 device code.
    pub last_recv_wqe_idx: u64,
}

const _: () = {
    assert!(size_of::<DevVerbsQp>() == 312);
    assert!(align_of::<DevVerbsQp>() == 8);
    assert!(offset_of!(DevVerbsQp, sq_ready_index) == 8);
    assert!(offset_of!(DevVerbsQp, sq_wqe_pi) == 16);
    assert!(offset_of!(DevVerbsQp, sq_num) == 24);
    assert!(offset_of!(DevVerbsQp, sq_num_shift8) == 28);
    assert!(offset_of!(DevVerbsQp, sq_num_shift8_be) == 32);
    assert!(offset_of!(DevVerbsQp, sq_num_shift8_be_1ds) == 36);
    assert!(offset_of!(DevVerbsQp, sq_num_shift8_be_2ds) == 40);
    assert!(offset_of!(DevVerbsQp, sq_num_shift8_be_3ds) == 44);
    assert!(offset_of!(DevVerbsQp, sq_num_shift8_be_4ds) == 48);
    assert!(offset_of!(DevVerbsQp, sq_lock) == 52);
    assert!(offset_of!(DevVerbsQp, sq_wqe_num) == 56);
    assert!(offset_of!(DevVerbsQp, sq_wqe_mask) == 58);
    assert!(offset_of!(DevVerbsQp, sq_wqe_daddr) == 64);
    assert!(offset_of!(DevVerbsQp, sq_dbrec) == 72);
    assert!(offset_of!(DevVerbsQp, sq_db) == 80);
    assert!(offset_of!(DevVerbsQp, rq_num) == 88);
    assert!(offset_of!(DevVerbsQp, rq_wqe_pi) == 96);
    assert!(offset_of!(DevVerbsQp, rq_wqe_num) == 104);
    assert!(offset_of!(DevVerbsQp, rq_wqe_mask) == 108);
    assert!(offset_of!(DevVerbsQp, rq_wqe_daddr) == 112);
    assert!(offset_of!(DevVerbsQp, rq_dbrec) == 120);
    assert!(offset_of!(DevVerbsQp, rcv_wqe_size) == 128);
    assert!(offset_of!(DevVerbsQp, rq_rsvd_index) == 136);
    assert!(offset_of!(DevVerbsQp, rq_ready_index) == 144);
    assert!(offset_of!(DevVerbsQp, rq_lock) == 152);
    assert!(offset_of!(DevVerbsQp, cq_sq) == 160);
    assert!(offset_of!(DevVerbsQp, cq_rq) == 216);
    assert!(offset_of!(DevVerbsQp, nic_handler) == 272);
    assert!(offset_of!(DevVerbsQp, mem_type) == 276);
    assert!(offset_of!(DevVerbsQp, need_mcst) == 280);
    assert!(offset_of!(DevVerbsQp, last_get_wqe_idx) == 288);
    assert!(offset_of!(DevVerbsQp, last_dump_wqe_idx) == 296);
    assert!(offset_of!(DevVerbsQp, last_recv_wqe_idx) == 304);
};

/// Writes plain integers at offsets of a byte image (no padding byte is ever read from a
/// struct: images are built field by field).
struct Image<'a>(&'a mut [u8]);

impl Image<'_> {
    fn put(&mut self, off: usize, v: &[u8]) {
        self.0[off..off + v.len()].copy_from_slice(v);
    }
}

impl DevVerbsCq {
    fn write_into(&self, b: &mut [u8]) {
        let mut i = Image(b);
        i.put(0, &self.cqe_daddr.to_ne_bytes());
        i.put(offset_of!(Self, cq_num), &self.cq_num.to_ne_bytes());
        i.put(offset_of!(Self, cqe_num), &self.cqe_num.to_ne_bytes());
        i.put(offset_of!(Self, dbrec), &self.dbrec.to_ne_bytes());
        i.put(offset_of!(Self, cqe_ci), &self.cqe_ci.to_ne_bytes());
        i.put(offset_of!(Self, cqe_mask), &self.cqe_mask.to_ne_bytes());
        i.put(offset_of!(Self, cqe_size), &[self.cqe_size]);
        i.put(offset_of!(Self, cqe_rsvd), &self.cqe_rsvd.to_ne_bytes());
        i.put(offset_of!(Self, mem_type), &self.mem_type.to_ne_bytes());
    }
}

impl DevVerbsQp {
    /// The descriptor as the C struct's 312 bytes (padding zero).
    pub(crate) fn to_bytes(self) -> [u8; size_of::<DevVerbsQp>()] {
        let mut b = [0u8; size_of::<DevVerbsQp>()];
        let mut i = Image(&mut b);
        macro_rules! put {
            ($($f:ident),*) => { $( i.put(offset_of!(Self, $f), &self.$f.to_ne_bytes()); )* };
        }
        put!(
            sq_rsvd_index,
            sq_ready_index,
            sq_wqe_pi,
            sq_num,
            sq_num_shift8,
            sq_num_shift8_be,
            sq_num_shift8_be_1ds,
            sq_num_shift8_be_2ds,
            sq_num_shift8_be_3ds,
            sq_num_shift8_be_4ds,
            sq_lock,
            sq_wqe_num,
            sq_wqe_mask,
            sq_wqe_daddr,
            sq_dbrec,
            sq_db,
            rq_num,
            rq_wqe_pi,
            rq_wqe_num,
            rq_wqe_mask,
            rq_wqe_daddr,
            rq_dbrec,
            rcv_wqe_size,
            rq_rsvd_index,
            rq_ready_index,
            rq_lock,
            nic_handler,
            mem_type,
            last_get_wqe_idx,
            last_dump_wqe_idx,
            last_recv_wqe_idx
        );
        i.put(offset_of!(Self, need_mcst), &[self.need_mcst as u8]);
        let sq = offset_of!(Self, cq_sq);
        self.cq_sq
            .write_into(&mut b[sq..sq + size_of::<DevVerbsCq>()]);
        let rq = offset_of!(Self, cq_rq);
        self.cq_rq
            .write_into(&mut b[rq..rq + size_of::<DevVerbsCq>()]);
        b
    }
}

/// The bytes of several descriptors laid out as a C array (`conn_qps[]`).
pub(crate) fn qp_array_bytes(qps: &[DevVerbsQp]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(qps));
    for q in qps {
        out.extend_from_slice(&q.to_bytes());
    }
    out
}

/// QP number forms the device helpers read: (shift8, shift8_be, [1..4 DS forms]).
pub(crate) fn qpn_forms(qpn: u32) -> (u32, u32, [u32; 4]) {
    let s = qpn << 8;
    (
        s,
        s.to_be(),
        [
            (s | 1).to_be(),
            (s | 2).to_be(),
            (s | 3).to_be(),
            (s | 4).to_be(),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qpn_forms_are_the_big_endian_control_words() {
        let (s, be, ds) = qpn_forms(0x12_3456);
        assert_eq!(s, 0x1234_5600);
        assert_eq!(be.to_ne_bytes(), [0x12, 0x34, 0x56, 0x00]);
        assert_eq!(ds[0].to_ne_bytes(), [0x12, 0x34, 0x56, 0x01]);
        assert_eq!(ds[3].to_ne_bytes(), [0x12, 0x34, 0x56, 0x04]);
    }

    #[test]
    fn descriptor_bytes_place_fields_at_the_header_offsets() {
        let q = DevVerbsQp {
            sq_num: 0xabcdef,
            sq_wqe_mask: 0x7f,
            cq_rq: DevVerbsCq {
                cqe_num: 0x55,
                ..Default::default()
            },
            need_mcst: true,
            ..Default::default()
        };
        let b = q.to_bytes();
        assert_eq!(b.len(), 312);
        assert_eq!(&b[24..28], &0xabcdefu32.to_ne_bytes());
        assert_eq!(&b[58..60], &0x7fu16.to_ne_bytes());
        assert_eq!(&b[216 + 12..216 + 16], &0x55u32.to_ne_bytes());
        assert_eq!(b[280], 1);
        assert_eq!(qp_array_bytes(&[q, q]).len(), 624);
    }
}
