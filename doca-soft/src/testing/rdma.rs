//! The CPU playing the GPU for DOCA RDMA: [`CpuRdma`] runs the legacy GPU RDMA device
//! functions (`doca_gpunetio_dev_rdma.cuh`) step for step on a handle whose memory is host
//! memory ([`rdma_set_host_datapath`]). Same descriptor fields, same WQE bytes, same index
//! arithmetic, same doorbells, same CQE polling as the kernels; the only difference is that
//! waits give up after a timeout (TIME_OUT) instead of spinning forever, so a broken peer
//! fails a test instead of hanging it.

use crate::buf::array::{BufArr, GpuBufEntry};
use crate::error::{DocaError, DocaResult};
use crate::gpuqp::layout::{DevVerbsCq, DevVerbsQp};
use crate::mlx5::rdma::{build, RemoteSeg, INVALID_LKEY, MAX_INLINE, MAX_WRITE_INLINE};
use crate::mlx5::wqe::{Ctrl, DataSeg};
use crate::mlx5::{opcode, CTRL_CQ_UPDATE};
use crate::rdma::Rdma;
use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// `DOCA_SOFT_DEV_RDMA_VERSION`.
pub const RDMA_HANDLE_VERSION: u32 = crate::rdma::datapath::HANDLE_VERSION;

/// Puts an IDLE `doca_rdma`'s data path in host memory (instead of a GPU), so
/// `doca_rdma_get_gpu_handle` gives a CPU address [`CpuRdma`] can use.
///
/// # Safety
/// `rdma` is a live `struct doca_rdma *`.
pub unsafe fn rdma_set_host_datapath(rdma: *mut c_void) -> DocaResult<()> {
    // SAFETY: caller contract.
    let r = unsafe { (rdma as *const Rdma).as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    r.set_host_datapath()
}

/// The entries (address, big-endian key) of a started buffer array, as a kernel reads
/// them through `doca_buf_arr_get_gpu_handle` (works without a GPU).
///
/// # Safety
/// `arr` is a live `struct doca_buf_arr *`.
pub unsafe fn buf_arr_entries(arr: *mut c_void) -> DocaResult<Vec<GpuBufEntry>> {
    // SAFETY: caller contract.
    let a = unsafe { (arr as *const BufArr).as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    a.host_entries()
}

/// `DOCA_GPU_RDMA_WRITE_FLAG_IMM` / `DOCA_GPU_RDMA_SEND_FLAG_IMM`.
pub const FLAG_IMM: u32 = 1;
/// `DOCA_GPU_RDMA_RECV_WAIT_FLAG_NB`.
pub const RECV_WAIT_NB: u32 = 0;
/// `DOCA_GPU_RDMA_RECV_WAIT_FLAG_B`.
pub const RECV_WAIT_B: u32 = 1;
const MAX_LENGTH: u64 = 0x7fff_ffff;

/// A `struct doca_gpu_dev_verbs_qp` in host memory.
#[derive(Clone, Copy)]
struct Qp(*mut u8);

/// A `struct doca_gpu_dev_verbs_cq` in host memory.
#[derive(Clone, Copy)]
struct Cq(*mut u8);

macro_rules! field {
    ($name:ident, $t:ident, $ty:ty, $f:ident) => {
        fn $name(&self) -> &$ty {
            // SAFETY: the descriptor lives in host memory for the handle's life (caller
            // contract of CpuRdma::new); the field is aligned (repr(C) layout).
            unsafe { &*(self.0.add(offset_of!($t, $f)) as *const $ty) }
        }
    };
}

impl Qp {
    field!(sq_rsvd, DevVerbsQp, AtomicU64, sq_rsvd_index);
    field!(sq_ready, DevVerbsQp, AtomicU64, sq_ready_index);
    field!(sq_pi, DevVerbsQp, AtomicU64, sq_wqe_pi);
    field!(sq_num, DevVerbsQp, AtomicU32, sq_num);
    field!(sq_wqe_num, DevVerbsQp, AtomicU16, sq_wqe_num);
    field!(sq_wqe_mask, DevVerbsQp, AtomicU16, sq_wqe_mask);
    field!(sq_daddr, DevVerbsQp, AtomicU64, sq_wqe_daddr);
    field!(sq_db, DevVerbsQp, AtomicU64, sq_db);
    field!(rq_pi, DevVerbsQp, AtomicU64, rq_wqe_pi);
    field!(rq_wqe_num, DevVerbsQp, AtomicU32, rq_wqe_num);
    field!(rq_wqe_mask, DevVerbsQp, AtomicU32, rq_wqe_mask);
    field!(rq_daddr, DevVerbsQp, AtomicU64, rq_wqe_daddr);
    field!(rq_dbrec, DevVerbsQp, AtomicU64, rq_dbrec);
    field!(rq_rsvd, DevVerbsQp, AtomicU64, rq_rsvd_index);
    field!(rq_ready, DevVerbsQp, AtomicU64, rq_ready_index);
    field!(sq_lock, DevVerbsQp, AtomicU32, sq_lock);
    field!(rq_lock, DevVerbsQp, AtomicU32, rq_lock);

    fn cq_sq(&self) -> Cq {
        // SAFETY: inside the descriptor.
        Cq(unsafe { self.0.add(offset_of!(DevVerbsQp, cq_sq)) })
    }

    fn cq_rq(&self) -> Cq {
        // SAFETY: inside the descriptor.
        Cq(unsafe { self.0.add(offset_of!(DevVerbsQp, cq_rq)) })
    }

    fn lock(l: &AtomicU32) {
        while l
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }
}

impl Cq {
    field!(daddr, DevVerbsCq, AtomicU64, cqe_daddr);
    field!(num, DevVerbsCq, AtomicU32, cqe_num);
    field!(mask, DevVerbsCq, AtomicU32, cqe_mask);
    field!(ci, DevVerbsCq, AtomicU64, cqe_ci);

    fn cqe(&self, k: u64) -> *mut u8 {
        let slot = (k & self.mask().load(Ordering::Relaxed) as u64) * 64;
        (self.daddr().load(Ordering::Relaxed) + slot) as *mut u8
    }

    /// 0 present, EBUSY not yet, EIO error (the device's cqe_status).
    fn status(&self, k: u64) -> i32 {
        let ci = self.ci().load(Ordering::Acquire);
        if k < ci {
            return 0;
        }
        let num = self.num().load(Ordering::Relaxed) as u64;
        if k >= ci + num {
            return libc::EBUSY;
        }
        // SAFETY: a CQE slot of the ring (host memory the NIC writes).
        let op = unsafe { (*(self.cqe(k).add(63) as *const AtomicU8)).load(Ordering::Acquire) };
        let owner = u8::from(k & num != 0);
        if op & 1 != owner {
            return libc::EBUSY;
        }
        match op >> 4 {
            0xf => libc::EBUSY,
            0xd | 0xe => -libc::EIO,
            _ => 0,
        }
    }

    /// The device's poll_cq_at without consuming; TIME_OUT after `t`.
    fn wait(&self, k: u64, t: Duration) -> DocaResult<i32> {
        let deadline = Instant::now() + t;
        loop {
            let r = self.status(k);
            if r != libc::EBUSY {
                return Ok(r);
            }
            if Instant::now() > deadline {
                return Err(DocaError::TIME_OUT);
            }
            std::hint::spin_loop();
        }
    }

    /// The device's poll_cq_at: waits, then consumes up to `k`.
    fn poll_at(&self, k: u64, t: Duration) -> DocaResult<i32> {
        let r = self.wait(k, t)?;
        if r == 0 {
            self.ci().fetch_max(k + 1, Ordering::AcqRel);
        }
        Ok(r)
    }

    fn read(&self, k: u64) -> [u8; 64] {
        let mut c = [0u8; 64];
        // SAFETY: a CQE slot of the ring.
        unsafe { std::ptr::copy_nonoverlapping(self.cqe(k), c.as_mut_ptr(), 64) };
        c
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Queue {
    Sq,
    Rq,
}

/// The legacy GPU RDMA device functions, run by a CPU thread on a host-memory handle.
pub struct CpuRdma {
    h: *mut u8,
    timeout: Duration,
}

// SAFETY: the handle is shared memory meant for concurrent use (atomics, as on the GPU).
unsafe impl Send for CpuRdma {}
// SAFETY: as above.
unsafe impl Sync for CpuRdma {}

/// One completed receive: (immediate, connection index).
pub type RecvDone = (u32, u32);

impl CpuRdma {
    /// Wraps a handle from `doca_rdma_get_gpu_handle` of a context on the host data path.
    ///
    /// # Safety
    /// `handle` is such a handle and its context stays started while this value is used.
    pub unsafe fn new(handle: *mut c_void) -> DocaResult<CpuRdma> {
        if handle.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        let me = CpuRdma {
            h: handle.cast(),
            timeout: Duration::from_secs(20),
        };
        if me.u32_at(0) != RDMA_HANDLE_VERSION {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(me)
    }

    /// How long a wait may take before TIME_OUT (default 20 s).
    pub fn set_timeout(&mut self, t: Duration) {
        self.timeout = t;
    }

    fn u32_at(&self, off: usize) -> u32 {
        // SAFETY: inside the 128-byte handle (caller contract of `new`).
        unsafe { std::ptr::read_volatile(self.h.add(off) as *const u32) }
    }

    fn u64_at(&self, off: usize) -> u64 {
        // SAFETY: as above, aligned.
        unsafe { std::ptr::read_volatile(self.h.add(off) as *const u64) }
    }

    fn commits(&self) -> &AtomicU64 {
        // SAFETY: the commits counter of the handle (offset 16).
        unsafe { &*(self.h.add(16) as *const AtomicU64) }
    }

    /// Connections of the handle.
    pub fn num_connections(&self) -> u32 {
        self.u32_at(4)
    }

    fn conn(&self, i: u32) -> DocaResult<Qp> {
        let base = self.u64_at(8);
        if base == 0 || i >= self.num_connections() {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(Qp(
            (base as usize + i as usize * size_of::<DevVerbsQp>()) as *mut u8
        ))
    }

    fn recv_qp(&self) -> DocaResult<Qp> {
        let p = self.u64_at(64);
        if p == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(Qp(p as *mut u8))
    }

    /// The QP number of connection `i` (as its descriptor says).
    pub fn qpn(&self, i: u32) -> DocaResult<u32> {
        Ok(self.conn(i)?.sq_num().load(Ordering::Relaxed))
    }

    fn wait_slot(&self, qp: Qp, q: Queue, idx: u64) -> DocaResult<()> {
        let (num, cq) = match q {
            Queue::Sq => (qp.sq_wqe_num().load(Ordering::Relaxed) as u64, qp.cq_sq()),
            Queue::Rq => (qp.rq_wqe_num().load(Ordering::Relaxed) as u64, qp.cq_rq()),
        };
        if idx >= num {
            cq.poll_at(idx - num, self.timeout)?;
        }
        Ok(())
    }

    fn strong_index(&self, qp: Qp, q: Queue) -> DocaResult<u64> {
        let idx = match q {
            Queue::Sq => qp.sq_rsvd().fetch_add(1, Ordering::Relaxed),
            Queue::Rq => qp.rq_rsvd().fetch_add(1, Ordering::Relaxed),
        };
        self.wait_slot(qp, q, idx)?;
        Ok(idx)
    }

    fn weak_index(&self, qp: Qp, q: Queue, position: u32) -> DocaResult<u64> {
        let (pi, mask) = match q {
            Queue::Sq => (
                qp.sq_pi().load(Ordering::Acquire),
                qp.sq_wqe_mask().load(Ordering::Relaxed) as u64,
            ),
            Queue::Rq => (
                qp.rq_pi().load(Ordering::Acquire),
                qp.rq_wqe_mask().load(Ordering::Relaxed) as u64,
            ),
        };
        let idx = pi + ((position as u64).wrapping_sub(pi) & mask);
        self.wait_slot(qp, q, idx)?;
        Ok(idx)
    }

    fn wqe(qp: Qp, idx: u64) -> *mut u8 {
        let mask = qp.sq_wqe_mask().load(Ordering::Relaxed) as u64;
        (qp.sq_daddr().load(Ordering::Relaxed) + (idx & mask) * 64) as *mut u8
    }

    /// The control segment of WQE `idx` (a CQE always; DS is the builder's).
    fn ctrl(qp: Qp, idx: u64, opcode: u8, imm: u32) -> Ctrl {
        Ctrl {
            opcode,
            wqe_index: idx as u16,
            qpn: qp.sq_num().load(Ordering::Relaxed),
            fm_ce_se: CTRL_CQ_UPDATE,
            imm,
            ..Ctrl::default()
        }
    }

    fn store(qp: Qp, idx: u64, w: &[u8; 64]) {
        // SAFETY: the WQE slot of `idx` in the host ring.
        unsafe { std::ptr::copy_nonoverlapping(w.as_ptr(), Self::wqe(qp, idx), 64) };
    }

    /// Posts an RDMA write or read WQE on connection `conn` (strong when `position` is
    /// None): the remote segment, and one local segment unless `len` is 0. INVALID_VALUE
    /// for an address overflow, a length above the limit, or `flags_ok` false.
    #[allow(clippy::too_many_arguments)]
    fn post_rw(
        &self,
        conn: u32,
        opcode: u8,
        imm: u32,
        flags_ok: bool,
        (remote, remote_off): (&GpuBufEntry, u64),
        (local, local_off): (&GpuBufEntry, u64),
        len: usize,
        position: Option<u32>,
    ) -> DocaResult<()> {
        let qp = self.conn(conn)?;
        let (raddr, laddr) = (Self::at(remote, remote_off)?, Self::at(local, local_off)?);
        if len as u64 > MAX_LENGTH || !flags_ok {
            return Err(DocaError::INVALID_VALUE);
        }
        let idx = self.sq_index(qp, position)?;
        let seg = RemoteSeg {
            addr: raddr,
            rkey_raw: remote.mkey_be,
        };
        let local = local_seg(laddr, local.mkey_be, len as u32);
        let w = build::remote(Self::ctrl(qp, idx, opcode, imm), seg, local.as_slice());
        Self::store(qp, idx, &w);
        Ok(())
    }

    fn at(buf: &GpuBufEntry, off: u64) -> DocaResult<u64> {
        buf.addr.checked_add(off).ok_or(DocaError::INVALID_VALUE)
    }

    fn sq_index(&self, qp: Qp, position: Option<u32>) -> DocaResult<u64> {
        match position {
            Some(p) => self.weak_index(qp, Queue::Sq, p),
            None => self.strong_index(qp, Queue::Sq),
        }
    }

    /// `doca_gpu_dev_rdma_write_strong` (`position` None) / `_write_weak`.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &self,
        conn: u32,
        remote: &GpuBufEntry,
        remote_off: u64,
        local: &GpuBufEntry,
        local_off: u64,
        len: usize,
        imm: u32,
        flags: u32,
        position: Option<u32>,
    ) -> DocaResult<()> {
        let opcode = imm_opcode(flags, opcode::RDMA_WRITE, opcode::RDMA_WRITE_IMM);
        self.post_rw(
            conn,
            opcode,
            imm,
            flags & !FLAG_IMM == 0,
            (remote, remote_off),
            (local, local_off),
            len,
            position,
        )
    }

    /// `doca_gpu_dev_rdma_write_inline_strong` / `_weak`.
    #[allow(clippy::too_many_arguments)]
    pub fn write_inline(
        &self,
        conn: u32,
        remote: &GpuBufEntry,
        remote_off: u64,
        data: &[u8],
        imm: u32,
        flags: u32,
        position: Option<u32>,
    ) -> DocaResult<()> {
        let qp = self.conn(conn)?;
        let raddr = Self::at(remote, remote_off)?;
        if data.len() > MAX_WRITE_INLINE || flags & !FLAG_IMM != 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        let idx = self.sq_index(qp, position)?;
        let opcode = imm_opcode(flags, opcode::RDMA_WRITE, opcode::RDMA_WRITE_IMM);
        let seg = RemoteSeg {
            addr: raddr,
            rkey_raw: remote.mkey_be,
        };
        let w = build::remote_inline(Self::ctrl(qp, idx, opcode, imm), seg, data);
        Self::store(qp, idx, &w);
        Ok(())
    }

    /// `doca_gpu_dev_rdma_read_strong` / `_weak` (`flags_bitmask` must be 0).
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &self,
        conn: u32,
        remote: &GpuBufEntry,
        remote_off: u64,
        local: &GpuBufEntry,
        local_off: u64,
        len: usize,
        flags_bitmask: u32,
        position: Option<u32>,
    ) -> DocaResult<()> {
        self.post_rw(
            conn,
            opcode::RDMA_READ,
            0,
            flags_bitmask == 0,
            (remote, remote_off),
            (local, local_off),
            len,
            position,
        )
    }

    /// `doca_gpu_dev_rdma_send_strong` / `_weak`.
    #[allow(clippy::too_many_arguments)]
    pub fn send(
        &self,
        conn: u32,
        buf: &GpuBufEntry,
        off: u64,
        len: usize,
        imm: u32,
        flags: u32,
        position: Option<u32>,
    ) -> DocaResult<()> {
        let qp = self.conn(conn)?;
        let laddr = Self::at(buf, off)?;
        if len as u64 > MAX_LENGTH || flags & !FLAG_IMM != 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        let idx = self.sq_index(qp, position)?;
        let opcode = imm_opcode(flags, opcode::SEND, opcode::SEND_IMM);
        let local = local_seg(laddr, buf.mkey_be, len as u32);
        let w = build::local(Self::ctrl(qp, idx, opcode, imm), local.as_slice());
        Self::store(qp, idx, &w);
        Ok(())
    }

    /// `doca_gpu_dev_rdma_send_inline_strong` / `_weak` (at most 44 bytes).
    pub fn send_inline(
        &self,
        conn: u32,
        data: &[u8],
        imm: u32,
        flags: u32,
        position: Option<u32>,
    ) -> DocaResult<()> {
        let qp = self.conn(conn)?;
        if data.len() > MAX_INLINE || flags & !FLAG_IMM != 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        let idx = self.sq_index(qp, position)?;
        let opcode = imm_opcode(flags, opcode::SEND, opcode::SEND_IMM);
        let w = build::local_inline(Self::ctrl(qp, idx, opcode, imm), data);
        Self::store(qp, idx, &w);
        Ok(())
    }

    /// Publishes a queue up to `prod` (the device's publish + submit).
    fn publish(qp: Qp, q: Queue, prod: u64) {
        match q {
            Queue::Sq => {
                qp.sq_rsvd().fetch_max(prod, Ordering::AcqRel);
                qp.sq_ready().fetch_max(prod, Ordering::AcqRel);
                // CPU-proxy submit: under the lock, forward a producer index that advances.
                Qp::lock(qp.sq_lock());
                let old = qp.sq_pi().load(Ordering::Acquire);
                if prod > old {
                    fence(Ordering::Release);
                    // SAFETY: the proxy slot named by the descriptor (host memory).
                    unsafe {
                        (*(qp.sq_db().load(Ordering::Relaxed) as *const AtomicU64))
                            .store(prod, Ordering::Release)
                    };
                    qp.sq_pi().store(prod, Ordering::Release);
                }
                qp.sq_lock().store(0, Ordering::Release);
            }
            Queue::Rq => {
                qp.rq_rsvd().fetch_max(prod, Ordering::AcqRel);
                qp.rq_ready().fetch_max(prod, Ordering::AcqRel);
                Qp::lock(qp.rq_lock());
                let old = qp.rq_pi().fetch_max(prod, Ordering::AcqRel);
                if prod > old {
                    fence(Ordering::Release);
                    // SAFETY: the doorbell record named by the descriptor (host memory).
                    unsafe {
                        (*(qp.rq_dbrec().load(Ordering::Relaxed) as *const AtomicU32))
                            .store(((prod & 0xffff) as u32).to_be(), Ordering::Release)
                    };
                }
                qp.rq_lock().store(0, Ordering::Release);
            }
        }
    }

    /// `doca_gpu_dev_rdma_commit_strong`.
    pub fn commit_strong(&self, conn: u32) -> DocaResult<()> {
        let qp = self.conn(conn)?;
        Self::publish(qp, Queue::Sq, qp.sq_rsvd().load(Ordering::Acquire));
        self.commits().fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// `doca_gpu_dev_rdma_commit_weak`.
    pub fn commit_weak(&self, conn: u32, num_ops: u32) -> DocaResult<()> {
        let qp = self.conn(conn)?;
        if num_ops > qp.sq_wqe_num().load(Ordering::Relaxed) as u32 {
            return Err(DocaError::INVALID_VALUE);
        }
        let prod = qp.sq_pi().load(Ordering::Acquire) + num_ops as u64;
        Self::publish(qp, Queue::Sq, prod);
        self.commits().fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// `doca_gpu_dev_rdma_wait_all`: the commits since the previous call; IO_FAILED when a
    /// connection's last WQE completed with an error.
    pub fn wait_all(&self) -> DocaResult<u32> {
        let n = self.commits().swap(0, Ordering::AcqRel);
        let mut result = Ok(());
        for i in 0..self.num_connections() {
            let qp = self.conn(i)?;
            let pi = qp.sq_pi().load(Ordering::Acquire);
            if pi == 0 {
                continue;
            }
            if qp.cq_sq().poll_at(pi - 1, self.timeout)? != 0 {
                result = Err(DocaError::IO_FAILED);
            }
        }
        result.map(|()| n as u32)
    }

    /// `doca_gpu_dev_rdma_get_info`: (current position, mask).
    pub fn get_info(&self, conn: u32) -> DocaResult<(u32, u32)> {
        let qp = self.conn(conn)?;
        let mask = qp.sq_wqe_mask().load(Ordering::Relaxed) as u64;
        Ok((
            (qp.sq_pi().load(Ordering::Acquire) & mask) as u32,
            mask as u32,
        ))
    }

    /// `doca_gpu_dev_rdma_recv_strong` (`position` None) / `_recv_weak`; `buf` None with
    /// length 0 absorbs a write with immediate.
    pub fn recv(
        &self,
        buf: Option<&GpuBufEntry>,
        len: usize,
        off: u64,
        flags_bitmask: u32,
        position: Option<u32>,
    ) -> DocaResult<()> {
        let qp = self.recv_qp()?;
        if flags_bitmask != 0 || len as u64 > MAX_LENGTH {
            return Err(DocaError::INVALID_VALUE);
        }
        let (addr, key) = match buf {
            None if len == 0 => (0, INVALID_LKEY.to_be()),
            None => return Err(DocaError::INVALID_VALUE),
            Some(b) => (Self::at(b, off)?, b.mkey_be),
        };
        let idx = match position {
            Some(p) => self.weak_index(qp, Queue::Rq, p)?,
            None => self.strong_index(qp, Queue::Rq)?,
        };
        let mask = qp.rq_wqe_mask().load(Ordering::Relaxed) as u64;
        let slot = (qp.rq_daddr().load(Ordering::Relaxed) + (idx & mask) * 16) as *mut u8;
        let w = DataSeg {
            byte_count: len as u32,
            lkey_raw: key,
            addr,
        }
        .encode();
        // SAFETY: the receive WQE slot of `idx` in the host ring.
        unsafe { std::ptr::copy_nonoverlapping(w.as_ptr(), slot, 16) };
        Ok(())
    }

    /// `doca_gpu_dev_rdma_recv_commit_strong`.
    pub fn recv_commit_strong(&self) -> DocaResult<()> {
        let qp = self.recv_qp()?;
        Self::publish(qp, Queue::Rq, qp.rq_rsvd().load(Ordering::Acquire));
        Ok(())
    }

    /// `doca_gpu_dev_rdma_recv_commit_weak`.
    pub fn recv_commit_weak(&self, num_ops: u32) -> DocaResult<()> {
        let qp = self.recv_qp()?;
        if num_ops > qp.rq_wqe_num().load(Ordering::Relaxed) {
            return Err(DocaError::INVALID_VALUE);
        }
        let prod = qp.rq_pi().load(Ordering::Acquire) + num_ops as u64;
        Self::publish(qp, Queue::Rq, prod);
        Ok(())
    }

    /// `doca_gpu_dev_rdma_recv_get_info`: (current position, mask).
    pub fn recv_get_info(&self) -> DocaResult<(u32, u32)> {
        let qp = self.recv_qp()?;
        let mask = qp.rq_wqe_mask().load(Ordering::Relaxed) as u64;
        Ok((
            (qp.rq_pi().load(Ordering::Acquire) & mask) as u32,
            mask as u32,
        ))
    }

    /// `doca_gpu_dev_rdma_recv_wait_all`: the receives completed since the previous call,
    /// in arrival order, as (immediate, connection index) — written into `out`, which is
    /// cleared first (no allocation once it has room). IO_FAILED for an error completion.
    pub fn recv_wait_all(&self, flags: u32, out: &mut Vec<RecvDone>) -> DocaResult<()> {
        out.clear();
        if flags != RECV_WAIT_NB && flags != RECV_WAIT_B {
            return Err(DocaError::INVALID_VALUE);
        }
        let qp = self.recv_qp()?;
        let cq = qp.cq_rq();
        let target = qp.rq_pi().load(Ordering::Acquire);
        let ci = cq.ci().load(Ordering::Acquire);
        let mut result = Ok(());
        if flags == RECV_WAIT_B && target > ci && cq.wait(target - 1, self.timeout)? != 0 {
            result = Err(DocaError::IO_FAILED);
        }
        let mut n = 0u64;
        let mut k = ci;
        while k < target && result.is_ok() {
            match cq.status(k) {
                r if r == libc::EBUSY => break,
                0 => {}
                _ => {
                    result = Err(DocaError::IO_FAILED);
                    break;
                }
            }
            let c = cq.read(k);
            let op = c[63] >> 4;
            let imm = if op == 0x1 || op == 0x3 {
                u32::from_ne_bytes([c[36], c[37], c[38], c[39]])
            } else {
                0
            };
            let qpn = u32::from_be_bytes([c[56], c[57], c[58], c[59]]) & 0xff_ffff;
            let idx = (0..self.num_connections())
                .find(|&i| self.qpn(i).is_ok_and(|q| q & 0xff_ffff == qpn))
                .unwrap_or(u32::MAX);
            out.push((imm, idx));
            n += 1;
            k += 1;
        }
        if n > 0 {
            cq.ci().fetch_max(ci + n, Ordering::AcqRel);
        }
        result
    }

    /// Send CQE number `k` of connection `conn`, if it is there (tests check syndromes).
    pub fn send_cqe(&self, conn: u32, k: u64) -> DocaResult<Option<[u8; 64]>> {
        let cq = self.conn(conn)?.cq_sq();
        Ok(
            (cq.status(k) != libc::EBUSY || k < cq.ci().load(Ordering::Acquire))
                .then(|| cq.read(k)),
        )
    }

    /// The send producer index of connection `conn` (WQEs committed so far).
    pub fn sent(&self, conn: u32) -> DocaResult<u64> {
        Ok(self.conn(conn)?.sq_pi().load(Ordering::Acquire))
    }

    /// The number of receives posted and committed so far (the receive producer index).
    pub fn recv_posted(&self) -> DocaResult<u64> {
        Ok(self.recv_qp()?.rq_pi().load(Ordering::Acquire))
    }
}

// ---- DMA -------------------------------------------------------------------------------------

/// Puts an IDLE `doca_dma` on the GPU data path with its request ring in host memory and
/// CPU copies (no GPU), so [`CpuDma`] can play the kernel.
///
/// # Safety
/// `dma` is a live `struct doca_dma *`.
pub unsafe fn dma_set_host_datapath(dma: *mut c_void) -> DocaResult<()> {
    // SAFETY: caller contract.
    let d = unsafe { (dma as *const crate::dma::Dma).as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    d.set_host_datapath()
}

/// Requests the DMA proxy skipped (bad key or range) since start.
///
/// # Safety
/// `dma` is a live `struct doca_dma *`.
pub unsafe fn dma_skipped(dma: *mut c_void) -> DocaResult<u64> {
    // SAFETY: caller contract.
    let d = unsafe { (dma as *const crate::dma::Dma).as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    Ok(d.skipped())
}

/// The GPU DMA device functions (`doca_gpu_dev_dma_memcpy`, `doca_gpu_dev_dma_commit`)
/// run by CPU threads on a host-memory handle.
pub struct CpuDma {
    h: *mut u8,
}

// SAFETY: shared memory meant for concurrent use through atomics.
unsafe impl Send for CpuDma {}
// SAFETY: as above.
unsafe impl Sync for CpuDma {}

impl CpuDma {
    /// Wraps a handle from `doca_dma_get_gpu_handle` of a context on the host data path.
    ///
    /// # Safety
    /// `handle` is such a handle and its context stays started while this value is used.
    pub unsafe fn new(handle: *mut c_void) -> DocaResult<CpuDma> {
        if handle.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: caller contract: the 256-byte handle.
        if unsafe { std::ptr::read_volatile(handle as *const u32) }
            != crate::dma::ring::RING_VERSION
        {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(CpuDma { h: handle.cast() })
    }

    fn u32_at(&self, off: usize) -> u32 {
        // SAFETY: inside the handle (caller contract of `new`).
        unsafe { std::ptr::read_volatile(self.h.add(off) as *const u32) }
    }

    fn counter(&self, off: usize) -> &AtomicU64 {
        // SAFETY: an aligned counter of the handle.
        unsafe { &*(self.h.add(off) as *const AtomicU64) }
    }

    /// Requests finished so far (`done`).
    pub fn done(&self) -> u64 {
        self.counter(192).load(Ordering::Acquire)
    }

    /// `doca_gpu_dev_dma_memcpy`: enqueues a copy (waits, up to `timeout`, for a free
    /// slot); a zero length enqueues nothing.
    pub fn memcpy(
        &self,
        src: &GpuBufEntry,
        src_off: u64,
        dst: &GpuBufEntry,
        dst_off: u64,
        len: usize,
        timeout: Duration,
    ) -> DocaResult<()> {
        let s = src
            .addr
            .checked_add(src_off)
            .ok_or(DocaError::INVALID_VALUE)?;
        let d = dst
            .addr
            .checked_add(dst_off)
            .ok_or(DocaError::INVALID_VALUE)?;
        s.checked_add(len as u64).ok_or(DocaError::INVALID_VALUE)?;
        d.checked_add(len as u64).ok_or(DocaError::INVALID_VALUE)?;
        if len == 0 {
            return Ok(());
        }
        let num = self.u32_at(4) as u64;
        let mask = self.u32_at(8) as u64;
        // SAFETY: desc_addr of the handle.
        let base = unsafe { std::ptr::read_volatile(self.h.add(16) as *const u64) };
        let idx = self.counter(64).fetch_add(1, Ordering::Relaxed);
        let end = Instant::now() + timeout;
        while idx - self.done() >= num {
            if Instant::now() > end {
                return Err(DocaError::TIME_OUT);
            }
            std::hint::spin_loop();
        }
        let slot = (base + (idx & mask) * 64) as *mut u8;
        let mut w = [0u8; 32];
        w[0..8].copy_from_slice(&s.to_ne_bytes());
        w[8..16].copy_from_slice(&d.to_ne_bytes());
        w[16..24].copy_from_slice(&(len as u64).to_ne_bytes());
        w[24..28].copy_from_slice(&src.mkey_be.to_ne_bytes());
        w[28..32].copy_from_slice(&dst.mkey_be.to_ne_bytes());
        // SAFETY: the descriptor slot of `idx` in the host ring; seq (offset 32) after it.
        unsafe {
            std::ptr::copy_nonoverlapping(w.as_ptr(), slot, 32);
            (*(slot.add(32) as *const AtomicU64)).store(idx + 1, Ordering::Release);
        }
        Ok(())
    }

    /// `doca_gpu_dev_dma_commit`: submits everything enqueued so far.
    pub fn commit(&self) {
        fence(Ordering::SeqCst);
        let target = self.counter(64).load(Ordering::Relaxed);
        self.counter(128).fetch_max(target, Ordering::Release);
    }

    /// Waits (up to `timeout`) until `done` reaches `n`.
    pub fn wait_done(&self, n: u64, timeout: Duration) -> DocaResult<()> {
        let end = Instant::now() + timeout;
        while self.done() < n {
            if Instant::now() > end {
                return Err(DocaError::TIME_OUT);
            }
            std::thread::yield_now();
        }
        Ok(())
    }
}

/// The one local data segment of a WQE, none when `len` is 0 (key as stored).
fn local_seg(addr: u64, key_be: u32, len: u32) -> Option<DataSeg> {
    (len > 0).then_some(DataSeg {
        byte_count: len,
        lkey_raw: key_be,
        addr,
    })
}

/// `with_imm` when `flags` ask for an immediate, else `plain`.
fn imm_opcode(flags: u32, plain: u8, with_imm: u8) -> u8 {
    if flags & FLAG_IMM != 0 {
        with_imm
    } else {
        plain
    }
}
