//! The engine's handles, as the C layer holds them: [`Nic`] (one per process and DOCA
//! device), [`Cq`], [`Rq`] and [`Qp`]. Creation and destruction are commands the proxy
//! thread executes (the caller waits for the answer); the datapath is the rings themselves.
//!
//! Ownership: a `Qp` keeps its CQ, RQ and NIC alive, an `Rq` its CQ and NIC, a `Cq` its NIC;
//! dropping the last handle of an object destroys it (a QP first completes every WQE still
//! in its ring with a flush error). `Cq::in_use` / `Rq::in_use` tell whether another object
//! still holds one (the C layer answers `DOCA_ERROR_IN_USE` then).

use super::cq_ring::CqRing;
use super::engine;
use super::gid::{Gid, MemExport};
use super::ring::{RqRing, SqDoorbell, SqRing};
use super::shared::{Cmd, QpStatusCell, Shared, ENGINES};
pub use super::shared::{NicEvent, QpState, Stats};
use crate::error::{DocaError, DocaResult};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a caller waits for the proxy thread to answer a command.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

struct Core {
    shared: Arc<Shared>,
    gid: [u8; 16],
    addr: SocketAddrV4,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Core {
    fn call<T>(&self, make: impl FnOnce(mpsc::SyncSender<T>) -> Cmd) -> DocaResult<T> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.shared
            .cmds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(make(tx));
        self.shared.has_cmds.store(true, Ordering::Release);
        self.shared.wake();
        rx.recv_timeout(COMMAND_TIMEOUT).map_err(|_| {
            sdk_err!("nic", "the NIC proxy thread did not answer");
            DocaError::TIME_OUT
        })
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.wake();
        if let Some(t) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = t.join();
        }
    }
}

/// One soft NIC: a proxy thread with its UCX worker and listener.
#[derive(Clone)]
pub struct Nic {
    core: Arc<Core>,
}

/// A NIC reference that does not keep it running (registries of NICs hold these).
#[derive(Clone)]
pub struct WeakNic {
    core: std::sync::Weak<Core>,
}

impl WeakNic {
    /// The NIC, while something still holds it.
    pub fn upgrade(&self) -> Option<Nic> {
        self.core.upgrade().map(|core| Nic { core })
    }

    /// Whether the NIC still runs.
    pub fn is_alive(&self) -> bool {
        self.core.strong_count() > 0
    }
}

impl Nic {
    /// Starts a NIC whose listener binds `bind` (port chosen by the system).
    pub fn start(bind: Ipv4Addr) -> DocaResult<Nic> {
        // SAFETY: plain eventfd creation.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(DocaError::OPERATING_SYSTEM);
        }
        let shared = Arc::new(Shared {
            cmds: Mutex::new(Vec::new()),
            has_cmds: AtomicBool::new(false),
            wake_fd: fd,
            stop: AtomicBool::new(false),
            events: Mutex::new(Vec::new()),
            stats: Stats::default(),
        });
        {
            let mut engines = ENGINES.lock().unwrap_or_else(|p| p.into_inner());
            engines.retain(|e| e.strong_count() > 0);
            engines.push(Arc::downgrade(&shared));
        }
        let (tx, rx) = mpsc::sync_channel(1);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("doca-soft-nic".into())
            .spawn(move || engine::run(s, bind, tx))
            .map_err(|_| DocaError::OPERATING_SYSTEM)?;
        let (gid, port) = match rx.recv_timeout(COMMAND_TIMEOUT) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => return Err(DocaError::TIME_OUT),
        };
        Ok(Nic {
            core: Arc::new(Core {
                shared,
                gid,
                addr: SocketAddrV4::new(bind, port),
                thread: Mutex::new(Some(thread)),
            }),
        })
    }

    /// A reference that does not keep the NIC running.
    pub fn downgrade(&self) -> WeakNic {
        WeakNic {
            core: Arc::downgrade(&self.core),
        }
    }

    /// The GID peers connect to (see `gid.rs` for the format).
    pub fn gid(&self) -> [u8; 16] {
        self.core.gid
    }

    /// Where the listener is.
    pub fn listen_addr(&self) -> SocketAddrV4 {
        self.core.addr
    }

    /// Wakes the proxy thread (it also wakes by itself; this shortens a sleep).
    pub fn wake(&self) {
        self.core.shared.wake();
    }

    /// Errors since the last call (peers lost, QPs in error).
    ///
    /// (The engine's own tests; the C layer never needs it.)
    #[cfg(test)]
    pub(crate) fn take_events(&self) -> Vec<NicEvent> {
        std::mem::take(
            &mut *self
                .core
                .shared
                .events
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// The counters.
    ///
    /// (The engine's own tests; the C layer never needs it.)
    #[cfg(test)]
    pub(crate) fn stats(&self) -> &Stats {
        &self.core.shared.stats
    }

    /// A completion queue over `num` (a power of two, at most 2^24) 64-byte CQEs at
    /// `base`, which the caller initialised (`op_own` 0xF1 everywhere).
    ///
    /// # Safety
    /// `base..base + 64 * num` is writable, 64-byte aligned, and stays so until the `Cq`
    /// (every clone, and every QP/RQ using it) is dropped.
    pub unsafe fn create_cq(&self, base: *mut u8, num: u32) -> DocaResult<Cq> {
        if base.is_null()
            || !(base as usize).is_multiple_of(64)
            || !num.is_power_of_two()
            || num > 1 << 24
        {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: forwarded from the caller.
        let ring = unsafe { CqRing::new(base, num) };
        let cqn = self.core.call(|reply| Cmd::CreateCq { ring, reply })?;
        Ok(Cq {
            inner: Arc::new(CqInner {
                core: self.core.clone(),
                cqn,
            }),
        })
    }

    /// A receive queue over `num` (a power of two, at most 2^15) 16-byte receive WQEs at
    /// `base`, its producer in the doorbell record `dbrec` (BE32(prod & 0xFFFF)); receive
    /// CQEs go to `cq`. `cqe_inline`: messages of at most 32 bytes are delivered inside the
    /// CQE instead of the buffer. Several QPs may share one RQ (DOCA RDMA's receive queue).
    ///
    /// # Safety
    /// The ring and the record stay readable until the `Rq` and every QP using it are
    /// dropped.
    pub unsafe fn create_rq(
        &self,
        base: *const u8,
        num: u32,
        dbrec: *const u32,
        cq: &Cq,
        cqe_inline: bool,
    ) -> DocaResult<Rq> {
        if base.is_null()
            || dbrec.is_null()
            || !(dbrec as usize).is_multiple_of(4)
            || !num.is_power_of_two()
            || num > 1 << 15
            || !Arc::ptr_eq(&cq.inner.core, &self.core)
        {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: forwarded from the caller.
        let ring = unsafe { RqRing::new(base, num, dbrec) };
        let cqn = cq.cqn();
        let id = self.core.call(|reply| Cmd::CreateRq {
            ring,
            cqn,
            cqe_inline,
            reply,
        })??;
        Ok(Rq {
            inner: Arc::new(RqInner {
                core: self.core.clone(),
                id,
                _cq: cq.clone(),
            }),
        })
    }

    /// A queue pair: a send queue of `num` (a power of two, at most 2^15) 64-byte WQE
    /// slots at `base`, producer published through `doorbell`, send CQEs to `send_cq`,
    /// receives from `rq` (none: incoming sends are refused). It is created in the reset
    /// state; [`Qp::connect`] brings it to ready-to-send.
    ///
    /// # Safety
    /// The ring and the doorbell stay readable until the `Qp` is dropped.
    pub unsafe fn create_qp(
        &self,
        base: *const u8,
        num: u32,
        doorbell: SqDoorbell,
        send_cq: &Cq,
        rq: Option<&Rq>,
    ) -> DocaResult<Qp> {
        let aligned = match doorbell {
            SqDoorbell::ProxySlot(p) | SqDoorbell::Register(p) => {
                !p.is_null() && (p as usize).is_multiple_of(8)
            }
            SqDoorbell::Record(p) => !p.is_null() && (p as usize).is_multiple_of(4),
        };
        let same = |c: &Arc<Core>| Arc::ptr_eq(c, &self.core);
        if base.is_null()
            || !aligned
            || !num.is_power_of_two()
            || num > 1 << 15
            || !same(&send_cq.inner.core)
            || rq.is_some_and(|r| !same(&r.inner.core))
        {
            return Err(DocaError::INVALID_VALUE);
        }
        // SAFETY: forwarded from the caller.
        let sq = unsafe { SqRing::new(base, num, doorbell) };
        let status = Arc::new(QpStatusCell::default());
        let cqn = send_cq.cqn();
        let rq_id = rq.map(|r| r.inner.id);
        let st = status.clone();
        let qpn = self.core.call(|reply| Cmd::CreateQp {
            sq,
            cqn,
            rq: rq_id,
            status: st,
            reply,
        })??;
        Ok(Qp {
            core: self.core.clone(),
            qpn,
            status,
            _cq: send_cq.clone(),
            _rq: rq.cloned(),
        })
    }

    /// The memory blob of `reg` as this NIC exports it (`doca_mmap_export_rdma`): where to
    /// reach the NIC, the key, range and rights, and the packed UCX remote key.
    pub fn export_memory(&self, reg: &super::mkey::Registration) -> MemExport {
        let r = reg.region();
        MemExport {
            gid: self.core.gid,
            key: r.key,
            access: r.access.0,
            addr: r.addr,
            len: r.len,
            packed: r.packed.clone(),
        }
    }

    /// Pre-seeds the remote-key cache with a peer's memory blob (`doca_mmap_create_from_export`),
    /// so the first WQE using that key needs no key request.
    pub fn import_remote_key(&self, export: &MemExport) -> DocaResult<()> {
        let e = export.clone();
        self.core
            .call(|reply| Cmd::ImportKey { export: e, reply })?
    }
}

/// A completion queue.
#[derive(Clone)]
pub struct Cq {
    inner: Arc<CqInner>,
}

struct CqInner {
    core: Arc<Core>,
    cqn: u32,
}

impl Cq {
    /// The CQ number (what WAIT WQEs name).
    pub fn cqn(&self) -> u32 {
        self.inner.cqn
    }

    /// Whether a QP or RQ (or another clone) still holds it (tests).
    #[cfg(any(test, feature = "testing"))]
    pub fn in_use(&self) -> bool {
        Arc::strong_count(&self.inner) > 1
    }
}

impl Drop for CqInner {
    fn drop(&mut self) {
        let cqn = self.cqn;
        let _ = self.core.call(|reply| Cmd::DestroyCq { cqn, reply });
    }
}

/// A receive queue.
#[derive(Clone)]
pub struct Rq {
    inner: Arc<RqInner>,
}

struct RqInner {
    core: Arc<Core>,
    id: u32,
    _cq: Cq,
}

impl Rq {
    /// Whether a QP (or another clone) still holds it (tests).
    #[cfg(any(test, feature = "testing"))]
    pub fn in_use(&self) -> bool {
        Arc::strong_count(&self.inner) > 1
    }
}

impl Drop for RqInner {
    fn drop(&mut self) {
        let id = self.id;
        let _ = self.core.call(|reply| Cmd::DestroyRq { id, reply });
    }
}

/// A queue pair.
pub struct Qp {
    core: Arc<Core>,
    qpn: u32,
    status: Arc<QpStatusCell>,
    _cq: Cq,
    _rq: Option<Rq>,
}

impl Qp {
    /// The QP number (24 bits).
    pub fn qpn(&self) -> u32 {
        self.qpn
    }

    /// Connects to QP `remote_qpn` of the NIC with GID `gid` (RTR + RTS). Returns once the
    /// proxy took the request; the connection completes in the background and WQEs posted
    /// meanwhile wait for it. Bad GID: `INVALID_VALUE`; already connected: `BAD_STATE`.
    pub fn connect(&self, gid: &[u8; 16], remote_qpn: u32) -> DocaResult<()> {
        let peer = Gid::decode(gid).ok_or(DocaError::INVALID_VALUE)?;
        if remote_qpn == 0 || remote_qpn > 0xff_ffff {
            return Err(DocaError::INVALID_VALUE);
        }
        let (qpn, gid) = (self.qpn, *gid);
        self.core.call(|reply| Cmd::ConnectQp {
            qpn,
            gid,
            peer,
            remote_qpn,
            reply,
        })?
    }

    /// Puts the QP in error (a verbs modify to ERR): every WQE in its ring and every later
    /// one completes with a flush error.
    pub fn set_error(&self) -> DocaResult<()> {
        let qpn = self.qpn;
        self.core.call(|reply| Cmd::ErrorQp { qpn, reply })?
    }

    /// The current state and the syndrome of the first error (0 if none).
    pub fn status(&self) -> (QpState, u8) {
        let s = match self.status.state.load(Ordering::Acquire) {
            0 => QpState::Reset,
            1 => QpState::Connecting,
            2 => QpState::Ready,
            _ => QpState::Error,
        };
        (s, self.status.syndrome.load(Ordering::Acquire))
    }
}

impl Drop for Qp {
    fn drop(&mut self) {
        let qpn = self.qpn;
        let _ = self.core.call(|reply| Cmd::DestroyQp { qpn, reply });
    }
}
