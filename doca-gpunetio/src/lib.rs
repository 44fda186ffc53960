//! # doca-gpunetio: safe Rust for NVIDIA DOCA GPUNetIO
//!
//! GPUNetIO lets CUDA kernels receive and send packets straight from NIC queues whose
//! rings live in GPU memory. This crate wraps its host (control-path) API: devices, GPUs,
//! GPU memory, memory maps, progress engines, Ethernet receive and send queues, DOCA Flow
//! and semaphores, and the GPU handle types that kernels take as arguments.
//!
//! ## Quick start
//!
//! ```no_run
//! use doca_gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap};
//!
//! fn main() -> Result<(), doca_gpunetio::Error> {
//!     // Every network device DOCA sees (with the software runtime: Linux interfaces).
//!     for info in Device::list()? {
//!         println!("{} {} {}", info.pci_addr(), info.iface_name(), info.ibdev_name());
//!     }
//!     let nic = Device::open("lo")?;          // PCI address, interface or IB device name
//!     let gpu = Gpu::by_ordinal(0)?;          // or Gpu::open("17:00.0")
//!     let ring = GpuBuffer::<u8>::with_alignment(&gpu, 1 << 20, 4096, MemType::Gpu)?;
//!     let mmap = Mmap::from_gpu_buffer(&ring, &[&nic], AccessFlags::LOCAL_READ_WRITE)?;
//!     println!("mkey {:#x}", mmap.mkey(&nic)?);
//!     Ok(())
//! }
//! ```
//!
//!
//! ## Receive queue
//!
//! The control path of DOCA's `gpunetio_simple_receive` sample: a receive queue whose
//! packet ring is GPU memory, DOCA Flow steering IPv4/UDP to it, and the queue's device
//! handle for a kernel.
//!
//! ```no_run
//! use doca_gpunetio::{Device, EthRxq, Flow, FlowConfig, FlowPort, Gpu, Pipe, RssFlags};
//!
//! fn main() -> Result<(), doca_gpunetio::Error> {
//!     let nic = Device::open("17:00.0")?;
//!     let gpu = Gpu::open("18:00.0")?;
//!     let flow = Flow::init(FlowConfig::default())?; // one per process
//!     let port = FlowPort::start(&flow, &nic, 0)?;
//!     // Ring of 16384 slots of 2048 bytes in GPU memory, sized and mapped by the builder.
//!     let rxq = EthRxq::builder(&nic)
//!         .max_burst_size(16384)
//!         .max_packet_size(2048)
//!         .gpu_packet_buffer(&gpu)
//!         .start()?; // RUNNING
//!     rxq.apply_queue_id(0)?;
//!     let udp = Pipe::basic(&port, "udp")
//!         .match_udp_ipv4()
//!         .rss_to(&[0], RssFlags::IPV4 | RssFlags::UDP)
//!         .miss_drop()
//!         .counter()
//!         .build()?;
//!     let udp_entry = udp.add_entry()?;
//!     let root = Pipe::control_root(&port)?;
//!     root.forward_ipv4_udp_to(&udp, 0)?;
//!     port.entries_process()?;
//!     // A kernel argument (`struct doca_gpu_eth_rxq *`), borrowed from the running queue:
//!     // launch with cudarc's `.arg(&handle)`.
//!     let handle = rxq.gpu_handle()?;
//!     # let _ = handle;
//!     let (packets, bytes) = udp_entry.query()?;
//!     println!("{packets} UDP packets, {bytes} bytes");
//!     Ok(()) // drops stop and destroy everything in a valid order
//! }
//! ```
//!
//! ## What is wrapped
//!
//! * Devices and memory: [`Device`], [`Gpu`], [`GpuBuffer`], [`GpuAtomicBuffer`], [`Mmap`],
//!   [`ProgressEngine`].
//! * Queues: [`EthRxq`] ([`EthRxqBuilder`], [`RxqType`]) and [`EthTxq`] ([`EthTxqBuilder`],
//!   [`WaitOnTime`], send events [`TxErrorEvent`] / [`TxNotifyEvent`] delivered to
//!   closures), each started by its builder and stopped on drop.
//! * DOCA Flow ([`flow`]): [`Flow`], [`FlowPort`], [`Pipe`] (BASIC and CONTROL),
//!   [`Entry`], [`flow::Match`], [`flow::Forward`], [`RssFlags`], [`TcpFlags`].
//! * Semaphores: [`Semaphore`] with typed per-item information, [`SemStatus`].
//! * GPU-initiated RDMA ([`rdma`]: [`rdma::Rdma`], connections, memory exports, typed
//!   local/remote buffer arrays, the samples' out-of-band exchange) and DMA ([`dma`]).
//! * GPU verbs ([`verbs`]): DOCA Verbs queue pairs exported to CUDA kernels, memory
//!   regions, and the [`verbs::QpHandle`] kernels take.
//! * GPU handle types, kernel arguments through `cudarc`'s `DeviceRepr`, borrowed from a
//!   started object: [`RxqHandle`], [`TxqHandle`], [`SemaphoreHandle`].
//! * Software-runtime extensions (only when `doca-soft` is the backend): the module `soft`,
//!   per-queue and per-port counters through its extension trait `soft::SoftCountersExt`.
//! * Shared with `doca-urom`, from `doca-common` (re-exported): [`Device`], [`DeviceInfo`],
//!   [`ProgressEngine`], [`context`], [`DocaError`], [`Error`].
//!
//! ## Backends and library dependency
//!
//! With the default feature `soft`, the DOCA C API comes from `doca-soft`, the software
//! runtime linked into your program: no NIC, DPU or DOCA install is needed, and GPU memory
//! is real CUDA memory (a CUDA driver is loaded at run time, only when you open a GPU).
//! With the feature `sdk`, an installed NVIDIA DOCA 3.3 SDK is linked instead. The features
//! are additive: when both are on, `sdk` wins (and `DOCA_RS_BACKEND` can force either; see
//! `doca-sys`). Everything except the `soft` module compiles against both.
//!
//! ## Ownership and cleanup
//!
//! Every object holds what it was built from (a queue its device, GPU, memory map and
//! progress engine; a memory map its devices and memory; a buffer its GPU), so objects can
//! be stored together in any order and are destroyed in a valid order. How each is owned:
//!
//! * Shared handles, cheap `Clone`s of an `Arc` (the DOCA object goes with the last clone
//!   and the last object built on it): [`Device`], [`ProgressEngine`], [`Gpu`], [`Mmap`],
//!   [`Flow`], [`FlowPort`], [`Pipe`].
//! * Unique owners, not `Clone` (put one in an `Arc` to share it): [`GpuBuffer`] (its
//!   allocation lives on while a memory map made from it does), [`EthRxq`], [`EthTxq`],
//!   [`Semaphore`] and [`Entry`]. Each is stopped and destroyed when dropped.
//! * Borrowed views, `Copy`: the GPU handles [`RxqHandle`], [`TxqHandle`] and
//!   [`SemaphoreHandle`], valid while the borrow of their (started) owner lasts.
//!
//! `Drop` never panics: a context is stopped, the progress engine driven until IDLE
//! (bounded by [`context::DROP_STOP_TIMEOUT`]), then destroyed; failures are recorded and
//! returned by [`take_drop_errors`]. Call the explicit `stop()` methods to see errors
//! directly.
//!
//! ## Thread safety
//!
//! [`Device`], [`Gpu`], [`GpuBuffer`], [`GpuAtomicBuffer`], [`Mmap`] and
//! [`ProgressEngine`] are `Send + Sync`. A progress engine serializes its own `progress`
//! calls. The CPU writes a [`GpuBuffer`] only through `&mut` (kernels and the NIC write it
//! as devices do, and CPU reads are volatile); words that CPU threads and running kernels
//! share live in a [`GpuAtomicBuffer`], which the CPU accesses only atomically. Queues,
//! semaphores and the Flow types are `Send + Sync` too: calls that change them are serialized internally (DOCA
//! Flow operations by one lock of the [`Flow`]). GPU handles are `Copy` addresses that
//! borrow their owner.
//!
//! ## Errors
//!
//! [`DocaError`] is the raw `doca_error_t` as a transparent newtype with named constants;
//! [`Error`] says which DOCA call failed (`"doca_ctx_start failed: ..."`) or carries the
//! message of a problem found before calling DOCA. Both are `doca-common`'s, shared with
//! `doca-urom`: an error passes between the crates unchanged.
//!
//! Every type offers `as_raw()` for the calls this crate does not wrap yet (see `doca-sys`).

#![warn(missing_docs)]

mod atomic_buffer;
pub mod dma;
mod eth_rxq;
mod eth_txq;
pub mod flow;
mod gpu;
mod handles;
mod mmap;
pub mod rdma;
mod semaphore;
#[cfg(doca_backend = "soft")]
pub mod soft;
pub mod verbs;

pub use atomic_buffer::{GpuAtomic, GpuAtomicBuffer};
pub use doca_common::context;
pub use doca_common::{
    take_drop_errors, CtxState, Device, DeviceInfo, DocaError, Error, ProgressEngine, Result,
};
pub use gpu::{cuda_available, gpu_pci_bus_ids, Gpu, GpuBuffer, GpuPod, MemType};
pub use mmap::{AccessFlags, Mmap};

pub use eth_rxq::{EthRxq, EthRxqBuilder, RxqType, GPU_PAGE_SIZE};
pub use eth_txq::{EthTxq, EthTxqBuilder, TxErrorEvent, TxNotifyEvent, WaitOnTime};
pub use flow::{Entry, Flow, FlowConfig, FlowPort, Pipe, RssFlags, TcpFlags};
pub use handles::{RxqHandle, SemaphoreHandle, TxqHandle};
pub use semaphore::{NoInfo, SemStatus, Semaphore, SemaphoreBuilder};

/// The cudarc this crate is built on: its handle types implement this cudarc's
/// `DeviceRepr`, and [`Gpu::cuda`] is this cudarc's context: launch kernels with it.
pub use cudarc;
/// The crate every safe DOCA crate shares these types with.
pub use doca_common as common;
/// The raw bindings this crate is built on.
pub use doca_sys as sys;
