//! The RDMA context: [`Rdma`], its builder, the RDMA-CM callbacks that record connection
//! events, its connections, and the device handle kernels take.

use crate::gpu::Gpu;
use crate::mmap::AccessFlags;
use cudarc::driver::DeviceRepr;
use doca_common::context::{Ctx, DROP_STOP_TIMEOUT};
use doca_common::error::{check, Error, Result};
use doca_common::{Device, ProgressEngine};
use doca_sys as sys;
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::connect_args::{AddrType, ConnectionDetails};

/// What the RDMA-CM callbacks record (the context's user data points here).
#[derive(Default)]
struct CmEvents {
    established: Vec<u32>,
    failed: Vec<u32>,
    disconnected: Vec<u32>,
}

struct RdmaInner {
    raw: NonNull<sys::doca_rdma>,
    pe: Option<ProgressEngine>,
    cm: Option<Box<Mutex<CmEvents>>>,
    _device: Device,
    _gpu: Option<Gpu>,
}

// SAFETY: the context's calls are serialized by DOCA's rules that this type keeps (set-up
// before start by the builder; export/connect take `&self` and DOCA serializes them).
unsafe impl Send for RdmaInner {}
// SAFETY: as above.
unsafe impl Sync for RdmaInner {}

impl RdmaInner {
    fn ctx(&self) -> Ctx {
        // SAFETY: the context lives as long as self.
        unsafe { Ctx::from_raw(sys::doca_rdma_as_ctx(self.raw.as_ptr())) }
    }
}

impl Drop for RdmaInner {
    fn drop(&mut self) {
        if let Err(e) = self
            .ctx()
            .stop_and_drain(self.pe.as_ref(), DROP_STOP_TIMEOUT)
        {
            doca_common::record_drop_error(e);
        }
        // SAFETY: created by doca_rdma_create, stopped above, destroyed once.
        let rc = unsafe { sys::doca_rdma_destroy(self.raw.as_ptr()) };
        if let Err(e) = check("doca_rdma_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A started RDMA context (`doca_rdma`). Cheap to clone; `Send + Sync`. Stopped and
/// destroyed with the last clone (and the last [`Connection`] of it).
#[derive(Clone)]
pub struct Rdma {
    inner: Arc<RdmaInner>,
}

type RawHook = Box<dyn FnOnce(*mut sys::doca_rdma) -> Result<()>>;

/// Settings of an [`Rdma`], applied before start.
pub struct RdmaBuilder {
    device: Device,
    permissions: AccessFlags,
    send_queue_size: u32,
    recv_queue_size: u32,
    max_connections: u16,
    gid_index: Option<u32>,
    grh: bool,
    gpu: Option<Gpu>,
    pe: Option<ProgressEngine>,
    cm: bool,
    hooks: Vec<RawHook>,
}

impl Rdma {
    /// Settings for a context on `device`: local read/write access, queues of 64, one
    /// connection, GRH on.
    pub fn builder(device: &Device) -> RdmaBuilder {
        RdmaBuilder {
            device: device.clone(),
            permissions: AccessFlags::LOCAL_READ_WRITE,
            send_queue_size: 64,
            recv_queue_size: 64,
            max_connections: 1,
            gid_index: None,
            grh: true,
            gpu: None,
            pe: None,
            cm: false,
            hooks: Vec::new(),
        }
    }

    /// Starts a connection out of band: our details (to send to the peer) and the
    /// connection they are for.
    pub fn export(&self) -> Result<(ConnectionDetails, Connection)> {
        let (mut p, mut n, mut c) = (std::ptr::null(), 0usize, std::ptr::null_mut());
        // SAFETY: a started context; valid out-pointers.
        check("doca_rdma_export", unsafe {
            sys::doca_rdma_export(self.as_raw(), &mut p, &mut n, &mut c)
        })?;
        if p.is_null() || c.is_null() {
            return Err(Error::InvalidArgument(
                "doca_rdma_export returned NULL".into(),
            ));
        }
        // SAFETY: DOCA returned `n` readable bytes owned by the context.
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }.to_vec();
        let conn = self.connection(c)?;
        Ok((ConnectionDetails(bytes), conn))
    }

    fn connection(&self, raw: *mut sys::doca_rdma_connection) -> Result<Connection> {
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::InvalidArgument("NULL RDMA connection".into()))?;
        let mut id = 0u32;
        // SAFETY: a connection of this started context.
        check("doca_rdma_connection_get_id", unsafe {
            sys::doca_rdma_connection_get_id(raw.as_ptr(), &mut id)
        })?;
        Ok(Connection {
            raw,
            id,
            _rdma: self.clone(),
        })
    }

    /// Finishes `conn` with the peer's details (bytes it got from its [`Rdma::export`]).
    pub fn connect(&self, conn: &Connection, remote: &[u8]) -> Result<()> {
        if !Arc::ptr_eq(&conn._rdma.inner, &self.inner) {
            return Err(Error::InvalidArgument(
                "the connection belongs to another RDMA context".into(),
            ));
        }
        // SAFETY: a started context, its connection, readable bytes.
        check("doca_rdma_connect", unsafe {
            sys::doca_rdma_connect(
                self.as_raw(),
                remote.as_ptr().cast(),
                remote.len(),
                conn.raw.as_ptr(),
            )
        })
    }

    /// The device handle for kernels (`struct doca_gpu_dev_rdma *`), borrowed from the
    /// started context.
    pub fn gpu_handle(&self) -> Result<RdmaHandle<'_>> {
        let mut h = std::ptr::null_mut();
        // SAFETY: a started context; valid out-pointer.
        check("doca_rdma_get_gpu_handle", unsafe {
            sys::doca_rdma_get_gpu_handle(self.as_raw(), &mut h)
        })?;
        let raw =
            NonNull::new(h).ok_or_else(|| Error::InvalidArgument("NULL RDMA GPU handle".into()))?;
        Ok(RdmaHandle {
            raw,
            _owner: PhantomData,
        })
    }

    /// RDMA-CM (built with [`RdmaBuilder::rdma_cm`]): accepts connections on `port` of the
    /// device's address; requests are accepted as they come, in [`Rdma::wait_established`].
    pub fn listen(&self, port: u16) -> Result<()> {
        // SAFETY: a started context.
        check("doca_rdma_start_listen_to_port", unsafe {
            sys::doca_rdma_start_listen_to_port(self.as_raw(), port)
        })
    }

    /// RDMA-CM: stops listening on `port`.
    pub fn stop_listen(&self, port: u16) -> Result<()> {
        // SAFETY: a started context.
        check("doca_rdma_stop_listen_to_port", unsafe {
            sys::doca_rdma_stop_listen_to_port(self.as_raw(), port)
        })
    }

    /// RDMA-CM: connects to a listening peer at `addr` (IPv4, IPv6 or GID text, see
    /// [`AddrType`]) and `port`; the result comes in [`Rdma::wait_established`].
    pub fn connect_to_addr(&self, kind: AddrType, addr: &str, port: u16) -> Result<()> {
        let text = CString::new(addr)
            .map_err(|_| Error::InvalidArgument("address with a NUL byte".into()))?;
        let mut a = std::ptr::null_mut();
        // SAFETY: valid C string and out-pointer.
        check("doca_rdma_addr_create", unsafe {
            sys::doca_rdma_addr_create(kind.raw(), text.as_ptr(), port, &mut a)
        })?;
        // SAFETY: a started context and a live address.
        let r = check("doca_rdma_connect_to_addr", unsafe {
            sys::doca_rdma_connect_to_addr(self.as_raw(), a, sys::doca_data { u64_: 0 })
        });
        // SAFETY: created above; the context copied what it needs.
        unsafe { sys::doca_rdma_addr_destroy(a) };
        r
    }

    /// RDMA-CM: progresses until one more connection is established (its id), a
    /// connection attempt fails, or `timeout` passes.
    pub fn wait_established(&self, timeout: Duration) -> Result<u32> {
        let (pe, cm) = match (&self.inner.pe, &self.inner.cm) {
            (Some(pe), Some(cm)) => (pe, cm),
            _ => {
                return Err(Error::InvalidArgument(
                    "RDMA-CM needs RdmaBuilder::rdma_cm (a progress engine)".into(),
                ))
            }
        };
        let mut got = None;
        let mut failed = None;
        let done = pe.progress_until(timeout, || {
            let mut ev = cm.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(f) = ev.failed.pop() {
                failed = Some(f);
                return true;
            }
            if !ev.established.is_empty() {
                got = Some(ev.established.remove(0));
                return true;
            }
            false
        });
        match (got, failed, done) {
            (Some(id), _, _) => Ok(id),
            (_, Some(id), _) => Err(Error::InvalidArgument(format!(
                "RDMA-CM connection {id} failed (refused or unreachable)"
            ))),
            _ => Err(Error::Timeout {
                op: "RDMA-CM connection establishment",
                ms: timeout.as_millis() as u64,
            }),
        }
    }

    /// Connections whose peer disconnected or failed since the last call (RDMA-CM, or any
    /// connection when a progress engine is attached): progresses once first.
    pub fn take_failures(&self) -> Vec<u32> {
        let (Some(pe), Some(cm)) = (&self.inner.pe, &self.inner.cm) else {
            return Vec::new();
        };
        pe.progress();
        let mut ev = cm.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<u32> = ev.failed.drain(..).collect();
        out.append(&mut ev.disconnected);
        out
    }

    /// The raw context.
    pub fn as_raw(&self) -> *mut sys::doca_rdma {
        self.inner.raw.as_ptr()
    }
}

impl std::fmt::Debug for Rdma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rdma").field("raw", &self.as_raw()).finish()
    }
}

unsafe extern "C" fn cm_request(conn: *mut sys::doca_rdma_connection, _ctx: sys::doca_data) {
    // SAFETY: DOCA hands a live connection to its request callback.
    let rc = unsafe { sys::doca_rdma_connection_accept(conn, std::ptr::null_mut(), 0) };
    let _ = check("doca_rdma_connection_accept", rc).map_err(doca_common::record_drop_error);
}

fn cm_events<'a>(ctx: sys::doca_data) -> Option<&'a Mutex<CmEvents>> {
    // SAFETY: the context's user data is the CmEvents box the Rdma owns for the
    // context's whole life (set by the builder before start).
    unsafe { (ctx.ptr as *const Mutex<CmEvents>).as_ref() }
}

fn conn_id(conn: *mut sys::doca_rdma_connection) -> u32 {
    let mut id = u32::MAX;
    // SAFETY: DOCA hands a live connection to its callbacks.
    unsafe { sys::doca_rdma_connection_get_id(conn, &mut id) };
    id
}

unsafe extern "C" fn cm_established(
    conn: *mut sys::doca_rdma_connection,
    _u: sys::doca_data,
    ctx: sys::doca_data,
) {
    if let Some(m) = cm_events(ctx) {
        let id = conn_id(conn);
        m.lock()
            .unwrap_or_else(|p| p.into_inner())
            .established
            .push(id);
    }
}

unsafe extern "C" fn cm_failure(
    conn: *mut sys::doca_rdma_connection,
    _u: sys::doca_data,
    ctx: sys::doca_data,
) {
    if let Some(m) = cm_events(ctx) {
        let id = conn_id(conn);
        m.lock().unwrap_or_else(|p| p.into_inner()).failed.push(id);
    }
}

unsafe extern "C" fn cm_disconnect(
    conn: *mut sys::doca_rdma_connection,
    _u: sys::doca_data,
    ctx: sys::doca_data,
) {
    if let Some(m) = cm_events(ctx) {
        let id = conn_id(conn);
        m.lock()
            .unwrap_or_else(|p| p.into_inner())
            .disconnected
            .push(id);
    }
    // SAFETY: a live connection (the callback's argument).
    unsafe { sys::doca_rdma_connection_disconnect(conn) };
}

impl RdmaBuilder {
    /// Access the peer gets to memory through this context (`doca_rdma_set_permissions`).
    pub fn permissions(mut self, p: AccessFlags) -> Self {
        self.permissions = p;
        self
    }

    /// Send queue size (WQEs per connection; rounded up to a power of two).
    pub fn send_queue_size(mut self, n: u32) -> Self {
        self.send_queue_size = n;
        self
    }

    /// Receive queue size (shared by every connection; rounded up to a power of two).
    pub fn recv_queue_size(mut self, n: u32) -> Self {
        self.recv_queue_size = n;
        self
    }

    /// Most connections (connection indices 0 to n - 1).
    pub fn max_connections(mut self, n: u16) -> Self {
        self.max_connections = n;
        self
    }

    /// GID index of the port.
    pub fn gid_index(mut self, i: u32) -> Self {
        self.gid_index = Some(i);
        self
    }

    /// Global routing header (on by default, as Ethernet needs it).
    pub fn grh(mut self, on: bool) -> Self {
        self.grh = on;
        self
    }

    /// Puts the data path on `gpu` (`doca_ctx_set_datapath_on_gpu`).
    pub fn gpu_datapath(mut self, gpu: &Gpu) -> Self {
        self.gpu = Some(gpu.clone());
        self
    }

    /// Connects the context to `pe` and records RDMA-CM events (requests are accepted):
    /// needed for [`Rdma::listen`] / [`Rdma::connect_to_addr`], and to learn of failed
    /// connections ([`Rdma::take_failures`]).
    pub fn rdma_cm(mut self, pe: &ProgressEngine) -> Self {
        self.pe = Some(pe.clone());
        self.cm = true;
        self
    }

    /// Runs `f` on the raw, not yet started context after the settings above (for calls
    /// this crate does not wrap).
    ///
    /// # Safety
    /// `f` must leave the context IDLE and valid.
    pub unsafe fn configure_raw(
        mut self,
        f: impl FnOnce(*mut sys::doca_rdma) -> Result<()> + 'static,
    ) -> Self {
        self.hooks.push(Box::new(f));
        self
    }

    /// Creates, configures and starts the context.
    pub fn start(self) -> Result<Rdma> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a live device; valid out-pointer.
        check("doca_rdma_create", unsafe {
            sys::doca_rdma_create(self.device.as_raw(), &mut raw)
        })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::InvalidArgument("doca_rdma_create returned NULL".into()))?;
        let cm = self.cm.then(|| Box::new(Mutex::new(CmEvents::default())));
        // From here the context is destroyed by RdmaInner's Drop on any error.
        let inner = RdmaInner {
            raw,
            pe: self.pe.clone(),
            cm,
            _device: self.device.clone(),
            _gpu: self.gpu.clone(),
        };
        let r = raw.as_ptr();
        // SAFETY: the context is live and IDLE for every setter below.
        unsafe {
            check(
                "doca_rdma_set_permissions",
                sys::doca_rdma_set_permissions(r, self.permissions.bits()),
            )?;
            if let Some(i) = self.gid_index {
                check(
                    "doca_rdma_set_gid_index",
                    sys::doca_rdma_set_gid_index(r, i),
                )?;
            }
            check(
                "doca_rdma_set_send_queue_size",
                sys::doca_rdma_set_send_queue_size(r, self.send_queue_size),
            )?;
            check(
                "doca_rdma_set_recv_queue_size",
                sys::doca_rdma_set_recv_queue_size(r, self.recv_queue_size),
            )?;
            check(
                "doca_rdma_set_grh_enabled",
                sys::doca_rdma_set_grh_enabled(r, self.grh as u8),
            )?;
            check(
                "doca_rdma_set_max_num_connections",
                sys::doca_rdma_set_max_num_connections(r, self.max_connections),
            )?;
            let ctx = inner.ctx();
            if let Some(g) = &self.gpu {
                check(
                    "doca_ctx_set_datapath_on_gpu",
                    sys::doca_ctx_set_datapath_on_gpu(ctx.as_raw(), g.as_raw()),
                )?;
            }
            if let (Some(pe), Some(cm)) = (&self.pe, &inner.cm) {
                ctx.connect(pe)?;
                check(
                    "doca_rdma_set_connection_state_callbacks",
                    sys::doca_rdma_set_connection_state_callbacks(
                        r,
                        Some(cm_request),
                        Some(cm_established),
                        Some(cm_failure),
                        Some(cm_disconnect),
                    ),
                )?;
                let ud = sys::doca_data {
                    ptr: &**cm as *const Mutex<CmEvents> as *mut c_void,
                };
                check(
                    "doca_ctx_set_user_data",
                    sys::doca_ctx_set_user_data(ctx.as_raw(), ud),
                )?;
            }
        }
        for h in self.hooks {
            h(r)?;
        }
        if !inner.ctx().start()? {
            let pe = self.pe.as_ref().ok_or_else(|| {
                Error::InvalidArgument(
                    "the RDMA context starts asynchronously: give it a progress engine".into(),
                )
            })?;
            let ctx = inner.ctx();
            pe.progress_until(DROP_STOP_TIMEOUT, || {
                ctx.state()
                    .is_ok_and(|s| s == doca_common::CtxState::Running)
            });
        }
        Ok(Rdma {
            inner: Arc::new(inner),
        })
    }
}

/// One connection of a started [`Rdma`] (`struct doca_rdma_connection`); keeps its context
/// alive.
pub struct Connection {
    pub(super) raw: NonNull<sys::doca_rdma_connection>,
    pub(super) id: u32,
    pub(super) _rdma: Rdma,
}

// SAFETY: a plain handle used through its context's serialized calls.
unsafe impl Send for Connection {}
// SAFETY: as above.
unsafe impl Sync for Connection {}

impl Connection {
    /// The connection index device code uses (`connection_index`).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The raw connection.
    pub fn as_raw(&self) -> *mut sys::doca_rdma_connection {
        self.raw.as_ptr()
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("id", &self.id).finish()
    }
}

/// The device handle of a started [`Rdma`] (`struct doca_gpu_dev_rdma *`), the first
/// argument of the `doca_gpu_dev_rdma_*` device functions. `Copy`; borrows the context.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct RdmaHandle<'a> {
    raw: NonNull<sys::doca_gpu_dev_rdma>,
    _owner: PhantomData<&'a Rdma>,
}

impl RdmaHandle<'_> {
    /// The raw device pointer.
    pub fn as_raw(&self) -> *mut sys::doca_gpu_dev_rdma {
        self.raw.as_ptr()
    }
}

// SAFETY: a plain address the host never dereferences; the borrow ties it to the context.
unsafe impl Send for RdmaHandle<'_> {}
// SAFETY: as above.
unsafe impl Sync for RdmaHandle<'_> {}
// SAFETY: repr(transparent) over one pointer: the kernel parameter's exact bytes.
unsafe impl DeviceRepr for RdmaHandle<'_> {}

impl std::fmt::Debug for RdmaHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RdmaHandle({:p})", self.raw.as_ptr())
    }
}
