//! GPU verbs: DOCA Verbs queue pairs driven by CUDA kernels (DOCA GPUNetIO 3.3's main RDMA
//! interface). A QP's work queue and completion queue live where a kernel writes them;
//! the QP is exported to the GPU and kernels post RDMA writes, reads, atomics, signals,
//! counters, sends and receives with the `doca_gpu_dev_verbs_*` device functions
//! (`doca_gpunetio_dev_verbs_*.cuh`), taking the QP's [`QpHandle`] as argument.
//!
//! # Quick start
//!
//! One side of a connection, as DOCA's `gpunetio_verbs_*` samples build it (the peer does
//! the same and the two exchange [`QpInfo`] and buffer address/key out of band):
//!
//! ```no_run
//! use doca_gpunetio::verbs::{Context, GpuQp, MemoryRegion, Pd, QpConfig, QpInfo};
//! use doca_gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType};
//!
//! fn main() -> doca_gpunetio::Result<()> {
//!     let gpu = Gpu::by_ordinal(0)?;
//!     let nic = Device::open("lo")?;
//!     let ctx = Context::open(&nic)?;
//!     let pd = Pd::new(&ctx)?;
//!     let qp = GpuQp::create(&gpu, &pd, QpConfig::default())?;
//!     let buf = GpuBuffer::<u8>::new(&gpu, 1 << 20, MemType::Gpu)?;
//!     let access = AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE;
//!     let mr = MemoryRegion::gpu(&pd, &buf, access)?;
//!     let mine: QpInfo = qp.info()?;          // send (mine, mr.addr(), mr.key()) to the peer
//!     let theirs: QpInfo = mine;              // ... and receive the peer's
//!     qp.connect(&theirs)?;
//!     let _proxy = qp.start_cpu_proxy()?;     // only does something for NicHandler::CpuProxy
//!     let handle = qp.handle()?;              // a kernel argument (cudarc `.arg(&handle)`)
//!     # let _ = handle;
//!     Ok(())
//! }
//! ```
//!
//! # What is here
//!
//! * [`Context`] (with the port's [`Gid`], [`PortInfo`] and [`DeviceAttr`]) and [`Pd`].
//! * [`MemoryRegion`]: host or GPU memory registered on a PD, with one key for local and
//!   remote use (`doca_mmap` + `doca_rdma_bridge_get_mmap_mkey_from_pd`).
//! * [`GpuQp`] ([`QpConfig`], [`NicHandler`]) and [`GpuQpGroup`] (main + core-direct
//!   companion for the counter operations), [`QpInfo`] for the exchange, [`CpuProxy`] for
//!   the CPU-proxy NIC handler, and [`QpHandle`] for kernels (only from a connected QP).
//!
//! # rdma-core
//!
//! DOCA's C samples take the device, the GID/port and memory keys from rdma-core. This API
//! needs none of it: the context is opened on a [`Device`](crate::Device), keys come from
//! DOCA memory maps, and the GID/port come from the software runtime's `doca_soft_verbs.h`
//! (with the `sdk` backend, [`Context::gid`] and [`Context::port`] are `NOT_SUPPORTED`:
//! read them with rdma-core on `doca_verbs_bridge_get_ibv_ctx` there).
//!
//! # Ownership
//!
//! A [`GpuQp`] owns its CQs, umems (GPU memory), UAR and export, and keeps its PD,
//! context and device alive; dropping it unexports and destroys everything in the order
//! DOCA requires. [`QpHandle`] borrows its QP. Drop errors are recorded
//! ([`take_drop_errors`](crate::take_drop_errors)).

mod context;
mod memory;
mod qp;

pub use context::{Context, DeviceAttr, Gid, LinkLayer, Pd, PortInfo};
pub use memory::MemoryRegion;
pub use qp::{CpuProxy, GpuQp, GpuQpGroup, NicHandler, QpConfig, QpHandle, QpInfo};
