//! `doca_rdma`: RDMA connections whose data path runs on the GPU, over the soft NIC.
//!
//! A context is configured while IDLE (permissions, queue sizes, connection count, GID
//! and GRH, transport, callbacks, `doca_ctx_set_datapath_on_gpu`); `doca_ctx_start` builds
//! its data path at once (RUNNING, no PE needed): one soft-NIC QP per connection index, a
//! receive queue shared by all, and the GPU handle (`datapath`, layout in
//! `include/doca_soft_dev_rdma_ring.h`). Connections ([`conn`]) come out of band
//! (`doca_rdma_export` / `doca_rdma_connect`, the blobs moved by the program) or through
//! the RDMA-CM emulation ([`cm`]: a TCP exchange of the same blobs on the given port,
//! results through the connection callbacks inside `doca_pe_progress`). The kernels then
//! post work requests into the rings; the NIC's proxy thread executes them with UCX.
//!
//! Only the GPU data path exists (DOCA 3.3's CPU tasks are not declared by our header):
//! starting without `doca_ctx_set_datapath_on_gpu` is NOT_SUPPORTED with a log line. The
//! testing hooks can put the data path in host memory instead, so a CPU thread plays the
//! GPU ([`Rdma::set_host_datapath`]).
//!
//! Errors after connection: a QP that fails (peer gone, bad key, range outside a
//! registration) completes its WQEs with error CQEs the kernel sees (`wait_all` /
//! `recv_wait_all` return DOCA_ERROR_IO_FAILED); on the host, a context connected to a PE
//! reports it through the failure callback (logged too) at the next `doca_pe_progress`.

pub(crate) mod addr;
pub(crate) mod cm;
pub(crate) mod config;
pub(crate) mod conn;
pub(crate) mod datapath;

use crate::ctx::on_dev::{DataPath, OnDev};
use crate::ctx::{Ctx, CtxOps, Transition, STATE_RUNNING};
use crate::dev::{Dev, DevInfo};
use crate::error::{DocaError, DocaResult};
use crate::gpu::GpuShared;
use crate::gpuqp::{self, Placement};
use crate::sync::lock;
use crate::types::DocaData;
use config::RdmaCfg;
use conn::{Connection, Phase};
use datapath::{Datapath, Shape};
use doca_soft_nic::rdma::{ConnInfo, QpState};
use std::sync::{Arc, Mutex, MutexGuard};

pub use addr::RdmaAddr;
pub use conn::Connection as RdmaConnection;

/// `doca_rdma_connection_request_cb_t`.
pub type RequestCb = Option<unsafe extern "C" fn(conn: *mut Connection, ctx_user_data: DocaData)>;
/// `doca_rdma_connection_established_cb_t` (also the failure and disconnection callbacks).
pub type ConnEventCb = Option<
    unsafe extern "C" fn(conn: *mut Connection, conn_user_data: DocaData, ctx_user_data: DocaData),
>;

/// The connection callbacks.
#[derive(Clone, Copy, Default)]
pub(crate) struct Callbacks {
    pub request: RequestCb,
    pub established: ConnEventCb,
    pub failure: ConnEventCb,
    pub disconnect: ConnEventCb,
}

/// A started context.
struct Run {
    dp: Datapath,
    /// Made at start and never grown: the C layer holds pointers to the elements.
    conns: Vec<Connection>,
    cm: cm::Cm,
}

/// Something to tell the program through a callback (called without locks held).
pub(crate) enum ConnEvent {
    Request(*mut Connection),
    Established(*mut Connection),
    Failure(*mut Connection),
    Disconnect(*mut Connection),
}

/// Shared state of a context (its operations).
pub(crate) struct RdmaInner {
    me: std::sync::Weak<RdmaInner>,
    info: Arc<DevInfo>,
    cfg: Mutex<RdmaCfg>,
    datapath: Mutex<DataPath>,
    callbacks: Mutex<Callbacks>,
    run: Mutex<Option<Run>>,
}

/// The C `struct doca_rdma`.
pub struct Rdma(OnDev<RdmaInner>);

impl Rdma {
    /// A context on `dev` (the device stays IN_USE until destroy).
    pub(crate) fn new(dev: &Dev) -> Rdma {
        let inner = Arc::new_cyclic(|me| RdmaInner {
            me: me.clone(),
            info: dev.info().clone(),
            cfg: Mutex::new(RdmaCfg::default()),
            datapath: Mutex::new(DataPath::Cpu),
            callbacks: Mutex::new(Callbacks::default()),
            run: Mutex::new(None),
        });
        Rdma(OnDev::new(dev, inner))
    }

    /// Before destroy: BAD_STATE unless IDLE; leaves the PE, releases the device.
    pub(crate) fn close(&self) -> DocaResult<()> {
        self.0.close()
    }

    /// The context as a C handle.
    pub(crate) fn ctx_ptr(&self) -> *mut Ctx {
        self.0.ctx_ptr()
    }

    /// Changes the settings (IDLE only: BAD_STATE after start).
    pub(crate) fn configure<R>(
        &self,
        f: impl FnOnce(&mut RdmaCfg) -> DocaResult<R>,
    ) -> DocaResult<R> {
        self.0.ctx.require_idle()?;
        f(&mut lock(&self.0.inner.cfg))
    }

    /// The settings.
    pub(crate) fn cfg(&self) -> RdmaCfg {
        lock(&self.0.inner.cfg).clone()
    }

    /// `set_connection_state_callbacks` (IDLE only).
    pub(crate) fn set_callbacks(&self, cbs: Callbacks) -> DocaResult<()> {
        self.0.ctx.require_idle()?;
        *lock(&self.0.inner.callbacks) = cbs;
        Ok(())
    }

    /// Testing: puts the data path in host memory (IDLE only), so a CPU thread plays the
    /// GPU.
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub(crate) fn set_host_datapath(&self) -> DocaResult<()> {
        self.0.ctx.require_idle()?;
        *lock(&self.0.inner.datapath) = DataPath::Host;
        Ok(())
    }

    fn running(&self) -> DocaResult<MutexGuard<'_, Option<Run>>> {
        if self.0.ctx.state() != STATE_RUNNING {
            return Err(DocaError::BAD_STATE);
        }
        let g = lock(&self.0.inner.run);
        if g.is_none() {
            return Err(DocaError::BAD_STATE);
        }
        Ok(g)
    }

    /// `doca_rdma_get_gpu_handle`: the handle's device address (RUNNING, GPU data path).
    pub(crate) fn gpu_handle(&self) -> DocaResult<u64> {
        let g = self.running()?;
        Ok(g.as_ref().map(|r| r.dp.handle()).unwrap_or(0))
    }

    /// `doca_rdma_export`: the first free connection and its blob. FULL when every
    /// connection is taken.
    pub(crate) fn export(&self) -> DocaResult<(*const u8, usize, *mut Connection)> {
        let g = self.running()?;
        let run = g.as_ref().ok_or(DocaError::BAD_STATE)?;
        let c = run
            .conns
            .iter()
            .find(|c| c.transition(Phase::Free, Phase::Exported))
            .ok_or_else(|| {
                sdk_err!(
                    "rdma",
                    "export: all {} connections are in use (doca_rdma_set_max_num_connections)",
                    run.conns.len()
                );
                DocaError::FULL
            })?;
        let (p, n) = c.local_blob();
        Ok((p, n, c as *const Connection as *mut Connection))
    }

    /// The connection behind a C pointer, if it is one of this running context's.
    fn conn_index(run: &Run, conn: *const Connection) -> DocaResult<usize> {
        run.conns
            .iter()
            .position(|c| std::ptr::eq(c, conn))
            .ok_or(DocaError::INVALID_VALUE)
    }

    /// `doca_rdma_connect`: connects an exported connection to the peer's blob.
    pub(crate) fn connect(&self, remote: &[u8], conn: *const Connection) -> DocaResult<()> {
        let g = self.running()?;
        let run = g.as_ref().ok_or(DocaError::BAD_STATE)?;
        let i = Self::conn_index(run, conn)?;
        let c = &run.conns[i];
        match c.phase() {
            Phase::Exported => {}
            Phase::Connected => {
                sdk_err!("rdma", "connect: connection {i} is already connected");
                return Err(DocaError::BAD_STATE);
            }
            p => {
                sdk_err!("rdma", "connect: connection {i} is not exported ({p:?})");
                return Err(DocaError::BAD_STATE);
            }
        }
        let info = conn::decode_remote(remote)?;
        connect_qp(&run.dp, i, &info)?;
        c.set_remote(info);
        c.set_phase(Phase::Connected);
        Ok(())
    }

    /// `doca_rdma_start_listen_to_port` (RUNNING).
    pub(crate) fn listen(&self, port: u16) -> DocaResult<()> {
        let mut g = self.running()?;
        let run = g.as_mut().ok_or(DocaError::BAD_STATE)?;
        run.cm.listen(&self.0.inner.info, port)
    }

    /// `doca_rdma_stop_listen_to_port` (RUNNING).
    pub(crate) fn stop_listen(&self, port: u16) -> DocaResult<()> {
        let mut g = self.running()?;
        let run = g.as_mut().ok_or(DocaError::BAD_STATE)?;
        run.cm.stop_listen(port)
    }

    /// `doca_rdma_connect_to_addr` (RUNNING): the result comes through the callbacks.
    pub(crate) fn connect_to_addr(&self, a: &RdmaAddr, user_data: DocaData) -> DocaResult<()> {
        let mut g = self.running()?;
        let run = g.as_mut().ok_or(DocaError::BAD_STATE)?;
        let i = run
            .conns
            .iter()
            .position(|c| c.transition(Phase::Free, Phase::Connecting))
            .ok_or(DocaError::FULL)?;
        run.conns[i].set_user_data(user_data);
        if let Err(e) = run.cm.connect(i, a, run.conns[i].local_info()) {
            run.conns[i].set_phase(Phase::Free);
            return Err(e);
        }
        Ok(())
    }
}

/// Connects QP `i` of the data path to the peer.
fn connect_qp(dp: &Datapath, i: usize, info: &ConnInfo) -> DocaResult<()> {
    let qp = dp.qp(i).ok_or(DocaError::INVALID_VALUE)?;
    qp.qp().connect(&info.gid, info.qpn).map_err(|e| {
        sdk_err!("rdma", "connection {i}: the QP could not connect ({e:?})");
        if e == DocaError::INVALID_VALUE {
            DocaError::CONNECTION_ABORTED
        } else {
            e
        }
    })
}

/// Operations on a connection handle (they find their context through it).
impl Connection {
    /// `doca_rdma_connection_accept` (CM server side, from the request callback or later).
    pub(crate) fn accept(&self, private: &[u8]) -> DocaResult<()> {
        let inner = self.context()?;
        let mut g = lock(&inner.run);
        let run = g.as_mut().ok_or(DocaError::BAD_STATE)?;
        let i = self.id() as usize;
        if self.phase() != Phase::Requested {
            return Err(DocaError::BAD_STATE);
        }
        let remote = self.remote().ok_or(DocaError::BAD_STATE)?;
        if let Err(e) = connect_qp(&run.dp, i, &remote) {
            let _ = run.cm.answer(i, false, &[]);
            self.set_phase(Phase::Failed);
            return Err(e);
        }
        run.cm.answer(i, true, private)?;
        self.set_phase(Phase::Accepted);
        Ok(())
    }

    /// `doca_rdma_connection_reject`.
    pub(crate) fn reject(&self) -> DocaResult<()> {
        let inner = self.context()?;
        let mut g = lock(&inner.run);
        let run = g.as_mut().ok_or(DocaError::BAD_STATE)?;
        if !self.transition(Phase::Requested, Phase::Failed) {
            return Err(DocaError::BAD_STATE);
        }
        run.cm.answer(self.id() as usize, false, &[])
    }

    /// `doca_rdma_connection_disconnect`: the peer learns of it (CM connections) at its
    /// next progress; the connection's QP stays until stop.
    pub(crate) fn disconnect(&self) -> DocaResult<()> {
        let inner = self.context()?;
        let mut g = lock(&inner.run);
        let run = g.as_mut().ok_or(DocaError::BAD_STATE)?;
        match self.phase() {
            Phase::Disconnected => return Ok(()),
            Phase::Free => return Err(DocaError::BAD_STATE),
            _ => {}
        }
        run.cm.close(self.id() as usize);
        self.set_phase(Phase::Disconnected);
        Ok(())
    }
}

impl RdmaInner {
    fn shape(&self) -> DocaResult<Shape> {
        let c = lock(&self.cfg);
        if c.transport != config::TRANSPORT_RC {
            sdk_err!(
                "rdma",
                "the DC transport is not supported on the GPU data path (RC only)"
            );
            return Err(DocaError::NOT_SUPPORTED);
        }
        Ok(Shape {
            connections: c.max_connections as u32,
            sq: c.send_queue_size,
            rq: c.recv_queue_size,
        })
    }

    /// The progress work: CM exchanges, accepted connections, QPs that failed. Returns the
    /// events to report.
    fn collect_events(&self) -> Vec<ConnEvent> {
        let mut out = Vec::new();
        let mut g = lock(&self.run);
        let Some(run) = g.as_mut() else {
            return out;
        };
        run.cm.progress(&run.conns, &run.dp, &mut out);
        for (i, c) in run.conns.iter().enumerate() {
            let ptr = c as *const Connection as *mut Connection;
            if c.transition(Phase::Accepted, Phase::Connected) {
                out.push(ConnEvent::Established(ptr));
            }
            if c.phase() == Phase::Connected {
                if let Some(qp) = run.dp.qp(i) {
                    let (state, syndrome) = qp.qp().status();
                    if state == QpState::Error {
                        sdk_err!(
                            "rdma",
                            "connection {i}: its QP failed (syndrome {syndrome:#x}): peer gone or a bad request"
                        );
                        c.set_phase(Phase::Failed);
                        out.push(ConnEvent::Failure(ptr));
                    }
                }
            }
        }
        out
    }
}

impl CtxOps for RdmaInner {
    fn kind(&self) -> &'static str {
        "rdma"
    }

    fn start(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        let place = match lock(&self.datapath).clone() {
            DataPath::Cpu => {
                sdk_err!(
                    "rdma",
                    "doca_rdma on the CPU data path (tasks) is not supported: call doca_ctx_set_datapath_on_gpu before doca_ctx_start"
                );
                return Err(DocaError::NOT_SUPPORTED);
            }
            DataPath::Gpu(g) => Placement::Gpu(g),
            DataPath::Host => Placement::Host,
        };
        let shape = self.shape()?;
        let nic = gpuqp::nic_for(&self.info)?;
        let dp = Datapath::build(&nic, &place, shape)?;
        let conns = dp
            .qps()
            .iter()
            .enumerate()
            .map(|(i, q)| {
                Connection::new(
                    i as u32,
                    self.me.clone(),
                    ConnInfo {
                        gid: nic.gid(),
                        qpn: q.qpn(),
                    },
                )
            })
            .collect();
        *lock(&self.run) = Some(Run {
            dp,
            conns,
            cm: cm::Cm::default(),
        });
        Ok(Transition::Done)
    }

    fn stop(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        let run = lock(&self.run).take();
        drop(run);
        Ok(Transition::Done)
    }

    fn progress(&self, ctx: &Ctx) -> u32 {
        let events = self.collect_events();
        let n = events.len() as u32;
        let cbs = *lock(&self.callbacks);
        let ud = ctx.user_data();
        for e in events {
            // SAFETY: the callbacks were registered by the program with these signatures;
            // the connection pointers are live (owned by the running context).
            unsafe {
                match e {
                    ConnEvent::Request(c) => {
                        if let Some(f) = cbs.request {
                            f(c, ud);
                        }
                    }
                    ConnEvent::Established(c) => {
                        if let Some(f) = cbs.established {
                            f(c, (*c).user_data(), ud);
                        }
                    }
                    ConnEvent::Failure(c) => {
                        if let Some(f) = cbs.failure {
                            f(c, (*c).user_data(), ud);
                        }
                    }
                    ConnEvent::Disconnect(c) => {
                        if let Some(f) = cbs.disconnect {
                            f(c, (*c).user_data(), ud);
                        }
                    }
                }
            }
        }
        n
    }

    fn set_datapath_on_gpu(&self, gpu: &Arc<GpuShared>) -> DocaResult<()> {
        *lock(&self.datapath) = DataPath::Gpu(gpu.clone());
        Ok(())
    }
}
