//! Ethernet receive queues (`doca_eth_rxq`) whose packets land in memory a CUDA kernel
//! reads (GPU data path), built and started in one go by [`EthRxqBuilder`].

use crate::gpu::{Gpu, GpuBuffer, MemType};
use crate::handles::RxqHandle;
use crate::mmap::{AccessFlags, Mmap};
use doca_common::context::{Ctx, CtxState, DROP_STOP_TIMEOUT};
use doca_common::error::{check, DocaError, Error, Result};
use doca_common::Device;
use doca_common::ProgressEngine;
use doca_sys as sys;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Alignment of packet buffers the builder allocates (the GPU page size the samples use).
pub const GPU_PAGE_SIZE: usize = 65536;

/// Kind of receive queue (`enum doca_eth_rxq_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RxqType {
    /// A ring of fixed-size packet slots that the NIC fills in order and wraps around
    /// (what every GPUNetIO sample uses).
    #[default]
    Cyclic,
    /// Packets in a pool of buffers the library manages.
    ManagedMempool,
    /// Receive tasks with application buffers (CPU data path).
    Regular,
}

impl RxqType {
    /// The raw value.
    pub fn raw(self) -> sys::doca_eth_rxq_type {
        match self {
            RxqType::Cyclic => sys::doca_eth_rxq_type::DOCA_ETH_RXQ_TYPE_CYCLIC,
            RxqType::ManagedMempool => sys::doca_eth_rxq_type::DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL,
            RxqType::Regular => sys::doca_eth_rxq_type::DOCA_ETH_RXQ_TYPE_REGULAR,
        }
    }
}

/// Where the packet ring of a queue lives.
enum PacketBuffer {
    /// A range of a memory map the caller made.
    Mmap { mmap: Mmap, offset: u32, len: u32 },
    /// Allocate the estimated size in GPU memory and map it for the device.
    Gpu(Gpu),
}

/// Configures and starts an [`EthRxq`]. Obtained from [`EthRxq::builder`].
#[must_use = "a builder does nothing until start()"]
pub struct EthRxqBuilder {
    device: Device,
    max_burst_size: u32,
    max_packet_size: u32,
    kind: RxqType,
    buffer: Option<PacketBuffer>,
    gpu: Option<Gpu>,
    timestamps: bool,
    mcst_qp: Option<bool>,
    pe: Option<ProgressEngine>,
    raw_config: Vec<RawConfig<sys::doca_eth_rxq>>,
}

/// A caller-supplied configuration step run on the raw queue before start.
pub(crate) type RawConfig<Q> = Box<dyn FnOnce(*mut Q) -> Result<()>>;

impl EthRxqBuilder {
    /// Most packets one receive call returns (the ring holds this many slots). Required.
    pub fn max_burst_size(mut self, n: u32) -> Self {
        self.max_burst_size = n;
        self
    }

    /// Largest frame accepted, in bytes (the size of one ring slot). Required.
    pub fn max_packet_size(mut self, n: u32) -> Self {
        self.max_packet_size = n;
        self
    }

    /// The packet ring: `len` bytes at `offset` of `mmap` (which must be registered with
    /// this queue's device). Use [`gpu_packet_buffer`](Self::gpu_packet_buffer) to let the
    /// builder allocate it.
    pub fn packet_buffer(mut self, mmap: &Mmap, offset: u32, len: u32) -> Self {
        self.buffer = Some(PacketBuffer::Mmap {
            mmap: mmap.clone(),
            offset,
            len,
        });
        self
    }

    /// Allocates the packet ring in memory of `gpu`: the size DOCA estimates for this
    /// queue (`doca_eth_rxq_estimate_packet_buf_size`), rounded up to [`GPU_PAGE_SIZE`],
    /// mapped for the device (dmabuf when available), as the samples do. Also selects `gpu`
    /// as the data path unless [`datapath_gpu`](Self::datapath_gpu) names one.
    pub fn gpu_packet_buffer(mut self, gpu: &Gpu) -> Self {
        self.buffer = Some(PacketBuffer::Gpu(gpu.clone()));
        self
    }

    /// Runs the data path on `gpu` (`doca_ctx_set_datapath_on_gpu`): kernels receive with
    /// the device API through [`EthRxq::gpu_handle`].
    pub fn datapath_gpu(mut self, gpu: &Gpu) -> Self {
        self.gpu = Some(gpu.clone());
        self
    }

    /// Queue kind (default [`RxqType::Cyclic`]).
    pub fn kind(mut self, kind: RxqType) -> Self {
        self.kind = kind;
        self
    }

    /// Records a receive timestamp per packet (`doca_eth_rxq_set_timestamp`).
    pub fn timestamps(mut self, on: bool) -> Self {
        self.timestamps = on;
        self
    }

    /// Forces the multicast "dump" QP on or off (`doca_eth_rxq_gpu_enable_mcst_qp`). By
    /// default it is enabled for GPUs older than Hopper (compute capability < 9), as the
    /// samples do.
    pub fn multicast_qp(mut self, on: bool) -> Self {
        self.mcst_qp = Some(on);
        self
    }

    /// Connects the queue to `pe` (only needed when the backend starts the queue
    /// asynchronously or for CPU-side events).
    pub fn progress_engine(mut self, pe: &ProgressEngine) -> Self {
        self.pe = Some(pe.clone());
        self
    }

    /// Runs `f` on the raw, not yet started queue, after the builder's own settings: for
    /// `doca_eth_rxq_set_*` calls this crate does not wrap (headroom, flow tag, ...) and
    /// for backend-specific setup. An error from `f` aborts `start`.
    pub fn configure_raw(
        mut self,
        f: impl FnOnce(*mut sys::doca_eth_rxq) -> Result<()> + 'static,
    ) -> Self {
        self.raw_config.push(Box::new(f));
        self
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(format!("EthRxq::start: {m}")));
        if self.max_burst_size == 0 {
            return bad("max_burst_size is required and must be > 0".into());
        }
        if self.max_packet_size == 0 {
            return bad("max_packet_size is required and must be > 0".into());
        }
        match &self.buffer {
            None => {
                return bad("no packet buffer: call packet_buffer() or gpu_packet_buffer()".into())
            }
            Some(PacketBuffer::Mmap { mmap, offset, len }) => {
                if *len == 0 {
                    return bad("packet buffer length is 0".into());
                }
                if !mmap
                    .devices()
                    .iter()
                    .any(|d| d.as_raw() == self.device.as_raw())
                {
                    return bad(format!(
                        "the packet buffer's memory map is not registered with device {}",
                        self.device.info().iface_name()
                    ));
                }
                let (_, mlen) = mmap.range()?;
                if (*offset as usize)
                    .checked_add(*len as usize)
                    .is_none_or(|end| end > mlen)
                {
                    return bad(format!(
                        "packet buffer {offset}+{len} exceeds the memory map ({mlen} bytes)"
                    ));
                }
            }
            Some(PacketBuffer::Gpu(_)) => {}
        }
        Ok(())
    }

    /// Creates, configures and starts the queue; it is RUNNING when this returns.
    pub fn start(self) -> Result<EthRxq> {
        self.validate()?;
        let gpu = self.gpu.clone().or_else(|| match &self.buffer {
            Some(PacketBuffer::Gpu(g)) => Some(g.clone()),
            _ => None,
        });
        let (mmap, offset, len) = match self.buffer {
            Some(PacketBuffer::Mmap { mmap, offset, len }) => (mmap, offset, len),
            Some(PacketBuffer::Gpu(ref g)) => {
                let size = EthRxq::estimate_packet_buffer_size(
                    self.kind,
                    self.max_packet_size,
                    self.max_burst_size,
                )?;
                let size = (size as usize).div_ceil(GPU_PAGE_SIZE) * GPU_PAGE_SIZE;
                let len = u32::try_from(size).map_err(|_| {
                    Error::InvalidArgument(format!(
                        "EthRxq::start: packet buffer of {size} bytes exceeds 4 GiB"
                    ))
                })?;
                let buf = GpuBuffer::<u8>::with_alignment(g, size, GPU_PAGE_SIZE, MemType::Gpu)?;
                let mmap =
                    Mmap::from_gpu_buffer(&buf, &[&self.device], AccessFlags::LOCAL_READ_WRITE)?;
                (mmap, 0, len)
            }
            None => unreachable!("validated above"),
        };

        let mut raw = std::ptr::null_mut();
        // SAFETY: the device is open; `raw` is a valid out-pointer.
        check("doca_eth_rxq_create", unsafe {
            sys::doca_eth_rxq_create(
                self.device.as_raw(),
                self.max_burst_size,
                self.max_packet_size,
                &mut raw,
            )
        })?;
        let raw = NonNull::new(raw).ok_or(Error::Doca {
            op: "doca_eth_rxq_create",
            code: DocaError::UNEXPECTED,
        })?;
        // From here on, dropping `q` destroys the queue (it is IDLE until started).
        let q = EthRxq {
            raw,
            queue_id: Mutex::new(None),
            packet_buffer: (offset, len),
            max_burst_size: self.max_burst_size,
            max_packet_size: self.max_packet_size,
            torn_down: false,
            parents: ManuallyDrop::new(RxqParents {
                device: self.device,
                gpu,
                mmap,
                pe: self.pe,
            }),
        };
        let r = raw.as_ptr();
        // SAFETY (all calls below): `r` is a live, IDLE queue; the memory map outlives it
        // (held in `q.parents`).
        check("doca_eth_rxq_set_type", unsafe {
            sys::doca_eth_rxq_set_type(r, self.kind.raw())
        })?;
        if self.timestamps {
            // SAFETY: as above.
            check("doca_eth_rxq_set_timestamp", unsafe {
                sys::doca_eth_rxq_set_timestamp(r, 1)
            })?;
        }
        // SAFETY: as above.
        check("doca_eth_rxq_set_pkt_buf", unsafe {
            sys::doca_eth_rxq_set_pkt_buf(r, q.parents.mmap.as_raw(), offset, len)
        })?;
        if let Some(gpu) = &q.parents.gpu {
            let mcst = match self.mcst_qp {
                Some(on) => on,
                None => gpu.compute_capability()?.0 < 9,
            };
            if mcst {
                // SAFETY: as above.
                check("doca_eth_rxq_gpu_enable_mcst_qp", unsafe {
                    sys::doca_eth_rxq_gpu_enable_mcst_qp(r)
                })?;
            }
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
            f(r)?;
        }
        start_ctx(q.ctx(), q.parents.pe.as_ref(), "EthRxq::start")?;
        Ok(q)
    }
}

/// Starts `ctx` and, when the start completes asynchronously, progresses `pe` until the
/// context is RUNNING (bounded by [`DROP_STOP_TIMEOUT`]).
pub(crate) fn start_ctx(ctx: Ctx, pe: Option<&ProgressEngine>, what: &'static str) -> Result<()> {
    if ctx.start()? {
        return Ok(());
    }
    let Some(pe) = pe else {
        return Err(Error::InvalidArgument(format!(
            "{what}: the context starts asynchronously; connect a progress engine with progress_engine()"
        )));
    };
    let mut state = Ok(CtxState::Starting);
    let running = pe.progress_until(DROP_STOP_TIMEOUT, || {
        state = ctx.state();
        !matches!(state, Ok(CtxState::Starting))
    });
    match state? {
        CtxState::Running => Ok(()),
        _ if !running => Err(Error::Timeout {
            op: "doca_ctx_start (waiting for RUNNING)",
            ms: DROP_STOP_TIMEOUT.as_millis() as u64,
        }),
        other => Err(Error::InvalidArgument(format!(
            "{what}: context went to {other:?} instead of RUNNING"
        ))),
    }
}

/// What a queue keeps alive: the device, the GPU of the data path, the packet memory and
/// the progress engine. Dropped only after the queue is destroyed.
struct RxqParents {
    device: Device,
    gpu: Option<Gpu>,
    mmap: Mmap,
    pe: Option<ProgressEngine>,
}

/// A started (RUNNING) Ethernet receive queue.
///
/// Dropping it stops the queue (waiting for IDLE at most [`DROP_STOP_TIMEOUT`]) and
/// destroys it; [`stop`](Self::stop) does the same and returns the error. It holds its
/// device, GPU, memory map and progress engine, so those outlive it.
///
/// `Send + Sync`: calls that change the queue are serialized by an internal lock.
pub struct EthRxq {
    raw: NonNull<sys::doca_eth_rxq>,
    /// The id given to `apply_queue_id`; the lock also serializes calls into DOCA.
    queue_id: Mutex<Option<u16>>,
    packet_buffer: (u32, u32),
    max_burst_size: u32,
    max_packet_size: u32,
    torn_down: bool,
    parents: ManuallyDrop<RxqParents>,
}

// SAFETY: DOCA queue objects may be used from any thread; calls that change the queue go
// through `queue_id`'s lock, the others only read.
unsafe impl Send for EthRxq {}
// SAFETY: as above.
unsafe impl Sync for EthRxq {}

impl EthRxq {
    /// Starts configuring a receive queue on `device`.
    pub fn builder(device: &Device) -> EthRxqBuilder {
        EthRxqBuilder {
            device: device.clone(),
            max_burst_size: 0,
            max_packet_size: 0,
            kind: RxqType::Cyclic,
            buffer: None,
            gpu: None,
            timestamps: false,
            mcst_qp: None,
            pe: None,
            raw_config: Vec::new(),
        }
    }

    /// The packet buffer size DOCA wants for a queue of this shape
    /// (`doca_eth_rxq_estimate_packet_buf_size`, no rate limit, no LRO, no head/tail room).
    pub fn estimate_packet_buffer_size(
        kind: RxqType,
        max_packet_size: u32,
        max_burst_size: u32,
    ) -> Result<u32> {
        let mut size = 0u32;
        // SAFETY: `size` is a valid out-pointer; the other arguments are plain values.
        check("doca_eth_rxq_estimate_packet_buf_size", unsafe {
            sys::doca_eth_rxq_estimate_packet_buf_size(
                kind.raw(),
                0,
                0,
                max_packet_size,
                max_burst_size,
                0,
                0,
                0,
                &mut size,
            )
        })?;
        Ok(size)
    }

    /// Binds the queue to a queue id, the value DOCA Flow RSS forwards name
    /// (`doca_eth_rxq_apply_queue_id`). Once per queue: a second call fails with
    /// `ALREADY_EXIST`, an id another queue of the device holds with `IN_USE`.
    pub fn apply_queue_id(&self, queue_id: u16) -> Result<()> {
        let mut id = self.queue_id.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the queue is live and started; calls are serialized by the lock.
        check("doca_eth_rxq_apply_queue_id", unsafe {
            sys::doca_eth_rxq_apply_queue_id(self.raw.as_ptr(), queue_id)
        })?;
        *id = Some(queue_id);
        Ok(())
    }

    /// The id applied with [`apply_queue_id`](Self::apply_queue_id), if any.
    pub fn queue_id(&self) -> Option<u16> {
        *self.queue_id.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device handle for kernels (`doca_eth_rxq_get_gpu_handle`), valid while this
    /// borrow lasts. `NOT_SUPPORTED` when the queue has no GPU data path.
    pub fn gpu_handle(&self) -> Result<RxqHandle<'_>> {
        let mut h = std::ptr::null_mut();
        // SAFETY: the queue is live and started; `h` is a valid out-pointer.
        check("doca_eth_rxq_get_gpu_handle", unsafe {
            sys::doca_eth_rxq_get_gpu_handle(self.raw.as_ptr(), &mut h)
        })?;
        NonNull::new(h).map(RxqHandle::new).ok_or(Error::Doca {
            op: "doca_eth_rxq_get_gpu_handle",
            code: DocaError::UNEXPECTED,
        })
    }

    /// The context state (RUNNING unless the backend stopped the queue on an error).
    pub fn state(&self) -> Result<CtxState> {
        self.ctx().state()
    }

    /// The memory map holding the packet ring, and the ring's (offset, length) in it.
    pub fn packet_buffer(&self) -> (&Mmap, u32, u32) {
        (
            &self.parents.mmap,
            self.packet_buffer.0,
            self.packet_buffer.1,
        )
    }

    /// Max packets per receive call, as configured.
    pub fn max_burst_size(&self) -> u32 {
        self.max_burst_size
    }

    /// Max frame size, as configured.
    pub fn max_packet_size(&self) -> u32 {
        self.max_packet_size
    }

    /// The device the queue receives on.
    pub fn device(&self) -> &Device {
        &self.parents.device
    }

    /// The GPU of the data path, if any.
    pub fn gpu(&self) -> Option<&Gpu> {
        self.parents.gpu.as_ref()
    }

    /// Stops and destroys the queue, returning what went wrong (`Drop` does the same but
    /// can only record errors).
    pub fn stop(mut self) -> Result<()> {
        self.teardown()
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_eth_rxq {
        self.raw.as_ptr()
    }

    pub(crate) fn ctx(&self) -> Ctx {
        // SAFETY: the queue is live; the context lives as long as the queue, and the Ctx
        // is used only through `&self`.
        unsafe { Ctx::from_raw(sys::doca_eth_rxq_as_doca_ctx(self.raw.as_ptr())) }
    }

    /// Stop (bounded), destroy, then release the parents. Runs once. If the queue cannot be
    /// stopped or destroyed, its memory and parents are leaked on purpose: the backend may
    /// still write into them.
    fn teardown(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.torn_down, true) {
            return Ok(());
        }
        self.ctx()
            .stop_and_drain(self.parents.pe.as_ref(), DROP_STOP_TIMEOUT)?;
        // SAFETY: the queue is IDLE and destroyed once.
        check("doca_eth_rxq_destroy", unsafe {
            sys::doca_eth_rxq_destroy(self.raw.as_ptr())
        })?;
        // SAFETY: the queue is gone; the parents are dropped exactly once (guarded above).
        unsafe { ManuallyDrop::drop(&mut self.parents) };
        Ok(())
    }
}

impl Drop for EthRxq {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            doca_common::record_drop_error(e);
        }
    }
}

impl std::fmt::Debug for EthRxq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EthRxq")
            .field("device", &self.parents.device.info().iface_name())
            .field("max_burst_size", &self.max_burst_size)
            .field("max_packet_size", &self.max_packet_size)
            .field("queue_id", &self.queue_id())
            .finish_non_exhaustive()
    }
}
