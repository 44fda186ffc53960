//! GPU-facing queues of the soft NIC: what both DOCA RDMA's GPU datapath (`doca_rdma`) and
//! DOCA Verbs' GPU export (`doca_gpu_verbs_export_qp`) build on. Independent of either.
//!
//! # What it gives
//!
//! * [`nic_for`]: the soft NIC of a device, one per DOCA device and process, started on
//!   first use on the device's IPv4 address (127.0.0.1 for `lo`) and stopped when its last
//!   user is gone.
//! * [`Placement`] and [`SharedMem`]: memory the GPU and the proxy thread both reach.
//!   With a GPU, device-mapped pinned host memory (`CPU_GPU` of the gpu module); without
//!   one, page-aligned host memory whose "device address" is its CPU address (CPU tests).
//!   [`DeviceCopy`] puts read-mostly bytes (descriptors) in device memory, or host memory
//!   without a GPU.
//! * [`GpuCq`], [`GpuRq`], [`GpuQp`]: NIC queues over such rings (CQEs pre-initialised to
//!   `op_own` 0xF1; doorbell records; a 64-byte `sq_db` area), each of which builds its
//!   public GPU-side descriptor: [`DevVerbsCq`] (`struct doca_gpu_dev_verbs_cq`) and
//!   [`DevVerbsQp`] (`struct doca_gpu_dev_verbs_qp`, layout asserted against the header).
//!   Every field the device helpers read is filled: `sq_num`, `sq_num_shift8`,
//!   `sq_num_shift8_be`, `sq_num_shift8_be_1ds..4ds`, `sq_wqe_num/mask`, ring addresses,
//!   `sq_dbrec` (the send DBR word), `sq_db` (CPU-proxy slot or doorbell register,
//!   according to the NIC handler), the RQ half when the QP has an RQ, both CQ
//!   descriptors, `nic_handler` (concrete: AUTO resolves to CPU_PROXY), `mem_type` HOST,
//!   `need_mcst` false. Counters and locks start at 0. [`layout::qp_array_bytes`] lays
//!   several out as a C array.
//! * [`register`] / [`register_as`]: memory registration with the NIC for host memory,
//!   pinned device-mapped memory and CUDA device memory (told apart through the gpu
//!   module's allocation registry); for device memory it installs (once) the accessor the
//!   proxy uses for atomics and fetched values ([`install_device_memory`], copies through
//!   the owning GPU's context).
//!
//! # Typical use (a verbs QP exported to a kernel)
//!
//! ```ignore
//! let nic = gpuqp::nic_for(dev.info())?;
//! let place = gpuqp::Placement::Gpu(gpu.shared().clone());   // Placement::Host in CPU tests
//! let scq = gpuqp::GpuCq::new(&nic, &place, 2048)?;
//! let rcq = gpuqp::GpuCq::new(&nic, &place, 2048)?;
//! let rq = gpuqp::GpuRq::new(&nic, &place, 2048, &rcq, /* cqe_inline */ false)?;
//! let qp = gpuqp::GpuQp::new(&nic, &place, 2048, nic_handler, &scq, Some(&rq))?;
//! let desc = gpuqp::DeviceCopy::new(&place, &qp.descriptor().to_bytes(), 64)?;
//! // kernels get desc.dev() as `struct doca_gpu_dev_verbs_qp *`
//! qp.qp().connect(&remote_gid, remote_qpn)?;                 // GID: nic.gid()
//! ```
//!
//! Drop order is handled inside: a `GpuQp` holds its CQs and RQ (as `Arc`s) and drops its
//! NIC QP before its rings; keep the descriptor copy alive as long as kernels use it.
//!
//! # Doorbells per NIC handler
//!
//! | handler | the device writes | the NIC watches |
//! |---|---|---|
//! | CPU_PROXY (and AUTO) | 64-bit producer index to `sq_db` | `sq_db` (proxy slot) |
//! | GPU_SM_DB | DBR word `sq_dbrec`, then the DB register image to `sq_db` | `sq_dbrec` |
//! | GPU_SM_NO_DBR | DB register image to `sq_db` | `sq_db` (register image) |
//! | GPU_SM_BF | (WQE images) | refused: NOT_SUPPORTED |
//!
//! Receive queues are always published through their doorbell record (`rq_dbrec`).

// Users (doca_rdma, doca_verbs) each take part of this API.
#![allow(dead_code)]

mod devmem;
pub(crate) mod layout;
mod mem;
mod nics;
mod qp;

#[allow(unused_imports)]
pub(crate) use devmem::{install_device_memory, kind_of, register, register_as};
#[allow(unused_imports)]
pub(crate) use layout::{nic_handler, DevVerbsCq, DevVerbsQp};
#[allow(unused_imports)]
pub(crate) use mem::{DeviceCopy, Placement, SharedMem};
#[allow(unused_imports)]
pub(crate) use nics::{bind_addr, nic_for};
#[allow(unused_imports)]
pub(crate) use qp::{resolve_handler, GpuCq, GpuQp, GpuRq, MAX_CQES, MAX_WQES};

#[cfg(test)]
mod tests;
