//! `doca_eth_rxq`: an RX queue with the GPU data path. Settings are collected while the
//! context is IDLE; `doca_ctx_start` checks them and builds the ring
//! ([`RxRing`]); `doca_eth_rxq_apply_queue_id` registers the ring
//! with the device's port as the sink of that queue id (what Flow RSS `queues_array` names).

use super::caps::{self, MAX_BURST_SIZE, MAX_PACKET_SIZE, RXQ_TYPE_CYCLIC, RXQ_TYPE_REGULAR};
use super::counters::RxqCountersC;
use super::glue::{self, GpuLink, PktBufSpec};
use super::rx_proxy::RxRing;
use crate::capi::toolkit::write_out;
use crate::ctx::{Ctx, CtxOps, Transition, STATE_RUNNING};
use crate::dev::{dev_ref, Dev, DevInfo};
use crate::error::{to_c, DocaError, DocaResult};
use crate::mmap::{mmap_ref, Mmap};
use crate::port::Port;
use crate::sync::lock;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

/// Settings collected while IDLE.
#[derive(Default)]
struct RxqCfg {
    max_burst: u32,
    max_pkt: u32,
    rxq_type: u32,
    metadata_num: u8,
    flow_tag: u8,
    rx_hash: u8,
    headroom: u16,
    tailroom: u16,
    timestamp: u8,
    max_recv_buf_list_len: u32,
    moderation: (u16, u16),
    pkt_buf: Option<PktBufSpec>,
    gpu: Option<GpuLink>,
    rq_mem_type: u32,
    mcst_qp: bool,
    uar_on_cpu: bool,
}

/// A started queue.
struct RxqRun {
    ring: Arc<RxRing>,
    port: Arc<Port>,
    queue_id: Option<u16>,
}

/// Shared state of an RX queue (the context's operations).
pub struct RxqInner {
    info: Arc<DevInfo>,
    cfg: Mutex<RxqCfg>,
    run: Mutex<Option<RxqRun>>,
    /// Counters of the last run, kept after stop.
    last_counters: Mutex<RxqCountersC>,
}

/// The C `struct doca_eth_rxq`.
pub struct EthRxq {
    ctx: Box<Ctx>,
    inner: Arc<RxqInner>,
    dev: *const Dev,
}

impl RxqInner {
    fn unregister(&self, run: &mut RxqRun) {
        run.ring.set_stopped(true);
        if let Some(id) = run.queue_id.take() {
            run.port.unregister_rx_queue(id);
        }
        *lock(&self.last_counters) = run.ring.counters().snapshot();
    }
}

impl CtxOps for RxqInner {
    fn kind(&self) -> &'static str {
        "eth_rxq"
    }

    fn start(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        let cfg = lock(&self.cfg);
        let gpu = cfg.gpu.as_ref().ok_or(DocaError::NOT_SUPPORTED)?;
        let spec = cfg.pkt_buf.as_ref().ok_or(DocaError::BAD_STATE)?;
        let device = gpu.device()?;
        let pkt = glue::resolve_pkt_buf(spec, device.as_ref())?;
        if (pkt.len as u64) < u64::from(cfg.max_pkt) {
            return Err(DocaError::INVALID_VALUE);
        }
        let ring = Arc::new(RxRing::new(pkt, cfg.max_pkt, device.as_ref())?);
        let port = Port::for_dev(&self.info)?;
        *lock(&self.run) = Some(RxqRun {
            ring,
            port,
            queue_id: None,
        });
        Ok(Transition::Done)
    }

    fn stop(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        // Take the run state first: the port waits for its dispatcher batch in unregister.
        let run = lock(&self.run).take();
        if let Some(mut run) = run {
            self.unregister(&mut run);
        }
        Ok(Transition::Done)
    }

    fn set_datapath_on_gpu(&self, gpu: *mut c_void) -> DocaResult<()> {
        lock(&self.cfg).gpu = Some(GpuLink::new(gpu)?);
        Ok(())
    }
}

impl EthRxq {
    fn idle_cfg(&self) -> DocaResult<MutexGuard<'_, RxqCfg>> {
        self.ctx.require_idle()?;
        Ok(lock(&self.inner.cfg))
    }

    /// The started ring (BAD_STATE unless RUNNING).
    pub fn ring(&self) -> DocaResult<Arc<RxRing>> {
        if self.ctx.state() != STATE_RUNNING {
            return Err(DocaError::BAD_STATE);
        }
        lock(&self.inner.run)
            .as_ref()
            .map(|r| r.ring.clone())
            .ok_or(DocaError::BAD_STATE)
    }

    fn apply_queue_id(&self, queue_id: u16) -> DocaResult<()> {
        self.ctx.require_running()?;
        let mut run = lock(&self.inner.run);
        let run = run.as_mut().ok_or(DocaError::BAD_STATE)?;
        if run.queue_id.is_some() {
            return Err(DocaError::ALREADY_EXIST);
        }
        run.port.register_rx_queue(queue_id, run.ring.clone())?;
        run.queue_id = Some(queue_id);
        Ok(())
    }
}

/// Borrows an RX queue from a C pointer; INVALID_VALUE when null.
///
/// # Safety
/// A non-null `p` points to a live `EthRxq`.
pub unsafe fn rxq_ref<'a>(p: *const EthRxq) -> DocaResult<&'a EthRxq> {
    // SAFETY: caller contract.
    unsafe { p.as_ref() }.ok_or(DocaError::INVALID_VALUE)
}

fn check_sizes(max_burst: u32, max_pkt: u32) -> DocaResult<()> {
    if max_burst == 0 || max_burst > MAX_BURST_SIZE || max_pkt == 0 || max_pkt > MAX_PACKET_SIZE {
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(())
}

/// `doca_eth_rxq_create(dev, max_burst_size, max_packet_size, **eth_rxq)`.
///
/// # Safety
/// `dev` is null or a live device; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_create(
    dev: *mut Dev,
    max_burst_size: u32,
    max_packet_size: u32,
    out: *mut *mut EthRxq,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { dev_ref(dev) }.and_then(|d| {
        if out.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        check_sizes(max_burst_size, max_packet_size)?;
        let inner = Arc::new(RxqInner {
            info: d.info().clone(),
            cfg: Mutex::new(RxqCfg {
                max_burst: max_burst_size,
                max_pkt: max_packet_size,
                rxq_type: RXQ_TYPE_CYCLIC,
                max_recv_buf_list_len: 1,
                ..Default::default()
            }),
            run: Mutex::new(None),
            last_counters: Mutex::new(RxqCountersC::default()),
        });
        d.add_user();
        let q = Box::new(EthRxq {
            ctx: Ctx::new(inner.clone()),
            inner,
            dev,
        });
        // SAFETY: checked non-null above; caller contract.
        unsafe { write_out(out, Box::into_raw(q)) }
    });
    to_c(r)
}

/// `doca_eth_rxq_destroy` (IDLE only).
///
/// # Safety
/// `rxq` is null or a live queue, not used after this call.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_destroy(rxq: *mut EthRxq) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { rxq_ref(rxq) }.and_then(|q| {
        q.ctx.require_idle()?;
        q.ctx.detach_from_pe();
        if let Some(PktBufSpec::Mmap { mmap, .. }) = lock(&q.inner.cfg).pkt_buf.take() {
            mmap.remove_user();
        }
        // SAFETY: the device outlives its users (doca_dev_close is IN_USE until released).
        if let Ok(d) = unsafe { dev_ref(q.dev) } {
            d.remove_user();
        }
        // SAFETY: created by Box::into_raw in create; the caller gives up the pointer.
        drop(unsafe { Box::from_raw(rxq) });
        Ok(())
    });
    to_c(r)
}

/// `doca_eth_rxq_as_doca_ctx`: NULL for a NULL queue.
///
/// # Safety
/// `rxq` is null or a live queue.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_as_doca_ctx(rxq: *mut EthRxq) -> *mut Ctx {
    // SAFETY: caller contract.
    match unsafe { rxq_ref(rxq) } {
        Ok(q) => &*q.ctx as *const Ctx as *mut Ctx,
        Err(_) => std::ptr::null_mut(),
    }
}

macro_rules! rxq_setter {
    ($name:ident, $t:ty, |$c:ident, $v:ident| $body:expr) => {
        #[doc = concat!("`", stringify!($name), "` (IDLE only).")]
        ///
        /// # Safety
        /// `rxq` is null or a live queue.
        #[no_mangle]
        pub unsafe extern "C" fn $name(rxq: *mut EthRxq, $v: $t) -> u32 {
            // SAFETY: caller contract.
            let r = unsafe { rxq_ref(rxq) }.and_then(|q| {
                #[allow(unused_mut)]
                let mut $c = q.idle_cfg()?;
                $body
            });
            to_c(r)
        }
    };
}

rxq_setter!(doca_eth_rxq_set_type, u32, |c, v| {
    if v > RXQ_TYPE_REGULAR {
        return Err(DocaError::INVALID_VALUE);
    }
    c.rxq_type = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_max_burst_size, u32, |c, v| {
    check_sizes(v, c.max_pkt)?;
    c.max_burst = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_max_packet_size, u32, |c, v| {
    check_sizes(c.max_burst, v)?;
    c.max_pkt = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_metadata_num, u8, |c, v| {
    if u32::from(v) > caps::MAX_METADATA_NUM {
        return Err(DocaError::INVALID_VALUE);
    }
    c.metadata_num = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_flow_tag, u8, |c, v| {
    c.flow_tag = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_rx_hash, u8, |c, v| {
    c.rx_hash = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_packet_headroom, u16, |c, v| {
    if v > caps::MAX_ROOM {
        return Err(DocaError::INVALID_VALUE);
    }
    c.headroom = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_packet_tailroom, u16, |c, v| {
    if v > caps::MAX_ROOM {
        return Err(DocaError::INVALID_VALUE);
    }
    c.tailroom = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_timestamp, u8, |c, v| {
    c.timestamp = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_set_max_recv_buf_list_len, u32, |c, v| {
    if v == 0 || v > caps::MAX_RECV_BUF_LIST_LEN {
        return Err(DocaError::INVALID_VALUE);
    }
    c.max_recv_buf_list_len = v;
    Ok(())
});
rxq_setter!(doca_eth_rxq_gpu_set_rq_mem_type, u32, |c, v| {
    if v > crate::types::GPU_MEM_TYPE_CPU_GPU {
        return Err(DocaError::INVALID_VALUE);
    }
    c.rq_mem_type = v;
    Ok(())
});

/// `doca_eth_rxq_set_pkt_buf(rxq, mmap, mmap_offset, mmap_len)` (IDLE only; the range is
/// checked against the mmap at start).
///
/// # Safety
/// `rxq` and `mmap` are null or live.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_pkt_buf(
    rxq: *mut EthRxq,
    mmap: *mut Mmap,
    mmap_offset: u32,
    mmap_len: u32,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { rxq_ref(rxq) }.and_then(|q| {
        // SAFETY: caller contract.
        let m = unsafe { mmap_ref(mmap) }?;
        if mmap_len == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        q.set_pkt_buf(PktBufSpec::Mmap {
            mmap: m.shared().clone(),
            offset: mmap_offset,
            len: mmap_len,
        })
    });
    to_c(r)
}

/// `doca_eth_rxq_set_notification_moderation(rxq, period_usec, comp_count)` (IDLE only;
/// recorded, the proxy publishes per dispatcher batch).
///
/// # Safety
/// `rxq` is null or a live queue.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_set_notification_moderation(
    rxq: *mut EthRxq,
    period_usec: u16,
    comp_count: u16,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { rxq_ref(rxq) }.and_then(|q| {
        q.idle_cfg()?.moderation = (period_usec, comp_count);
        Ok(())
    });
    to_c(r)
}

/// `doca_eth_rxq_gpu_enable_mcst_qp` (IDLE only; accepted, no effect: no NIC multicast QP).
///
/// # Safety
/// `rxq` is null or a live queue.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_gpu_enable_mcst_qp(rxq: *mut EthRxq) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { rxq_ref(rxq) }.and_then(|q| {
        q.idle_cfg()?.mcst_qp = true;
        Ok(())
    }))
}

/// `doca_eth_rxq_gpu_set_uar_on_cpu` (IDLE only; the soft NIC always rings on the CPU).
///
/// # Safety
/// `rxq` is null or a live queue.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_gpu_set_uar_on_cpu(rxq: *mut EthRxq) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { rxq_ref(rxq) }.and_then(|q| {
        q.idle_cfg()?.uar_on_cpu = true;
        Ok(())
    }))
}

/// `doca_eth_rxq_gpu_cpu_proxy_progress`: RX frames are published by the port's
/// dispatcher; this publishes anything staged (RUNNING only).
///
/// # Safety
/// `rxq` is null or a live queue.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_gpu_cpu_proxy_progress(rxq: *mut EthRxq) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { rxq_ref(rxq) }.and_then(|q| {
        q.ring()?.flush();
        Ok(())
    }))
}

/// `doca_eth_rxq_apply_queue_id` (RUNNING; once -> ALREADY_EXIST; id taken -> IN_USE).
///
/// # Safety
/// `rxq` is null or a live queue.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_apply_queue_id(rxq: *mut EthRxq, queue_id: u16) -> u32 {
    // SAFETY: caller contract.
    to_c(unsafe { rxq_ref(rxq) }.and_then(|q| q.apply_queue_id(queue_id)))
}

/// `doca_eth_rxq_get_flow_queue_id` (pre-3.1 programs; RUNNING): the queue's id, choosing
/// and applying the lowest free id on the port when none was applied.
///
/// # Safety
/// `rxq` is null or a live queue; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_get_flow_queue_id(rxq: *mut EthRxq, out: *mut u16) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { rxq_ref(rxq) }.and_then(|q| {
        if out.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        q.ctx.require_running()?;
        let mut run = lock(&q.inner.run);
        let run = run.as_mut().ok_or(DocaError::BAD_STATE)?;
        let id = match run.queue_id {
            Some(id) => id,
            None => {
                let id = (0..=u16::MAX)
                    .find(|&id| run.port.register_rx_queue(id, run.ring.clone()).is_ok())
                    .ok_or(DocaError::FULL)?;
                run.queue_id = Some(id);
                id
            }
        };
        // SAFETY: checked non-null; caller contract.
        unsafe { write_out(out, id) }
    });
    to_c(r)
}

/// `doca_eth_rxq_get_gpu_handle` (RUNNING; NOT_SUPPORTED for a CPU data path queue).
///
/// # Safety
/// `rxq` is null or a live queue; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_eth_rxq_get_gpu_handle(
    rxq: *const EthRxq,
    out: *mut *mut c_void,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { rxq_ref(rxq) }.and_then(|q| {
        if out.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        if lock(&q.inner.cfg).gpu.is_none() {
            return Err(DocaError::NOT_SUPPORTED);
        }
        let h = q.ring()?.handle_dev();
        // SAFETY: checked non-null; caller contract.
        unsafe { write_out(out, h as *mut c_void) }
    });
    to_c(r)
}

/// `doca_eth_rxq_estimate_packet_buf_size(type, rate, pkt_max_time, max_packet_size,
/// max_burst_size, log_max_lro_pkt_sz, head_size, tail_size, *buf_size)`: burst x packet
/// size (plus head/tail room per packet), page aligned.
#[no_mangle]
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
    let r = (|| {
        if rxq_type > RXQ_TYPE_REGULAR || log_max_lro_pkt_sz > 31 {
            return Err(DocaError::INVALID_VALUE);
        }
        check_sizes(max_burst_size, max_packet_size)?;
        let per = u64::from(max_packet_size) + u64::from(head_size) + u64::from(tail_size);
        let page = 4096u64;
        let total = (per * u64::from(max_burst_size)).div_ceil(page) * page;
        let total = u32::try_from(total).map_err(|_| DocaError::INVALID_VALUE)?;
        // SAFETY: caller contract (null is rejected by write_out).
        unsafe { write_out(buf_size, total) }
    })();
    to_c(r)
}

/// `doca_soft_eth_rxq_get_counters` (any state; zeros before the first start, the last
/// run's counters after a stop).
///
/// # Safety
/// `rxq` is null or a live queue; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn doca_soft_eth_rxq_get_counters(
    rxq: *const EthRxq,
    out: *mut RxqCountersC,
) -> u32 {
    // SAFETY: caller contract.
    let r = unsafe { rxq_ref(rxq) }.and_then(|q| {
        let live = lock(&q.inner.run)
            .as_ref()
            .map(|r| r.ring.counters().snapshot());
        let snap = live.unwrap_or_else(|| *lock(&q.inner.last_counters));
        // SAFETY: caller contract.
        unsafe { write_out(out, snap) }
    });
    to_c(r)
}

impl EthRxq {
    /// Sets the packet buffer (IDLE only); what `doca_eth_rxq_set_pkt_buf` records. The
    /// queue is a user of the mmap until the buffer is replaced or the queue destroyed.
    pub fn set_pkt_buf(&self, spec: PktBufSpec) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        if let PktBufSpec::Mmap { mmap, .. } = &spec {
            mmap.add_user();
        }
        if let Some(PktBufSpec::Mmap { mmap, .. }) = c.pkt_buf.replace(spec) {
            mmap.remove_user();
        }
        Ok(())
    }

    /// Puts the rings in host memory for a CPU consumer instead of a GPU (IDLE only; Rust
    /// API for tests and CPU-side consumers). The GPU handle then is a CPU pointer.
    pub fn set_host_datapath(&self) -> DocaResult<()> {
        self.idle_cfg()?.gpu = Some(GpuLink::Host);
        Ok(())
    }

    /// The queue's context.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }
}
