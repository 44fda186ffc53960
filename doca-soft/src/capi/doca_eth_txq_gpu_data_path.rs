//! `doca_eth_txq_gpu_data_path.h`: what a TX queue with the GPU data path adds: the handle
//! kernels send with, the knobs of the GPU side, and the send events of CPU-completion mode
//! (NOTIFY sends and errors raised on the queue's PE).

use std::ffi::c_void;

use super::toolkit::{call, handle, non_null, write_out};
use crate::types::DocaData;

pub use crate::eth::tx_events::{TxEventCb, TxGpuEvent};
pub use crate::eth::txq::EthTxq;

/// `doca_eth_txq_gpu_set_completion_on_gpu(txq)`: completions go to the CQ ring kernels poll, not to PE events.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_set_completion_on_gpu(txq: *mut EthTxq) -> u32 {
    call("doca_eth_txq_gpu_set_completion_on_gpu", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_completion_on_gpu()
    })
}
/// `doca_eth_txq_gpu_set_uar_on_cpu(txq)`: no proxy thread: the application calls `doca_eth_txq_gpu_cpu_proxy_progress`.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_set_uar_on_cpu(txq: *mut EthTxq) -> u32 {
    call("doca_eth_txq_gpu_set_uar_on_cpu", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_uar_on_cpu()
    })
}
/// `doca_eth_txq_gpu_set_sq_mem_type(txq, mem_type)`: a `doca_gpu_mem_type`.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_set_sq_mem_type(txq: *mut EthTxq, mem_type: u32) -> u32 {
    call("doca_eth_txq_gpu_set_sq_mem_type", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.set_sq_mem_type(mem_type)
    })
}
/// `doca_eth_txq_gpu_cpu_proxy_progress(txq)`: RUNNING; one pass of the proxy.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_cpu_proxy_progress(txq: *mut EthTxq) -> u32 {
    call("doca_eth_txq_gpu_cpu_proxy_progress", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(txq) }?.proxy_progress()
    })
}
/// `doca_eth_txq_get_gpu_handle(eth_txq, &handle)` (RUNNING; NOT_SUPPORTED without the GPU
/// data path): the `struct doca_gpu_eth_txq *` kernels send with.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_get_gpu_handle(
    txq: *const EthTxq,
    out: *mut *mut c_void,
) -> u32 {
    call("doca_eth_txq_get_gpu_handle", || {
        // SAFETY: C API contract.
        let q = unsafe { handle(txq) }?;
        non_null(out)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, q.gpu_handle()? as *mut c_void) }
    })
}

/// `doca_eth_txq_gpu_event_error_send_packet_register(eth_txq, cb, user_data)` (IDLE only).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_event_error_send_packet_register(
    txq: *mut EthTxq,
    cb: TxEventCb,
    user_data: DocaData,
) -> u32 {
    call("doca_eth_txq_gpu_event_error_send_packet_register", || {
        // SAFETY: C API contract.
        unsafe { handle(txq) }?.set_event_cb(true, cb, user_data)
    })
}

/// `doca_eth_txq_gpu_event_notify_send_packet_register(eth_txq, cb, user_data)` (IDLE
/// only).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_event_notify_send_packet_register(
    txq: *mut EthTxq,
    cb: TxEventCb,
    user_data: DocaData,
) -> u32 {
    call("doca_eth_txq_gpu_event_notify_send_packet_register", || {
        // SAFETY: C API contract.
        unsafe { handle(txq) }?.set_event_cb(false, cb, user_data)
    })
}

/// `doca_eth_txq_gpu_event_error_send_packet_get_position(event, &position)`.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_event_error_send_packet_get_position(
    ev: *const TxGpuEvent,
    out: *mut u16,
) -> u32 {
    call(
        "doca_eth_txq_gpu_event_error_send_packet_get_position",
        || {
            // SAFETY: C API contract (null or the event passed to a callback; null or writable).
            unsafe { write_out(out, handle(ev)?.position()) }
        },
    )
}

/// `doca_eth_txq_gpu_event_notify_send_packet_get_position(event, &position)`.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_event_notify_send_packet_get_position(
    ev: *const TxGpuEvent,
    out: *mut u16,
) -> u32 {
    call(
        "doca_eth_txq_gpu_event_notify_send_packet_get_position",
        || {
            // SAFETY: C API contract.
            unsafe { write_out(out, handle(ev)?.position()) }
        },
    )
}

/// `doca_eth_txq_gpu_event_notify_send_packet_get_timestamp(event, &timestamp)`: when the
/// frame was sent (CLOCK_REALTIME, ns).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_txq_gpu_event_notify_send_packet_get_timestamp(
    ev: *const TxGpuEvent,
    out: *mut u64,
) -> u32 {
    call(
        "doca_eth_txq_gpu_event_notify_send_packet_get_timestamp",
        || {
            // SAFETY: C API contract.
            unsafe { write_out(out, handle(ev)?.timestamp()) }
        },
    )
}
