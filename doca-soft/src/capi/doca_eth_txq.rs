//! `doca_eth_txq.h`: Ethernet TX queues (host side) and their capabilities. Settings are
//! taken while the queue's context is IDLE (BAD_STATE after start); `doca_ctx_start` builds
//! the ring, its proxy and (unless the application drives it) the proxy thread.

use super::toolkit::{call, call_ptr, handle, new_handle, non_null, take_handle, write_out};
use crate::ctx::Ctx;
use crate::dev::{Dev, DevInfo};
use crate::eth::caps::{self, txq_max_burst_size, txq_type_support};

pub use crate::eth::caps::{DATA_PATH_CPU, DATA_PATH_GPU, TXQ_TYPE_REGULAR, WAIT_ON_TIME_NATIVE};
pub use crate::eth::txq::EthTxq;

/// `doca_eth_txq_create(dev, max_burst_size, &eth_txq)`.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_create(
    dev: *mut Dev,
    max_burst_size: u32,
    out: *mut *mut EthTxq,
) -> u32 {
    call("doca_eth_txq_create", || {
        // SAFETY: C API contract (null or a live device).
        let d = unsafe { handle(dev) }?;
        non_null(out)?;
        let q = EthTxq::new(d, max_burst_size)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(out, q) }
    })
}

/// `doca_eth_txq_destroy(eth_txq)` (IDLE only).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_destroy(txq: *mut EthTxq) -> u32 {
    call("doca_eth_txq_destroy", || {
        // SAFETY: C API contract (null or a live queue, not used afterwards).
        unsafe { handle(txq) }?.close()?;
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(txq) }?);
        Ok(())
    })
}

/// `doca_eth_txq_as_doca_ctx(eth_txq)`: NULL for a NULL queue.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_as_doca_ctx(txq: *mut EthTxq) -> *mut Ctx {
    call_ptr("doca_eth_txq_as_doca_ctx", || {
        // SAFETY: C API contract.
        Ok(unsafe { handle(txq) }?.ctx_ptr())
    })
}

/// `doca_eth_txq_set_l3_chksum_offload(txq, enable_l3_chksum)`: the proxy fills the IPv4 header checksum.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_l3_chksum_offload(
    txq: *mut EthTxq,
    enable_l3_chksum: u8,
) -> u32 {
    call("doca_eth_txq_set_l3_chksum_offload", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_l3_chksum_offload(enable_l3_chksum != 0)
    })
}
/// `doca_eth_txq_set_l4_chksum_offload(txq, enable_l4_chksum)`: the proxy fills the UDP/TCP checksum.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_l4_chksum_offload(
    txq: *mut EthTxq,
    enable_l4_chksum: u8,
) -> u32 {
    call("doca_eth_txq_set_l4_chksum_offload", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_l4_chksum_offload(enable_l4_chksum != 0)
    })
}
/// `doca_eth_txq_set_max_burst_size(txq, max_burst_size)`: 1 to the device maximum.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_max_burst_size(
    txq: *mut EthTxq,
    max_burst_size: u32,
) -> u32 {
    call("doca_eth_txq_set_max_burst_size", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_max_burst_size(max_burst_size)
    })
}
/// `doca_eth_txq_set_max_send_buf_list_len(txq, max_send_buf_list_len)`: 1 or 2 segments per frame.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_max_send_buf_list_len(
    txq: *mut EthTxq,
    max_send_buf_list_len: u32,
) -> u32 {
    call("doca_eth_txq_set_max_send_buf_list_len", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_max_send_buf_list_len(max_send_buf_list_len)
    })
}
/// `doca_eth_txq_set_metadata_num(txq, metadata_num)`: at most the device maximum.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_metadata_num(txq: *mut EthTxq, metadata_num: u8) -> u32 {
    call("doca_eth_txq_set_metadata_num", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_metadata_num(metadata_num)
    })
}
/// `doca_eth_txq_set_mss(txq, mss)`: recorded (no LSO).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_mss(txq: *mut EthTxq, mss: u16) -> u32 {
    call("doca_eth_txq_set_mss", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_mss(mss)
    })
}
/// `doca_eth_txq_set_max_lso_header_size(txq, max_lso_header_size)`: 0 (no LSO).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_max_lso_header_size(
    txq: *mut EthTxq,
    max_lso_header_size: u16,
) -> u32 {
    call("doca_eth_txq_set_max_lso_header_size", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_max_lso_header_size(max_lso_header_size)
    })
}
/// `doca_eth_txq_set_type(txq, txq_type)`: REGULAR only.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_type(txq: *mut EthTxq, txq_type: u32) -> u32 {
    call("doca_eth_txq_set_type", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_type(txq_type)
    })
}
/// `doca_eth_txq_set_wait_on_time_offload(txq)`: sends may wait for a time (CLOCK_REALTIME).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_set_wait_on_time_offload(txq: *mut EthTxq) -> u32 {
    call("doca_eth_txq_set_wait_on_time_offload", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_wait_on_time_offload()
    })
}
/// `doca_eth_txq_calculate_timestamp(eth_txq, timestamp_ns, &wait_on_time_value)`
/// (RUNNING): the big-endian `seconds << 32 | nanoseconds` the device API takes.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_calculate_timestamp(
    txq: *mut EthTxq,
    timestamp_ns: u64,
    out: *mut u64,
) -> u32 {
    call("doca_eth_txq_calculate_timestamp", || {
        // SAFETY: C API contract.
        let q = unsafe { handle(txq) }?;
        non_null(out)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, q.calculate_timestamp(timestamp_ns)?) }
    })
}

/// `doca_eth_txq_apply_queue_id(eth_txq, queue_id)` (RUNNING; once, else ALREADY_EXIST;
/// IN_USE when a queue of the port has that id).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_apply_queue_id(txq: *mut EthTxq, queue_id: u16) -> u32 {
    call("doca_eth_txq_apply_queue_id", || {
        // SAFETY: C API contract.
        unsafe { handle(txq) }?.apply_queue_id(queue_id)
    })
}

/// `doca_eth_txq_cap_get_max_send_buf_list_len(devinfo, &value)`: segments per frame.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_get_max_send_buf_list_len(
    devinfo: *const DevInfo,
    out: *mut u32,
) -> u32 {
    call("doca_eth_txq_cap_get_max_send_buf_list_len", || {
        // SAFETY: C API contract (null or a live devinfo; null or writable).
        unsafe {
            handle(devinfo)?;
            write_out(out, caps::MAX_SEND_BUF_LIST_LEN)
        }
    })
}
/// `doca_eth_txq_cap_get_max_metadata_num(devinfo, &value)`: the most metadata entries.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_get_max_metadata_num(
    devinfo: *const DevInfo,
    out: *mut u8,
) -> u32 {
    call("doca_eth_txq_cap_get_max_metadata_num", || {
        // SAFETY: C API contract (null or a live devinfo; null or writable).
        unsafe {
            handle(devinfo)?;
            write_out(out, caps::MAX_METADATA_NUM)
        }
    })
}
/// `doca_eth_txq_cap_get_wait_on_time_offload_supported(devinfo, &value)`: NATIVE.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_get_wait_on_time_offload_supported(
    devinfo: *const DevInfo,
    out: *mut u32,
) -> u32 {
    call(
        "doca_eth_txq_cap_get_wait_on_time_offload_supported",
        || {
            // SAFETY: C API contract (null or a live devinfo; null or writable).
            unsafe {
                handle(devinfo)?;
                write_out(out, caps::WAIT_ON_TIME_NATIVE)
            }
        },
    )
}
/// `doca_eth_txq_cap_get_max_burst_size(devinfo, max_send_buf_list_len,
/// max_lso_header_size, &max_burst_size)`.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_get_max_burst_size(
    devinfo: *const DevInfo,
    max_send_buf_list_len: u32,
    max_lso_header_size: u16,
    out: *mut u32,
) -> u32 {
    call("doca_eth_txq_cap_get_max_burst_size", || {
        // SAFETY: C API contract (null or a live devinfo).
        unsafe { handle(devinfo) }?;
        let n = txq_max_burst_size(max_send_buf_list_len, max_lso_header_size)?;
        // SAFETY: C API contract (null is rejected by write_out).
        unsafe { write_out(out, n) }
    })
}

/// `doca_eth_txq_cap_is_type_supported(devinfo, type, data_path_type)`: REGULAR with the
/// GPU data path.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_is_type_supported(
    devinfo: *const DevInfo,
    txq_type: u32,
    data_path: u32,
) -> u32 {
    call("doca_eth_txq_cap_is_type_supported", || {
        // SAFETY: C API contract.
        unsafe { handle(devinfo) }?;
        txq_type_support(txq_type, data_path)
    })
}

/// `doca_eth_txq_cap_is_l3_chksum_offload_supported(devinfo)`: yes.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_is_l3_chksum_offload_supported(
    devinfo: *const DevInfo,
) -> u32 {
    call("doca_eth_txq_cap_is_l3_chksum_offload_supported", || {
        // SAFETY: C API contract.
        unsafe { handle(devinfo) }.map(drop)
    })
}

/// `doca_eth_txq_cap_is_l4_chksum_offload_supported(devinfo)`: yes.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_cap_is_l4_chksum_offload_supported(
    devinfo: *const DevInfo,
) -> u32 {
    call("doca_eth_txq_cap_is_l4_chksum_offload_supported", || {
        // SAFETY: C API contract.
        unsafe { handle(devinfo) }.map(drop)
    })
}
