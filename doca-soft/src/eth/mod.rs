//! DOCA Ethernet queues with the GPU data path: RX/TX queue objects (`doca_eth_rxq_*`,
//! `doca_eth_txq_*`), the rings shared with the device API, and the CPU proxies that play
//! the NIC between the rings and the port.

pub(crate) mod caps;
pub(crate) mod counters;
pub(crate) mod dma;
pub(crate) mod glue;
pub(crate) mod mem;
pub(crate) mod queue;
pub(crate) mod ring;
pub(crate) mod rx_proxy;
pub(crate) mod rxq;
pub(crate) mod tx_events;
pub(crate) mod tx_proxy;
pub(crate) mod txq;
