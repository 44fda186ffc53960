//! DOCA Flow: steering received frames to queues. [`Flow`] is the process-wide library
//! (init/destroy), [`FlowPort`] a started port on a device, [`Pipe`] a table of match →
//! forward entries, [`Entry`] one entry (with its counter).
//!
//! ```no_run
//! use doca_gpunetio::flow::{Flow, FlowConfig, FlowPort, Pipe, RssFlags};
//! # fn main() -> doca_gpunetio::Result<()> {
//! let nic = doca_gpunetio::Device::open("17:00.0")?;
//! let flow = Flow::init(FlowConfig::default())?;
//! let port = FlowPort::start(&flow, &nic, 0)?;
//! let udp = Pipe::basic(&port, "udp")
//!     .match_udp_ipv4()
//!     .rss_to(&[0], RssFlags::IPV4 | RssFlags::UDP)
//!     .miss_drop()
//!     .counter()
//!     .build()?;
//! let udp_entry = udp.add_entry()?;
//! let root = Pipe::control_root(&port)?;
//! root.forward_ipv4_udp_to(&udp, 0)?;
//! port.entries_process()?;
//! let (packets, bytes) = udp_entry.query()?;
//! # let _ = (packets, bytes); Ok(()) }
//! ```

mod flags;
mod matching;
mod pipe;
mod pipe_handle;

pub use flags::{RssFlags, TcpFlags};
pub use matching::{Forward, Match};
pub use pipe::{BasicPipeBuilder, Entry};
pub use pipe_handle::Pipe;

use doca_common::error::{check, DocaError, Error, Result};
use doca_common::Device;
use doca_sys as sys;
use std::ffi::CString;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Whether a [`Flow`] exists in this process (DOCA Flow is a process-global library).
static FLOW_ACTIVE: AtomicBool = AtomicBool::new(false);

/// Library configuration for [`Flow::init`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowConfig {
    /// Number of pipe queues (`doca_flow_cfg_set_pipe_queues`); this crate uses queue 0.
    pub pipe_queues: u16,
    /// Mode string (`doca_flow_cfg_set_mode_args`), e.g. `"vnf"` or `"vnf,hws"`.
    pub mode_args: String,
    /// Number of counters to reserve (`doca_flow_cfg_set_nr_counters`).
    pub nr_counters: u32,
}

impl Default for FlowConfig {
    /// One pipe queue, `"vnf"`, 4096 counters.
    fn default() -> Self {
        FlowConfig {
            pipe_queues: 1,
            mode_args: "vnf".into(),
            nr_counters: 4096,
        }
    }
}

struct FlowInner {
    /// DOCA Flow calls on pipe queue 0 must not run concurrently; every pipe and entry
    /// operation takes this lock.
    lock: Mutex<()>,
}

impl Drop for FlowInner {
    fn drop(&mut self) {
        // SAFETY: initialized by Flow::init; every port (which holds an Arc of this) is
        // stopped already.
        unsafe { sys::doca_flow_destroy() };
        FLOW_ACTIVE.store(false, Ordering::SeqCst);
    }
}

/// The initialized DOCA Flow library. One per process at a time: a second
/// [`Flow::init`] while one exists is refused. `doca_flow_destroy` runs when the last clone
/// and the last port are gone. Cheap to clone; `Send + Sync` (operations are serialized).
#[derive(Clone)]
pub struct Flow {
    inner: Arc<FlowInner>,
}

/// A flow config being built; destroyed on drop.
struct CfgGuard(NonNull<sys::doca_flow_cfg>);
impl Drop for CfgGuard {
    fn drop(&mut self) {
        // SAFETY: created by doca_flow_cfg_create, destroyed once.
        unsafe { sys::doca_flow_cfg_destroy(self.0.as_ptr()) };
    }
}

impl Flow {
    /// Initializes DOCA Flow (`doca_flow_init`).
    pub fn init(cfg: FlowConfig) -> Result<Flow> {
        let mode = CString::new(cfg.mode_args.as_str()).map_err(|_| {
            Error::InvalidArgument("Flow::init: mode_args contains a NUL byte".into())
        })?;
        if cfg.pipe_queues == 0 {
            return Err(Error::InvalidArgument(
                "Flow::init: pipe_queues must be > 0".into(),
            ));
        }
        if FLOW_ACTIVE
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return Err(Error::InvalidArgument(
                "Flow::init: DOCA Flow is already initialized in this process (drop the existing Flow and its ports first)"
                    .into(),
            ));
        }
        let r = Self::init_raw(&cfg, &mode);
        if r.is_err() {
            FLOW_ACTIVE.store(false, Ordering::SeqCst);
        }
        r
    }

    fn init_raw(cfg: &FlowConfig, mode: &CString) -> Result<Flow> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("doca_flow_cfg_create", unsafe {
            sys::doca_flow_cfg_create(&mut raw)
        })?;
        let c = CfgGuard(NonNull::new(raw).ok_or(Error::Doca {
            op: "doca_flow_cfg_create",
            code: DocaError::UNEXPECTED,
        })?);
        // SAFETY (all three): `c` is a live config; `mode` outlives the call.
        check("doca_flow_cfg_set_pipe_queues", unsafe {
            sys::doca_flow_cfg_set_pipe_queues(c.0.as_ptr(), cfg.pipe_queues)
        })?;
        // SAFETY: as above.
        check("doca_flow_cfg_set_mode_args", unsafe {
            sys::doca_flow_cfg_set_mode_args(c.0.as_ptr(), mode.as_ptr())
        })?;
        // SAFETY: as above.
        check("doca_flow_cfg_set_nr_counters", unsafe {
            sys::doca_flow_cfg_set_nr_counters(c.0.as_ptr(), cfg.nr_counters)
        })?;
        // SAFETY: as above.
        check("doca_flow_init", unsafe {
            sys::doca_flow_init(c.0.as_ptr())
        })?;
        Ok(Flow {
            inner: Arc::new(FlowInner {
                lock: Mutex::new(()),
            }),
        })
    }

    /// Whether a `Flow` exists in this process now.
    pub fn is_initialized() -> bool {
        FLOW_ACTIVE.load(Ordering::SeqCst)
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, ()> {
        self.inner.lock.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl std::fmt::Debug for Flow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flow").finish_non_exhaustive()
    }
}

struct PortInner {
    raw: NonNull<sys::doca_flow_port>,
    port_id: u16,
    device: Device,
    flow: Flow,
}

// SAFETY: the port is used only under the Flow lock (or in Drop, which is exclusive).
unsafe impl Send for PortInner {}
// SAFETY: as above.
unsafe impl Sync for PortInner {}

impl Drop for PortInner {
    fn drop(&mut self) {
        let _g = self.flow.lock();
        // SAFETY: started by doca_flow_port_start; every pipe (which holds an Arc of this)
        // is destroyed already; stopped once.
        let rc = unsafe { sys::doca_flow_port_stop(self.raw.as_ptr()) };
        if let Err(e) = check("doca_flow_port_stop", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A started DOCA Flow port on a device (`doca_flow_port_start`); stopped when the last
/// clone and the last pipe are gone. Holds the [`Flow`] and the [`Device`]. Cheap to clone;
/// `Send + Sync`.
#[derive(Clone)]
pub struct FlowPort {
    inner: Arc<PortInner>,
}

/// A port config being built; destroyed on drop.
struct PortCfgGuard(NonNull<sys::doca_flow_port_cfg>);
impl Drop for PortCfgGuard {
    fn drop(&mut self) {
        // SAFETY: created by doca_flow_port_cfg_create, destroyed once.
        unsafe { sys::doca_flow_port_cfg_destroy(self.0.as_ptr()) };
    }
}

impl FlowPort {
    /// Starts port `port_id` on `device`.
    pub fn start(flow: &Flow, device: &Device, port_id: u16) -> Result<FlowPort> {
        let _g = flow.lock();
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("doca_flow_port_cfg_create", unsafe {
            sys::doca_flow_port_cfg_create(&mut raw)
        })?;
        let c = PortCfgGuard(NonNull::new(raw).ok_or(Error::Doca {
            op: "doca_flow_port_cfg_create",
            code: DocaError::UNEXPECTED,
        })?);
        // SAFETY: `c` is a live config.
        check("doca_flow_port_cfg_set_port_id", unsafe {
            sys::doca_flow_port_cfg_set_port_id(c.0.as_ptr(), port_id)
        })?;
        // SAFETY: `c` is a live config; the device outlives the port (held below).
        check("doca_flow_port_cfg_set_dev", unsafe {
            sys::doca_flow_port_cfg_set_dev(c.0.as_ptr(), device.as_raw())
        })?;
        let mut port = std::ptr::null_mut();
        // SAFETY: `c` is a complete config; `port` is a valid out-pointer.
        check("doca_flow_port_start", unsafe {
            sys::doca_flow_port_start(c.0.as_ptr(), &mut port)
        })?;
        let raw = NonNull::new(port).ok_or(Error::Doca {
            op: "doca_flow_port_start",
            code: DocaError::UNEXPECTED,
        })?;
        Ok(FlowPort {
            inner: Arc::new(PortInner {
                raw,
                port_id,
                device: device.clone(),
                flow: flow.clone(),
            }),
        })
    }

    /// Processes the entries added with pipe queue 0 (`doca_flow_entries_process`), so
    /// they take effect.
    pub fn entries_process(&self) -> Result<()> {
        self.entries_process_on(0)
    }

    /// Processes the entries added or removed through pipe queue `pipe_queue` (no timeout,
    /// no limit on their number), so they take effect.
    pub fn entries_process_on(&self, pipe_queue: u16) -> Result<()> {
        let _g = self.flow().lock();
        // SAFETY: the port is live; calls are serialized by the Flow lock.
        check("doca_flow_entries_process", unsafe {
            sys::doca_flow_entries_process(self.as_raw(), pipe_queue, 0, 0)
        })
    }

    /// The port id given to [`start`](Self::start).
    pub fn port_id(&self) -> u16 {
        self.inner.port_id
    }

    /// The device of this port.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The library this port belongs to.
    pub fn flow(&self) -> &Flow {
        &self.inner.flow
    }

    /// The raw handle. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_flow_port {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for FlowPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowPort")
            .field("port_id", &self.inner.port_id)
            .field("device", &self.inner.device.info().iface_name())
            .finish()
    }
}
