//! Ethernet send queues (`doca_eth_txq`) that CUDA kernels send from (GPU data path),
//! built and started in one go by [`EthTxqBuilder`], with send events delivered to Rust
//! closures through a progress engine.

use crate::eth_rxq::{start_ctx, RawConfig};
use crate::gpu::Gpu;
use crate::handles::TxqHandle;
use doca_common::context::{Ctx, CtxState, DROP_STOP_TIMEOUT};
use doca_common::error::{check, DocaError, Error, Result};
use doca_common::Device;
use doca_common::ProgressEngine;
use doca_sys as sys;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// How a device schedules sends at a given time (`enum doca_eth_wait_on_time_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOnTime {
    /// Not supported.
    None,
    /// Supported by the NIC (what [`EthTxqBuilder::wait_on_time`] needs).
    Native,
    /// DPDK-style scheduling only.
    Dpdk,
    /// A value this crate does not know.
    Unknown(u32),
}

impl WaitOnTime {
    fn from_raw(v: sys::doca_eth_wait_on_time_type) -> Self {
        match v {
            sys::doca_eth_wait_on_time_type::DOCA_ETH_WAIT_ON_TIME_TYPE_NONE => WaitOnTime::None,
            sys::doca_eth_wait_on_time_type::DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE => {
                WaitOnTime::Native
            }
            sys::doca_eth_wait_on_time_type::DOCA_ETH_WAIT_ON_TIME_TYPE_DPDK => WaitOnTime::Dpdk,
            other => WaitOnTime::Unknown(other.0),
        }
    }
}

/// A send that failed (`doca_eth_txq_gpu_event_error_send_packet`), delivered in CPU
/// completion mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxErrorEvent {
    /// Position (descriptor index) of the packet in the send queue.
    pub position: u16,
}

/// A send with the NOTIFY flag completed (`doca_eth_txq_gpu_event_notify_send_packet`),
/// delivered in CPU completion mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxNotifyEvent {
    /// Position (descriptor index) of the packet in the send queue.
    pub position: u16,
    /// When it was sent, in nanoseconds.
    pub timestamp_ns: u64,
}

type ErrorFn = Box<dyn FnMut(TxErrorEvent) + Send>;
type NotifyFn = Box<dyn FnMut(TxNotifyEvent) + Send>;

/// The closures behind the event callbacks. Its address is the callbacks' user data, so
/// it is boxed and outlives the queue.
struct EventHandlers {
    on_error: Mutex<ErrorFn>,
    on_notify: Mutex<NotifyFn>,
    /// Events whose details DOCA failed to report, or whose closure panicked.
    failures: AtomicU64,
}

unsafe extern "C" fn on_error_event(
    ev: *mut sys::doca_eth_txq_gpu_event_error_send_packet,
    user: sys::doca_data,
) {
    // SAFETY: `user.ptr` is the address of the boxed EventHandlers registered with this
    // queue; it lives until after the queue is destroyed.
    let h = unsafe { &*(user.ptr as *const EventHandlers) };
    let mut position = 0u16;
    // SAFETY: DOCA passes a live event for the duration of the callback.
    let rc =
        unsafe { sys::doca_eth_txq_gpu_event_error_send_packet_get_position(ev, &mut position) };
    if rc != sys::doca_error_t::DOCA_SUCCESS {
        h.failures.fetch_add(1, Ordering::Relaxed);
        return;
    }
    // A panic must not unwind into C.
    let r = catch_unwind(AssertUnwindSafe(|| {
        (h.on_error.lock().unwrap_or_else(|p| p.into_inner()))(TxErrorEvent { position })
    }));
    if r.is_err() {
        h.failures.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe extern "C" fn on_notify_event(
    ev: *mut sys::doca_eth_txq_gpu_event_notify_send_packet,
    user: sys::doca_data,
) {
    // SAFETY: as in `on_error_event`.
    let h = unsafe { &*(user.ptr as *const EventHandlers) };
    let mut position = 0u16;
    let mut timestamp_ns = 0u64;
    // SAFETY: DOCA passes a live event for the duration of the callback.
    let rc1 =
        unsafe { sys::doca_eth_txq_gpu_event_notify_send_packet_get_position(ev, &mut position) };
    // SAFETY: as above.
    let rc2 = unsafe {
        sys::doca_eth_txq_gpu_event_notify_send_packet_get_timestamp(ev, &mut timestamp_ns)
    };
    if rc1 != sys::doca_error_t::DOCA_SUCCESS || rc2 != sys::doca_error_t::DOCA_SUCCESS {
        h.failures.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let r = catch_unwind(AssertUnwindSafe(|| {
        (h.on_notify.lock().unwrap_or_else(|p| p.into_inner()))(TxNotifyEvent {
            position,
            timestamp_ns,
        })
    }));
    if r.is_err() {
        h.failures.fetch_add(1, Ordering::Relaxed);
    }
}

/// Configures and starts an [`EthTxq`]. Obtained from [`EthTxq::builder`].
#[must_use = "a builder does nothing until start()"]
pub struct EthTxqBuilder {
    device: Device,
    max_burst_size: u32,
    l3_csum: bool,
    l4_csum: bool,
    completion_on_gpu: bool,
    cpu_proxy: bool,
    wait_on_time: bool,
    gpu: Option<Gpu>,
    pe: Option<ProgressEngine>,
    events: Option<Box<EventHandlers>>,
    raw_config: Vec<RawConfig<sys::doca_eth_txq>>,
}

impl EthTxqBuilder {
    /// Runs `f` on the raw, not yet started queue, after the builder's own settings: for
    /// `doca_eth_txq_set_*` calls this crate does not wrap (MSS, metadata, ...) and for
    /// backend-specific setup. An error from `f` aborts `start`.
    pub fn configure_raw(
        mut self,
        f: impl FnOnce(*mut sys::doca_eth_txq) -> Result<()> + 'static,
    ) -> Self {
        self.raw_config.push(Box::new(f));
        self
    }

    /// Most packets in flight (the descriptor ring size). Required.
    pub fn max_burst_size(mut self, n: u32) -> Self {
        self.max_burst_size = n;
        self
    }

    /// Fill in IPv4 header checksums on send (`doca_eth_txq_set_l3_chksum_offload`).
    pub fn l3_checksum_offload(mut self, on: bool) -> Self {
        self.l3_csum = on;
        self
    }

    /// Fill in UDP/TCP checksums on send (`doca_eth_txq_set_l4_chksum_offload`).
    pub fn l4_checksum_offload(mut self, on: bool) -> Self {
        self.l4_csum = on;
        self
    }

    /// Completions go to a ring kernels poll (`doca_gpu_dev_eth_txq_poll_completion`)
    /// instead of CPU events (`doca_eth_txq_gpu_set_completion_on_gpu`).
    pub fn completion_on_gpu(mut self) -> Self {
        self.completion_on_gpu = true;
        self
    }

    /// The doorbell is rung by a CPU thread that calls [`EthTxq::cpu_proxy_progress`]
    /// (`doca_eth_txq_gpu_set_uar_on_cpu`).
    pub fn cpu_proxy(mut self) -> Self {
        self.cpu_proxy = true;
        self
    }

    /// Enables sending at a given time (`doca_eth_txq_set_wait_on_time_offload`). `start`
    /// fails unless the device reports [`WaitOnTime::Native`]
    /// (see [`EthTxq::wait_on_time_mode`]).
    pub fn wait_on_time(mut self) -> Self {
        self.wait_on_time = true;
        self
    }

    /// Runs the data path on `gpu` (`doca_ctx_set_datapath_on_gpu`), so kernels send
    /// through [`EthTxq::gpu_handle`]. Without it the backend decides whether the queue can
    /// start (the software runtime allows a host-memory queue, used by its tests).
    pub fn datapath_gpu(mut self, gpu: &Gpu) -> Self {
        self.gpu = Some(gpu.clone());
        self
    }

    /// Connects the queue to `pe` (only needed when the backend starts the queue
    /// asynchronously; [`events`](Self::events) connects it too).
    pub fn progress_engine(mut self, pe: &ProgressEngine) -> Self {
        self.pe = Some(pe.clone());
        self
    }

    /// Delivers send events to closures, called from `pe.progress()` (CPU completion
    /// mode, the default without [`completion_on_gpu`](Self::completion_on_gpu)):
    /// `on_error` for failed sends, `on_notify` for completed NOTIFY sends. A closure that
    /// panics is counted in [`EthTxq::event_failures`] instead of unwinding into DOCA.
    pub fn events(
        mut self,
        pe: &ProgressEngine,
        on_error: impl FnMut(TxErrorEvent) + Send + 'static,
        on_notify: impl FnMut(TxNotifyEvent) + Send + 'static,
    ) -> Self {
        self.pe = Some(pe.clone());
        self.events = Some(Box::new(EventHandlers {
            on_error: Mutex::new(Box::new(on_error)),
            on_notify: Mutex::new(Box::new(on_notify)),
            failures: AtomicU64::new(0),
        }));
        self
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::InvalidArgument(format!("EthTxq::start: {m}")));
        if self.max_burst_size == 0 {
            return bad("max_burst_size is required and must be > 0");
        }
        if self.completion_on_gpu && self.events.is_some() {
            return bad(
                "events() needs CPU completions; it cannot be combined with completion_on_gpu()",
            );
        }
        Ok(())
    }

    /// Creates, configures and starts the queue; it is RUNNING when this returns.
    pub fn start(self) -> Result<EthTxq> {
        self.validate()?;
        let mode = if self.wait_on_time {
            Some(EthTxq::wait_on_time_mode(&self.device)?)
        } else {
            None
        };
        if let Some(m) = mode.filter(|m| *m != WaitOnTime::Native) {
            return Err(Error::InvalidArgument(format!(
                "EthTxq::start: wait_on_time() needs NATIVE wait-on-time support; device {} reports {m:?}",
                self.device.info().iface_name()
            )));
        }
        let mut raw = std::ptr::null_mut();
        // SAFETY: the device is open; `raw` is a valid out-pointer.
        check("doca_eth_txq_create", unsafe {
            sys::doca_eth_txq_create(self.device.as_raw(), self.max_burst_size, &mut raw)
        })?;
        let raw = NonNull::new(raw).ok_or(Error::Doca {
            op: "doca_eth_txq_create",
            code: DocaError::UNEXPECTED,
        })?;
        // From here on, dropping `q` destroys the queue (it is IDLE until started).
        let q = EthTxq {
            raw,
            lock: Mutex::new(None),
            max_burst_size: self.max_burst_size,
            torn_down: false,
            parents: ManuallyDrop::new(TxqParents {
                device: self.device,
                gpu: self.gpu,
                pe: self.pe,
                events: self.events,
            }),
        };
        let t = raw.as_ptr();
        // SAFETY (every call below): `t` is a live, IDLE queue.
        check("doca_eth_txq_set_l3_chksum_offload", unsafe {
            sys::doca_eth_txq_set_l3_chksum_offload(t, self.l3_csum as u8)
        })?;
        // SAFETY: as above.
        check("doca_eth_txq_set_l4_chksum_offload", unsafe {
            sys::doca_eth_txq_set_l4_chksum_offload(t, self.l4_csum as u8)
        })?;
        if self.completion_on_gpu {
            // SAFETY: as above.
            check("doca_eth_txq_gpu_set_completion_on_gpu", unsafe {
                sys::doca_eth_txq_gpu_set_completion_on_gpu(t)
            })?;
        }
        if self.cpu_proxy {
            // SAFETY: as above.
            check("doca_eth_txq_gpu_set_uar_on_cpu", unsafe {
                sys::doca_eth_txq_gpu_set_uar_on_cpu(t)
            })?;
        }
        if mode.is_some() {
            // SAFETY: as above.
            check("doca_eth_txq_set_wait_on_time_offload", unsafe {
                sys::doca_eth_txq_set_wait_on_time_offload(t)
            })?;
        }
        if let Some(h) = &q.parents.events {
            let user = sys::doca_data {
                ptr: (&**h as *const EventHandlers).cast_mut().cast::<c_void>(),
            };
            // SAFETY: the handlers are boxed in `q.parents`, dropped only after the queue.
            check(
                "doca_eth_txq_gpu_event_error_send_packet_register",
                unsafe {
                    sys::doca_eth_txq_gpu_event_error_send_packet_register(
                        t,
                        Some(on_error_event),
                        user,
                    )
                },
            )?;
            // SAFETY: as above.
            check(
                "doca_eth_txq_gpu_event_notify_send_packet_register",
                unsafe {
                    sys::doca_eth_txq_gpu_event_notify_send_packet_register(
                        t,
                        Some(on_notify_event),
                        user,
                    )
                },
            )?;
        }
        if let Some(gpu) = &q.parents.gpu {
            // SAFETY: the context belongs to the live queue; the GPU outlives it.
            check("doca_ctx_set_datapath_on_gpu", unsafe {
                sys::doca_ctx_set_datapath_on_gpu(q.ctx().as_raw(), gpu.as_raw())
            })?;
        }
        if let Some(pe) = &q.parents.pe {
            // SAFETY: both are live; the PE outlives the queue (held in `q.parents`).
            check("doca_pe_connect_ctx", unsafe {
                sys::doca_pe_connect_ctx(pe.as_raw(), q.ctx().as_raw())
            })?;
        }
        for f in self.raw_config {
            f(t)?;
        }
        start_ctx(q.ctx(), q.parents.pe.as_ref(), "EthTxq::start")?;
        Ok(q)
    }
}

/// What a queue keeps alive; dropped only after the queue is destroyed.
struct TxqParents {
    device: Device,
    gpu: Option<Gpu>,
    pe: Option<ProgressEngine>,
    events: Option<Box<EventHandlers>>,
}

/// A started (RUNNING) Ethernet send queue with a GPU data path.
///
/// Dropping it stops the queue (waiting for IDLE at most [`DROP_STOP_TIMEOUT`]) and
/// destroys it; [`stop`](Self::stop) does the same and returns the error.
///
/// `Send + Sync`: calls into DOCA are serialized by an internal lock.
pub struct EthTxq {
    raw: NonNull<sys::doca_eth_txq>,
    /// The applied queue id; the lock also serializes calls into DOCA.
    lock: Mutex<Option<u16>>,
    max_burst_size: u32,
    torn_down: bool,
    parents: ManuallyDrop<TxqParents>,
}

// SAFETY: DOCA queue objects may be used from any thread; every call goes through `lock`.
unsafe impl Send for EthTxq {}
// SAFETY: as above.
unsafe impl Sync for EthTxq {}

impl EthTxq {
    /// Starts configuring a send queue on `device`.
    pub fn builder(device: &Device) -> EthTxqBuilder {
        EthTxqBuilder {
            device: device.clone(),
            max_burst_size: 0,
            l3_csum: false,
            l4_csum: false,
            completion_on_gpu: false,
            cpu_proxy: false,
            wait_on_time: false,
            gpu: None,
            pe: None,
            events: None,
            raw_config: Vec::new(),
        }
    }

    /// What `device` supports for sending at a given time
    /// (`doca_eth_txq_cap_get_wait_on_time_offload_supported`).
    pub fn wait_on_time_mode(device: &Device) -> Result<WaitOnTime> {
        let mut mode = sys::doca_eth_wait_on_time_type::DOCA_ETH_WAIT_ON_TIME_TYPE_NONE;
        // SAFETY: the device is open, so its devinfo is live; `mode` is a valid out-pointer.
        check(
            "doca_eth_txq_cap_get_wait_on_time_offload_supported",
            unsafe {
                sys::doca_eth_txq_cap_get_wait_on_time_offload_supported(
                    sys::doca_dev_as_devinfo(device.as_raw()),
                    &mut mode,
                )
            },
        )?;
        Ok(WaitOnTime::from_raw(mode))
    }

    /// Binds the queue to a queue id (`doca_eth_txq_apply_queue_id`). Once per queue: a
    /// second call fails with `ALREADY_EXIST`.
    pub fn apply_queue_id(&self, queue_id: u16) -> Result<()> {
        let mut id = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the queue is live and started; calls are serialized by the lock.
        check("doca_eth_txq_apply_queue_id", unsafe {
            sys::doca_eth_txq_apply_queue_id(self.raw.as_ptr(), queue_id)
        })?;
        *id = Some(queue_id);
        Ok(())
    }

    /// The id applied with [`apply_queue_id`](Self::apply_queue_id), if any.
    pub fn queue_id(&self) -> Option<u16> {
        *self.lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device handle for kernels (`doca_eth_txq_get_gpu_handle`), valid while this
    /// borrow lasts.
    pub fn gpu_handle(&self) -> Result<TxqHandle<'_>> {
        let mut h = std::ptr::null_mut();
        // SAFETY: the queue is live and started; `h` is a valid out-pointer.
        check("doca_eth_txq_get_gpu_handle", unsafe {
            sys::doca_eth_txq_get_gpu_handle(self.raw.as_ptr(), &mut h)
        })?;
        NonNull::new(h).map(TxqHandle::new).ok_or(Error::Doca {
            op: "doca_eth_txq_get_gpu_handle",
            code: DocaError::UNEXPECTED,
        })
    }

    /// The wait-on-time value a kernel passes to `doca_gpu_dev_eth_txq_wait_send` to send
    /// at `timestamp_ns` (CLOCK_REALTIME nanoseconds) (`doca_eth_txq_calculate_timestamp`).
    pub fn calculate_timestamp(&self, timestamp_ns: u64) -> Result<u64> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut v = 0u64;
        // SAFETY: the queue is live and started; `v` is a valid out-pointer.
        check("doca_eth_txq_calculate_timestamp", unsafe {
            sys::doca_eth_txq_calculate_timestamp(self.raw.as_ptr(), timestamp_ns, &mut v)
        })?;
        Ok(v)
    }

    /// One round of the CPU proxy that rings the doorbell for the GPU (queues built with
    /// [`EthTxqBuilder::cpu_proxy`]; call it in a loop on a dedicated thread).
    pub fn cpu_proxy_progress(&self) -> Result<()> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the queue is live and started.
        check("doca_eth_txq_gpu_cpu_proxy_progress", unsafe {
            sys::doca_eth_txq_gpu_cpu_proxy_progress(self.raw.as_ptr())
        })
    }

    /// Events whose details DOCA could not report, or whose closure panicked.
    pub fn event_failures(&self) -> u64 {
        self.parents
            .events
            .as_ref()
            .map_or(0, |h| h.failures.load(Ordering::Relaxed))
    }

    /// The context state (RUNNING unless the backend stopped the queue on an error).
    pub fn state(&self) -> Result<CtxState> {
        self.ctx().state()
    }

    /// Max packets in flight, as configured.
    pub fn max_burst_size(&self) -> u32 {
        self.max_burst_size
    }

    /// The device the queue sends on.
    pub fn device(&self) -> &Device {
        &self.parents.device
    }

    /// Stops and destroys the queue, returning what went wrong (`Drop` does the same but
    /// can only record errors).
    pub fn stop(mut self) -> Result<()> {
        self.teardown()
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_eth_txq {
        self.raw.as_ptr()
    }

    pub(crate) fn ctx(&self) -> Ctx {
        // SAFETY: the queue is live; the context lives as long as the queue, and the Ctx
        // is used only through `&self`.
        unsafe { Ctx::from_raw(sys::doca_eth_txq_as_doca_ctx(self.raw.as_ptr())) }
    }

    /// Stop (bounded), destroy, then release the parents; runs once. On failure the parents
    /// (and the event handlers DOCA may still call) are leaked on purpose.
    fn teardown(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.torn_down, true) {
            return Ok(());
        }
        self.ctx()
            .stop_and_drain(self.parents.pe.as_ref(), DROP_STOP_TIMEOUT)?;
        // SAFETY: the queue is IDLE and destroyed once.
        check("doca_eth_txq_destroy", unsafe {
            sys::doca_eth_txq_destroy(self.raw.as_ptr())
        })?;
        // SAFETY: the queue is gone; the parents are dropped exactly once (guarded above).
        unsafe { ManuallyDrop::drop(&mut self.parents) };
        Ok(())
    }
}

impl Drop for EthTxq {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            doca_common::record_drop_error(e);
        }
    }
}

impl std::fmt::Debug for EthTxq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EthTxq")
            .field("device", &self.parents.device.info().iface_name())
            .field("max_burst_size", &self.max_burst_size)
            .field("queue_id", &self.queue_id())
            .finish_non_exhaustive()
    }
}
