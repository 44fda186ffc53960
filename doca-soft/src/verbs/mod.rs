//! DOCA Verbs (`doca_verbs.h`, `doca_uar.h`, `doca_umem.h`, the verbs bridges) and the
//! export of its queue pairs to GPU code (`doca_gpu_verbs_*` of `doca_gpunetio.h`): GPU
//! verbs, DOCA GPUNetIO 3.3's main RDMA interface.
//!
//! # Pieces
//!
//! | file | what |
//! |---|---|
//! | `attr.rs` | the attribute objects (CQ, QP init, QP, AH) and their setter checks |
//! | `transition.rs` | the QP state machine: transitions and required/optional mask bits |
//! | `context.rs` | context, PD, device attributes, the `ibv_pd`/`ibv_context` stand-ins |
//! | `cq.rs`, `qp.rs` | CQs and QPs on the soft NIC (`gpuqp` rings), modify and query |
//! | `export.rs` | the GPU descriptor of a QP and the CPU proxy of `NIC_HANDLER_CPU_PROXY` |
//! | `umem.rs`, `uar.rs` | user memory registrations and doorbell pages |
//!
//! # How the queues are made
//!
//! A context is opened on a device and starts that device's soft NIC (`gpuqp::nics`, shared
//! with DOCA RDMA). A CQ or QP is a `gpuqp` queue of that NIC: rings of the 3.3 byte formats
//! (64-byte mlx5 WQEs and CQEs, 16-byte receive WQEs, doorbell records and registers) in
//! memory both the GPU and the NIC's proxy thread reach. DOCA's programs give each queue an
//! "external umem" of GPU memory for its rings; here the rings live in pinned host memory
//! mapped into that umem's GPU (device memory cannot be polled by a CPU thread without
//! GDRCopy), and the umem is checked (GPU or host, large enough) but not written. A queue
//! whose umem is host memory (or that has none) keeps its rings in plain host memory: a CPU
//! thread can play the GPU on it (the tests), but it cannot be exported to a GPU.
//!
//! Everything a kernel needs is in the descriptor `doca_gpu_verbs_export_qp` builds, so the
//! device code of `doca_gpunetio_dev_verbs_*.cuh` runs unchanged: it writes WQEs, rings
//! the doorbell of its NIC handler and polls CQEs, and the soft NIC executes the WQEs over
//! UCX (see `nic/`).
//!
//! # What a C verbs program needs from rdma-core, and what doca-soft offers instead
//!
//! DOCA 3.3's verbs samples open the device with rdma-core (`ibv_get_device_list`, then
//! `doca_verbs_bridge_verbs_context_create(ibv_device)`), read the port's GID and link layer
//! with `ibv_query_gid`/`ibv_query_port`, and register their buffers with `ibv_reg_mr` /
//! `ibv_reg_dmabuf_mr` on the PD `doca_verbs_bridge_verbs_pd_get_ibv_pd` returns. doca-soft
//! does not provide a libibverbs (that would be a second emulated library with its own ABI,
//! for calls DOCA does not define), so an unmodified C verbs sample compiles against our
//! headers but does not link without rdma-core, and with the real rdma-core it finds no
//! soft device. What doca-soft offers, all of it DOCA 3.3 API:
//!
//! * device: `doca_verbs_context_create(devinfo, flags)` on any device of
//!   `doca_devinfo_create_list`; `doca_verbs_bridge_verbs_context_create` is
//!   `NOT_SUPPORTED` (its `ibv_device` cannot come from doca-soft);
//! * doca_dev of the PD: `doca_verbs_pd_as_doca_dev`, and
//!   `doca_rdma_bridge_open_dev_from_pd` on the `ibv_pd` stand-in the bridge returns
//!   (`SoftIbvPd`: laid out like the start of `struct ibv_pd`, never to be passed to
//!   libibverbs);
//! * memory keys: a `doca_mmap` over the buffer (host or GPU memory), its device the PD's
//!   doca_dev, started, then `doca_rdma_bridge_get_mmap_mkey_from_pd(mmap, ibv_pd)`: the key
//!   is lkey and rkey at once (the soft NIC's registry), as `ibv_mr` would give both;
//! * GID: the GID of the device's soft NIC (it encodes how a peer NIC reaches it: see
//!   `nic/gid.rs`), for every GID index; the safe crate returns it from its context; the
//!   link layer is Ethernet (so programs use the IPv4 AH type) and the LID 0;
//! * QPN: `doca_verbs_qp_get_qpn`.
//!
//! The values the samples exchange out of band (addresses, keys, QPN, GID, LID, host byte
//! order on port 2000) are the same bytes whichever way they were obtained.
//!
//! # Not supported (each a `NOT_SUPPORTED` with one log line)
//!
//! UC QPs; SRQs, completion channels, DPA (threads, completions, umem/UAR ids, PD numbers,
//! NO_DBR_INT); 128-byte CQEs; `sq_sig_all`; congestion-control groups; ECE values other
//! than 0; the BlueFlame NIC handler; resetting a connected QP; the CPU data-path bridges
//! (`doca_verbs_bridge_post_send/recv`, `poll_cq`, ...): queues here are driven through
//! their rings. Values that only shape a hardware link (MTU, PSNs, timeouts, retry counts,
//! P_Key, SL, traffic class, hop limit, static rate) are checked and kept, and change
//! nothing: the transport is UCX. QP-level rights (`allow_remote_write/read`, atomic mode)
//! are kept; the soft NIC checks rights on memory registrations.

pub(crate) mod attr;
pub(crate) mod context;
pub(crate) mod cq;
pub(crate) mod export;
pub(crate) mod qp;
pub(crate) mod transition;
pub(crate) mod uar;
pub(crate) mod umem;

pub use attr::{AhAttr, CqAttr, QpAttr, QpInitAttr};
pub use context::{DeviceAttr, VerbsAhAttr, VerbsContext, VerbsPd};
pub use cq::VerbsCq;
pub use export::GpuVerbsQp;
pub use qp::VerbsQp;
pub use uar::Uar;
pub use umem::Umem;
