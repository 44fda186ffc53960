//! `doca_eth_txq`: a TX queue with the GPU data path. Settings are collected while IDLE;
//! `doca_ctx_start` builds the ring and its proxy ([`TxProxy`]) and, unless the application
//! drives it (`doca_eth_txq_gpu_set_uar_on_cpu` + `doca_eth_txq_gpu_cpu_proxy_progress`),
//! a proxy thread. In CPU-completion mode NOTIFY sends and errors become PE events.

use super::caps::{self, within, MAX_BURST_SIZE, TXQ_TYPE_REGULAR};
use super::counters::TxqCountersSnapshot;
use super::glue::{GpuLink, RuntimeFrames};
use super::mem::FrameSource;
use super::queue::QueueState;
use super::ring;
use super::tx_events::{TxEventCb, TxGpuEvent};
use super::tx_proxy::{FrameOut, TxEvent, TxProxy, TxRing, TxRingCfg};
use crate::ctx::on_dev::OnDev;
use crate::ctx::{Ctx, CtxOps, Transition};
use crate::dev::Dev;
use crate::error::{DocaError, DocaResult};
use crate::gpu::GpuShared;
use crate::port::Port;
use crate::sync::lock;
use crate::types::DocaData;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

#[derive(Default)]
pub(crate) struct TxqCfg {
    max_burst: u32,
    l3_csum: bool,
    l4_csum: bool,
    max_send_buf_list_len: u32,
    metadata_num: u8,
    mss: u16,
    max_lso_header_size: u16,
    gpu: Option<GpuLink>,
    completion_on_gpu: bool,
    uar_on_cpu: bool,
    sq_mem_type: u32,
    wait_on_time: bool,
    error_cb: Option<(TxEventCb, DocaData)>,
    notify_cb: Option<(TxEventCb, DocaData)>,
}

struct ProxyThread {
    stop: Arc<AtomicBool>,
    join: JoinHandle<()>,
}

pub(crate) struct TxqRun {
    proxy: Arc<TxProxy>,
    port: Arc<Port>,
    queue_id: Option<u16>,
    thread: Option<ProxyThread>,
}

/// Shared state of a TX queue (the context's operations).
pub(crate) type TxqInner = QueueState<TxqCfg, TxqRun, TxqCountersSnapshot>;

/// The C `struct doca_eth_txq`.
pub struct EthTxq(OnDev<TxqInner>);

/// TX queue ids applied per port (`doca_eth_txq_apply_queue_id`: IN_USE when taken).
static TX_IDS: Mutex<Option<HashSet<(String, u16)>>> = Mutex::new(None);

/// Frames of a TX queue go to its port.
struct PortOut(Arc<Port>);

impl FrameOut for PortOut {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        self.0.send(frame)
    }
    fn send_batch(&self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        self.0.send_batch(frames)
    }
}

/// How long before a scheduled send's time the proxy thread stops napping.
const AWAKE_BEFORE_DUE_NS: u64 = 200_000;

fn spawn_proxy(proxy: Arc<TxProxy>, gpu: Option<GpuLink>) -> DocaResult<ProxyThread> {
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let join = std::thread::Builder::new()
        .name("doca-txq-proxy".into())
        .spawn(move || {
            if let Some(GpuLink::Gpu(g)) = &gpu {
                if let Err(e) = g.bind_thread() {
                    sdk_err!("eth_txq", "proxy thread cannot bind the GPU context: {e}");
                }
            }
            let mut idle = 0u32;
            while !stop2.load(Ordering::Acquire) {
                if proxy.progress() > 0 {
                    idle = 0;
                    continue;
                }
                idle = idle.saturating_add(1);
                // A scheduled send due soon: stay awake for it (a nap plus the wake-up would
                // make it tens of microseconds late).
                let due_soon = proxy.waiting_until().is_some_and(|t| {
                    t.saturating_sub(super::ring::realtime_ns()) < AWAKE_BEFORE_DUE_NS
                });
                if idle > 64 && !due_soon {
                    std::thread::sleep(std::time::Duration::from_micros(20));
                } else {
                    std::thread::yield_now();
                }
            }
            // Send what was published before the stop.
            while proxy.progress() > 0 {}
        })
        .map_err(|_| DocaError::OPERATING_SYSTEM)?;
    Ok(ProxyThread { stop, join })
}

impl TxqInner {
    fn release_run(&self, mut run: TxqRun) {
        if let Some(t) = run.thread.take() {
            t.stop.store(true, Ordering::Release);
            if t.join.join().is_err() {
                sdk_err!("eth_txq", "TX proxy thread panicked");
            }
        }
        *lock(&self.last_counters) = run.proxy.counters().snapshot();
        if let Some(id) = run.queue_id {
            if let Some(set) = lock(&TX_IDS).as_mut() {
                set.remove(&(run.port.name().to_owned(), id));
            }
        }
    }

    fn deliver(&self, events: Vec<TxEvent>) -> u32 {
        let (err_cb, notify_cb) = {
            let c = lock(&self.cfg);
            (c.error_cb, c.notify_cb)
        };
        let mut n = 0;
        for e in events {
            let cb = if e.status == 0 { notify_cb } else { err_cb };
            if let Some((Some(f), ud)) = cb {
                let mut ev = TxGpuEvent::new(e.wqe_index as u16, e.timestamp_ns, e.status);
                // SAFETY: the application registered `f` for this event type; the event
                // lives for the duration of the call.
                unsafe { f(&mut ev, ud) };
                n += 1;
            }
        }
        n
    }
}

impl CtxOps for TxqInner {
    fn kind(&self) -> &'static str {
        "eth_txq"
    }

    fn needs_pe(&self) -> bool {
        let c = lock(&self.cfg);
        c.error_cb.is_some() || c.notify_cb.is_some()
    }

    fn start(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        let cfg = lock(&self.cfg);
        let gpu = cfg.gpu.clone().ok_or(DocaError::NOT_SUPPORTED)?;
        let device = gpu.device()?;
        let ring = TxRing::new(
            TxRingCfg {
                max_burst: cfg.max_burst,
                l3_csum: cfg.l3_csum,
                l4_csum: cfg.l4_csum,
                completion_on_gpu: cfg.completion_on_gpu,
                wait_on_time: cfg.wait_on_time,
            },
            device.as_ref(),
        )?;
        let port = Port::for_spec(&self.info.spec)?;
        let src: Arc<dyn FrameSource> = Arc::new(RuntimeFrames::new(&gpu));
        let proxy = Arc::new(TxProxy::new(ring, src, Arc::new(PortOut(port.clone()))));
        proxy.set_events_enabled(
            !cfg.completion_on_gpu && (cfg.error_cb.is_some() || cfg.notify_cb.is_some()),
        );
        let thread = if cfg.uar_on_cpu {
            None
        } else {
            Some(spawn_proxy(proxy.clone(), Some(gpu))?)
        };
        *lock(&self.run) = Some(TxqRun {
            proxy,
            port,
            queue_id: None,
            thread,
        });
        Ok(Transition::Done)
    }

    fn stop(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        let run = lock(&self.run).take();
        if let Some(run) = run {
            self.release_run(run);
        }
        Ok(Transition::Done)
    }

    fn progress(&self, _ctx: &Ctx) -> u32 {
        let proxy = lock(&self.run).as_ref().map(|r| r.proxy.clone());
        match proxy {
            Some(p) => self.deliver(p.take_events()),
            None => 0,
        }
    }

    fn set_datapath_on_gpu(&self, gpu: &Arc<GpuShared>) -> DocaResult<()> {
        lock(&self.cfg).gpu = Some(GpuLink::Gpu(gpu.clone()));
        Ok(())
    }
}

impl EthTxq {
    fn idle_cfg(&self) -> DocaResult<MutexGuard<'_, TxqCfg>> {
        self.0.inner.idle_cfg(&self.0.ctx)
    }

    /// The started proxy (BAD_STATE unless RUNNING).
    pub(crate) fn proxy(&self) -> DocaResult<Arc<TxProxy>> {
        self.0.inner.running(&self.0.ctx, |r| r.proxy.clone())
    }

    /// Puts the rings in host memory for a CPU producer instead of a GPU (IDLE only; Rust
    /// API for tests and CPU-side producers). The GPU handle then is a CPU pointer.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn set_host_datapath(&self) -> DocaResult<()> {
        self.idle_cfg()?.gpu = Some(GpuLink::Host);
        Ok(())
    }

    /// Registers the error (`error == true`) or notify event callback (IDLE only).
    pub(crate) fn set_event_cb(&self, error: bool, cb: TxEventCb, ud: DocaData) -> DocaResult<()> {
        if cb.is_none() {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut c = self.idle_cfg()?;
        if error {
            c.error_cb = Some((cb, ud));
        } else {
            c.notify_cb = Some((cb, ud));
        }
        Ok(())
    }

    /// `apply_queue_id` (RUNNING; once, else ALREADY_EXIST; IN_USE when a queue of the
    /// port has that id).
    pub(crate) fn apply_queue_id(&self, queue_id: u16) -> DocaResult<()> {
        self.0.ctx.require_running()?;
        let mut run = lock(&self.0.inner.run);
        let run = run.as_mut().ok_or(DocaError::BAD_STATE)?;
        if run.queue_id.is_some() {
            return Err(DocaError::ALREADY_EXIST);
        }
        let mut ids = lock(&TX_IDS);
        let set = ids.get_or_insert_with(HashSet::new);
        if !set.insert((run.port.name().to_owned(), queue_id)) {
            return Err(DocaError::IN_USE);
        }
        run.queue_id = Some(queue_id);
        Ok(())
    }
}

fn check_burst(v: u32) -> DocaResult<()> {
    if v == 0 || v > MAX_BURST_SIZE {
        Err(DocaError::INVALID_VALUE)
    } else {
        Ok(())
    }
}

impl EthTxq {
    /// `doca_eth_txq_create`: an IDLE queue on `dev` (which it uses until destroyed).
    pub(crate) fn new(dev: &Dev, max_burst_size: u32) -> DocaResult<EthTxq> {
        check_burst(max_burst_size)?;
        let inner = QueueState::new(
            dev,
            TxqCfg {
                max_burst: max_burst_size,
                max_send_buf_list_len: 1,
                ..Default::default()
            },
        );
        Ok(EthTxq(OnDev::new(dev, inner)))
    }

    /// Before destroy (IDLE only): leaves the PE and releases the device.
    pub(crate) fn close(&self) -> DocaResult<()> {
        self.0.close()
    }

    /// The queue's context as a C handle.
    pub(crate) fn ctx_ptr(&self) -> *mut Ctx {
        self.0.ctx_ptr()
    }

    /// `set_l3_chksum_offload` (IDLE only).
    pub(crate) fn set_l3_chksum_offload(&self, on: bool) -> DocaResult<()> {
        self.idle_cfg()?.l3_csum = on;
        Ok(())
    }

    /// `set_l4_chksum_offload` (IDLE only).
    pub(crate) fn set_l4_chksum_offload(&self, on: bool) -> DocaResult<()> {
        self.idle_cfg()?.l4_csum = on;
        Ok(())
    }

    /// `set_max_burst_size` (IDLE only).
    pub(crate) fn set_max_burst_size(&self, v: u32) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        check_burst(v)?;
        c.max_burst = v;
        Ok(())
    }

    /// `set_max_send_buf_list_len` (IDLE only).
    pub(crate) fn set_max_send_buf_list_len(&self, v: u32) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.max_send_buf_list_len = within(v, 1..=caps::MAX_SEND_BUF_LIST_LEN)?;
        Ok(())
    }

    /// `set_metadata_num` (IDLE only).
    pub(crate) fn set_metadata_num(&self, v: u8) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.metadata_num = within(v, 0..=caps::MAX_METADATA_NUM)?;
        Ok(())
    }

    /// `set_mss` (IDLE only; recorded, LSO is not offered).
    pub(crate) fn set_mss(&self, v: u16) -> DocaResult<()> {
        self.idle_cfg()?.mss = v;
        Ok(())
    }

    /// `set_max_lso_header_size` (IDLE only).
    pub(crate) fn set_max_lso_header_size(&self, v: u16) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.max_lso_header_size = within(v, 0..=caps::MAX_LSO_HEADER_SIZE)?;
        Ok(())
    }

    /// `set_type` (IDLE only; REGULAR is the only type).
    pub(crate) fn set_type(&self, v: u32) -> DocaResult<()> {
        let _c = self.idle_cfg()?;
        if v != TXQ_TYPE_REGULAR {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(())
    }

    /// `gpu_set_sq_mem_type` (IDLE only).
    pub(crate) fn set_sq_mem_type(&self, v: u32) -> DocaResult<()> {
        let mut c = self.idle_cfg()?;
        c.sq_mem_type = within(v, 0..=crate::types::GPU_MEM_TYPE_CPU_GPU)?;
        Ok(())
    }

    /// `gpu_set_completion_on_gpu` (IDLE only): completions go to the CQ ring the kernel
    /// polls instead of PE events.
    pub(crate) fn set_completion_on_gpu(&self) -> DocaResult<()> {
        self.idle_cfg()?.completion_on_gpu = true;
        Ok(())
    }

    /// `gpu_set_uar_on_cpu` (IDLE only): no proxy thread; the application drives the proxy
    /// with `gpu_cpu_proxy_progress`.
    pub(crate) fn set_uar_on_cpu(&self) -> DocaResult<()> {
        self.idle_cfg()?.uar_on_cpu = true;
        Ok(())
    }

    /// `set_wait_on_time_offload` (IDLE only).
    pub(crate) fn set_wait_on_time_offload(&self) -> DocaResult<()> {
        self.idle_cfg()?.wait_on_time = true;
        Ok(())
    }

    /// `calculate_timestamp` (RUNNING): the wait-on-time value of `timestamp_ns`.
    pub(crate) fn calculate_timestamp(&self, timestamp_ns: u64) -> DocaResult<u64> {
        self.0.ctx.require_running()?;
        Ok(ring::ns_to_wait_on_time(timestamp_ns))
    }

    /// `get_gpu_handle` (RUNNING; NOT_SUPPORTED for a CPU data path queue): the device
    /// address of the ring handle.
    pub(crate) fn gpu_handle(&self) -> DocaResult<u64> {
        if lock(&self.0.inner.cfg).gpu.is_none() {
            return Err(DocaError::NOT_SUPPORTED);
        }
        Ok(self.proxy()?.ring().handle_dev())
    }

    /// `gpu_cpu_proxy_progress` (RUNNING): one proxy pass.
    pub(crate) fn proxy_progress(&self) -> DocaResult<()> {
        self.proxy()?.progress();
        Ok(())
    }

    /// The counters (any state; zeros before the first start, the last run's after stop).
    pub(crate) fn counters(&self) -> TxqCountersSnapshot {
        self.0.inner.counters(|r| r.proxy.counters().snapshot())
    }
}
