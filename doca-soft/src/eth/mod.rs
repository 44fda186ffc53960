//! DOCA Ethernet queues with the GPU data path: RX/TX queue objects (`doca_eth_rxq_*`,
//! `doca_eth_txq_*`), the rings shared with the device API, and the CPU proxies that play
//! the NIC between the rings and the port.

pub mod caps;
pub mod counters;
pub mod dma;
pub mod glue;
pub mod mem;
pub mod ring;
pub mod rx_proxy;
pub mod rxq;
pub mod tx_events;
pub mod tx_proxy;
pub mod txq;
