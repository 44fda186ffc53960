//! Extensions of the software runtime, `doca-soft` (present only when it is the backend:
//! cfg `doca_backend = "soft"`, see `doca-sys`). The NVIDIA SDK has no such calls, so code
//! that should also build with the SDK puts its uses under the same cfg.
//!
//! The counters say what each queue and port did with the frames it saw (`doca_soft_*`
//! calls, declared in `doca_soft_queue.h` and `doca_soft_port.h`). Bring
//! [`SoftCountersExt`] into scope to read them:
//!
//! ```no_run
//! use doca_gpunetio::soft::SoftCountersExt;
//! use doca_gpunetio::{Device, EthRxq, Gpu};
//!
//! # fn main() -> doca_gpunetio::Result<()> {
//! let nic = Device::open("lo")?;
//! let gpu = Gpu::by_ordinal(0)?;
//! let rxq = EthRxq::builder(&nic)
//!     .max_burst_size(256)
//!     .max_packet_size(2048)
//!     .gpu_packet_buffer(&gpu)
//!     .start()?;
//! let q = rxq.counters()?; // RxqCounters
//! let port = nic.counters()?; // PortCounters of the port behind the device
//! println!("{} received, {} dropped (ring full); port: {} dropped", q.received,
//!     q.dropped_ring_full, port.dropped());
//! # Ok(()) }
//! ```

mod port_counters;
mod queue_counters;

pub use port_counters::PortCounters;
pub use queue_counters::{RxqCounters, TxqCounters};

use crate::{Device, EthRxq, EthTxq, FlowPort, Result};

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::EthRxq {}
    impl Sealed for crate::EthTxq {}
    impl Sealed for crate::FlowPort {}
    impl Sealed for crate::Device {}
}

/// The software runtime's counters of a queue, a Flow port or a device's port
/// (a `doca-soft` extension; sealed: implemented here only).
pub trait SoftCountersExt: sealed::Sealed {
    /// What is counted: [`RxqCounters`], [`TxqCounters`] or [`PortCounters`].
    type Counters;

    /// The counters now (`doca_soft_eth_rxq_get_counters`, `doca_soft_eth_txq_get_counters`,
    /// `doca_soft_port_get_counters`).
    fn counters(&self) -> Result<Self::Counters>;
}

impl SoftCountersExt for EthRxq {
    type Counters = RxqCounters;
    fn counters(&self) -> Result<RxqCounters> {
        queue_counters::rxq_counters(self.as_raw())
    }
}

impl SoftCountersExt for EthTxq {
    type Counters = TxqCounters;
    fn counters(&self) -> Result<TxqCounters> {
        queue_counters::txq_counters(self.as_raw())
    }
}

impl SoftCountersExt for FlowPort {
    type Counters = PortCounters;
    /// The counters of the port behind this Flow port's device.
    fn counters(&self) -> Result<PortCounters> {
        PortCounters::of(self.device())
    }
}

impl SoftCountersExt for Device {
    type Counters = PortCounters;
    /// The counters of the port behind the device (all zero before a queue or a Flow port
    /// opened it).
    fn counters(&self) -> Result<PortCounters> {
        PortCounters::of(self)
    }
}
