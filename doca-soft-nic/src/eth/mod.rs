//! The Ethernet queues' side of the NIC: the rings in DOCA 3.3's mlx5 formats (the public
//! GPU-side queue structs, `mlx5_cqe64` completions, 64-byte send WQEs, doorbells), the
//! memory they point into, and the CPU proxies that play the ConnectX between a ring and a
//! port: [`rx_proxy`] copies received frames into ring slots and publishes CQEs,
//! [`tx_proxy`] reads send WQEs, applies checksum offload and wait-on-time, sends and
//! completes. doca-soft's queue contexts (`doca_eth_rxq`, `doca_eth_txq`) own the rings
//! and start the proxies.

pub mod caps;
pub mod counters;
pub mod mem;
pub mod ring;
pub mod rx_proxy;
pub mod tx_proxy;
