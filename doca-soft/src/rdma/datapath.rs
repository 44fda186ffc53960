//! The GPU data path of a started `doca_rdma` (layout and protocol:
//! `include/doca_soft_dev_rdma_ring.h`): one soft-NIC QP per connection index, each with
//! its own send CQ (as large as its SQ), one receive queue shared by every connection
//! with its receive CQ, and the handle kernels get (`struct doca_gpu_dev_rdma`) pointing
//! at the array of connection descriptors and at the receive descriptor.
//!
//! Rings live in device-mapped pinned memory of the context's GPU (host memory on the
//! testing hooks' host data path); descriptors and the handle in device memory (host
//! memory without a GPU). Every send QP publishes through the CPU-proxy doorbell (one
//! 64-bit store per commit); the receive queue through its doorbell record.

use crate::error::DocaResult;
use crate::gpuqp::layout::qp_array_bytes;
use crate::gpuqp::{nic_handler, DeviceCopy, GpuCq, GpuQp, GpuRq, Placement};
use doca_soft_nic::rdma::Nic;
use std::mem::{offset_of, size_of};
use std::sync::Arc;

/// `DOCA_SOFT_DEV_RDMA_VERSION`.
pub(crate) const HANDLE_VERSION: u32 = 1;

/// `struct doca_gpu_dev_rdma_r`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DevRdmaR {
    /// The shared receive queue's descriptor (device address).
    pub qp: u64,
    /// Reserved.
    pub rsvd: [u64; 7],
}

/// `struct doca_gpu_dev_rdma`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DevRdma {
    /// `DOCA_SOFT_DEV_RDMA_VERSION`.
    pub version: u32,
    /// Entries of `conn_qps`.
    pub num_connections: u32,
    /// `struct doca_gpu_dev_verbs_qp[num_connections]` (device address).
    pub conn_qps: u64,
    /// Commits since the last wait_all (device-updated).
    pub commits: u64,
    /// Reserved.
    pub rsvd: [u64; 5],
    /// Receive side.
    pub recv: DevRdmaR,
}

const _: () = {
    assert!(size_of::<DevRdmaR>() == 64);
    assert!(size_of::<DevRdma>() == 128);
    assert!(offset_of!(DevRdma, num_connections) == 4);
    assert!(offset_of!(DevRdma, conn_qps) == 8);
    assert!(offset_of!(DevRdma, commits) == 16);
    assert!(offset_of!(DevRdma, recv) == 64);
};

impl DevRdma {
    /// The handle's 128 bytes (no padding in this struct).
    pub(crate) fn to_bytes(self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[0..4].copy_from_slice(&self.version.to_ne_bytes());
        b[4..8].copy_from_slice(&self.num_connections.to_ne_bytes());
        b[8..16].copy_from_slice(&self.conn_qps.to_ne_bytes());
        b[16..24].copy_from_slice(&self.commits.to_ne_bytes());
        b[64..72].copy_from_slice(&self.recv.qp.to_ne_bytes());
        b
    }
}

/// Queue sizes and counts of a data path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    /// Connection QPs.
    pub connections: u32,
    /// Send WQEs per connection (power of two).
    pub sq: u32,
    /// Receive WQEs shared by all connections (power of two).
    pub rq: u32,
}

/// The queues and handle of a started context. Field order is drop order: descriptors,
/// then the QPs (which flush into their CQs), then the receive queue.
pub(crate) struct Datapath {
    handle: DeviceCopy,
    _conn_descs: DeviceCopy,
    _recv_desc: DeviceCopy,
    qps: Vec<GpuQp>,
    _rq: Arc<GpuRq>,
}

impl Datapath {
    /// Builds every queue on `nic`, rings on `place`.
    pub(crate) fn build(nic: &Nic, place: &Placement, shape: Shape) -> DocaResult<Datapath> {
        let rcq = GpuCq::new(nic, place, shape.rq)?;
        let rq = GpuRq::new(nic, place, shape.rq, &rcq, false)?;
        let mut qps = Vec::with_capacity(shape.connections as usize);
        for _ in 0..shape.connections {
            let scq = GpuCq::new(nic, place, shape.sq)?;
            qps.push(GpuQp::new(
                nic,
                place,
                shape.sq,
                nic_handler::CPU_PROXY,
                &scq,
                Some(&rq),
            )?);
        }
        let descs: Vec<_> = qps.iter().map(GpuQp::descriptor).collect();
        let conn_descs = DeviceCopy::new(place, &qp_array_bytes(&descs), 64)?;
        let recv_desc =
            DeviceCopy::new(place, &rq.descriptor(nic_handler::CPU_PROXY).to_bytes(), 64)?;
        let h = DevRdma {
            version: HANDLE_VERSION,
            num_connections: shape.connections,
            conn_qps: conn_descs.dev(),
            commits: 0,
            rsvd: [0; 5],
            recv: DevRdmaR {
                qp: recv_desc.dev(),
                rsvd: [0; 7],
            },
        };
        let handle = DeviceCopy::new(place, &h.to_bytes(), 64)?;
        Ok(Datapath {
            handle,
            _conn_descs: conn_descs,
            _recv_desc: recv_desc,
            qps,
            _rq: rq,
        })
    }

    /// The handle's device address (`struct doca_gpu_dev_rdma *`).
    pub(crate) fn handle(&self) -> u64 {
        self.handle.dev()
    }

    /// The QP of connection `i`.
    pub(crate) fn qp(&self, i: usize) -> Option<&GpuQp> {
        self.qps.get(i)
    }

    /// The connection QPs.
    pub(crate) fn qps(&self) -> &[GpuQp] {
        &self.qps
    }
}
