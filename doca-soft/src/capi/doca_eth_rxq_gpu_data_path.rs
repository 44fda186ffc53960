//! `doca_eth_rxq_gpu_data_path.h`: what an RX queue with the GPU data path adds: the
//! handle kernels receive with, and the knobs of the GPU side.

use std::ffi::c_void;

use super::toolkit::{call, handle, non_null, write_out};

pub use crate::eth::rxq::EthRxq;

/// `doca_eth_rxq_gpu_enable_mcst_qp(rxq)`: accepted, no effect (no NIC multicast QP).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_gpu_enable_mcst_qp(rxq: *mut EthRxq) -> u32 {
    call("doca_eth_rxq_gpu_enable_mcst_qp", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.enable_mcst_qp()
    })
}
/// `doca_eth_rxq_gpu_set_uar_on_cpu(rxq)`: accepted (the soft NIC always rings on the CPU).
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_gpu_set_uar_on_cpu(rxq: *mut EthRxq) -> u32 {
    call("doca_eth_rxq_gpu_set_uar_on_cpu", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_uar_on_cpu()
    })
}
/// `doca_eth_rxq_gpu_set_rq_mem_type(rxq, mem_type)`: a `doca_gpu_mem_type`.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_gpu_set_rq_mem_type(rxq: *mut EthRxq, mem_type: u32) -> u32 {
    call("doca_eth_rxq_gpu_set_rq_mem_type", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.set_rq_mem_type(mem_type)
    })
}
/// `doca_eth_rxq_gpu_cpu_proxy_progress(rxq)`: RUNNING; publishes what the port's receive lanes staged.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_gpu_cpu_proxy_progress(rxq: *mut EthRxq) -> u32 {
    call("doca_eth_rxq_gpu_cpu_proxy_progress", || {
        // SAFETY: C API contract (null or a live queue).
        unsafe { handle(rxq) }?.proxy_progress()
    })
}
/// `doca_eth_rxq_get_gpu_handle(eth_rxq, &handle)` (RUNNING; NOT_SUPPORTED without the GPU
/// data path): the `struct doca_gpu_eth_rxq *` kernels receive with.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_get_gpu_handle(
    rxq: *const EthRxq,
    out: *mut *mut c_void,
) -> u32 {
    call("doca_eth_rxq_get_gpu_handle", || {
        // SAFETY: C API contract.
        let q = unsafe { handle(rxq) }?;
        non_null(out)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(out, q.gpu_handle()? as *mut c_void) }
    })
}
