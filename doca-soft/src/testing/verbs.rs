//! GPU verbs with a CPU thread playing the GPU: exporting a DOCA Verbs QP to host memory
//! ([`export_qp_host`]), and [`DevQp`], which does through that descriptor what the device
//! helpers of `doca_gpunetio_dev_verbs_*.cuh` do (reserve slots, build the 3.3 WQEs, mark
//! them ready, ring the doorbell of the QP's NIC handler, poll CQEs with the owner-bit rule),
//! so tests and benches without a GPU drive the soft NIC exactly as kernels do.
//!
//! Keys are given in host order here (the device helpers take them already big-endian; the
//! bytes written are the same). Sharing mode: GPU (atomics and the locks of the
//! descriptor), so several CPU threads may share one `DevQp`, as several blocks share a QP.

use std::mem::offset_of;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{DocaError, DocaResult};
use crate::gpuqp::{nic_handler, DevVerbsCq, DevVerbsQp};
use crate::mlx5::rdma::{build, RemoteSeg};
use crate::mlx5::wqe::{Ctrl, DataSeg};
use crate::mlx5::{cqe, opcode};
use crate::verbs::export::{ExportTo, GpuVerbsQp};
use crate::verbs::{VerbsCq, VerbsQp};

/// `enum doca_gpu_dev_verbs_nic_handler` values.
pub mod handler {
    /// The library chooses (GPU_SM_DB in doca-soft).
    pub const AUTO: u32 = 0;
    /// The producer index goes to a slot `doca_gpu_verbs_cpu_proxy_progress` forwards.
    pub const CPU_PROXY: u32 = 1;
    /// Doorbell record + doorbell register.
    pub const GPU_SM_DB: u32 = 2;
    /// BlueFlame (not supported).
    pub const GPU_SM_BF: u32 = 3;
    /// Doorbell register only (QPs with send DBR mode NO_DBR_EXT).
    pub const GPU_SM_NO_DBR: u32 = 4;
}

/// Exports `qp` with its descriptor in host memory (what `doca_gpu_verbs_export_qp` does
/// for a GPU): the QP must have its rings in host memory (host or no umem). The handle
/// works with `doca_gpu_verbs_get_qp_dev` (a CPU address), `..._cpu_proxy_enabled` and
/// `..._cpu_proxy_progress`; release it with [`unexport_qp_host`].
///
/// # Safety
/// `qp`, `cq_sq` and (non-null) `cq_rq` are live handles of this runtime.
pub unsafe fn export_qp_host(
    qp: *mut VerbsQp,
    handler: u32,
    umem_ptr: u64,
    cq_sq: *mut VerbsCq,
    cq_rq: *mut VerbsCq,
) -> DocaResult<*mut GpuVerbsQp> {
    // SAFETY: caller contract.
    let (q, s, r) = unsafe {
        (
            qp.as_ref().ok_or(DocaError::INVALID_VALUE)?,
            cq_sq.as_ref().ok_or(DocaError::INVALID_VALUE)?,
            cq_rq.as_ref(),
        )
    };
    if q.placement().gpu().is_some() {
        return Err(DocaError::INVALID_VALUE);
    }
    let e = GpuVerbsQp::new(ExportTo::Host, q, handler, umem_ptr, s, r)?;
    Ok(Box::into_raw(Box::new(e)))
}

/// Releases an export of [`export_qp_host`].
///
/// # Safety
/// `e` comes from [`export_qp_host`] and is not used afterwards.
pub unsafe fn unexport_qp_host(e: *mut GpuVerbsQp) {
    if !e.is_null() {
        // SAFETY: caller contract.
        drop(unsafe { Box::from_raw(e) });
    }
}

/// The descriptor fields tests check, read from an export (device counters included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescriptorView {
    /// `sq_num`.
    pub qpn: u32,
    /// `sq_num_shift8_be` as stored.
    pub qpn_shift8_be: u32,
    /// `sq_num_shift8_be_1ds..4ds` as stored.
    pub qpn_ds_be: [u32; 4],
    /// `sq_wqe_num`, `sq_wqe_mask`.
    pub sq: (u16, u16),
    /// `rq_wqe_num`, `rq_wqe_mask`, `rcv_wqe_size`.
    pub rq: (u32, u32, u32),
    /// `sq_wqe_daddr`, `sq_dbrec`, `sq_db`, `rq_wqe_daddr`, `rq_dbrec`.
    pub addrs: [u64; 5],
    /// Send CQ: ring, number, entries, mask, CQE size.
    pub cq_sq: (u64, u32, u32, u32, u8),
    /// Receive CQ: ring, number, entries, mask, CQE size.
    pub cq_rq: (u64, u32, u32, u32, u8),
    /// `nic_handler`, `mem_type`, `need_mcst`.
    pub handler: (u32, u32, bool),
    /// `sq_rsvd_index`, `sq_ready_index`, `sq_wqe_pi`, `rq_wqe_pi`, `cq_sq.cqe_ci`.
    pub counters: [u64; 5],
}

/// Reads the descriptor of an export (of either kind).
///
/// # Safety
/// `e` is a live export.
pub unsafe fn descriptor(e: *const GpuVerbsQp) -> DocaResult<DescriptorView> {
    // SAFETY: caller contract.
    let e = unsafe { e.as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    let mut b = [0u8; size_of::<DevVerbsQp>()];
    e.read_descriptor(&mut b)?;
    let u16_at = |o: usize| u16::from_ne_bytes([b[o], b[o + 1]]);
    let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap());
    let cq = |base: usize| {
        (
            u64_at(base + offset_of!(DevVerbsCq, cqe_daddr)),
            u32_at(base + offset_of!(DevVerbsCq, cq_num)),
            u32_at(base + offset_of!(DevVerbsCq, cqe_num)),
            u32_at(base + offset_of!(DevVerbsCq, cqe_mask)),
            b[base + offset_of!(DevVerbsCq, cqe_size)],
        )
    };
    let sqo = offset_of!(DevVerbsQp, cq_sq);
    Ok(DescriptorView {
        qpn: u32_at(offset_of!(DevVerbsQp, sq_num)),
        qpn_shift8_be: u32_at(offset_of!(DevVerbsQp, sq_num_shift8_be)),
        qpn_ds_be: [
            u32_at(offset_of!(DevVerbsQp, sq_num_shift8_be_1ds)),
            u32_at(offset_of!(DevVerbsQp, sq_num_shift8_be_2ds)),
            u32_at(offset_of!(DevVerbsQp, sq_num_shift8_be_3ds)),
            u32_at(offset_of!(DevVerbsQp, sq_num_shift8_be_4ds)),
        ],
        sq: (
            u16_at(offset_of!(DevVerbsQp, sq_wqe_num)),
            u16_at(offset_of!(DevVerbsQp, sq_wqe_mask)),
        ),
        rq: (
            u32_at(offset_of!(DevVerbsQp, rq_wqe_num)),
            u32_at(offset_of!(DevVerbsQp, rq_wqe_mask)),
            u32_at(offset_of!(DevVerbsQp, rcv_wqe_size)),
        ),
        addrs: [
            u64_at(offset_of!(DevVerbsQp, sq_wqe_daddr)),
            u64_at(offset_of!(DevVerbsQp, sq_dbrec)),
            u64_at(offset_of!(DevVerbsQp, sq_db)),
            u64_at(offset_of!(DevVerbsQp, rq_wqe_daddr)),
            u64_at(offset_of!(DevVerbsQp, rq_dbrec)),
        ],
        cq_sq: cq(sqo),
        cq_rq: cq(offset_of!(DevVerbsQp, cq_rq)),
        handler: (
            u32_at(offset_of!(DevVerbsQp, nic_handler)),
            u32_at(offset_of!(DevVerbsQp, mem_type)),
            b[offset_of!(DevVerbsQp, need_mcst)] != 0,
        ),
        counters: [
            u64_at(offset_of!(DevVerbsQp, sq_rsvd_index)),
            u64_at(offset_of!(DevVerbsQp, sq_ready_index)),
            u64_at(offset_of!(DevVerbsQp, sq_wqe_pi)),
            u64_at(offset_of!(DevVerbsQp, rq_wqe_pi)),
            u64_at(sqo + offset_of!(DevVerbsCq, cqe_ci)),
        ],
    })
}

// ---- WQE builders (reference §3.12: what the device helpers write) ------------------------

/// `fm_ce_se` CQ_UPDATE (a CQE for this WQE).
pub use crate::mlx5::CTRL_CQ_UPDATE as CQ_UPDATE;

/// An address and its key (host order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Addr {
    /// Address.
    pub addr: u64,
    /// Key, host order.
    pub key: u32,
}

impl Addr {
    /// `addr` + `off`, same key.
    pub fn at(self, off: u64) -> Addr {
        Addr {
            addr: self.addr + off,
            key: self.key,
        }
    }

    fn remote(self) -> RemoteSeg {
        RemoteSeg::new(self.addr, self.key)
    }

    fn local(self, len: u32) -> DataSeg {
        DataSeg {
            byte_count: len,
            lkey_raw: self.key.to_be(),
            addr: self.addr,
        }
    }
}

/// The control segment of WQE `idx` (DS is the builder's); `imm` is stored as is.
fn ctrl(idx: u64, opcode: u8, qpn: u32, flags: u8, imm: u32) -> Ctrl {
    Ctrl {
        opcode,
        wqe_index: (idx & 0xffff) as u16,
        qpn,
        fm_ce_se: flags,
        imm,
        ..Ctrl::default()
    }
}

/// RDMA write (`wqe_prepare_write`, one data segment); `imm` Some: write with immediate.
pub fn wqe_write(
    idx: u64,
    qpn: u32,
    flags: u8,
    r: Addr,
    l: Addr,
    len: u32,
    imm: Option<u32>,
) -> [u8; 64] {
    let opc = if imm.is_some() {
        opcode::RDMA_WRITE_IMM
    } else {
        opcode::RDMA_WRITE
    };
    let c = ctrl(idx, opc, qpn, flags, imm.unwrap_or(0));
    build::remote(c, r.remote(), &[l.local(len)])
}

/// Inline RDMA write of at most 28 bytes.
pub fn wqe_write_inline(idx: u64, qpn: u32, flags: u8, r: Addr, data: &[u8]) -> [u8; 64] {
    let c = ctrl(idx, opcode::RDMA_WRITE, qpn, flags, 0);
    build::remote_inline(c, r.remote(), data)
}

/// RDMA read from `r` into `l`.
pub fn wqe_read(idx: u64, qpn: u32, flags: u8, r: Addr, l: Addr, len: u32) -> [u8; 64] {
    let c = ctrl(idx, opcode::RDMA_READ, qpn, flags, 0);
    build::remote(c, r.remote(), &[l.local(len)])
}

/// Fetch-add of `add` at `r`, the old value to `result`.
pub fn wqe_fetch_add(idx: u64, qpn: u32, flags: u8, r: Addr, result: Addr, add: u64) -> [u8; 64] {
    let c = ctrl(idx, opcode::ATOMIC_FA, qpn, flags, 0);
    build::atomic(c, r.remote(), add, add, result.local(8))
}

/// Send of one local segment.
pub fn wqe_send(idx: u64, qpn: u32, flags: u8, l: Addr, len: u32, imm: Option<u32>) -> [u8; 64] {
    let opc = if imm.is_some() {
        opcode::SEND_IMM
    } else {
        opcode::SEND
    };
    let c = ctrl(idx, opc, qpn, flags, imm.unwrap_or(0));
    build::local(c, &[l.local(len)])
}

/// WAIT until CQ `cqn` produced CQE number `max_index`.
pub fn wqe_wait(idx: u64, qpn: u32, flags: u8, max_index: u32, cqn: u32) -> [u8; 64] {
    build::wait_cq(ctrl(idx, opcode::WAIT, qpn, flags, 0), max_index, cqn)
}

/// DUMP of one local byte.
pub fn wqe_dump(idx: u64, qpn: u32, flags: u8, l: Addr) -> [u8; 64] {
    build::local(ctrl(idx, opcode::DUMP, qpn, flags, 0), &[l.local(1)])
}

// ---- the CPU playing the GPU ---------------------------------------------------------------

/// Which work queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wq {
    /// Send queue (and its CQ).
    Sq,
    /// Receive queue (and its CQ).
    Rq,
}

/// Why a poll returned without a completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollError {
    /// An error CQE (REQ_ERR / RESP_ERR); the bytes.
    Error([u8; 64]),
    /// Nothing within the time allowed.
    Timeout,
}

/// A CQE's opcode nibble, WQE counter, byte count and syndrome.
pub fn cqe_fields(c: &[u8; 64]) -> (u8, u16, u32, u8) {
    let d = cqe::Cqe::decode(c);
    (d.opcode, d.wqe_counter, d.byte_cnt, c[cqe::SYNDROME])
}

/// An exported QP's descriptor in host memory, driven the way the device helpers drive it.
#[derive(Clone, Copy)]
pub struct DevQp {
    base: *mut u8,
}

// SAFETY: every shared field is accessed atomically (GPU sharing mode); rings are written
// only in reserved slots.
unsafe impl Send for DevQp {}
// SAFETY: as above.
unsafe impl Sync for DevQp {}

impl DevQp {
    /// The QP behind `doca_gpu_verbs_get_qp_dev` of a host export.
    ///
    /// # Safety
    /// `qp_dev` is the descriptor of a live host export (from [`export_qp_host`]), which
    /// outlives every use of the returned value.
    pub unsafe fn new(qp_dev: *mut u8) -> DevQp {
        DevQp { base: qp_dev }
    }

    fn u64_at(&self, off: usize) -> &AtomicU64 {
        // SAFETY: an aligned u64 field of the descriptor (offsets from the layout).
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }

    fn u32_at(&self, off: usize) -> u32 {
        // SAFETY: an aligned u32 field of the descriptor.
        unsafe { (*(self.base.add(off) as *const AtomicU32)).load(Ordering::Relaxed) }
    }

    fn lock_at(&self, off: usize) -> &AtomicI32 {
        // SAFETY: an aligned int field of the descriptor.
        unsafe { &*(self.base.add(off) as *const AtomicI32) }
    }

    fn ptr_at(&self, off: usize) -> *mut u8 {
        self.u64_at(off).load(Ordering::Relaxed) as *mut u8
    }

    /// QP number.
    pub fn qpn(&self) -> u32 {
        self.u32_at(offset_of!(DevVerbsQp, sq_num))
    }

    /// The NIC handler stored at export.
    pub fn handler(&self) -> u32 {
        self.u32_at(offset_of!(DevVerbsQp, nic_handler))
    }

    /// CQ number of the send CQ (what WAIT WQEs name).
    pub fn sq_cqn(&self) -> u32 {
        self.u32_at(offset_of!(DevVerbsQp, cq_sq) + offset_of!(DevVerbsCq, cq_num))
    }

    /// `sq_wqe_pi` as the device reads it.
    pub fn sq_wqe_pi(&self) -> u64 {
        self.u64_at(offset_of!(DevVerbsQp, sq_wqe_pi))
            .load(Ordering::Acquire)
    }

    /// `sq_rsvd_index`.
    pub fn sq_rsvd_index(&self) -> u64 {
        self.u64_at(offset_of!(DevVerbsQp, sq_rsvd_index))
            .load(Ordering::Acquire)
    }

    fn size(&self, wq: Wq) -> u64 {
        match wq {
            Wq::Sq => {
                // SAFETY: the u16 field of the descriptor.
                unsafe { *(self.base.add(offset_of!(DevVerbsQp, sq_wqe_num)) as *const u16) as u64 }
            }
            Wq::Rq => self.u32_at(offset_of!(DevVerbsQp, rq_wqe_num)) as u64,
        }
    }

    fn cq_base(&self, wq: Wq) -> usize {
        match wq {
            Wq::Sq => offset_of!(DevVerbsQp, cq_sq),
            Wq::Rq => offset_of!(DevVerbsQp, cq_rq),
        }
    }

    /// `cqe_ci` of a CQ.
    pub fn cqe_ci(&self, wq: Wq) -> u64 {
        self.u64_at(self.cq_base(wq) + offset_of!(DevVerbsCq, cqe_ci))
            .load(Ordering::Acquire)
    }

    /// `poll_cq_at<GPU>`: waits for CQE number `k` (present when its owner bit is the
    /// pass parity and its WQE counter is `k`), then `cqe_ci = max(cqe_ci, k + 1)`. An
    /// error CQE returns `PollError::Error` without advancing.
    pub fn poll_cq_at(&self, wq: Wq, k: u64, timeout: Duration) -> Result<[u8; 64], PollError> {
        let cb = self.cq_base(wq);
        let ring = self.ptr_at(cb + offset_of!(DevVerbsCq, cqe_daddr));
        let num = self.u32_at(cb + offset_of!(DevVerbsCq, cqe_num)) as u64;
        let ci = self.u64_at(cb + offset_of!(DevVerbsCq, cqe_ci));
        let deadline = Instant::now() + timeout;
        let slot = (k & (num - 1)) as usize * cqe::CQE_SIZE;
        loop {
            let cur = ci.load(Ordering::Acquire);
            if k < cur {
                // Consumed already: the device returns at once (no CQE to show).
                return Ok([0u8; 64]);
            }
            if k < cur + num {
                // SAFETY: inside the CQE ring of `num` entries.
                let op_own = unsafe { cqe::load_op_own(ring.add(slot)) };
                // SAFETY: as above.
                let ctr = unsafe {
                    std::ptr::read_volatile(ring.add(slot + cqe::WQE_COUNTER) as *const [u8; 2])
                };
                if cqe::present(op_own, k, num as u32) && u16::from_be_bytes(ctr) == k as u16 {
                    let mut c = [0u8; 64];
                    // SAFETY: as above; the CQE is complete once op_own is visible.
                    unsafe { std::ptr::copy_nonoverlapping(ring.add(slot), c.as_mut_ptr(), 64) };
                    if cqe::is_error(op_own >> 4) {
                        return Err(PollError::Error(c));
                    }
                    ci.fetch_max(k + 1, Ordering::AcqRel);
                    return Ok(c);
                }
            }
            if Instant::now() > deadline {
                return Err(PollError::Timeout);
            }
            std::thread::yield_now();
        }
    }

    /// After raw posting (`write_wqe` at `sq_wqe_pi + i` and `submit`, as write_bw and
    /// write_lat do, bypassing the reservation): moves the reservation and ready indices
    /// to `sq_wqe_pi`, so the high-level calls continue after the raw WQEs.
    pub fn sync_after_raw(&self) {
        let pi = self.sq_wqe_pi();
        self.u64_at(offset_of!(DevVerbsQp, sq_rsvd_index))
            .store(pi, Ordering::Release);
        self.u64_at(offset_of!(DevVerbsQp, sq_ready_index))
            .store(pi, Ordering::Release);
    }

    /// `reserve_wq_slots`: `count` indices, waiting until the last one's slot is free.
    pub fn reserve(&self, wq: Wq, count: u32, timeout: Duration) -> Result<u64, PollError> {
        let off = match wq {
            Wq::Sq => offset_of!(DevVerbsQp, sq_rsvd_index),
            Wq::Rq => offset_of!(DevVerbsQp, rq_rsvd_index),
        };
        let base = self.u64_at(off).fetch_add(count as u64, Ordering::AcqRel);
        let last = base + count as u64 - 1;
        let size = self.size(wq);
        if count > 0 && last >= size {
            self.poll_cq_at(wq, last - size, timeout)?;
        }
        Ok(base)
    }

    /// Writes send WQE `w` in the slot of index `idx` (`get_wqe_ptr` + a prepare call).
    pub fn write_wqe(&self, idx: u64, w: &[u8; 64]) {
        let ring = self.ptr_at(offset_of!(DevVerbsQp, sq_wqe_daddr));
        let mask = self.size(Wq::Sq) - 1;
        // SAFETY: the slot of a reserved index inside the SQ ring.
        unsafe {
            std::ptr::copy_nonoverlapping(w.as_ptr(), ring.add(((idx & mask) * 64) as usize), 64)
        };
    }

    /// Writes a receive WQE (one data segment) in the RQ slot of `idx`.
    pub fn write_rwqe(&self, idx: u64, l: Addr, len: u32) {
        let ring = self.ptr_at(offset_of!(DevVerbsQp, rq_wqe_daddr));
        let mask = self.size(Wq::Rq) - 1;
        let b = l.local(len).encode();
        // SAFETY: the slot of a reserved index inside the RQ ring.
        unsafe {
            std::ptr::copy_nonoverlapping(b.as_ptr(), ring.add(((idx & mask) * 16) as usize), 16)
        };
    }

    /// `mark_wqes_ready` (shared mode): in index order.
    pub fn mark_ready(&self, wq: Wq, from: u64, to: u64) {
        let off = match wq {
            Wq::Sq => offset_of!(DevVerbsQp, sq_ready_index),
            Wq::Rq => offset_of!(DevVerbsQp, rq_ready_index),
        };
        let r = self.u64_at(off);
        while r.load(Ordering::Acquire) != from {
            std::hint::spin_loop();
        }
        r.store(to + 1, Ordering::Release);
    }

    /// `submit<GPU, GPU, AUTO>`: publishes every send WQE below `prod` through the doorbell
    /// of the QP's NIC handler.
    pub fn submit(&self, prod: u64) {
        let pi = self.u64_at(offset_of!(DevVerbsQp, sq_wqe_pi));
        let db = self.ptr_at(offset_of!(DevVerbsQp, sq_db)) as *const AtomicU64;
        let dbrec = self.ptr_at(offset_of!(DevVerbsQp, sq_dbrec)) as *const AtomicU32;
        let qpn_be = self.u32_at(offset_of!(DevVerbsQp, sq_num_shift8_be));
        let img = || {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&((prod as u32) << 8).to_be_bytes());
            b[4..].copy_from_slice(&qpn_be.to_ne_bytes());
            u64::from_ne_bytes(b)
        };
        let lock = self.lock_at(offset_of!(DevVerbsQp, sq_lock));
        let take = || {
            while lock
                .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                std::hint::spin_loop();
            }
        };
        // SAFETY (all derefs below): the doorbell words of a live export.
        match self.handler() {
            nic_handler::GPU_SM_DB => {
                take();
                if pi.fetch_max(prod, Ordering::AcqRel) < prod {
                    unsafe { (*db).store(img(), Ordering::Release) };
                    unsafe { (*dbrec).store(((prod & 0xffff) as u32).to_be(), Ordering::Release) };
                    unsafe { (*db).store(img(), Ordering::Release) };
                }
                lock.store(0, Ordering::Release);
            }
            nic_handler::GPU_SM_NO_DBR => {
                if pi.fetch_max(prod, Ordering::AcqRel) < prod {
                    unsafe { (*db).store(img(), Ordering::Release) };
                }
            }
            _ => {
                take();
                if pi.load(Ordering::Acquire) < prod {
                    unsafe { (*db).store(prod, Ordering::Release) };
                    pi.store(prod, Ordering::Release);
                }
                lock.store(0, Ordering::Release);
            }
        }
    }

    /// RQ submission: advance `rq_wqe_pi`, write the RQ doorbell record.
    pub fn submit_rq(&self, prod: u64) {
        let pi = self.u64_at(offset_of!(DevVerbsQp, rq_wqe_pi));
        let dbrec = self.ptr_at(offset_of!(DevVerbsQp, rq_dbrec)) as *const AtomicU32;
        let lock = self.lock_at(offset_of!(DevVerbsQp, rq_lock));
        while lock
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        if pi.fetch_max(prod, Ordering::AcqRel) < prod {
            // SAFETY: the RQ doorbell record of a live export.
            unsafe { (*dbrec).store(((prod & 0xffff) as u32).to_be(), Ordering::Release) };
        }
        lock.store(0, Ordering::Release);
    }

    /// Reserves, writes, marks ready and submits the WQEs `build(index)` returns for
    /// `count` consecutive indices; returns the first index.
    pub fn post(
        &self,
        count: u32,
        timeout: Duration,
        build: impl Fn(u64) -> [u8; 64],
    ) -> Result<u64, PollError> {
        let base = self.reserve(Wq::Sq, count, timeout)?;
        for i in 0..count as u64 {
            self.write_wqe(base + i, &build(base + i));
        }
        self.mark_ready(Wq::Sq, base, base + count as u64 - 1);
        self.submit(base + count as u64);
        Ok(base)
    }

    /// `doca_gpu_dev_verbs_put` (thread scope): one RDMA write; the ticket.
    pub fn put(&self, r: Addr, l: Addr, size: u32, timeout: Duration) -> Result<u64, PollError> {
        let q = self.qpn();
        self.post(1, timeout, |i| wqe_write(i, q, CQ_UPDATE, r, l, size, None))
    }

    /// `doca_gpu_dev_verbs_put` (warp scope): lane `i` writes `lanes[i]`; tickets base+i.
    pub fn put_warp(
        &self,
        lanes: &[(Addr, Addr)],
        size: u32,
        timeout: Duration,
    ) -> Result<u64, PollError> {
        let q = self.qpn();
        self.post(lanes.len() as u32, timeout, |i| {
            let (r, l) = lanes[(i % lanes.len() as u64) as usize];
            wqe_write(i, q, CQ_UPDATE, r, l, size, None)
        })
    }

    /// `doca_gpu_dev_verbs_p<u64>`: inline write of a value.
    pub fn p(&self, r: Addr, value: u64, timeout: Duration) -> Result<u64, PollError> {
        let q = self.qpn();
        self.post(1, timeout, |i| {
            wqe_write_inline(i, q, CQ_UPDATE, r, &value.to_ne_bytes())
        })
    }

    /// `doca_gpu_dev_verbs_get` (thread scope, MCST disabled): one RDMA read; the ticket.
    pub fn get(&self, r: Addr, l: Addr, size: u32, timeout: Duration) -> Result<u64, PollError> {
        let q = self.qpn();
        self.post(1, timeout, |i| wqe_read(i, q, CQ_UPDATE, r, l, size))
    }

    /// `doca_gpu_dev_verbs_get_wait` with MCST: a DUMP of one byte at `d`, waited for.
    pub fn dump_wait(&self, d: Addr, timeout: Duration) -> Result<u64, PollError> {
        let q = self.qpn();
        let t = self.post(1, timeout, |i| wqe_dump(i, q, CQ_UPDATE, d))?;
        self.poll_cq_at(Wq::Sq, t, timeout)?;
        Ok(t)
    }

    /// `doca_gpu_dev_verbs_put_signal<ADD>` (thread scope): a write and a fetch-add of
    /// `sig_val` at `sig_r` (old value to `sig_l`) in one reservation; the FA's ticket.
    #[allow(clippy::too_many_arguments)] // the device function's own argument list
    pub fn put_signal(
        &self,
        r: Addr,
        l: Addr,
        size: u32,
        sig_r: Addr,
        sig_l: Addr,
        sig_val: u64,
        timeout: Duration,
    ) -> Result<u64, PollError> {
        let q = self.qpn();
        let base = self.reserve(Wq::Sq, 2, timeout)?;
        self.write_wqe(base, &wqe_write(base, q, CQ_UPDATE, r, l, size, None));
        self.write_wqe(
            base + 1,
            &wqe_fetch_add(base + 1, q, CQ_UPDATE, sig_r, sig_l, sig_val),
        );
        self.mark_ready(Wq::Sq, base, base + 1);
        self.submit(base + 2);
        Ok(base + 1)
    }

    /// `doca_gpu_dev_verbs_signal<ADD>`: one fetch-add; the ticket.
    pub fn signal(
        &self,
        sig_r: Addr,
        sig_l: Addr,
        val: u64,
        timeout: Duration,
    ) -> Result<u64, PollError> {
        let q = self.qpn();
        self.post(1, timeout, |i| {
            wqe_fetch_add(i, q, CQ_UPDATE, sig_r, sig_l, val)
        })
    }

    /// `doca_gpu_dev_verbs_put_counter` (thread scope): a write on this QP, then on
    /// `companion` a WAIT for that write's CQE and a fetch-add of `val` at `cnt_r`.
    #[allow(clippy::too_many_arguments)]
    pub fn put_counter(
        &self,
        companion: &DevQp,
        r: Addr,
        l: Addr,
        size: u32,
        cnt_r: Addr,
        cnt_l: Addr,
        val: u64,
        timeout: Duration,
    ) -> Result<(), PollError> {
        let q = self.qpn();
        let main = self.reserve(Wq::Sq, 1, timeout)?;
        self.write_wqe(main, &wqe_write(main, q, CQ_UPDATE, r, l, size, None));
        let cq = companion.qpn();
        let cqn = self.sq_cqn();
        let c = companion.reserve(Wq::Sq, 2, timeout)?;
        companion.write_wqe(c, &wqe_wait(c, cq, CQ_UPDATE, main as u32, cqn));
        companion.write_wqe(
            c + 1,
            &wqe_fetch_add(c + 1, cq, CQ_UPDATE, cnt_r, cnt_l, val),
        );
        self.mark_ready(Wq::Sq, main, main);
        companion.mark_ready(Wq::Sq, c, c + 1);
        self.submit(main + 1);
        companion.submit(c + 2);
        Ok(())
    }

    /// `doca_gpu_dev_verbs_send` (thread scope): one send; the ticket.
    pub fn send(&self, l: Addr, size: u32, timeout: Duration) -> Result<u64, PollError> {
        let q = self.qpn();
        self.post(1, timeout, |i| wqe_send(i, q, CQ_UPDATE, l, size, None))
    }

    /// `doca_gpu_dev_verbs_recv` (thread scope): one receive of at most `size` bytes at
    /// `l`; the RQ ticket.
    pub fn recv(&self, l: Addr, size: u32, timeout: Duration) -> Result<u64, PollError> {
        let i = self.reserve(Wq::Rq, 1, timeout)?;
        self.write_rwqe(i, l, size);
        self.mark_ready(Wq::Rq, i, i);
        self.submit_rq(i + 1);
        Ok(i)
    }

    /// `doca_gpu_dev_verbs_wait`: the send CQE of ticket `t`.
    pub fn wait(&self, t: u64, timeout: Duration) -> Result<[u8; 64], PollError> {
        self.poll_cq_at(Wq::Sq, t, timeout)
    }

    /// `doca_gpu_dev_verbs_recv_wait`: the receive CQE of ticket `t`.
    pub fn recv_wait(&self, t: u64, timeout: Duration) -> Result<[u8; 64], PollError> {
        self.poll_cq_at(Wq::Rq, t, timeout)
    }
}

/// The state `doca_verbs_qp_query` wrote into a QP attribute object (`enum
/// doca_verbs_qp_state`; QP attributes have no getters in DOCA).
///
/// # Safety
/// `a` is a live QP attribute object.
pub unsafe fn qp_attr_state(a: *const crate::verbs::QpAttr) -> u32 {
    // SAFETY: caller contract.
    unsafe { a.as_ref() }.map_or(u32::MAX, |a| a.current_state as u32)
}
