//! Test hooks (feature `testing`, off by default): with [`crate::capi`], the only surface
//! that benches and the tests of this and other crates use. Nothing in the runtime calls
//! into it.
//!
//! What is here, and why a test needs it:
//! * the ring protocol from the CPU side: [`CpuRxq`] consumes an RX ring and [`CpuTxq`]
//!   produces into a TX ring with the device API's algorithms (tests and benches without a
//!   GPU), the ring layouts ([`RxqHandle`], [`TxqHandle`], ...) that kernels and headers
//!   share, and the rings and proxies themselves ([`RxRing`], [`TxRing`], [`TxProxy`]) over
//!   host memory ([`PktBuf`], [`MemRanges`]);
//! * ports driven directly ([`Port`]: inject and send frames, install a root pipe, register
//!   a queue's [`RxSink`], read the counters), the classifier's tables ([`Pipe`],
//!   [`Entry`], ...), the parser and the RSS hash, and [`frames`] to build test traffic;
//! * small functions for what only the runtime's handles can do: a device over any port
//!   ([`dev_info`], [`open_dev`]), a device's port ([`port_of`]), host-memory data paths
//!   for queues ([`rxq_set_host_datapath`], ...), a host-memory semaphore, GPU memory
//!   copies and the allocation registry;
//! * the soft NIC's largest burst ([`MAX_BURST_SIZE`]), which the capability getters report.

pub use doca_soft_packet::frames;
pub mod rdma;
mod rx_consumer;
mod tx_producer;
pub mod urom;
pub mod verbs;

use std::ffi::c_void;
use std::sync::Arc;

use crate::dev::{Dev, DevInfo};
use crate::error::{DocaError, DocaResult};
use crate::eth::glue::{GpuLink, PktBufSpec};
use crate::eth::rxq::EthRxq;
use crate::eth::txq::EthTxq;
use crate::gpu::Gpu;
use crate::mmap::Mmap;
use crate::semaphore::Semaphore;

pub use crate::buf::array::GpuBufEntry;
/// The exported C functions and their handle types, for benches and tests that drive the
/// runtime through its C API from Rust (the functions C programs call, with Rust types).
pub use crate::capi;
pub use crate::dev::PortSpec;
pub use crate::eth::caps::MAX_BURST_SIZE;
pub use crate::eth::glue::{register_host_range, unregister_host_range, RuntimeFrames};
pub use crate::eth::mem::{DeviceMem, FrameSeg, FrameSource, MemRanges, PktBuf};
pub use crate::eth::ring::{
    ns_to_wait_on_time, realtime_ns, wait_on_time_to_ns, BufDesc, Doorbells, McstQp, RxqHandle,
    TxqHandle, NIC_HANDLER_CPU_PROXY, RX_MAX_SLOTS, SOFT_QPN, TX_MAX_WQES,
};
pub use crate::mlx5::wqe::EthSeg;
pub use crate::mlx5::{Cqe, Ctrl, DataSeg};

/// The mlx5 WQE and CQE encodings the rings hold (`crate::mlx5`), for tests that build or
/// check ring bytes.
pub mod mlx5 {
    pub use crate::mlx5::*;
    /// `struct mlx5_cqe64`.
    pub mod cqe {
        pub use crate::mlx5::cqe::*;
    }
    /// Send WQE segments.
    pub mod wqe {
        pub use crate::mlx5::wqe::*;
    }
}
pub use crate::eth::rx_proxy::RxRing;
pub use crate::eth::tx_proxy::{FrameOut, TxProxy, TxRing, TxRingCfg};
pub use crate::gpu::cuda_available;
pub use crate::packet::classify::{Entry, Field, FieldMatch, Fwd, Pipe, PipeKind};
pub use crate::packet::parser::parse;
pub use crate::packet::rss::{self, RSS_IPV4, RSS_UDP};
pub use crate::port::{
    lane_cap, DropReason, LaneSnapshot, Port, RxSink, INJECT_QUEUE_FRAMES, LANES_ENV,
};
pub use crate::semaphore::{SemHandle, SemPacketInfo};
pub use rx_consumer::{CpuRxq, RxAttr, RX_NO_PKT};
pub use tx_producer::CpuTxq;

/// The information of a device on `spec` that the runtime does not list: PCI address
/// `pci`, interface name `iface`, ibdev name `soft_<iface>`, MAC `mac`, no IPv4 address.
pub fn dev_info(pci: &str, iface: &str, mac: [u8; 6], spec: PortSpec) -> DevInfo {
    DevInfo {
        pci: pci.to_owned(),
        iface: iface.to_owned(),
        ibdev: format!("soft_{iface}"),
        mac,
        ipv4: None,
        spec,
    }
}

/// Opens a device from its information, as `doca_dev_open` does from a list entry; close
/// it with `doca_dev_close`.
pub fn open_dev(info: DevInfo) -> *mut Dev {
    Box::into_raw(Box::new(Dev::new(Arc::new(info))))
}

/// Opens the device on side `side` of in-process wire `name`: PCI address `<bus><side>:00.0`,
/// interface `<name><side>`, MAC `02:00:00:00:<mac>:<side>` (tests of different binaries
/// pass their own `bus` and `mac`); close it with `doca_dev_close`.
pub fn open_wire_dev(bus: char, mac: u8, name: &str, side: u8) -> *mut Dev {
    open_dev(dev_info(
        &format!("{bus}{side}:00.0"),
        &format!("{name}{side}"),
        [2, 0, 0, 0, mac, side],
        PortSpec::Wire {
            name: name.to_string(),
            side,
        },
    ))
}

/// The PCI address (`BB:DD.F`) the runtime lists for interface `iface`.
pub fn pci_of(iface: &str) -> Option<String> {
    crate::dev::list_devices()
        .into_iter()
        .find(|d| d.iface == iface)
        .map(|d| d.pci.clone())
}

/// The port behind an open device (opened on first use).
///
/// # Safety
/// `dev` is a live device handle (`struct doca_dev *` of this runtime).
pub unsafe fn port_of(dev: *const Dev) -> DocaResult<Arc<Port>> {
    // SAFETY: caller contract.
    let d = unsafe { dev.as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    Port::for_spec(&d.info().spec)
}

/// Puts an IDLE RX queue's rings in host memory, consumed on the CPU ([`CpuRxq`]) instead
/// of a GPU; its GPU handle is then a CPU pointer to its [`RxqHandle`].
///
/// # Safety
/// `rxq` is a live queue handle (`struct doca_eth_rxq *` of this runtime).
pub unsafe fn rxq_set_host_datapath(rxq: *mut c_void) -> DocaResult<()> {
    // SAFETY: caller contract.
    let q = unsafe { (rxq as *const EthRxq).as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    q.set_host_datapath()
}

/// Gives an IDLE RX queue a packet buffer in host memory `[ptr, ptr + len)` (reported to
/// the device API with `mkey`), instead of an mmap.
///
/// # Safety
/// `rxq` is a live queue handle; the memory outlives the queue's run.
pub unsafe fn rxq_set_host_pkt_buf(
    rxq: *mut c_void,
    ptr: *mut u8,
    len: usize,
    mkey: u32,
) -> DocaResult<()> {
    // SAFETY: caller contract.
    let q = unsafe { (rxq as *const EthRxq).as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    q.set_pkt_buf(PktBufSpec::Host {
        ptr: ptr as usize,
        len,
        mkey,
    })
}

/// Puts an IDLE TX queue's rings in host memory, produced on the CPU ([`CpuTxq`]); its GPU
/// handle is then a CPU pointer to its [`TxqHandle`].
///
/// # Safety
/// `txq` is a live queue handle (`struct doca_eth_txq *` of this runtime).
pub unsafe fn txq_set_host_datapath(txq: *mut c_void) -> DocaResult<()> {
    // SAFETY: caller contract.
    let q = unsafe { (txq as *const EthTxq).as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    q.set_host_datapath()
}

/// A semaphore in host memory (its GPU handle is a CPU pointer to its [`SemHandle`]), as a
/// handle the `doca_gpu_semaphore_*` calls take.
pub fn host_semaphore() -> *mut Semaphore {
    Box::into_raw(Box::new(Semaphore::new_host()))
}

/// What tests read and write through a GPU handle: copies to and from its memory, and
/// the CPU mapping of its allocations.
pub struct GpuView<'a>(&'a Gpu);

impl<'a> GpuView<'a> {
    /// A view of a live GPU handle (None for NULL).
    ///
    /// # Safety
    /// A non-null `gpu` is a live GPU handle for `'a`.
    pub unsafe fn new(gpu: *const Gpu) -> Option<GpuView<'a>> {
        // SAFETY: caller contract.
        unsafe { gpu.as_ref() }.map(GpuView)
    }

    /// Copies host bytes to device memory `dst` (synchronous).
    pub fn copy_to_device(&self, dst: u64, src: &[u8]) -> DocaResult<()> {
        self.0.copy_to_device(dst, src)
    }

    /// Copies device memory `src` to host bytes (synchronous).
    pub fn copy_from_device(&self, dst: &mut [u8], src: u64) -> DocaResult<()> {
        self.0.copy_from_device(dst, src)
    }

    /// The CPU address of a device address inside a CPU-mapped allocation of this GPU.
    pub fn cpu_ptr_of(&self, addr: u64) -> Option<*mut u8> {
        self.0.cpu_ptr_of(addr)
    }
}

/// What tests read and write through an mmap handle: its range as the runtime resolved it
/// at start, and copies into and out of it.
pub struct MmapView<'a>(&'a Mmap);

impl<'a> MmapView<'a> {
    /// A view of a live mmap handle (None for NULL).
    ///
    /// # Safety
    /// A non-null `mmap` is a live mmap handle for `'a`.
    pub unsafe fn new(mmap: *const Mmap) -> Option<MmapView<'a>> {
        // SAFETY: caller contract.
        unsafe { mmap.as_ref() }.map(MmapView)
    }

    /// The device address of the range start when it is memory from `doca_gpu_mem_alloc`
    /// (known once started).
    pub fn gpu_addr(&self) -> Option<u64> {
        self.0.gpu_range().map(|g| g.gpu_addr)
    }

    /// A CPU pointer to the range start: the address itself for host memory, the CPU
    /// mapping for mapped GPU memory, None for device-only memory or before start.
    pub fn cpu_ptr(&self) -> Option<*mut u8> {
        self.0.cpu_ptr()
    }

    /// (address, length) once started; BAD_STATE before.
    pub fn range(&self) -> DocaResult<(*mut u8, usize)> {
        self.0.range()
    }

    /// The mkey (host order).
    pub fn mkey(&self) -> u32 {
        self.0.mkey()
    }

    /// Copies `src` into the range at `offset`; BAD_STATE before start, INVALID_VALUE out
    /// of range.
    pub fn write_at(&self, offset: usize, src: &[u8]) -> DocaResult<()> {
        self.0.write_at(offset, src)
    }

    /// Copies from the range at `offset` into `dst` (see [`MmapView::write_at`]).
    pub fn read_at(&self, offset: usize, dst: &mut [u8]) -> DocaResult<()> {
        self.0.read_at(offset, dst)
    }
}

/// Objects that use a device (mmaps it was added to, queues, Flow ports): `doca_dev_close`
/// is IN_USE while there are any.
///
/// # Safety
/// `dev` is a live device handle.
pub unsafe fn dev_users(dev: *const Dev) -> usize {
    // SAFETY: caller contract.
    unsafe { dev.as_ref() }.map_or(0, Dev::users)
}

/// Whether `[addr, addr + len)` lies in memory from `doca_gpu_mem_alloc` that is still
/// allocated (the runtime's allocation registry).
pub fn gpu_memory_registered(addr: u64, len: usize) -> bool {
    crate::gpu::registry::lookup(addr, len).is_some()
}

/// Where a TX queue on `gpu` reads frames (registered mmaps, GPU allocations, registered
/// host ranges), with the batched device reads of the queue's own stream.
///
/// # Safety
/// `gpu` is a live GPU handle.
pub unsafe fn runtime_frames(gpu: *const Gpu) -> DocaResult<RuntimeFrames> {
    // SAFETY: caller contract.
    let g = unsafe { gpu.as_ref() }.ok_or(DocaError::INVALID_VALUE)?;
    Ok(RuntimeFrames::new(&GpuLink::Gpu(g.shared().clone())))
}
