//! The CPU playing the GPU: a QP whose rings live in host memory, WQEs built the way
//! DOCA 3.3's device helpers build them (reference facts §3.12), the CPU-proxy doorbell,
//! and CQ polling with the owner-bit rule of the device pollers. The tests and the
//! benchmark entry point drive the NIC through it; the C layer does not need it.

use super::api::{Cq, Nic, Qp, Rq};
use super::ring::SqDoorbell;
use crate::error::{DocaError, DocaResult};
use doca_soft_packet::mlx5::rdma::{build, RemoteSeg};
use doca_soft_packet::mlx5::wqe::{Ctrl, DataSeg};
use doca_soft_packet::mlx5::{cqe, opcode, CTRL_CQ_UPDATE};
use std::alloc::Layout;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Zeroed, page-aligned host memory.
pub struct HostMem {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: plain memory owned by this value.
unsafe impl Send for HostMem {}

impl HostMem {
    /// `len` zeroed bytes (at least one), aligned to 4096; NO_MEMORY when the allocator
    /// refuses (or `len` is beyond what an allocation can be), never an abort.
    pub fn new(len: usize) -> DocaResult<HostMem> {
        let layout = Layout::from_size_align(len.max(1), 4096).map_err(|_| DocaError::NO_MEMORY)?;
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(DocaError::NO_MEMORY);
        }
        Ok(HostMem { ptr, layout })
    }

    /// The first byte.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The address as an integer.
    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `layout.size()` initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    /// The bytes, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, exclusively borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }

    /// A volatile read of `len` bytes at `off` (memory the NIC writes behind our back).
    pub fn read(&self, off: usize, len: usize) -> Vec<u8> {
        assert!(off + len <= self.layout.size());
        // SAFETY: in bounds (asserted).
        (0..len)
            .map(|i| unsafe { std::ptr::read_volatile(self.ptr.add(off + i)) })
            .collect()
    }
}

impl Drop for HostMem {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// One local entry of a WQE (`key` in host order; the builders store it big-endian).
pub use doca_soft_packet::mlx5::rdma::Sge as Seg;

/// The control segment: index, opcode, QPN, CQ_UPDATE when `signaled`, immediate (DS is
/// the builder's).
fn ctrl(index: u16, opcode: u8, qpn: u32, signaled: bool, imm: [u8; 4]) -> Ctrl {
    Ctrl {
        opcode,
        wqe_index: index,
        qpn,
        fm_ce_se: if signaled { CTRL_CQ_UPDATE } else { 0 },
        imm: u32::from_ne_bytes(imm),
        ..Ctrl::default()
    }
}

fn data_segs(segs: &[Seg]) -> Vec<DataSeg> {
    segs.iter().map(|s| s.data_seg()).collect()
}

/// RDMA write (with immediate when `imm` is set) of up to two local entries.
pub fn wqe_write(
    index: u16,
    qpn: u32,
    dst: (u64, u32),
    src: &[Seg],
    imm: Option<[u8; 4]>,
    signaled: bool,
) -> [u8; 64] {
    let opc = if imm.is_some() {
        opcode::RDMA_WRITE_IMM
    } else {
        opcode::RDMA_WRITE
    };
    build::remote(
        ctrl(index, opc, qpn, signaled, imm.unwrap_or_default()),
        RemoteSeg::new(dst.0, dst.1),
        &data_segs(src),
    )
}

/// Inline RDMA write of at most 28 bytes.
pub fn wqe_write_inline(
    index: u16,
    qpn: u32,
    dst: (u64, u32),
    data: &[u8],
    signaled: bool,
) -> [u8; 64] {
    build::remote_inline(
        ctrl(index, opcode::RDMA_WRITE, qpn, signaled, [0; 4]),
        RemoteSeg::new(dst.0, dst.1),
        data,
    )
}

/// RDMA read into one local entry.
pub fn wqe_read(index: u16, qpn: u32, src: (u64, u32), dst: Seg, signaled: bool) -> [u8; 64] {
    build::remote(
        ctrl(index, opcode::RDMA_READ, qpn, signaled, [0; 4]),
        RemoteSeg::new(src.0, src.1),
        &[dst.data_seg()],
    )
}

/// Fetch-and-add (`compare` None) or compare-and-swap (`value` is the swap value).
pub fn wqe_atomic(
    index: u16,
    qpn: u32,
    dst: (u64, u32),
    value: u64,
    compare: Option<u64>,
    result: (u64, u32),
    signaled: bool,
) -> [u8; 64] {
    let opc = if compare.is_some() {
        opcode::ATOMIC_CS
    } else {
        opcode::ATOMIC_FA
    };
    let result = Seg {
        addr: result.0,
        key: result.1,
        len: 8,
    };
    build::atomic(
        ctrl(index, opc, qpn, signaled, [0; 4]),
        RemoteSeg::new(dst.0, dst.1),
        value,
        compare.unwrap_or(value),
        result.data_seg(),
    )
}

/// Send (with immediate when `imm` is set) of up to three local entries.
pub fn wqe_send(
    index: u16,
    qpn: u32,
    src: &[Seg],
    imm: Option<[u8; 4]>,
    signaled: bool,
) -> [u8; 64] {
    let opc = if imm.is_some() {
        opcode::SEND_IMM
    } else {
        opcode::SEND
    };
    build::local(
        ctrl(index, opc, qpn, signaled, imm.unwrap_or_default()),
        &data_segs(src),
    )
}

/// WAIT until CQ `cqn` has produced CQE number `max_index`.
pub fn wqe_wait(index: u16, qpn: u32, max_index: u32, cqn: u32, signaled: bool) -> [u8; 64] {
    build::wait_cq(
        ctrl(index, opcode::WAIT, qpn, signaled, [0; 4]),
        max_index,
        cqn,
    )
}

/// Ring sizes of a [`HostQp`].
#[derive(Clone, Copy)]
pub struct Sizes {
    /// Send WQEs.
    pub sq: u32,
    /// Receive WQEs.
    pub rq: u32,
    /// CQEs per CQ.
    pub cq: u32,
}

impl Default for Sizes {
    fn default() -> Self {
        Sizes {
            sq: 256,
            rq: 256,
            cq: 256,
        }
    }
}

/// A QP driven from the CPU (CPU-proxy doorbell), with its send and receive CQs.
pub struct HostQp {
    /// The QP (dropped before the rings).
    qp: Option<Qp>,
    rq: Rq,
    /// The send CQ.
    pub cq: Cq,
    rcq: Cq,
    sq_mem: HostMem,
    rq_mem: HostMem,
    cq_mem: HostMem,
    rcq_mem: HostMem,
    /// Doorbell slot (u64 at 0) and RQ doorbell record (u32 at 64).
    db_mem: HostMem,
    sizes: Sizes,
    pi: u64,
    rq_pi: u64,
    cq_ci: u64,
    rcq_ci: u64,
}

fn cq_mem(n: u32) -> DocaResult<HostMem> {
    let m = HostMem::new(ring_bytes(n, cqe::CQE_SIZE)?)?;
    // SAFETY: the block holds `n` slots of 64 bytes.
    unsafe { cqe::init_ring(m.ptr(), n) };
    Ok(m)
}

/// `n` entries of `each` bytes; NO_MEMORY when that overflows.
fn ring_bytes(n: u32, each: usize) -> DocaResult<usize> {
    (n as usize).checked_mul(each).ok_or(DocaError::NO_MEMORY)
}

/// What a CQ poll found.
pub type CqeBytes = [u8; 64];

impl HostQp {
    /// A QP on `nic` with host rings of `sizes`; `cqe_inline`: receives of at most 32 bytes
    /// land in the CQE.
    pub fn new(nic: &Nic, sizes: Sizes, cqe_inline: bool) -> DocaResult<HostQp> {
        let sq_mem = HostMem::new(ring_bytes(sizes.sq, 64)?)?;
        let rq_mem = HostMem::new(ring_bytes(sizes.rq, 16)?)?;
        let cqm = cq_mem(sizes.cq)?;
        let rcqm = cq_mem(sizes.cq)?;
        let db_mem = HostMem::new(128)?;
        // SAFETY: every ring lives in this HostQp, which drops the QP, RQ and CQs first.
        let (cq, rcq) = unsafe {
            (
                nic.create_cq(cqm.ptr(), sizes.cq)?,
                nic.create_cq(rcqm.ptr(), sizes.cq)?,
            )
        };
        // SAFETY: as above.
        let rq = unsafe {
            nic.create_rq(
                rq_mem.ptr(),
                sizes.rq,
                db_mem.ptr().add(64) as *const u32,
                &rcq,
                cqe_inline,
            )?
        };
        // SAFETY: as above.
        let qp = unsafe {
            nic.create_qp(
                sq_mem.ptr(),
                sizes.sq,
                SqDoorbell::ProxySlot(db_mem.ptr() as *const u64),
                &cq,
                Some(&rq),
            )?
        };
        Ok(HostQp {
            qp: Some(qp),
            rq,
            cq,
            rcq,
            sq_mem,
            rq_mem,
            cq_mem: cqm,
            rcq_mem: rcqm,
            db_mem,
            sizes,
            pi: 0,
            rq_pi: 0,
            cq_ci: 0,
            rcq_ci: 0,
        })
    }

    /// The QP.
    pub fn qp(&self) -> &Qp {
        self.qp.as_ref().expect("QP not destroyed")
    }

    /// Destroys the QP, keeping its rings readable (its flush CQEs stay pollable).
    pub fn destroy_qp(&mut self) {
        self.qp = None;
    }

    /// The QP number.
    pub fn qpn(&self) -> u32 {
        self.qp().qpn()
    }

    /// The send CQ number (for WAIT WQEs naming it).
    pub fn cqn(&self) -> u32 {
        self.cq.cqn()
    }

    /// The index the next WQE gets.
    pub fn next_index(&self) -> u64 {
        self.pi
    }

    /// Writes the WQE `build(index, qpn)` returns into the next slot (not yet rung).
    pub fn post(&mut self, build: impl FnOnce(u16, u32) -> [u8; 64]) -> u64 {
        let i = self.pi;
        let w = build(i as u16, self.qpn());
        let slot = (i & (self.sizes.sq as u64 - 1)) as usize * 64;
        self.sq_mem.bytes_mut()[slot..slot + 64].copy_from_slice(&w);
        self.pi += 1;
        i
    }

    /// Publishes every WQE posted so far (the CPU-proxy doorbell: the 64-bit index).
    pub fn ring(&self) {
        // SAFETY: an aligned u64 inside db_mem.
        unsafe { (*(self.db_mem.ptr() as *const AtomicU64)).store(self.pi, Ordering::Release) };
    }

    /// Posts a receive of `len` bytes at `addr` (key `key`) and rings the RQ record.
    pub fn post_recv(&mut self, addr: u64, key: u32, len: u32) -> u64 {
        let i = self.rq_pi;
        let slot = (i & (self.sizes.rq as u64 - 1)) as usize * 16;
        let wqe = Seg { addr, key, len }.data_seg().encode();
        self.rq_mem.bytes_mut()[slot..slot + 16].copy_from_slice(&wqe);
        self.rq_pi += 1;
        // SAFETY: an aligned u32 inside db_mem.
        unsafe {
            (*(self.db_mem.ptr().add(64) as *const AtomicU32))
                .store(((self.rq_pi & 0xffff) as u32).to_be(), Ordering::Release)
        };
        i
    }

    fn poll(mem: &HostMem, n: u32, ci: &mut u64, timeout: Duration) -> Option<CqeBytes> {
        let deadline = Instant::now() + timeout;
        let slot = (*ci & (n as u64 - 1)) as usize * cqe::CQE_SIZE;
        loop {
            // SAFETY: inside the ring.
            let op_own = unsafe { cqe::load_op_own(mem.ptr().add(slot)) };
            if cqe::present(op_own, *ci, n) {
                let mut c = [0u8; 64];
                c.copy_from_slice(&mem.read(slot, 64));
                *ci += 1;
                return Some(c);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::yield_now();
        }
    }

    /// The next send CQE, waiting up to `timeout`.
    pub fn poll_send(&mut self, timeout: Duration) -> Option<CqeBytes> {
        Self::poll(&self.cq_mem, self.sizes.cq, &mut self.cq_ci, timeout)
    }

    /// The next receive CQE, waiting up to `timeout`.
    pub fn poll_recv(&mut self, timeout: Duration) -> Option<CqeBytes> {
        Self::poll(&self.rcq_mem, self.sizes.cq, &mut self.rcq_ci, timeout)
    }

    /// Whether the RQ is still referenced elsewhere (for the in-use rule).
    pub fn rq_in_use(&self) -> bool {
        self.rq.in_use()
    }

    /// Whether the receive CQ is still referenced elsewhere.
    pub fn rcq_in_use(&self) -> bool {
        self.rcq.in_use()
    }
}

/// The opcode nibble of a CQE.
pub fn cqe_opcode(c: &CqeBytes) -> u8 {
    cqe::Cqe::decode(c).opcode
}

/// The WQE counter of a CQE.
pub fn cqe_counter(c: &CqeBytes) -> u16 {
    cqe::Cqe::decode(c).wqe_counter
}

/// The syndrome of an error CQE.
pub fn cqe_syndrome(c: &CqeBytes) -> u8 {
    c[cqe::SYNDROME]
}

/// The byte count of a CQE.
pub fn cqe_bytes(c: &CqeBytes) -> u32 {
    cqe::Cqe::decode(c).byte_cnt
}

/// Waits for `n` send CQEs; every one must be a success. Returns them.
pub fn wait_send_ok(q: &mut HostQp, n: usize, timeout: Duration) -> DocaResult<Vec<CqeBytes>> {
    let mut out = Vec::with_capacity(n);
    let deadline = Instant::now() + timeout;
    while out.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        let c = q.poll_send(left).ok_or(DocaError::TIME_OUT)?;
        if cqe_opcode(&c) != 0 {
            sdk_err!(
                "nic",
                "error CQE: opcode {:#x} syndrome {:#x}",
                cqe_opcode(&c),
                cqe_syndrome(&c)
            );
            return Err(DocaError::IO_FAILED);
        }
        out.push(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_the_allocator_refuses_are_no_memory_not_an_abort() {
        // 4 EiB: no address space holds it. usize::MAX: beyond any layout. The results go
        // through black_box: an optimised build may otherwise drop an allocation that is
        // only tested and freed, and take it as granted (the release build on the GPU
        // machine did).
        let huge = std::hint::black_box(HostMem::new(std::hint::black_box(1 << 62)));
        assert_eq!(huge.err(), Some(DocaError::NO_MEMORY));
        let max = std::hint::black_box(HostMem::new(std::hint::black_box(usize::MAX)));
        assert_eq!(max.err(), Some(DocaError::NO_MEMORY));
        let m = HostMem::new(0).expect("one byte");
        assert_eq!(m.bytes(), &[0]);
        assert_eq!(m.addr() % 4096, 0);
    }
}
