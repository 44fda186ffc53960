//! [`Node`]: the connections of one UROM party (host link, daemon, worker), carrying byte
//! streams: over TCP sockets of our own, and, once both ends have exchanged their UCX worker
//! addresses, over a UCX endpoint made from them.
//!
//! Why two layers:
//!
//! * Every connection starts as a plain TCP connection to a listener written here
//!   (`tcp`), never UCX's client/server listener: what the network can reach is code that
//!   bounds it. A listener admits connections under [`Limits`] (total, per peer, pending
//!   ones, a time limit for a pending one to speak) and accepts without spinning when
//!   descriptors run out. The daemon speaks only this.
//! * A host and a worker then move their traffic to a UCX endpoint created from each other's
//!   worker address ([`Node::upgrade_with`]): UCX picks the best transport both offer, shared
//!   memory between processes of one machine and TCP (or RDMA) between machines, where an
//!   endpoint made through a listener runs over TCP only. The TCP connection stays open,
//!   silent: its end tells the other side at once that the peer went away (even killed),
//!   and any byte on it after the upgrade is a protocol error.
//! * Between processes of one machine ([`Node::same_host`]: the connection's two ends
//!   have the same address, or both are loopback) the endpoint is made without UCX's peer
//!   failure detection ([`PeerFailure::NotDetected`]), so UCX may put it on shared memory
//!   (`sysv`, with the defaults); between machines it is watched
//!   ([`PeerFailure::Detected`]), which UCX puts only on transports with keepalive (TCP,
//!   RDMA). The TCP connection tells a dead peer in both cases. Both ends must make their
//!   endpoint alike (UCX silently drops the traffic of a pair whose error handling
//!   differs), so the host offers an unwatched endpoint in its `Attach`, the worker
//!   decides and says so in `Attached` ([`Node::may_go_unwatched`]), and
//!   [`UCX_WATCH_ENV`] (`always`) keeps every endpoint watched.
//!
//! [`Node::poll_with`] progresses UCX, reads what arrived and reports [`EventRef`]s: bytes
//! per connection in order (framing belongs to the caller, see `urom::wire`), new
//! connections, and connections that failed or were closed by the admission policy (the
//! owner then calls [`Node::close`]). TCP sockets of upgraded connections are looked at
//! every [`TCP_CHECK`] while the node is busy (the clock itself only every 16th poll),
//! and always after a sleep.
//!
//! A node is not thread-safe on its own; owners keep it behind a mutex (the UCX worker is
//! created SERIALIZED, so handing the node between threads is allowed).

pub(crate) mod tcp;

pub use tcp::Limits;

use crate::error::{DocaError, DocaResult};
use std::collections::{HashMap, VecDeque};
use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddrV4, TcpListener};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};
use tcp::TcpConn;
use ucx_sys::{CloseMode, Context, Endpoint, Features, PendingSend, Sent, ThreadMode, Worker};

pub use ucx_sys::PeerFailure;
#[cfg(any(test, feature = "testing"))]
pub use ucx_sys::Transport;

/// A connection handle inside one node.
pub type ConnId = u64;

/// Something that happened on a node.
#[derive(Debug)]
pub enum Event {
    /// A peer connected to our listener.
    Accepted(ConnId),
    /// Bytes arrived on a connection (in order; frames may be split or merged).
    Data(ConnId, Vec<u8>),
    /// The connection failed, the peer went away, or the admission policy closed it.
    Closed(ConnId),
}

/// [`Event`] without owning the bytes: what [`Node::poll_with`] reports (the data is UCX's
/// or the node's receive buffer, valid for the call only).
#[derive(Debug)]
pub enum EventRef<'a> {
    /// A peer connected to our listener.
    Accepted(ConnId),
    /// Bytes arrived on a connection.
    Data(ConnId, &'a [u8]),
    /// The connection failed, the peer went away, or the admission policy closed it.
    Closed(ConnId),
}

/// Most send buffers a node keeps for reuse (each as large as the largest frame sent).
const SPARE_BUFS: usize = 32;
/// Bytes read from one socket per read call.
const READ_CHUNK: usize = 64 * 1024;
/// How often, while busy, the TCP sockets are looked at when every connection's data goes
/// over UCX (then they only carry the peer's end).
pub const TCP_CHECK: Duration = Duration::from_micros(500);
/// [`Node::poll_with`] calls between two looks at the clock for [`TCP_CHECK`] while every
/// connection is on UCX: a clock read costs more than the rest of an empty poll (50 to
/// 150 ns on a loaded virtual machine), and a spinning owner polls every few hundred
/// nanoseconds. A sleep ([`Node::sleep_fds`]) makes the next poll look at once.
const TCP_CHECK_POLLS: u32 = 16;
/// How long accepting pauses after the process ran out of descriptors.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
/// How long a connection closed with [`Node::close_flushed`] keeps writing its output.
const CLOSE_FLUSH: Duration = Duration::from_secs(1);

/// Environment variable: whether host-worker endpoints between processes of one machine
/// go without UCX's peer failure detection (`auto`, the default: they do, so UCX may put
/// them on shared memory) or are always watched (`always`: TCP or RDMA even on one
/// machine, e.g. for a host and a worker in different IPC namespaces that share a network
/// namespace, where shared memory cannot work). Read by hosts and workers; a worker
/// inherits the daemon's, and a host may pass its own with `doca_urom_worker_set_env`. The
/// two ends agree whatever each has set: the host offers, the worker decides (see
/// [`Node::may_go_unwatched`]).
pub const UCX_WATCH_ENV: &str = "DOCA_SOFT_UROM_UCX_WATCH";

/// Whether [`UCX_WATCH_ENV`] asks for watched endpoints always (read once per process; a
/// bad value is reported and `auto` used).
fn watch_always() -> bool {
    static ALWAYS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALWAYS.get_or_init(|| match std::env::var(UCX_WATCH_ENV) {
        Err(_) => false,
        Ok(v) => match v.trim() {
            "" | "auto" => false,
            "always" => true,
            other => {
                sdk_warn!(
                    "urom",
                    "{UCX_WATCH_ENV}={other:?}: not `auto` or `always`; using `auto`"
                );
                false
            }
        },
    })
}

struct Conn {
    tcp: TcpConn,
    /// The UCX endpoint after [`Node::upgrade_with`].
    ep: Option<Endpoint>,
    /// Accepted by our listener and still counted against its limits.
    counted: bool,
    admitted: bool,
    since: Instant,
    /// Closed was reported.
    failed: bool,
    /// Closing after its output is written (nobody owns it any more).
    closing: Option<Instant>,
}

struct Ucx {
    // Field order is drop order: sends go before the worker.
    sends: Vec<PendingSend<Vec<u8>>>,
    worker: Worker,
    address: Vec<u8>,
}

struct Listen {
    sock: TcpListener,
    limits: Limits,
    paused_until: Option<Instant>,
}

/// Live connections a listener accepted from one peer: (all, pending).
type PeerCount = (usize, usize);

/// The connections of one party.
pub struct Node {
    // Field order is drop order: endpoints go before UCX's worker.
    conns: HashMap<ConnId, Conn>,
    ucx: Option<Ucx>,
    listener: Option<Listen>,
    // Accepted connections in arrival order (admitted or gone ones are skipped lazily).
    pending: VecDeque<ConnId>,
    counts: HashMap<IpAddr, PeerCount>,
    live: usize,
    live_pending: usize,
    // Buffers of completed sends, reused by `send_with` (steady sends allocate nothing).
    spare: Vec<Vec<u8>>,
    scratch: Vec<u8>,
    pfds: Vec<libc::pollfd>,
    pfd_ids: Vec<ConnId>,
    ready: Vec<(ConnId, i16)>,
    tcp_due: Instant,
    // Polls left before the clock is read for `tcp_due` (0: read it at the next poll).
    tcp_polls: u32,
    next_id: ConnId,
}

// SAFETY: the UCX worker is created ThreadMode::Serialized, so it may be used from any
// thread as long as calls do not overlap; the node owns the worker and everything made on
// it (endpoints, sends) and touches them only through `&mut self` (the `&self` methods only
// read).
unsafe impl Send for Node {}

/// Logs a failed UCX call and maps it to the DOCA code the caller reports.
fn fail(e: ucx_sys::Error, code: DocaError) -> DocaError {
    sdk_err!("ucx", "{e}");
    code
}

fn pfd(fd: i32, events: i16) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

impl Node {
    /// A node with TCP only (the daemon, a host's link to the daemon, tests).
    pub fn new() -> Node {
        Node {
            conns: HashMap::new(),
            ucx: None,
            listener: None,
            pending: VecDeque::new(),
            counts: HashMap::new(),
            live: 0,
            live_pending: 0,
            spare: Vec::new(),
            scratch: vec![0; READ_CHUNK],
            pfds: Vec::new(),
            pfd_ids: Vec::new(),
            ready: Vec::new(),
            tcp_due: Instant::now(),
            tcp_polls: 0,
            next_id: 1,
        }
    }

    /// Adds a UCX worker, for connections to be [upgraded](Node::upgrade_with). Unless
    /// `UCX_TLS` is set, UCX may use TCP and shared memory (`tcp,sm`). Fails (logged,
    /// naming both versions and the library file) when the UCX this process runs with is
    /// older than the one built against.
    pub fn enable_ucx(&mut self) -> DocaResult<()> {
        if self.ucx.is_some() {
            return Ok(());
        }
        if let Err(e) = ucx_sys::check_version() {
            sdk_err!("ucx", "{e}");
            return Err(DocaError::DRIVER);
        }
        let ctx = Context::builder()
            .features(Features::STREAM | Features::WAKEUP)
            // UCX_HOME is ours, not UCX's: keep UCX from warning about it.
            .config("WARN_UNUSED_ENV_VARS", "n")
            .config_default("TLS", "tcp,sm")
            .build()
            .map_err(|e| fail(e, DocaError::DRIVER))?;
        let worker =
            Worker::new(&ctx, ThreadMode::Serialized).map_err(|e| fail(e, DocaError::DRIVER))?;
        let address = worker.address().map_err(|e| fail(e, DocaError::DRIVER))?;
        self.ucx = Some(Ucx {
            sends: Vec::new(),
            worker,
            address,
        });
        Ok(())
    }

    /// This node's UCX worker address (after [`Node::enable_ucx`]).
    pub fn ucx_address(&self) -> Option<&[u8]> {
        self.ucx.as_ref().map(|u| u.address.as_slice())
    }

    /// Listens on `addr` (port 0 picks one) under `limits`; returns the bound port.
    pub fn listen(&mut self, addr: SocketAddrV4, limits: Limits) -> DocaResult<u16> {
        if self.listener.is_some() {
            return Err(DocaError::BAD_STATE);
        }
        let sock = TcpListener::bind(addr).map_err(|e| {
            sdk_err!("urom", "listen on {addr}: {e}");
            DocaError::IO_FAILED
        })?;
        sock.set_nonblocking(true).map_err(|e| {
            sdk_err!("urom", "listen on {addr}: {e}");
            DocaError::IO_FAILED
        })?;
        let port = sock.local_addr().map_err(|_| DocaError::IO_FAILED)?.port();
        self.listener = Some(Listen {
            sock,
            limits,
            paused_until: None,
        });
        Ok(port)
    }

    fn add(&mut self, tcp: TcpConn, counted: bool) -> ConnId {
        let id = self.next_id;
        self.next_id += 1;
        if counted {
            let c = self.counts.entry(tcp.peer).or_default();
            c.0 += 1;
            c.1 += 1;
            self.live += 1;
            self.live_pending += 1;
            self.pending.push_back(id);
        }
        self.conns.insert(
            id,
            Conn {
                tcp,
                ep: None,
                counted,
                admitted: !counted,
                since: Instant::now(),
                failed: false,
                closing: None,
            },
        );
        id
    }

    /// Stops counting `id` against the listener's limits (it failed or is gone).
    fn uncount(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        if !std::mem::replace(&mut c.counted, false) {
            return;
        }
        self.live -= 1;
        let pending = !c.admitted;
        if pending {
            self.live_pending -= 1;
        }
        if let Some(n) = self.counts.get_mut(&c.tcp.peer) {
            n.0 -= 1;
            if pending {
                n.1 -= 1;
            }
            if n.0 == 0 {
                self.counts.remove(&c.tcp.peer);
            }
        }
    }

    /// Connects to a listener at `addr`. The connection completes asynchronously: sends
    /// may be posted at once (they queue until it is up).
    pub fn connect(&mut self, addr: SocketAddrV4) -> DocaResult<ConnId> {
        let tcp = TcpConn::connect(addr).map_err(|e| {
            sdk_warn!("urom", "connect to {addr}: {e}");
            DocaError::CONNECTION_ABORTED
        })?;
        Ok(self.add(tcp, false))
    }

    /// The peer spoke the protocol: `conn` leaves the pending connections (no time limit,
    /// no eviction).
    pub fn admit(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if std::mem::replace(&mut c.admitted, true) || !c.counted {
            return;
        }
        self.live_pending -= 1;
        if let Some(n) = self.counts.get_mut(&c.tcp.peer) {
            n.1 -= 1;
        }
    }

    /// Whether `conn` was admitted.
    pub fn is_admitted(&self, conn: ConnId) -> bool {
        self.conns.get(&conn).is_some_and(|c| c.admitted)
    }

    /// The peer's address.
    pub fn peer(&self, conn: ConnId) -> Option<IpAddr> {
        self.conns.get(&conn).map(|c| c.tcp.peer)
    }

    /// Whether `conn` joins two processes of one machine: its two ends have the same IP
    /// address (a connection to one of the machine's own addresses comes from that
    /// address), or both are loopback addresses. Both ends of a connection see the same
    /// pair of addresses, so both come to the same answer; a connection through address
    /// translation or between network namespaces counts as between machines.
    pub fn same_host(&self, conn: ConnId) -> bool {
        let Some(c) = self.conns.get(&conn) else {
            return false;
        };
        let peer = c.tcp.peer;
        c.tcp
            .local_ip()
            .is_some_and(|local| local == peer || local.is_loopback() && peer.is_loopback())
    }

    /// Whether an endpoint for `conn` may go without UCX's peer failure detection
    /// ([`PeerFailure::NotDetected`], which UCX may put on shared memory): the connection
    /// is between processes of one machine ([`Node::same_host`]) and [`UCX_WATCH_ENV`]
    /// does not ask for watching. A host offers it in its `Attach`; the worker upgrades
    /// unwatched only when the host offered it and this says yes for the worker too, and
    /// tells the host (`Attached`), so both endpoints are made alike: UCX drops the
    /// traffic of a pair whose error handling differs ("asymmetric endpoint
    /// configuration"), which would look like a peer that never answers.
    pub fn may_go_unwatched(&self, conn: ConnId) -> bool {
        !watch_always() && self.same_host(conn)
    }

    /// Moves `conn`'s traffic to a UCX endpoint made from the peer's worker address (UCX
    /// must be enabled), watched by UCX ([`PeerFailure::Detected`]): see
    /// [`Node::upgrade_with`]. (Tests and tools speaking the protocol by hand.)
    #[cfg(any(test, feature = "testing"))]
    pub fn upgrade(&mut self, conn: ConnId, peer_address: &[u8]) -> DocaResult<()> {
        self.upgrade_with(conn, peer_address, PeerFailure::Detected)
    }

    /// Moves `conn`'s traffic to a UCX endpoint made from the peer's worker address (UCX
    /// must be enabled). Bytes queued on TCP before still go out first; from now on sends
    /// go over UCX and nothing may arrive on TCP. Both ends must pass the same `failure`
    /// (see [`Node::may_go_unwatched`]); [`PeerFailure::NotDetected`] lets UCX use shared
    /// memory, and the TCP connection, which stays open, still tells at once that the peer
    /// went away.
    pub fn upgrade_with(
        &mut self,
        conn: ConnId,
        peer_address: &[u8],
        failure: PeerFailure,
    ) -> DocaResult<()> {
        let u = self.ucx.as_ref().ok_or(DocaError::BAD_STATE)?;
        let c = self.conns.get_mut(&conn).ok_or(DocaError::NOT_CONNECTED)?;
        if c.failed || c.ep.is_some() {
            return Err(DocaError::BAD_STATE);
        }
        let ep =
            Endpoint::connect_to_address_with(&u.worker, peer_address, failure).map_err(|e| {
                sdk_warn!("ucx", "{e}");
                DocaError::CONNECTION_ABORTED
            })?;
        c.ep = Some(ep);
        Ok(())
    }

    /// Whether `conn` carries its data over UCX.
    #[cfg(any(test, feature = "testing"))]
    pub fn is_upgraded(&self, conn: ConnId) -> bool {
        self.conns.get(&conn).is_some_and(|c| c.ep.is_some())
    }

    /// The transports UCX put `conn`'s endpoint on (`None`: not upgraded, or UCX could not
    /// tell).
    #[cfg(any(test, feature = "testing"))]
    pub fn transports(&self, conn: ConnId) -> Option<Vec<Transport>> {
        let ep = self.conns.get(&conn)?.ep.as_ref()?;
        ep.transports().ok()
    }

    /// Queues `bytes` on `conn`.
    pub fn send(&mut self, conn: ConnId, bytes: Vec<u8>) -> DocaResult<()> {
        self.post(conn, bytes)
    }

    /// Queues the bytes `fill` writes on `conn`, in a buffer reused from completed sends
    /// (no allocation once the node has sent frames of this size before).
    pub fn send_with(&mut self, conn: ConnId, fill: impl FnOnce(&mut Vec<u8>)) -> DocaResult<()> {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        fill(&mut buf);
        self.post(conn, buf)
    }

    /// Queues `bytes` on `conn`'s TCP socket even after an upgrade: the worker's `Attached`,
    /// which tells the host to move to UCX, goes this way.
    pub fn send_tcp(&mut self, conn: ConnId, bytes: &[u8]) -> DocaResult<()> {
        let c = self
            .conns
            .get_mut(&conn)
            .filter(|c| !c.failed && c.closing.is_none())
            .ok_or(DocaError::NOT_CONNECTED)?;
        c.tcp.send(bytes).map_err(|_| DocaError::CONNECTION_RESET)
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < SPARE_BUFS && buf.capacity() > 0 {
            self.spare.push(buf);
        }
    }

    fn post(&mut self, conn: ConnId, bytes: Vec<u8>) -> DocaResult<()> {
        let Some(c) = self
            .conns
            .get_mut(&conn)
            .filter(|c| !c.failed && c.closing.is_none())
        else {
            self.recycle(bytes);
            return Err(DocaError::NOT_CONNECTED);
        };
        let Some(ep) = &c.ep else {
            let r = c.tcp.send(&bytes);
            self.recycle(bytes);
            return r.map_err(|e| {
                sdk_dbg!("urom", "send on connection {conn}: {e}");
                DocaError::CONNECTION_RESET
            });
        };
        match ep.stream_send(bytes) {
            Sent::Done(b) => {
                self.recycle(b);
                Ok(())
            }
            Sent::Pending(p) => {
                if let Some(u) = &mut self.ucx {
                    u.sends.push(p);
                }
                Ok(())
            }
            Sent::Failed(_, b) => {
                self.recycle(b);
                Err(DocaError::CONNECTION_RESET)
            }
        }
    }

    /// Progresses and returns what happened since the last call.
    pub fn poll(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        self.poll_with(|e| {
            events.push(match e {
                EventRef::Accepted(c) => Event::Accepted(c),
                EventRef::Data(c, b) => Event::Data(c, b.to_vec()),
                EventRef::Closed(c) => Event::Closed(c),
            })
        });
        events
    }

    /// Progresses and hands what happened since the last call to `f`, received bytes
    /// straight from the receive buffers. Allocates nothing unless a connection is
    /// accepted. Returns whether anything happened (an event, or a send completing).
    pub fn poll_with(&mut self, mut f: impl FnMut(EventRef<'_>)) -> bool {
        let mut busy = false;
        if let Some(u) = &mut self.ucx {
            busy |= u.worker.progress_all();
            for (&id, c) in self.conns.iter_mut() {
                let Some(ep) = &c.ep else {
                    continue;
                };
                if c.failed || c.closing.is_some() {
                    continue;
                }
                if ep.failure().is_some() {
                    c.failed = true;
                    busy = true;
                    f(EventRef::Closed(id));
                    continue;
                }
                while let Some(bytes) = ep.stream_recv() {
                    busy = true;
                    f(EventRef::Data(id, &bytes));
                }
            }
            let mut i = 0;
            while i < u.sends.len() {
                if !u.sends[i].is_done() {
                    i += 1;
                    continue;
                }
                if let Ok((buf, _)) = u.sends.swap_remove(i).finish() {
                    if self.spare.len() < SPARE_BUFS {
                        self.spare.push(buf);
                    }
                }
                busy = true;
            }
        }
        let hot = self.listener.is_some() && self.live_pending > 0
            || self
                .conns
                .values()
                .any(|c| c.ep.is_none() || c.tcp.wants_write() || c.closing.is_some());
        if !hot && self.tcp_polls > 0 {
            self.tcp_polls -= 1;
            return busy;
        }
        self.tcp_polls = TCP_CHECK_POLLS;
        let now = Instant::now();
        if hot || now >= self.tcp_due {
            self.tcp_due = now + TCP_CHECK;
            busy |= self.poll_tcp(now, &mut f);
        }
        busy
    }

    /// Marks `id` failed (once) and reports it.
    fn fail_conn(&mut self, id: ConnId, f: &mut impl FnMut(EventRef<'_>)) {
        self.uncount(id);
        if let Some(c) = self.conns.get_mut(&id) {
            if c.closing.is_some() {
                self.conns.remove(&id);
                return;
            }
            if !std::mem::replace(&mut c.failed, true) {
                c.tcp.shutdown();
                f(EventRef::Closed(id));
            }
        }
    }

    /// The oldest pending connection (of `peer`, when given), skipping admitted or gone
    /// ones.
    fn oldest_pending(&mut self, peer: Option<IpAddr>) -> Option<ConnId> {
        while let Some(&id) = self.pending.front() {
            match self.conns.get(&id) {
                Some(c) if c.counted && !c.admitted => break,
                _ => {
                    self.pending.pop_front();
                }
            }
        }
        self.pending.iter().copied().find(|id| {
            self.conns
                .get(id)
                .is_some_and(|c| c.counted && !c.admitted && peer.is_none_or(|p| c.tcp.peer == p))
        })
    }

    /// Whether a connection waits in the listener's backlog.
    fn listener_readable(&self) -> bool {
        let Some(l) = &self.listener else {
            return false;
        };
        let mut p = pfd(l.sock.as_raw_fd(), libc::POLLIN);
        // SAFETY: one valid pollfd, no wait.
        unsafe { libc::poll(&mut p, 1, 0) > 0 && p.revents & libc::POLLIN != 0 }
    }

    fn accept(&mut self, now: Instant, f: &mut impl FnMut(EventRef<'_>)) -> bool {
        let mut busy = false;
        for _ in 0..64 {
            let Some(limits) = self.listener.as_ref().map(|l| l.limits) else {
                return busy;
            };
            // Room first: evict the oldest pending connection when it is old enough;
            // otherwise leave new ones in the kernel's backlog until it is.
            let full = self.live_pending >= limits.max_pending || self.live >= limits.max_conns;
            let mut refuse = false;
            // Nothing is evicted unless a new connection is actually waiting.
            if full && !self.listener_readable() {
                return busy;
            }
            if full {
                match self.oldest_pending(None) {
                    Some(old) => {
                        let since = self.conns[&old].since;
                        if now.saturating_duration_since(since) < limits.eviction_age {
                            if let Some(l) = &mut self.listener {
                                l.paused_until = Some(since + limits.eviction_age);
                            }
                            return busy;
                        }
                        sdk_dbg!("urom", "connection {old}: evicted for a new one");
                        self.fail_conn(old, f);
                    }
                    // Every slot holds a peer that spoke: new connections are refused.
                    None => refuse = true,
                }
            }
            let Some(accepted) = self.listener.as_ref().map(|l| l.sock.accept()) else {
                return busy;
            };
            let (sock, peer) = match accepted {
                Ok(v) => v,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return busy,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    // Out of descriptors: make room from a pending connection, or stop
                    // accepting for a while (the listener would otherwise stay readable and
                    // the loop spin).
                    if let Some(old) = self.oldest_pending(None) {
                        self.fail_conn(old, f);
                        // Its descriptor goes now, not when its owner gets to close it.
                        if let Some(c) = self.conns.remove(&old) {
                            c.tcp.shutdown();
                        }
                        continue;
                    }
                    sdk_warn!(
                        "urom",
                        "out of descriptors: not accepting for {ACCEPT_PAUSE:?}"
                    );
                    if let Some(l) = &mut self.listener {
                        l.paused_until = Some(now + ACCEPT_PAUSE);
                    }
                    return busy;
                }
                Err(_) => return busy,
            };
            busy = true;
            let from_peer = self.counts.get(&peer.ip()).map_or(0, |c| c.0);
            if refuse || from_peer >= limits.max_per_peer {
                sdk_dbg!(
                    "urom",
                    "refused a connection from {peer}: {} open, {from_peer} from that peer",
                    self.live
                );
                continue;
            }
            let Ok(tcp) = TcpConn::accepted(sock, peer) else {
                continue;
            };
            let id = self.add(tcp, true);
            f(EventRef::Accepted(id));
        }
        busy
    }

    fn poll_tcp(&mut self, now: Instant, f: &mut impl FnMut(EventRef<'_>)) -> bool {
        let mut busy = false;
        // Pending connections past their time.
        if let Some(timeout) = self.listener.as_ref().map(|l| l.limits.pending_timeout) {
            while let Some(old) = self.oldest_pending(None) {
                if self.conns[&old].since + timeout > now {
                    break;
                }
                sdk_dbg!("urom", "connection {old}: silent for {timeout:?}, closed");
                self.fail_conn(old, f);
                busy = true;
            }
        }
        self.pfds.clear();
        self.pfd_ids.clear();
        let listening = match &mut self.listener {
            Some(l) if l.paused_until.is_none_or(|t| now >= t) => {
                l.paused_until = None;
                self.pfds.push(pfd(l.sock.as_raw_fd(), libc::POLLIN));
                true
            }
            _ => false,
        };
        for (&id, c) in self.conns.iter() {
            if c.failed {
                continue;
            }
            let mut ev = libc::POLLIN;
            if c.tcp.wants_write() {
                ev |= libc::POLLOUT;
            }
            self.pfds.push(pfd(c.tcp.fd(), ev));
            self.pfd_ids.push(id);
        }
        // SAFETY: pfds holds valid pollfds for its length; no wait.
        let n = unsafe { libc::poll(self.pfds.as_mut_ptr(), self.pfds.len() as libc::nfds_t, 0) };
        if n <= 0 {
            return busy;
        }
        let first = usize::from(listening);
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(
            self.pfd_ids
                .iter()
                .zip(&self.pfds[first..])
                .filter(|(_, p)| p.revents != 0)
                .map(|(id, p)| (*id, p.revents)),
        );
        // Connections first: a pending one whose greeting is waiting gets admitted before
        // new ones are weighed against the limits.
        for &(id, revents) in &ready {
            busy = true;
            self.serve_tcp(id, revents, now, f);
        }
        self.ready = ready;
        if listening && self.pfds[0].revents != 0 {
            busy |= self.accept(now, f);
        }
        busy
    }

    fn serve_tcp(
        &mut self,
        id: ConnId,
        revents: i16,
        now: Instant,
        f: &mut impl FnMut(EventRef<'_>),
    ) {
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut failed = false;
        if let Some(c) = self.conns.get_mut(&id) {
            if c.tcp.has_output() || revents & libc::POLLOUT != 0 {
                failed |= c.tcp.flush().is_err();
            }
            if let Some(deadline) = c.closing {
                // Nobody reads it any more: drop it once its output is out.
                let _ = c.tcp.read(&mut scratch);
                if failed || !c.tcp.has_output() || now > deadline {
                    c.tcp.shutdown();
                    self.conns.remove(&id);
                }
                self.scratch = scratch;
                return;
            }
            if !failed && revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                for _ in 0..4 {
                    match c.tcp.read(&mut scratch) {
                        Ok(None) => break,
                        Ok(Some(0)) | Err(_) => {
                            failed = true;
                            break;
                        }
                        Ok(Some(_)) if c.ep.is_some() => {
                            sdk_warn!(
                                "urom",
                                "connection {id}: bytes on TCP after its upgrade to UCX"
                            );
                            failed = true;
                            break;
                        }
                        Ok(Some(n)) => f(EventRef::Data(id, &scratch[..n])),
                    }
                }
            }
        }
        self.scratch = scratch;
        if failed {
            self.fail_conn(id, f);
        }
    }

    /// Whether sends are still waiting (UCX, or TCP output queued).
    pub fn sends_pending(&self) -> bool {
        self.ucx.as_ref().is_some_and(|u| !u.sends.is_empty())
            || self.conns.values().any(|c| c.tcp.has_output())
    }

    /// The descriptors to sleep on (UCX's event descriptor armed, the listener, every
    /// connection) into `out`, after clearing it: `false` when UCX has work pending
    /// (progress again instead of sleeping). The next [`Node::poll_with`] looks at TCP.
    pub fn sleep_fds(&mut self, out: &mut Vec<libc::pollfd>) -> bool {
        out.clear();
        let now = Instant::now();
        self.tcp_due = now;
        self.tcp_polls = 0;
        if let Some(u) = &self.ucx {
            if let Some(fd) = u.worker.event_fd() {
                if !u.worker.arm().unwrap_or(false) {
                    return false;
                }
                out.push(pfd(fd, libc::POLLIN));
            }
        }
        if let Some(l) = &self.listener {
            if l.paused_until.is_none_or(|t| now >= t) {
                out.push(pfd(l.sock.as_raw_fd(), libc::POLLIN));
            }
        }
        for c in self.conns.values().filter(|c| !c.failed) {
            let mut ev = libc::POLLIN;
            if c.tcp.wants_write() {
                ev |= libc::POLLOUT;
            }
            out.push(pfd(c.tcp.fd(), ev));
        }
        true
    }

    /// UCX's event descriptor (a node with UCX and wake-ups).
    pub fn ucx_event_fd(&self) -> Option<libc::c_int> {
        self.ucx.as_ref().and_then(|u| u.worker.event_fd())
    }

    /// Arms UCX's event descriptor again (after [`Node::sleep_fds`]): `false` when UCX has
    /// work pending (progress again instead of sleeping).
    pub fn rearm_ucx(&mut self) -> bool {
        match &self.ucx {
            Some(u) if u.worker.event_fd().is_some() => u.worker.arm().unwrap_or(false),
            _ => true,
        }
    }

    /// Blocks until something can be done or `timeout_ms` passes.
    pub fn wait(&mut self, timeout_ms: i32) {
        let mut fds = std::mem::take(&mut self.pfds);
        if self.sleep_fds(&mut fds) {
            // SAFETY: fds holds valid pollfds for its length.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        }
        self.pfds = fds;
    }

    /// Closes one connection at once (unsent data is dropped).
    pub fn close(&mut self, conn: ConnId) {
        self.uncount(conn);
        if let Some(c) = self.conns.remove(&conn) {
            c.tcp.shutdown();
            if let Some(ep) = c.ep {
                ep.close(CloseMode::Force);
            }
        }
    }

    /// Closes one connection after delivering what was sent on it (bounded).
    pub fn close_flushed(&mut self, conn: ConnId) {
        self.uncount(conn);
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if let Some(ep) = c.ep.take() {
            let mode = if c.failed {
                CloseMode::Force
            } else {
                CloseMode::Flush
            };
            ep.close(mode);
        }
        let _ = c.tcp.flush();
        if c.failed || !c.tcp.has_output() {
            c.tcp.shutdown();
            self.conns.remove(&conn);
        } else {
            c.closing = Some(Instant::now() + CLOSE_FLUSH);
        }
    }

    /// Progresses until queued sends complete (bounded), e.g. before closing.
    pub fn flush(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.sends_pending() && Instant::now() < deadline {
            let _ = self.poll();
            self.tcp_due = Instant::now();
            self.tcp_polls = 0;
        }
    }
}

impl Default for Node {
    fn default() -> Node {
        Node::new()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.flush(Duration::from_millis(200));
        // The fields then close the connections (endpoints forced), cancel what is still
        // in flight, and destroy UCX's worker and context, in that order.
    }
}

#[cfg(test)]
mod tests;
