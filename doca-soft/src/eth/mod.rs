//! DOCA Ethernet queues with the GPU data path: RX/TX queue objects (`doca_eth_rxq_*`,
//! `doca_eth_txq_*`), the rings shared with the device API, and the CPU proxies that play
//! the NIC between the rings and the port.

pub(crate) mod dma;
pub(crate) mod glue;
pub(crate) mod queue;
pub(crate) mod rxq;
pub(crate) mod tx_events;
pub(crate) mod txq;

// The rings and the proxies that play the NIC between them and a port: doca-soft-nic's.
pub(crate) use doca_soft_nic::eth::{caps, counters, mem, ring, rx_proxy, tx_proxy};
