//! A host-side protocol connection: one node, one connection, a strict decoder, and a
//! liveness watch.
//!
//! A link to the daemon is plain TCP; a link to a worker starts on TCP and moves to UCX
//! once both ends know each other's worker address ([`Link::upgrade`]).
//!
//! Liveness: a peer that stops answering (SIGSTOP, a hung machine) does not close its
//! connection, so requests would wait forever. While the owner has something outstanding
//! it calls [`Link::watch`]: the link pings the peer every quarter of the bound, and when
//! nothing at all has come from the peer for the whole bound since the wait began, the link
//! fails with TIME_OUT. A live peer answers a ping at once, so commands that legitimately
//! take long (a receive waiting for its sender) are not cut short.

use super::wake::WakeSet;
use crate::ctx::notify::Wakeup;
use crate::error::{DocaError, DocaResult};
use crate::urom::transport::{ConnId, EventRef, Node, PeerFailure};
use crate::urom::wire::{Decoder, Msg};
use std::net::SocketAddrV4;
use std::time::{Duration, Instant};

/// Environment variable: the liveness bound of UROM requests, in milliseconds (default
/// [`DEFAULT_LIVENESS`]).
pub const LIVENESS_ENV: &str = "DOCA_SOFT_UROM_LIVENESS_MS";
/// How long a peer may stay silent while a request waits for it.
pub const DEFAULT_LIVENESS: Duration = Duration::from_secs(10);

/// The liveness bound of this process: [`LIVENESS_ENV`], else [`DEFAULT_LIVENESS`] (a bad
/// value is reported and the default used).
pub(crate) fn liveness_from_env() -> Duration {
    match std::env::var(LIVENESS_ENV) {
        Err(_) => DEFAULT_LIVENESS,
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(ms) if (10..=3_600_000).contains(&ms) => Duration::from_millis(ms),
            _ => {
                sdk_warn!(
                    "urom",
                    "{LIVENESS_ENV}={v:?}: not 10 to 3600000 milliseconds; using {DEFAULT_LIVENESS:?}"
                );
                DEFAULT_LIVENESS
            }
        },
    }
}

/// A connection to the daemon or to a worker process.
pub(crate) struct Link {
    node: Node,
    conn: ConnId,
    dec: Decoder,
    failed: Option<DocaError>,
    peer: SocketAddrV4,
    last_heard: Instant,
    // When the current wait began (None: nothing outstanding).
    waiting_since: Option<Instant>,
    last_ping: Instant,
    ping_seq: u64,
    // Bytes arrived since `last_heard` was set: stamped at the next look at the clock
    // (`watch`, `sleep_plan`), so a notification costs no clock read of its own.
    heard: bool,
    // `watch` calls during a wait since the clock was last read (see `WATCH_POLLS`).
    watch_polls: u32,
}

/// [`Link::watch`] calls during a wait per look at the clock: the bound is seconds, a
/// clock read 50 to 150 ns on a loaded virtual machine, and a host spinning on its
/// progress engine calls it every few hundred nanoseconds.
const WATCH_POLLS: u32 = 8;

impl Link {
    /// Connects to `addr` over TCP; frames larger than `max_payload` are protocol errors.
    /// With `ucx`, the link can later move to UCX ([`Link::ucx_address`], [`Link::upgrade`]).
    pub(crate) fn connect(addr: SocketAddrV4, max_payload: usize, ucx: bool) -> DocaResult<Link> {
        let mut node = Node::new();
        if ucx {
            node.enable_ucx()?;
        }
        let conn = node.connect(addr)?;
        let now = Instant::now();
        Ok(Link {
            node,
            conn,
            dec: Decoder::new(max_payload),
            failed: None,
            peer: addr,
            last_heard: now,
            waiting_since: None,
            last_ping: now,
            ping_seq: 0,
            heard: false,
            watch_polls: 0,
        })
    }

    /// This end's UCX worker address (links made with `ucx`).
    pub(crate) fn ucx_address(&self) -> Option<Vec<u8>> {
        self.node.ucx_address().map(<[u8]>::to_vec)
    }

    /// Whether this end offers an endpoint without UCX's peer failure detection (the peer
    /// runs on this machine: see `Node::may_go_unwatched`).
    pub(crate) fn may_go_unwatched(&self) -> bool {
        self.node.may_go_unwatched(self.conn)
    }

    /// Moves the traffic to a UCX endpoint made from the peer's worker address, unwatched
    /// when the peer said so (it decides; this end must have offered it).
    pub(crate) fn upgrade(&mut self, peer_address: &[u8], unwatched: bool) -> DocaResult<()> {
        let failure = match unwatched {
            false => PeerFailure::Detected,
            true if self.may_go_unwatched() => PeerFailure::NotDetected,
            true => {
                // Never offered: the peer breaks the protocol.
                sdk_err!(
                    "urom",
                    "{} asked for an unwatched UCX endpoint this end did not offer",
                    self.peer
                );
                self.failed = Some(DocaError::CONNECTION_ABORTED);
                return Err(DocaError::CONNECTION_ABORTED);
            }
        };
        self.node
            .upgrade_with(self.conn, peer_address, failure)
            .inspect_err(|&e| self.failed = Some(e))
    }

    /// Whether the traffic goes over UCX.
    #[cfg(feature = "testing")]
    pub(crate) fn is_upgraded(&self) -> bool {
        self.node.is_upgraded(self.conn)
    }

    /// The transports of the UCX endpoint (`None`: not upgraded).
    #[cfg(feature = "testing")]
    pub(crate) fn transports(&self) -> Option<Vec<crate::urom::transport::Transport>> {
        self.node.transports(self.conn)
    }

    /// Sends one message.
    pub(crate) fn send(&mut self, m: &Msg) -> DocaResult<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.node
            .send(self.conn, m.encode())
            .inspect_err(|&e| self.failed = Some(e))
    }

    /// The error that broke the link, if any.
    pub(crate) fn failed(&self) -> Option<DocaError> {
        self.failed
    }

    /// Queues the frame `fill` writes (see `wire::frame_begin`), in a reused buffer.
    pub(crate) fn send_with(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> DocaResult<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.node
            .send_with(self.conn, fill)
            .inspect_err(|&e| self.failed = Some(e))
    }

    fn pump(&mut self) -> bool {
        let (dec, failed) = (&mut self.dec, &mut self.failed);
        let heard = &mut self.heard;
        self.node.poll_with(|e| match e {
            EventRef::Data(_, b) => {
                *heard = true;
                dec.push(b);
            }
            EventRef::Closed(_) => {
                failed.get_or_insert(DocaError::CONNECTION_RESET);
            }
            EventRef::Accepted(_) => {}
        })
    }

    /// The clock, with what was heard since the last look stamped with it.
    fn clock(&mut self) -> Instant {
        let now = Instant::now();
        if std::mem::take(&mut self.heard) {
            self.last_heard = now;
        }
        now
    }

    /// Keeps the liveness watch (see the module docs); call it from each progress with
    /// whether a reply is awaited. Returns the error when the peer was given up on.
    pub(crate) fn watch(&mut self, outstanding: bool, bound: Duration) -> Option<DocaError> {
        if self.failed.is_some() {
            return self.failed;
        }
        if !outstanding {
            self.waiting_since = None;
            return None;
        }
        if self.waiting_since.is_some() {
            self.watch_polls += 1;
            if self.watch_polls < WATCH_POLLS {
                return None;
            }
        }
        self.watch_polls = 0;
        let now = self.clock();
        let since = *self.waiting_since.get_or_insert(now);
        let quiet = now.saturating_duration_since(self.last_heard.max(since));
        if quiet > bound {
            sdk_err!(
                "urom",
                "{} did not answer for {bound:?} (stopped or hung?): giving up on it (the \
                 liveness bound; {LIVENESS_ENV} sets it)",
                self.peer
            );
            self.failed = Some(DocaError::TIME_OUT);
            return self.failed;
        }
        if now.saturating_duration_since(self.last_ping) >= bound / 4
            && now.saturating_duration_since(self.last_heard) >= bound / 4
        {
            self.last_ping = now;
            self.ping_seq += 1;
            let _ = self.send(&Msg::Ping { seq: self.ping_seq });
        }
        None
    }

    /// Before the owner's context sleeps (`doca_pe_request_notification`): fills `fds` with
    /// the descriptors that become ready when the peer sends or the connection can take
    /// more output, and returns when the liveness watch must look again (`None` inside:
    /// nothing outstanding, no time). `None`: do not sleep, progress now (the link failed,
    /// or UCX has work pending). `outstanding` and `bound` as for [`Link::watch`].
    fn sleep_plan(
        &mut self,
        outstanding: bool,
        bound: Duration,
        fds: &mut Vec<libc::pollfd>,
    ) -> Option<Option<Instant>> {
        if self.failed.is_some() || !self.node.sleep_fds(fds) {
            return None;
        }
        if !outstanding {
            return Some(None);
        }
        let now = self.clock();
        // The first watch after the sleep looks at the clock.
        self.watch_polls = WATCH_POLLS;
        // What `watch` checks: a ping once the peer was silent for a quarter of the bound
        // (and the last ping is as old), giving up once it was silent for the bound.
        let since = self.waiting_since.unwrap_or(now);
        let give_up = self.last_heard.max(since) + bound + Duration::from_millis(1);
        let ping = self.last_ping.max(self.last_heard) + bound / 4;
        Some(Some(give_up.min(ping)))
    }

    /// What the owner's context answers when its engine arms the notification: the link's
    /// descriptors and the liveness watch's next look in `wake` (see [`Link::sleep_plan`]),
    /// or [`Wakeup::Ready`] when there is work already.
    ///
    /// UCX's event descriptor is watched edge-triggered, and armed again after the set was
    /// drained: `ucp_worker_arm` can answer "armed" while the descriptor stays readable (an
    /// epoll set of UCX's TCP transport holding a socket registered for output keeps it so),
    /// and a level-triggered watch would then wake the sleeper again and again. Edges are
    /// new events; anything that arrived before the second arm makes that arm answer busy.
    pub(crate) fn arm_wakeup(
        &mut self,
        outstanding: bool,
        bound: Duration,
        wake: &WakeSet,
    ) -> Wakeup {
        let mut fds = Vec::new();
        let Some(deadline) = self.sleep_plan(outstanding, bound, &mut fds) else {
            return Wakeup::Ready;
        };
        match wake.arm(&fds, self.node.ucx_event_fd(), deadline) {
            Wakeup::Fd(fd) if self.node.rearm_ucx() => Wakeup::Fd(fd),
            Wakeup::Fd(_) => Wakeup::Ready,
            other => other,
        }
    }

    fn broken(&mut self, e: DocaError) {
        sdk_err!("urom", "protocol error from {}: {e:?}", self.peer);
        self.failed.get_or_insert(DocaError::CONNECTION_ABORTED);
    }

    /// Progresses and hands each complete frame that arrived to `f` as (kind, payload),
    /// undecoded and borrowed (the command path allocates nothing). Returns whether the
    /// node did anything.
    pub(crate) fn poll_frames(&mut self, mut f: impl FnMut(u16, &[u8])) -> bool {
        let busy = self.pump();
        loop {
            match self.dec.next_frame() {
                Ok(Some((kind, payload))) => f(kind, payload),
                Ok(None) => break,
                Err(e) => {
                    self.broken(e);
                    break;
                }
            }
        }
        busy
    }

    /// Progresses and returns the messages that arrived (the link may fail meanwhile).
    pub(crate) fn poll(&mut self) -> Vec<Msg> {
        self.pump();
        let mut out = Vec::new();
        loop {
            match self.dec.next_msg() {
                Ok(Some(m)) => out.push(m),
                Ok(None) => break,
                Err(e) => {
                    self.broken(e);
                    break;
                }
            }
        }
        out
    }

    /// Blocks until one message arrives (others before it are returned too), the link
    /// fails, or the peer stays silent for `bound` (TIME_OUT).
    pub(crate) fn wait_for(
        &mut self,
        bound: Duration,
        mut done: impl FnMut(&Msg) -> bool,
    ) -> DocaResult<Vec<Msg>> {
        let mut got = Vec::new();
        loop {
            let msgs = self.poll();
            let hit = msgs.iter().any(&mut done);
            got.extend(msgs);
            if hit {
                return Ok(got);
            }
            if let Some(e) = self.watch(true, bound) {
                return Err(e);
            }
            self.node.wait(5);
            // After a sleep the watch looks at the clock at once.
            self.watch_polls = WATCH_POLLS;
        }
    }
}
