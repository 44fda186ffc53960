//! Capabilities the soft NIC reports for Ethernet queues (`doca_eth_{rxq,txq}_cap_*`).

use crate::capi::toolkit::write_out;
use crate::dev::{devinfo_ref, DevInfo};
use crate::error::{to_c, DocaError, DocaResult};

/// Largest RX/TX burst (descriptors in flight).
pub const MAX_BURST_SIZE: u32 = 1 << 17;
/// Largest RX packet size (slot size).
pub const MAX_PACKET_SIZE: u32 = 16384;
/// Largest metadata count.
pub const MAX_METADATA_NUM: u32 = 1;
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

macro_rules! cap_getter {
    ($name:ident, $t:ty, $v:expr) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// `devinfo` is null or a live devinfo; `out` is null or writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(devinfo: *const DevInfo, out: *mut $t) -> u32 {
            // SAFETY: caller contract.
            to_c(unsafe { devinfo_ref(devinfo) }.and_then(|_| unsafe { write_out(out, $v) }))
        }
    };
}

cap_getter!(doca_eth_rxq_cap_get_max_burst_size, u32, MAX_BURST_SIZE);
cap_getter!(doca_eth_rxq_cap_get_max_packet_size, u32, MAX_PACKET_SIZE);
cap_getter!(doca_eth_rxq_cap_get_max_metadata_num, u32, MAX_METADATA_NUM);
cap_getter!(doca_eth_rxq_cap_get_max_packet_headroom, u16, MAX_ROOM);
cap_getter!(doca_eth_rxq_cap_get_max_packet_tailroom, u16, MAX_ROOM);
cap_getter!(
    doca_eth_rxq_cap_get_max_recv_buf_list_len,
    u32,
    MAX_RECV_BUF_LIST_LEN
);
cap_getter!(
    doca_eth_txq_cap_get_max_send_buf_list_len,
    u32,
    MAX_SEND_BUF_LIST_LEN
);
cap_getter!(doca_eth_txq_cap_get_max_metadata_num, u32, MAX_METADATA_NUM);
cap_getter!(
    doca_eth_txq_cap_get_wait_on_time_offload_supported,
    u32,
    WAIT_ON_TIME_NATIVE
);

/// CYCLIC queues on the GPU data path are supported; other known combinations are not.
fn rxq_type_support(rxq_type: u32, data_path: u32) -> DocaResult<()> {
    if rxq_type > RXQ_TYPE_REGULAR || data_path > DATA_PATH_GPU {
        return Err(DocaError::INVALID_VALUE);
    }
    if rxq_type == RXQ_TYPE_CYCLIC && data_path == DATA_PATH_GPU {
        return Ok(());
    }
    Err(DocaError::NOT_SUPPORTED)
}

/// REGULAR queues on the GPU data path are supported.
fn txq_type_support(txq_type: u32, data_path: u32) -> DocaResult<()> {
    if txq_type != TXQ_TYPE_REGULAR || data_path > DATA_PATH_GPU {
        return Err(DocaError::INVALID_VALUE);
    }
    if data_path == DATA_PATH_GPU {
        return Ok(());
    }
    Err(DocaError::NOT_SUPPORTED)
}

/// `doca_eth_rxq_cap_is_type_supported`: CYCLIC with the GPU data path.
///
/// # Safety
/// `devinfo` is null or a live devinfo.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_cap_is_type_supported(
    devinfo: *const DevInfo,
    rxq_type: u32,
    data_path: u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }.and_then(|_| rxq_type_support(rxq_type, data_path));
    to_c(r)
}

/// `doca_eth_txq_cap_is_type_supported`: REGULAR with the GPU data path.
///
/// # Safety
/// `devinfo` is null or a live devinfo.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_is_type_supported(
    devinfo: *const DevInfo,
    txq_type: u32,
    data_path: u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }.and_then(|_| txq_type_support(txq_type, data_path));
    to_c(r)
}

/// `doca_eth_txq_cap_is_l3_chksum_offload_supported`: yes.
///
/// # Safety
/// `devinfo` is null or a live devinfo.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_is_l3_chksum_offload_supported(
    devinfo: *const DevInfo,
) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { devinfo_ref(devinfo) }.map(|_| ()))
}

/// `doca_eth_txq_cap_is_l4_chksum_offload_supported`: yes.
///
/// # Safety
/// `devinfo` is null or a live devinfo.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_is_l4_chksum_offload_supported(
    devinfo: *const DevInfo,
) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { devinfo_ref(devinfo) }.map(|_| ()))
}

/// `doca_eth_txq_cap_get_max_burst_size(devinfo, max_send_buf_list_len,
/// max_lso_header_size, *max_burst_size)`.
///
/// # Safety
/// `devinfo` is null or a live devinfo; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_get_max_burst_size(
    devinfo: *const DevInfo,
    max_send_buf_list_len: u32,
    max_lso_header_size: u16,
    out: *mut u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { devinfo_ref(devinfo) }.and_then(|_| {
        if max_send_buf_list_len > MAX_SEND_BUF_LIST_LEN
            || max_lso_header_size > MAX_LSO_HEADER_SIZE
        {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: caller contract.
        unsafe { write_out(out, MAX_BURST_SIZE) }
    });
    to_c(r)
}
