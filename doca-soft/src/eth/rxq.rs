//! `doca_eth_rxq`: an RX queue with the GPU data path. Settings are collected while the
//! context is IDLE; `doca_ctx_start` checks them and builds the ring
//! ([`RxRing`]); `doca_eth_rxq_apply_queue_id` registers the ring
//! with the device's port as the sink of that queue id (what Flow RSS `queues_array` names).

use super::caps::{
    self, within, MAX_BURST_SIZE, MAX_PACKET_SIZE, RXQ_TYPE_CYCLIC, RXQ_TYPE_REGULAR,
};
use super::counters::RxqCountersSnapshot;
use super::glue::{self, GpuLink, PktBufSpec};
use super::queue::QueueState;
use super::rx_proxy::RxRing;
use crate::ctx::on_dev::OnDev;
use crate::ctx::{Ctx, CtxOps, Transition};
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::gpu::GpuShared;
use crate::port::Port;
use crate::sync::lock;
use std::sync::{Arc, MutexGuard};

/// Settings collected while IDLE.
#[derive(Default)]
pub(crate) struct RxqCfg {
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
pub(crate) struct RxqRun {
    ring: Arc<RxRing>,
    port: Arc<Port>,
    queue_id: Option<u16>,
}

/// Shared state of an RX queue (the context's operations).
pub(crate) type RxqInner = QueueState<RxqCfg, RxqRun, RxqCountersSnapshot>;

/// The C `struct doca_eth_rxq`.
pub struct EthRxq(OnDev<RxqInner>);

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
        let port = Port::for_spec(&self.info.spec)?;
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

    fn set_datapath_on_gpu(&self, gpu: &Arc<GpuShared>) -> DocaResult<()> {
        lock(&self.cfg).gpu = Some(GpuLink::Gpu(gpu.clone()));
        Ok(())
    }
}

impl EthRxq {
    fn idle_cfg(&self) -> DocaResult<MutexGuard<'_, RxqCfg>> {
        self.0.inner.idle_cfg(&self.0.ctx)
    }

    /// The started ring (BAD_STATE unless RUNNING).
    pub(crate) fn ring(&self) -> DocaResult<Arc<RxRing>> {
        self.0.inner.running(&self.0.ctx, |r| r.ring.clone())
    }

    /// `apply_queue_id` (RUNNING; once, else ALREADY_EXIST; IN_USE when the port has a
    /// queue with that id): registers the ring as the port's sink for `queue_id`.
    pub(crate) fn apply_queue_id(&self, queue_id: u16) -> DocaResult<()> {
        self.0.ctx.require_running()?;
        let mut run = lock(&self.0.inner.run);
        let run = run.as_mut().ok_or(DocaError::BAD_STATE)?;
        if run.queue_id.is_some() {
            return Err(DocaError::ALREADY_EXIST);
        }
        run.port.register_rx_queue(queue_id, run.ring.clone())?;
        run.queue_id = Some(queue_id);
        Ok(())
    }
}

fn check_sizes(max_burst: u32, max_pkt: u32) -> DocaResult<()> {
    if max_burst == 0 || max_burst > MAX_BURST_SIZE || max_pkt == 0 || max_pkt > MAX_PACKET_SIZE {
        return Err(DocaError::INVALID_VALUE);
    }
    Ok(())
}

impl EthRxq {
    /// `doca_eth_rxq_create`: an IDLE queue on `dev` (which it uses until destroyed).
    pub(crate) fn new(dev: &Dev, max_burst_size: u32, max_packet_size: u32) -> DocaResult<EthRxq> {
        check_sizes(max_burst_size, max_packet_size)?;
        let inner = QueueState::new(
            dev,
            RxqCfg {
                max_burst: max_burst_size,
                max_pkt: max_packet_size,
                rxq_type: RXQ_TYPE_CYCLIC,
                max_recv_buf_list_len: 1,
                ..Default::default()
            },
        );
        Ok(EthRxq(OnDev::new(dev, inner)))
    }

    /// Before destroy (IDLE only): leaves the PE and releases the mmap and the device.
    pub(crate) fn close(&self) -> DocaResult<()> {
        self.0.ctx.require_idle()?;
        if let Some(PktBufSpec::Mmap { mmap, .. }) = lock(&self.0.inner.cfg).pkt_buf.take() {
            mmap.remove_user();
        }
        self.0.close()
    }

    /// The queue's context as a C handle.
    pub(crate) fn ctx_ptr(&self) -> *mut Ctx {
        self.0.ctx_ptr()
    }

    /// `set_type` (IDLE only).
    pub(crate) fn set_type(&self, v: u32) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.rxq_type = within(v, 0..=RXQ_TYPE_REGULAR)?;
        Ok(())
    }

    /// `set_max_burst_size` (IDLE only).
    pub(crate) fn set_max_burst_size(&self, v: u32) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        check_sizes(v, c.max_pkt)?;
        c.max_burst = v;
        Ok(())
    }

    /// `set_max_packet_size` (IDLE only).
    pub(crate) fn set_max_packet_size(&self, v: u32) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        check_sizes(c.max_burst, v)?;
        c.max_pkt = v;
        Ok(())
    }

    /// `set_metadata_num` (IDLE only).
    pub(crate) fn set_metadata_num(&self, v: u8) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.metadata_num = within(v, 0..=caps::MAX_METADATA_NUM)?;
        Ok(())
    }

    /// `set_flow_tag` (IDLE only; recorded).
    pub(crate) fn set_flow_tag(&self, v: u8) -> DocaResult<()> {
        self.idle_cfg()?.flow_tag = v;
        Ok(())
    }

    /// `set_rx_hash` (IDLE only; recorded).
    pub(crate) fn set_rx_hash(&self, v: u8) -> DocaResult<()> {
        self.idle_cfg()?.rx_hash = v;
        Ok(())
    }

    /// `set_packet_headroom` (IDLE only).
    pub(crate) fn set_packet_headroom(&self, v: u16) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.headroom = within(v, 0..=caps::MAX_ROOM)?;
        Ok(())
    }

    /// `set_packet_tailroom` (IDLE only).
    pub(crate) fn set_packet_tailroom(&self, v: u16) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.tailroom = within(v, 0..=caps::MAX_ROOM)?;
        Ok(())
    }

    /// `set_timestamp` (IDLE only; completions always carry one).
    pub(crate) fn set_timestamp(&self, v: u8) -> DocaResult<()> {
        self.idle_cfg()?.timestamp = v;
        Ok(())
    }

    /// `set_max_recv_buf_list_len` (IDLE only).
    pub(crate) fn set_max_recv_buf_list_len(&self, v: u32) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.max_recv_buf_list_len = within(v, 1..=caps::MAX_RECV_BUF_LIST_LEN)?;
        Ok(())
    }

    /// `gpu_set_rq_mem_type` (IDLE only).
    pub(crate) fn set_rq_mem_type(&self, v: u32) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.rq_mem_type = within(v, 0..=crate::types::GPU_MEM_TYPE_CPU_GPU)?;
        Ok(())
    }

    /// `set_notification_moderation` (IDLE only; recorded: the proxy publishes per
    /// dispatcher batch).
    pub(crate) fn set_notification_moderation(
        &self,
        period_usec: u16,
        comp_count: u16,
    ) -> DocaResult<()> {
        self.idle_cfg()?.moderation = (period_usec, comp_count);
        Ok(())
    }

    /// `gpu_enable_mcst_qp` (IDLE only; accepted, no effect: no NIC multicast QP).
    pub(crate) fn enable_mcst_qp(&self) -> DocaResult<()> {
        self.idle_cfg()?.mcst_qp = true;
        Ok(())
    }

    /// `gpu_set_uar_on_cpu` (IDLE only; the soft NIC always rings on the CPU).
    pub(crate) fn set_uar_on_cpu(&self) -> DocaResult<()> {
        self.idle_cfg()?.uar_on_cpu = true;
        Ok(())
    }

    /// `gpu_cpu_proxy_progress` (RUNNING): frames are published by the port's lanes; this
    /// publishes anything staged.
    pub(crate) fn proxy_progress(&self) -> DocaResult<()> {
        self.ring()?.flush();
        Ok(())
    }

    /// `get_flow_queue_id` (pre-3.1 programs; RUNNING): the queue's id, choosing and
    /// applying the lowest free id on the port when none was applied.
    pub(crate) fn flow_queue_id(&self) -> DocaResult<u16> {
        self.0.ctx.require_running()?;
        let mut run = lock(&self.0.inner.run);
        let run = run.as_mut().ok_or(DocaError::BAD_STATE)?;
        if let Some(id) = run.queue_id {
            return Ok(id);
        }
        let id = (0..=u16::MAX)
            .find(|&id| run.port.register_rx_queue(id, run.ring.clone()).is_ok())
            .ok_or(DocaError::FULL)?;
        run.queue_id = Some(id);
        Ok(id)
    }

    /// `get_gpu_handle` (RUNNING; NOT_SUPPORTED for a CPU data path queue): the device
    /// address of the ring handle.
    pub(crate) fn gpu_handle(&self) -> DocaResult<u64> {
        if lock(&self.0.inner.cfg).gpu.is_none() {
            return Err(DocaError::NOT_SUPPORTED);
        }
        Ok(self.ring()?.handle_dev())
    }

    /// The counters (any state; zeros before the first start, the last run's after stop).
    pub(crate) fn counters(&self) -> RxqCountersSnapshot {
        self.0.inner.counters(|r| r.ring.counters().snapshot())
    }
}

/// `doca_eth_rxq_estimate_packet_buf_size`: burst x packet size (plus head and tail room
/// per packet), page aligned.
pub(crate) fn estimate_packet_buf_size(
    rxq_type: u32,
    max_packet_size: u32,
    max_burst_size: u32,
    log_max_lro_pkt_sz: u8,
    head_size: u16,
    tail_size: u16,
) -> DocaResult<u32> {
    if rxq_type > RXQ_TYPE_REGULAR || log_max_lro_pkt_sz > 31 {
        return Err(DocaError::INVALID_VALUE);
    }
    check_sizes(max_burst_size, max_packet_size)?;
    let per = u64::from(max_packet_size) + u64::from(head_size) + u64::from(tail_size);
    let page = 4096u64;
    let total = (per * u64::from(max_burst_size)).div_ceil(page) * page;
    u32::try_from(total).map_err(|_| DocaError::INVALID_VALUE)
}

impl EthRxq {
    /// Sets the packet buffer (IDLE only); what `doca_eth_rxq_set_pkt_buf` records. The
    /// queue is a user of the mmap until the buffer is replaced or the queue destroyed.
    pub(crate) fn set_pkt_buf(&self, spec: PktBufSpec) -> DocaResult<()> {
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
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn set_host_datapath(&self) -> DocaResult<()> {
        self.idle_cfg()?.gpu = Some(GpuLink::Host);
        Ok(())
    }
}
