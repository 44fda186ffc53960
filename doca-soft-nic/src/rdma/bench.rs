//! The benchmark entry point: two NIC instances of this process on `lo`, one QP each,
//! connected, with registered host buffers; [`WriteBench::run`] posts N RDMA writes of S
//! bytes from the CPU (playing the GPU, CPU-proxy doorbell) and waits for every completion.
//! A bench harness times `run`; the tests only check that it works.

use super::api::Nic;
use super::host::{self, HostMem, HostQp, Seg, Sizes};
use super::mkey::{self, Access, MemKind, Registration};
use crate::error::{DocaError, DocaResult};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// Two connected QPs and the buffers of a write benchmark.
pub struct WriteBench {
    tx: HostQp,
    _rx: HostQp,
    src_reg: Registration,
    dst_reg: Registration,
    _src: HostMem,
    dst: HostMem,
    max_size: usize,
    _nics: (Nic, Nic),
}

/// Writes in flight at most (a quarter of the ring keeps the proxy fed and the CQ clear).
const WINDOW: u64 = 128;

impl WriteBench {
    /// Sets up the pair; writes may be up to `max_size` bytes.
    pub(crate) fn new(max_size: usize) -> DocaResult<WriteBench> {
        if max_size == 0 || max_size > 1 << 30 {
            return Err(DocaError::INVALID_VALUE);
        }
        let a = Nic::start(Ipv4Addr::LOCALHOST)?;
        let b = Nic::start(Ipv4Addr::LOCALHOST)?;
        let sizes = Sizes {
            sq: 512,
            rq: 16,
            cq: 512,
        };
        let tx = HostQp::new(&a, sizes, false)?;
        let rx = HostQp::new(&b, sizes, false)?;
        tx.qp().connect(&b.gid(), rx.qpn())?;
        rx.qp().connect(&a.gid(), tx.qpn())?;
        let src = HostMem::new(max_size)?;
        let dst = HostMem::new(max_size)?;
        let src_reg = mkey::register(
            src.addr(),
            max_size as u64,
            Access::LOCAL_WRITE,
            MemKind::Host,
        )?;
        let dst_reg = mkey::register(
            dst.addr(),
            max_size as u64,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE,
            MemKind::Host,
        )?;
        Ok(WriteBench {
            tx,
            _rx: rx,
            src_reg,
            dst_reg,
            _src: src,
            dst,
            max_size,
            _nics: (a, b),
        })
    }

    /// Posts `n` writes of `size` bytes (each asking for a completion, at most
    /// [`WINDOW`] outstanding) and waits for all completions. Returns the elapsed time.
    pub(crate) fn run(&mut self, n: usize, size: usize) -> DocaResult<Duration> {
        if size == 0 || size > self.max_size {
            return Err(DocaError::INVALID_VALUE);
        }
        let (src, dst) = (
            Seg {
                addr: self._src.addr(),
                key: self.src_reg.key(),
                len: size as u32,
            },
            (self.dst.addr(), self.dst_reg.key()),
        );
        let start = Instant::now();
        let (mut posted, mut done) = (0u64, 0u64);
        let deadline = Duration::from_secs(60);
        while done < n as u64 {
            while posted < n as u64 && posted - done < WINDOW {
                self.tx
                    .post(|i, q| host::wqe_write(i, q, dst, &[src], None, true));
                posted += 1;
            }
            self.tx.ring();
            let left = deadline.saturating_sub(start.elapsed());
            host::wait_send_ok(&mut self.tx, 1, left)?;
            done += 1;
        }
        Ok(start.elapsed())
    }

    /// The destination buffer (for checks).
    pub(crate) fn destination(&self) -> &[u8] {
        self.dst.bytes()
    }

    /// The source buffer, writable (to set a pattern).
    pub(crate) fn source_mut(&mut self) -> &mut [u8] {
        self._src.bytes_mut()
    }
}
