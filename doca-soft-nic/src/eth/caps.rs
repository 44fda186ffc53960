//! Capabilities the soft NIC reports for Ethernet queues (`doca_eth_{rxq,txq}_cap_*`).

use crate::error::{DocaError, DocaResult};

/// Largest RX/TX burst (descriptors in flight).
pub const MAX_BURST_SIZE: u32 = 1 << 17;
/// Largest RX packet size (slot size).
pub const MAX_PACKET_SIZE: u32 = 16384;
/// Largest metadata count (a `uint8_t` in DOCA 3.3's caps getters).
pub const MAX_METADATA_NUM: u8 = 1;
/// Largest RX packet headroom / tailroom.
pub const MAX_ROOM: u16 = 0;
/// Largest receive buffer list length (scatter entries).
pub const MAX_RECV_BUF_LIST_LEN: u32 = 1;
/// Largest send buffer list length (gather entries).
pub const MAX_SEND_BUF_LIST_LEN: u32 = 2;
/// Largest LSO header size (LSO itself is not offered).
pub const MAX_LSO_HEADER_SIZE: u16 = 0;

/// `enum doca_eth_rxq_type` values.
pub const RXQ_TYPE_CYCLIC: u32 = 0;
/// MANAGED_MEMPOOL.
pub const RXQ_TYPE_MANAGED_MEMPOOL: u32 = 1;
/// REGULAR.
pub const RXQ_TYPE_REGULAR: u32 = 2;
/// `enum doca_eth_{rxq,txq}_data_path_type` CPU.
pub const DATA_PATH_CPU: u32 = 0;
/// GPU.
pub const DATA_PATH_GPU: u32 = 1;
/// `enum doca_eth_txq_type` REGULAR.
pub const TXQ_TYPE_REGULAR: u32 = 0;
/// `enum doca_eth_wait_on_time_type` NATIVE.
pub const WAIT_ON_TIME_NATIVE: u32 = 1;

/// CYCLIC queues on the GPU data path are supported; other known combinations are not.
pub fn rxq_type_support(rxq_type: u32, data_path: u32) -> DocaResult<()> {
    if rxq_type > RXQ_TYPE_REGULAR || data_path > DATA_PATH_GPU {
        return Err(DocaError::INVALID_VALUE);
    }
    if rxq_type == RXQ_TYPE_CYCLIC && data_path == DATA_PATH_GPU {
        return Ok(());
    }
    Err(DocaError::NOT_SUPPORTED)
}

/// REGULAR queues on the GPU data path are supported.
pub fn txq_type_support(txq_type: u32, data_path: u32) -> DocaResult<()> {
    if txq_type != TXQ_TYPE_REGULAR || data_path > DATA_PATH_GPU {
        return Err(DocaError::INVALID_VALUE);
    }
    if data_path == DATA_PATH_GPU {
        return Ok(());
    }
    Err(DocaError::NOT_SUPPORTED)
}

/// `doca_eth_txq_cap_get_max_burst_size`: the largest burst for the given gather length and
/// LSO header size (INVALID_VALUE beyond what the soft NIC offers).
pub fn txq_max_burst_size(max_send_buf_list_len: u32, max_lso_header_size: u16) -> DocaResult<u32> {
    if max_send_buf_list_len > MAX_SEND_BUF_LIST_LEN || max_lso_header_size > MAX_LSO_HEADER_SIZE {
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(MAX_BURST_SIZE)
}

/// `v` when it lies in `range`, else INVALID_VALUE (the queue setters' range checks).
pub fn within<T: PartialOrd>(v: T, range: std::ops::RangeInclusive<T>) -> DocaResult<T> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(DocaError::INVALID_VALUE)
    }
}
