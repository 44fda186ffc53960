//! Building RDMA WQEs as the device helpers do (the CPU-side producers of the tests and the
//! host datapaths): the caller fills the control segment's opcode, index, QPN, `fm_ce_se`
//! and immediate; each builder lays out the segments of its shape and sets DS.

use super::super::wqe::{Ctrl, DataSeg, SEG};
use super::INLINE_SEG;

/// Bytes of one RDMA send WQE.
pub const WQE_SIZE: usize = 64;

/// Remote address segment: BE64 address, key as stored (big-endian on the wire), 4
/// reserved bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteSeg {
    /// Remote address.
    pub addr: u64,
    /// Remote key as stored.
    pub rkey_raw: u32,
}

impl RemoteSeg {
    /// A segment for `addr` and the host-order key `rkey`.
    pub fn new(addr: u64, rkey: u32) -> RemoteSeg {
        RemoteSeg {
            addr,
            rkey_raw: rkey.to_be(),
        }
    }

    /// The 16 bytes.
    pub fn encode(&self) -> [u8; SEG] {
        let mut b = [0u8; SEG];
        b[0..8].copy_from_slice(&self.addr.to_be_bytes());
        b[8..12].copy_from_slice(&self.rkey_raw.to_ne_bytes());
        b
    }

    /// Reads a remote address segment (the first 16 bytes of `b`).
    pub fn decode(b: &[u8]) -> RemoteSeg {
        RemoteSeg {
            addr: super::super::be64(b, 0),
            rkey_raw: u32::from_ne_bytes([b[8], b[9], b[10], b[11]]),
        }
    }
}

/// Atomic segment: BE64 swap (compare-and-swap) or addend (fetch-and-add), BE64 compare.
fn atomic_seg(swap_add: u64, compare: u64) -> [u8; SEG] {
    let mut b = [0u8; SEG];
    b[0..8].copy_from_slice(&swap_add.to_be_bytes());
    b[8..16].copy_from_slice(&compare.to_be_bytes());
    b
}

/// A WQE being laid out: segments appended after the control segment.
struct Layout {
    w: [u8; WQE_SIZE],
    at: usize,
}

impl Layout {
    fn new() -> Layout {
        Layout {
            w: [0; WQE_SIZE],
            at: SEG,
        }
    }

    fn seg(mut self, s: &[u8; SEG]) -> Layout {
        self.w[self.at..self.at + SEG].copy_from_slice(s);
        self.at += SEG;
        self
    }

    /// Inline data: BE32 `len | INLINE_SEG`, then the bytes, padded to whole segments.
    fn inline(mut self, data: &[u8]) -> Layout {
        let at = self.at;
        self.w[at..at + 4].copy_from_slice(&(data.len() as u32 | INLINE_SEG).to_be_bytes());
        self.w[at + 4..at + 4 + data.len()].copy_from_slice(data);
        self.at += (4 + data.len()).div_ceil(SEG) * SEG;
        self
    }

    /// The WQE with `ctrl` (DS set to the segments laid out) in front.
    fn finish(mut self, mut ctrl: Ctrl) -> [u8; WQE_SIZE] {
        ctrl.ds = (self.at / SEG) as u8;
        self.w[..SEG].copy_from_slice(&ctrl.encode());
        self.w
    }
}

/// RDMA write or read: the remote segment, then up to two local data segments.
pub fn remote(ctrl: Ctrl, remote: RemoteSeg, local: &[DataSeg]) -> [u8; WQE_SIZE] {
    assert!(
        local.len() <= 2,
        "a one-slot RDMA WQE holds 2 data segments"
    );
    local
        .iter()
        .fold(Layout::new().seg(&remote.encode()), |l, d| {
            l.seg(&d.encode())
        })
        .finish(ctrl)
}

/// Inline RDMA write of at most 28 bytes: the remote segment, then the inline data.
pub fn remote_inline(ctrl: Ctrl, remote: RemoteSeg, data: &[u8]) -> [u8; WQE_SIZE] {
    assert!(
        data.len() <= super::MAX_WRITE_INLINE,
        "at most 28 inline bytes"
    );
    Layout::new()
        .seg(&remote.encode())
        .inline(data)
        .finish(ctrl)
}

/// Atomic: the remote segment, the atomic segment (`swap_add`, `compare`) and the result's
/// 8-byte data segment.
pub fn atomic(
    ctrl: Ctrl,
    remote: RemoteSeg,
    swap_add: u64,
    compare: u64,
    result: DataSeg,
) -> [u8; WQE_SIZE] {
    Layout::new()
        .seg(&remote.encode())
        .seg(&atomic_seg(swap_add, compare))
        .seg(&result.encode())
        .finish(ctrl)
}

/// Send (or DUMP): up to three local data segments.
pub fn local(ctrl: Ctrl, local: &[DataSeg]) -> [u8; WQE_SIZE] {
    assert!(
        local.len() <= super::MAX_SGE,
        "a send holds 3 data segments"
    );
    local
        .iter()
        .fold(Layout::new(), |l, d| l.seg(&d.encode()))
        .finish(ctrl)
}

/// Inline send of at most 44 bytes.
pub fn local_inline(ctrl: Ctrl, data: &[u8]) -> [u8; WQE_SIZE] {
    assert!(data.len() <= super::MAX_INLINE, "at most 44 inline bytes");
    Layout::new().inline(data).finish(ctrl)
}

/// Core-direct WAIT until CQ `cqn` has produced CQE number `max_index`: 8 reserved bytes,
/// BE32 `max_index`, BE32 `cqn`.
pub fn wait_cq(ctrl: Ctrl, max_index: u32, cqn: u32) -> [u8; WQE_SIZE] {
    let mut s = [0u8; SEG];
    s[8..12].copy_from_slice(&max_index.to_be_bytes());
    s[12..16].copy_from_slice(&cqn.to_be_bytes());
    Layout::new().seg(&s).finish(ctrl)
}
