//! `doca_eth_rxq.h`: Ethernet RX queues (host side) and their capabilities. Settings are
//! taken while the queue's context is IDLE (BAD_STATE after start); `doca_ctx_start` builds
//! the ring; `doca_eth_rxq_apply_queue_id` makes the queue the port's sink for that id (what
//! DOCA Flow RSS `queues_array` names).

use super::toolkit::{call, call_ptr, handle, new_handle, non_null, take_handle, write_out};
use crate::ctx::Ctx;
use crate::dev::{Dev, DevInfo};
use crate::eth::caps::{self, rxq_type_support};
use crate::eth::glue::PktBufSpec;
use crate::eth::rxq::estimate_packet_buf_size;
use crate::mmap::Mmap;

pub use crate::eth::caps::{DATA_PATH_CPU, DATA_PATH_GPU};
pub use crate::eth::caps::{RXQ_TYPE_CYCLIC, RXQ_TYPE_MANAGED_MEMPOOL, RXQ_TYPE_REGULAR};
pub use crate::eth::rxq::EthRxq;

/// `doca_eth_rxq_create(dev, max_burst_size, max_packet_size, &eth_rxq)`.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_create(
    dev: *mut Dev,
    max_burst_size: u32,
    max_packet_size: u32,
    out: *mut *mut EthRxq,
) -> u32 {
    call("doca_eth_rxq_create", || {
        // SAFETY: C API contract (null or a live device).
        let d = unsafe { handle(dev) }?;
        non_null(out)?;
        let q = EthRxq::new(d, max_burst_size, max_packet_size)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(out, q) }
    })
}

/// `doca_eth_rxq_destroy(eth_rxq)` (IDLE only).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_destroy(rxq: *mut EthRxq) -> u32 {
    call("doca_eth_rxq_destroy", || {
        // SAFETY: C API contract (null or a live queue, not used afterwards).
        unsafe { handle(rxq) }?.close()?;
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(rxq) }?);
        Ok(())
    })
}

/// `doca_eth_rxq_as_doca_ctx(eth_rxq)`: NULL for a NULL queue.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_as_doca_ctx(rxq: *mut EthRxq) -> *mut Ctx {
    call_ptr("doca_eth_rxq_as_doca_ctx", || {
        // SAFETY: C API contract.
        Ok(unsafe { handle(rxq) }?.ctx_ptr())
    })
}

/// `doca_eth_rxq_set_type(rxq, type)`: CYCLIC, MANAGED_MEMPOOL or REGULAR.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_type(rxq: *mut EthRxq, rxq_type: u32) -> u32 {
    call("doca_eth_rxq_set_type", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_type(rxq_type)
    })
}
/// `doca_eth_rxq_set_max_burst_size(rxq, max_burst_size)`: 1 to the device maximum.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_max_burst_size(
    rxq: *mut EthRxq,
    max_burst_size: u32,
) -> u32 {
    call("doca_eth_rxq_set_max_burst_size", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_max_burst_size(max_burst_size)
    })
}
/// `doca_eth_rxq_set_max_packet_size(rxq, max_packet_size)`: 1 to the device maximum.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_max_packet_size(
    rxq: *mut EthRxq,
    max_packet_size: u32,
) -> u32 {
    call("doca_eth_rxq_set_max_packet_size", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_max_packet_size(max_packet_size)
    })
}
/// `doca_eth_rxq_set_metadata_num(rxq, metadata_num)`: at most the device maximum.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_metadata_num(rxq: *mut EthRxq, metadata_num: u8) -> u32 {
    call("doca_eth_rxq_set_metadata_num", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_metadata_num(metadata_num)
    })
}
/// `doca_eth_rxq_set_flow_tag(rxq, enable_flow_tag)`: recorded.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_flow_tag(rxq: *mut EthRxq, enable_flow_tag: u8) -> u32 {
    call("doca_eth_rxq_set_flow_tag", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_flow_tag(enable_flow_tag)
    })
}
/// `doca_eth_rxq_set_rx_hash(rxq, enable_rx_hash)`: recorded.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_rx_hash(rxq: *mut EthRxq, enable_rx_hash: u8) -> u32 {
    call("doca_eth_rxq_set_rx_hash", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_rx_hash(enable_rx_hash)
    })
}
/// `doca_eth_rxq_set_packet_headroom(rxq, packet_headroom)`: at most the device maximum (0).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_packet_headroom(
    rxq: *mut EthRxq,
    packet_headroom: u16,
) -> u32 {
    call("doca_eth_rxq_set_packet_headroom", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_packet_headroom(packet_headroom)
    })
}
/// `doca_eth_rxq_set_packet_tailroom(rxq, packet_tailroom)`: at most the device maximum (0).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_packet_tailroom(
    rxq: *mut EthRxq,
    packet_tailroom: u16,
) -> u32 {
    call("doca_eth_rxq_set_packet_tailroom", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_packet_tailroom(packet_tailroom)
    })
}
/// `doca_eth_rxq_set_timestamp(rxq, enable_timestamp)`: completions always carry the receive time.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_timestamp(rxq: *mut EthRxq, enable_timestamp: u8) -> u32 {
    call("doca_eth_rxq_set_timestamp", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_timestamp(enable_timestamp)
    })
}
/// `doca_eth_rxq_set_max_recv_buf_list_len(rxq, max_recv_buf_list_len)`: 1 (no scatter).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_max_recv_buf_list_len(
    rxq: *mut EthRxq,
    max_recv_buf_list_len: u32,
) -> u32 {
    call("doca_eth_rxq_set_max_recv_buf_list_len", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_max_recv_buf_list_len(max_recv_buf_list_len)
    })
}
/// `doca_eth_rxq_set_pkt_buf(eth_rxq, mmap, mmap_offset, mmap_len)`: the packet ring (the
/// range is checked against the mmap at start).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_pkt_buf(
    rxq: *mut EthRxq,
    mmap: *mut Mmap,
    mmap_offset: u32,
    mmap_len: u32,
) -> u32 {
    call("doca_eth_rxq_set_pkt_buf", || {
        // SAFETY: C API contract (null or live, both).
        let (q, m) = unsafe { (handle(rxq)?, handle(mmap)?) };
        if mmap_len == 0 {
            return Err(crate::error::DocaError::INVALID_VALUE);
        }
        q.set_pkt_buf(PktBufSpec::Mmap {
            mmap: m.shared().clone(),
            offset: mmap_offset,
            len: mmap_len,
        })
    })
}

/// `doca_eth_rxq_set_notification_moderation(eth_rxq, period_usec, comp_count)`: recorded
/// (the proxy publishes once per receive batch).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_notification_moderation(
    rxq: *mut EthRxq,
    period_usec: u16,
    comp_count: u16,
) -> u32 {
    call("doca_eth_rxq_set_notification_moderation", || {
        // SAFETY: C API contract.
        unsafe { handle(rxq) }?.set_notification_moderation(period_usec, comp_count)
    })
}

/// `doca_eth_rxq_apply_queue_id(eth_rxq, queue_id)` (RUNNING; once, else ALREADY_EXIST;
/// IN_USE when the port has a queue with that id).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_apply_queue_id(rxq: *mut EthRxq, queue_id: u16) -> u32 {
    call("doca_eth_rxq_apply_queue_id", || {
        // SAFETY: C API contract.
        unsafe { handle(rxq) }?.apply_queue_id(queue_id)
    })
}

/// `doca_eth_rxq_get_flow_queue_id(eth_rxq, &queue_id)` (programs before DOCA 3.1;
/// RUNNING): the queue's id, applying the lowest free one when none was applied.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_get_flow_queue_id(rxq: *mut EthRxq, out: *mut u16) -> u32 {
    call("doca_eth_rxq_get_flow_queue_id", || {
        // SAFETY: C API contract.
        let q = unsafe { handle(rxq) }?;
        non_null(out)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, q.flow_queue_id()?) }
    })
}

/// `doca_eth_rxq_estimate_packet_buf_size(type, rate, pkt_max_time, max_packet_size,
/// max_burst_size, log_max_lro_pkt_sz, head_size, tail_size, &buf_size)`: burst x packet
/// size (plus head and tail room per packet), page aligned.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_eth_rxq_estimate_packet_buf_size(
    rxq_type: u32,
    _rate: u32,
    _pkt_max_time: u16,
    max_packet_size: u32,
    max_burst_size: u32,
    log_max_lro_pkt_sz: u8,
    head_size: u16,
    tail_size: u16,
    buf_size: *mut u32,
) -> u32 {
    call("doca_eth_rxq_estimate_packet_buf_size", || {
        let n = estimate_packet_buf_size(
            rxq_type,
            max_packet_size,
            max_burst_size,
            log_max_lro_pkt_sz,
            head_size,
            tail_size,
        )?;
        // SAFETY: C API contract (null is rejected by write_out).
        unsafe { write_out(buf_size, n) }
    })
}

/// `doca_eth_rxq_cap_get_max_burst_size(devinfo, &value)`: the largest burst.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_cap_get_max_burst_size(
    devinfo: *const DevInfo,
    out: *mut u32,
) -> u32 {
    call("doca_eth_rxq_cap_get_max_burst_size", || {
        // SAFETY: C API contract (null or a live devinfo; null or writable).
        unsafe {
            handle(devinfo)?;
            write_out(out, caps::MAX_BURST_SIZE)
        }
    })
}
/// `doca_eth_rxq_cap_get_max_packet_size(devinfo, &value)`: the largest packet slot.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_cap_get_max_packet_size(
    devinfo: *const DevInfo,
    out: *mut u32,
) -> u32 {
    call("doca_eth_rxq_cap_get_max_packet_size", || {
        // SAFETY: C API contract (null or a live devinfo; null or writable).
        unsafe {
            handle(devinfo)?;
            write_out(out, caps::MAX_PACKET_SIZE)
        }
    })
}
/// `doca_eth_rxq_cap_get_max_metadata_num(devinfo, &value)`: the most metadata entries.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_cap_get_max_metadata_num(
    devinfo: *const DevInfo,
    out: *mut u8,
) -> u32 {
    call("doca_eth_rxq_cap_get_max_metadata_num", || {
        // SAFETY: C API contract (null or a live devinfo; null or writable).
        unsafe {
            handle(devinfo)?;
            write_out(out, caps::MAX_METADATA_NUM)
        }
    })
}
/// `doca_eth_rxq_cap_get_max_packet_headroom(devinfo, &value)`: no headroom.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_cap_get_max_packet_headroom(
    devinfo: *const DevInfo,
    out: *mut u16,
) -> u32 {
    call("doca_eth_rxq_cap_get_max_packet_headroom", || {
        // SAFETY: C API contract (null or a live devinfo; null or writable).
        unsafe {
            handle(devinfo)?;
            write_out(out, caps::MAX_ROOM)
        }
    })
}
/// `doca_eth_rxq_cap_get_max_packet_tailroom(devinfo, &value)`: no tailroom.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_cap_get_max_packet_tailroom(
    devinfo: *const DevInfo,
    out: *mut u16,
) -> u32 {
    call("doca_eth_rxq_cap_get_max_packet_tailroom", || {
        // SAFETY: C API contract (null or a live devinfo; null or writable).
        unsafe {
            handle(devinfo)?;
            write_out(out, caps::MAX_ROOM)
        }
    })
}
/// `doca_eth_rxq_cap_get_max_recv_buf_list_len(devinfo, &value)`: no scatter.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_cap_get_max_recv_buf_list_len(
    devinfo: *const DevInfo,
    out: *mut u32,
) -> u32 {
    call("doca_eth_rxq_cap_get_max_recv_buf_list_len", || {
        // SAFETY: C API contract (null or a live devinfo; null or writable).
        unsafe {
            handle(devinfo)?;
            write_out(out, caps::MAX_RECV_BUF_LIST_LEN)
        }
    })
}
/// `doca_eth_rxq_cap_is_type_supported(devinfo, type, data_path_type)`: CYCLIC with the
/// GPU data path.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_cap_is_type_supported(
    devinfo: *const DevInfo,
    rxq_type: u32,
    data_path: u32,
) -> u32 {
    call("doca_eth_rxq_cap_is_type_supported", || {
        // SAFETY: C API contract (null or a live devinfo).
        unsafe { handle(devinfo) }?;
        rxq_type_support(rxq_type, data_path)
    })
}
