//! Peers: the other NICs this one talks to, how it reaches them, and what it knows about
//! their memory keys.
//!
//! Connection (one per pair of NIC instances, shared by every QP between them):
//! 1. the side that connects first creates an endpoint to the peer's listener (the address
//!    and port in its GID) and sends HELLO {our GID, the token the peer must use for us,
//!    "answer me"} with our full UCP worker address as payload;
//! 2. the peer creates an endpoint from that worker address (UCX may then choose shared
//!    memory, CUDA IPC or RDMA; an endpoint made through a listener runs over TCP only)
//!    and answers HELLO {its GID, its token for us} with its worker address on it;
//! 3. we create our endpoint from its address the same way and close the listener one.
//!
//! If both sides connect at once, each HELLO is answered on the worker-address endpoint
//! created from the other's HELLO, and the second address that arrives is ignored: each
//! side ends with exactly one data endpoint to the other.
//!
//! Remote keys: a peer's 32-bit key cannot carry a UCX packed key, so the first WQE naming
//! an unknown (peer, key) sends KEY_REQ and waits (the queue stalls there, keeping order);
//! KEY_REP brings the packed key and the registered range, which is cached (keys are never
//! reused). A NIC that deregisters memory tells its peers (KEY_REVOKE), which drop the
//! key: later WQEs naming it fail with a remote access error instead of writing into
//! memory that is gone (a write already in flight at that moment still lands).
//! Memory blobs (`doca_mmap_export_rdma`) pre-seed the cache.

use super::gid::Gid;
use super::mkey::Access;
use super::shared::{NicEvent, Shared};
use super::ucp::{CloseReq, Ep, Issue, RemoteKey, Worker};
use super::ucp_am::AmMsg;
use super::wire::{self, Ack, Hello, KeyRep, KeyReq};
use crate::error::DocaResult;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Token kinds of completions and endpoint errors (top byte).
pub(super) mod token {
    /// A send-queue operation: QPN (24 bits) and WQE index (low 32 bits).
    pub(crate) const OP: u64 = 1;
    /// An endpoint flush for a QP.
    pub(crate) const FLUSH: u64 = 2;
    /// Receive data landing: RQ id and receive sequence.
    pub(crate) const RECV: u64 = 3;
    /// A control message send.
    pub(crate) const CTRL: u64 = 4;
    /// Endpoint errors: a handshake endpoint of peer `lo`.
    pub(crate) const EP_HANDSHAKE: u64 = 5;
    /// Endpoint errors: the data endpoint of peer `lo`.
    pub(crate) const EP_DATA: u64 = 6;
    /// Endpoint errors: an accepted listener connection `lo`.
    pub(crate) const EP_ACCEPTED: u64 = 7;
    /// The first flush of peer `lo`'s data endpoint (its wire-up is complete).
    pub(crate) const WIRED: u64 = 8;

    /// Packs a token.
    pub(crate) fn make(kind: u64, hi: u32, lo: u32) -> u64 {
        (kind << 56) | ((hi as u64 & 0xff_ffff) << 32) | lo as u64
    }

    /// Unpacks a token into (kind, hi, lo).
    pub(crate) fn split(t: u64) -> (u64, u32, u32) {
        (t >> 56, ((t >> 32) & 0xff_ffff) as u32, t as u32)
    }
}

/// How long a "no such key" answer is believed before asking again.
const UNKNOWN_KEY_TTL: Duration = Duration::from_millis(200);

/// A peer's key as the cache holds it.
pub(super) enum RKey {
    /// Asked, no answer yet.
    Requested,
    /// Known and unpacked on the data endpoint.
    Ready {
        rkey: RemoteKey,
        addr: u64,
        len: u64,
        access: Access,
    },
    /// Known from a memory blob, not unpacked yet.
    Seeded {
        packed: Vec<u8>,
        addr: u64,
        len: u64,
        access: Access,
    },
    /// The peer said it has no such key (at that time).
    Unknown(Instant),
}

/// The answer of [`Net::rkey`].
pub(super) enum KeyLookup<'a> {
    /// Use it.
    Ready {
        rkey: &'a RemoteKey,
        addr: u64,
        len: u64,
        access: Access,
    },
    /// Asked; wait for the answer.
    Wait,
    /// The peer has no such key.
    Unknown,
}

/// Where a peer connection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PeerState {
    /// HELLO sent, no answer yet.
    Connecting,
    /// Data endpoint created, the peer's token for us known (messages may flow); its
    /// wire-up is not finished (remote keys unpacked now would belong to a configuration
    /// UCX is about to replace).
    Wiring,
    /// Data endpoint wired: every operation may start.
    Ready,
    /// Failed or gone (its process exited).
    Dead,
}

/// One peer NIC.
pub(super) struct Peer {
    /// Its GID bytes.
    pub gid: [u8; 16],
    /// Connection state.
    pub state: PeerState,
    /// When the connection attempt started.
    since: Instant,
    /// The token the peer wants in our messages.
    pub remote_token: u32,
    /// Our connection to its listener (while connecting).
    hs_ep: Option<Ep>,
    /// The data endpoint (from its worker address).
    pub ep: Option<Ep>,
    /// Its keys.
    pub rkeys: HashMap<u32, RKey>,
    /// Keys it revoked, destroyed when its endpoint closes.
    retired: Vec<RemoteKey>,
}

/// The network side of a NIC: its worker, peers and control messages.
pub(super) struct Net {
    /// Our GID.
    pub gid: [u8; 16],
    /// Our worker address (HELLO payload).
    address: Vec<u8>,
    /// Peers by index (the index is our token for that peer).
    pub peers: Vec<Peer>,
    by_gid: HashMap<[u8; 16], u32>,
    /// Connections accepted by our listener (handshake only).
    accepted: Vec<Option<Ep>>,
    /// Endpoint closes in progress.
    closing: Vec<CloseReq>,
    /// Payloads of control sends UCX still reads.
    ctrl_payloads: HashMap<u64, Vec<u8>>,
    next_ctrl: u32,
    /// What the handles see.
    pub shared: Arc<Shared>,
    /// The UCP worker (last: dropped after every endpoint and key).
    pub worker: Worker,
}

impl Net {
    /// The network side of a NIC with this worker and GID.
    pub(super) fn new(worker: Worker, gid: [u8; 16], shared: Arc<Shared>) -> DocaResult<Net> {
        let address = worker.address()?;
        Ok(Net {
            gid,
            address,
            peers: Vec::new(),
            by_gid: HashMap::new(),
            accepted: Vec::new(),
            closing: Vec::new(),
            ctrl_payloads: HashMap::new(),
            next_ctrl: 0,
            shared,
            worker,
        })
    }

    /// Sends a control message; `payload` is kept until UCX is done with it.
    pub(super) fn ctrl_send(&mut self, ep: Ep, id: u16, header: &[u8], payload: Option<Vec<u8>>) {
        self.next_ctrl = self.next_ctrl.wrapping_add(1);
        let t = token::make(token::CTRL, 0, self.next_ctrl);
        let (ptr, len) = payload
            .as_ref()
            .map_or((std::ptr::null(), 0), |p| (p.as_ptr(), p.len()));
        // SAFETY: the payload is kept in ctrl_payloads until the send completes.
        match unsafe { self.worker.am_send(ep, id, header, ptr, len, None, t) } {
            Issue::Pending => {
                if let Some(p) = payload {
                    self.ctrl_payloads.insert(t, p);
                }
            }
            Issue::Done => {}
            Issue::Failed(s) => {
                sdk_dbg!(
                    "nic",
                    "control message {id:#x} not sent: {}",
                    super::ucp::status_str(s)
                );
            }
        }
    }

    /// A control send finished.
    pub(super) fn ctrl_done(&mut self, t: u64) {
        self.ctrl_payloads.remove(&t);
    }

    /// The peer with GID `gid`, connecting to it if it is new (or dead).
    pub(super) fn peer_for(&mut self, gid: [u8; 16], addr: Gid) -> u32 {
        if let Some(&i) = self.by_gid.get(&gid) {
            if self.peers[i as usize].state != PeerState::Dead {
                return i;
            }
        }
        let i = self.add_peer(gid);
        let sock = std::net::SocketAddrV4::new(addr.ip, addr.port);
        match self
            .worker
            .connect(sock, token::make(token::EP_HANDSHAKE, 0, i))
        {
            Ok(ep) => {
                self.peers[i as usize].hs_ep = Some(ep);
                let h = Hello {
                    want_reply: true,
                    gid: self.gid,
                    token: i,
                }
                .encode();
                self.ctrl_send(ep, wire::AM_HELLO, &h, Some(self.address.clone()));
            }
            Err(_) => self.fail_peer(i),
        }
        i
    }

    /// A new CONNECTING peer for `gid` (it replaces a dead one of that GID in `by_gid`).
    fn add_peer(&mut self, gid: [u8; 16]) -> u32 {
        let i = self.peers.len() as u32;
        self.peers.push(Peer {
            gid,
            state: PeerState::Connecting,
            since: Instant::now(),
            remote_token: 0,
            hs_ep: None,
            ep: None,
            rkeys: HashMap::new(),
            retired: Vec::new(),
        });
        self.by_gid.insert(gid, i);
        i
    }

    /// A listener connection arrived: accept it (it only carries the peer's HELLO).
    pub(super) fn accept(&mut self, req: super::ucp::ConnRequest) {
        let i = self.accepted.len() as u32;
        if let Ok(ep) = self
            .worker
            .accept(req, token::make(token::EP_ACCEPTED, 0, i))
        {
            self.accepted.push(Some(ep));
        }
    }

    /// Handles a HELLO; returns the peer that became ready, if one did.
    pub(super) fn on_hello(&mut self, msg: &mut AmMsg) -> Option<u32> {
        let h = Hello::decode(msg.header())?;
        // A HELLO whose GID does not decode is dropped.
        Gid::decode(&h.gid)?;
        let i = match self.by_gid.get(&h.gid) {
            Some(&i) if self.peers[i as usize].state != PeerState::Dead => i,
            _ => self.add_peer(h.gid),
        };
        let mut became_ready = None;
        if self.peers[i as usize].ep.is_none() {
            let Some(address) = msg.data().map(<[u8]>::to_vec) else {
                self.worker.am_release(msg);
                return None;
            };
            match self
                .worker
                .connect_address(&address, token::make(token::EP_DATA, 0, i))
            {
                Ok(ep) => {
                    let p = &mut self.peers[i as usize];
                    p.ep = Some(ep);
                    p.state = PeerState::Wiring;
                    // The flush completes once wire-up is done.
                    match ep.flush(token::make(token::WIRED, 0, i)) {
                        Issue::Done => {
                            p.state = PeerState::Ready;
                            became_ready = Some(i);
                        }
                        Issue::Pending => {}
                        Issue::Failed(_) => {
                            self.worker.am_release(msg);
                            self.fail_peer(i);
                            return None;
                        }
                    }
                }
                Err(_) => {
                    self.worker.am_release(msg);
                    self.fail_peer(i);
                    return None;
                }
            }
        }
        self.worker.am_release(msg);
        let p = &mut self.peers[i as usize];
        p.remote_token = h.token;
        let ep = p.ep;
        if let Some(hs) = p.hs_ep.take() {
            // Our listener connection has done its job.
            if let Some(r) = self.worker.close_ep(hs, false) {
                self.closing.push(r);
            }
        }
        if h.want_reply {
            if let Some(ep) = ep {
                let reply = Hello {
                    want_reply: false,
                    gid: self.gid,
                    token: i,
                }
                .encode();
                self.ctrl_send(ep, wire::AM_HELLO, &reply, Some(self.address.clone()));
            }
        }
        // The connection our listener accepted for this HELLO stays until the peer closes
        // it: closing it here could reach the peer before this answer and look like a
        // failed handshake there.
        became_ready
    }

    /// The wire-up flush of peer `i` finished; returns the peer if it is now ready.
    pub(super) fn on_wired(&mut self, i: u32, status: super::ucp::Status) -> Option<u32> {
        let p = self.peers.get_mut(i as usize)?;
        if p.state != PeerState::Wiring {
            return None;
        }
        if status != super::ucp::OK {
            self.fail_peer(i);
            return None;
        }
        p.state = PeerState::Ready;
        Some(i)
    }

    /// Fails the peers whose connection has not become ready within `limit` (a listener
    /// that is not a soft NIC's, a stale GID whose port another process took, a handshake
    /// that got lost): their QPs complete with errors instead of waiting for ever.
    pub(super) fn expire(&mut self, limit: Duration, died: &mut Vec<u32>) {
        for i in 0..self.peers.len() as u32 {
            let p = &self.peers[i as usize];
            if matches!(p.state, PeerState::Connecting | PeerState::Wiring)
                && p.since.elapsed() > limit
            {
                sdk_warn!(
                    "nic",
                    "connection to peer NIC {} not ready after {limit:?}",
                    fmt_gid(&p.gid)
                );
                self.fail_peer(i);
                died.push(i);
            }
        }
    }

    /// An endpoint failed. Returns the peer that is now dead, if the failure killed one.
    pub(super) fn on_ep_failed(&mut self, t: u64) -> Option<u32> {
        let (kind, _, i) = token::split(t);
        match kind {
            token::EP_ACCEPTED => {
                if let Some(Some(ep)) = self.accepted.get_mut(i as usize).map(Option::take) {
                    if let Some(r) = self.worker.close_ep(ep, true) {
                        self.closing.push(r);
                    }
                }
                None
            }
            token::EP_HANDSHAKE => {
                let p = self.peers.get(i as usize)?;
                // Once the data endpoint exists, the listener connection may go quietly.
                (p.state == PeerState::Connecting).then(|| {
                    self.fail_peer(i);
                    i
                })
            }
            token::EP_DATA => {
                let p = self.peers.get(i as usize)?;
                (p.state != PeerState::Dead).then(|| {
                    self.fail_peer(i);
                    i
                })
            }
            _ => None,
        }
    }

    /// Marks peer `i` dead and closes its endpoints (outstanding operations then complete
    /// with errors).
    pub(super) fn fail_peer(&mut self, i: u32) {
        let Some(p) = self.peers.get_mut(i as usize) else {
            return;
        };
        if p.state == PeerState::Dead {
            return;
        }
        p.state = PeerState::Dead;
        let eps = [p.hs_ep.take(), p.ep.take()];
        let gid = p.gid;
        self.close_peer_eps(i, eps);
        sdk_info!("nic", "peer NIC {} lost", fmt_gid(&gid));
        self.shared.push_event(NicEvent::PeerLost { gid });
    }

    /// Force-closes a peer's endpoints, then destroys its remote keys: the close cancels
    /// every outstanding operation first (UCX wants keys destroyed after the operations
    /// using them and before their endpoint goes away).
    fn close_peer_eps(&mut self, i: u32, eps: [Option<Ep>; 2]) {
        for ep in eps.into_iter().flatten() {
            if let Some(r) = self.worker.close_ep(ep, true) {
                self.closing.push(r);
            }
        }
        if let Some(p) = self.peers.get_mut(i as usize) {
            p.rkeys.clear();
            p.retired.clear();
        }
    }

    /// Tells every peer that our keys `keys` are gone (`all`: every key of ours they know),
    /// so that they ask again, and learn they are unknown, instead of writing into memory
    /// that was deregistered.
    pub(super) fn revoke(&mut self, keys: &[u32], all: bool) {
        let mut payload = Vec::with_capacity(4 * keys.len());
        if !all {
            for k in keys {
                payload.extend_from_slice(&k.to_le_bytes());
            }
        }
        for i in 0..self.peers.len() as u32 {
            if let Some((ep, token)) = self.ready_peer(i) {
                let h = wire::KeyRevoke { token, all }.encode();
                self.ctrl_send(ep, wire::AM_KEY_REVOKE, &h, Some(payload.clone()));
            }
        }
    }

    /// A peer revoked some of its keys: forget them (the handles are kept until the
    /// endpoint closes, in case an operation still uses them).
    pub(super) fn on_key_revoke(&mut self, msg: &mut AmMsg) {
        let h = wire::KeyRevoke::decode(msg.header());
        let keys: Vec<u32> = msg
            .data()
            .unwrap_or(&[])
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        self.worker.am_release(msg);
        let Some(h) = h else {
            return;
        };
        let Some(p) = self.peers.get_mut(h.token as usize) else {
            return;
        };
        self.shared
            .stats
            .revocations
            .fetch_add(1, Ordering::Relaxed);
        let gone: Vec<u32> = if h.all {
            p.rkeys.keys().copied().collect()
        } else {
            keys
        };
        for k in gone {
            if let Some(RKey::Ready { rkey, .. }) = p.rkeys.remove(&k) {
                p.retired.push(rkey);
            }
        }
    }

    /// The peer's key `key`: ready, to wait for (a request is sent), or unknown.
    pub(super) fn rkey(&mut self, peer: u32, key: u32) -> KeyLookup<'_> {
        let Some(p) = self.peers.get_mut(peer as usize) else {
            return KeyLookup::Unknown;
        };
        let (Some(ep), PeerState::Ready) = (p.ep, p.state) else {
            return KeyLookup::Unknown;
        };
        let ask = match p.rkeys.get(&key) {
            None => true,
            Some(RKey::Unknown(at)) => at.elapsed() > UNKNOWN_KEY_TTL,
            Some(RKey::Seeded { .. }) => {
                if let Some(RKey::Seeded {
                    packed,
                    addr,
                    len,
                    access,
                }) = p.rkeys.remove(&key)
                {
                    match ep.unpack_rkey(&packed) {
                        Some(rkey) => {
                            p.rkeys.insert(
                                key,
                                RKey::Ready {
                                    rkey,
                                    addr,
                                    len,
                                    access,
                                },
                            );
                        }
                        None => {
                            p.rkeys.insert(key, RKey::Unknown(Instant::now()));
                        }
                    }
                }
                false
            }
            _ => false,
        };
        if ask {
            p.rkeys.insert(key, RKey::Requested);
            let h = KeyReq {
                token: p.remote_token,
                key,
            }
            .encode();
            self.shared
                .stats
                .key_requests
                .fetch_add(1, Ordering::Relaxed);
            self.ctrl_send(ep, wire::AM_KEY_REQ, &h, None);
            return KeyLookup::Wait;
        }
        match self.peers[peer as usize].rkeys.get(&key) {
            Some(RKey::Ready {
                rkey,
                addr,
                len,
                access,
            }) => KeyLookup::Ready {
                rkey,
                addr: *addr,
                len: *len,
                access: *access,
            },
            Some(RKey::Unknown(_)) => KeyLookup::Unknown,
            _ => KeyLookup::Wait,
        }
    }

    /// A peer asks about one of our keys.
    pub(super) fn on_key_req(&mut self, msg: &mut AmMsg) {
        self.worker.am_release(msg);
        let Some(r) = KeyReq::decode(msg.header()) else {
            return;
        };
        let Some((ep, token)) = self.ready_peer(r.token) else {
            return;
        };
        let region = super::mkey::lookup(r.key);
        let rep = KeyRep {
            token,
            key: r.key,
            found: region.is_some(),
            access: region.as_ref().map_or(0, |g| g.access.0),
            addr: region.as_ref().map_or(0, |g| g.addr),
            len: region.as_ref().map_or(0, |g| g.len),
        }
        .encode();
        let payload = region.map(|g| g.packed.clone());
        self.ctrl_send(ep, wire::AM_KEY_REP, &rep, payload);
    }

    /// A peer answers about one of its keys.
    pub(super) fn on_key_rep(&mut self, msg: &mut AmMsg) {
        let rep = KeyRep::decode(msg.header());
        let packed = msg.data().map(<[u8]>::to_vec);
        self.worker.am_release(msg);
        let (Some(rep), Some(packed)) = (rep, packed) else {
            return;
        };
        let Some(p) = self.peers.get_mut(rep.token as usize) else {
            return;
        };
        let Some(ep) = p.ep else {
            return;
        };
        let rkey = (rep.found && !packed.is_empty())
            .then(|| ep.unpack_rkey(&packed))
            .flatten();
        let entry = match rkey {
            Some(rkey) if rep.len > 0 => RKey::Ready {
                rkey,
                addr: rep.addr,
                len: rep.len,
                access: Access(rep.access),
            },
            _ => RKey::Unknown(Instant::now()),
        };
        p.rkeys.insert(rep.key, entry);
    }

    /// Seeds peer `gid`'s key cache from a memory blob.
    pub(super) fn seed_key(
        &mut self,
        gid: [u8; 16],
        addr: Gid,
        key: u32,
        range: (u64, u64),
        access: Access,
        packed: Vec<u8>,
    ) {
        let i = self.peer_for(gid, addr);
        let p = &mut self.peers[i as usize];
        if !matches!(p.rkeys.get(&key), Some(RKey::Ready { .. })) {
            p.rkeys.insert(
                key,
                RKey::Seeded {
                    packed,
                    addr: range.0,
                    len: range.1,
                    access,
                },
            );
        }
    }

    /// The data endpoint and our token at peer `i`, if messages may go there (wiring or
    /// ready).
    pub(super) fn ready_peer(&self, i: u32) -> Option<(Ep, u32)> {
        let p = self.peers.get(i as usize)?;
        match (p.state, p.ep) {
            (PeerState::Ready | PeerState::Wiring, Some(ep)) => Some((ep, p.remote_token)),
            _ => None,
        }
    }

    /// Sends an ACK for a MSG from peer `i`.
    pub(super) fn send_ack(&mut self, i: u32, qpn: u32, wqe: u32, syndrome: u8) {
        let Some((ep, token)) = self.ready_peer(i) else {
            return;
        };
        let h = Ack {
            token,
            qpn,
            wqe,
            syndrome,
        }
        .encode();
        self.ctrl_send(ep, wire::AM_ACK, &h, None);
    }

    /// Progresses endpoint closes; true when none is left.
    pub(super) fn reap_closes(&mut self) -> bool {
        let w = &self.worker;
        self.closing.retain(|r| !w.close_done(r));
        self.closing.is_empty()
    }

    /// Starts closing every endpoint (shutdown).
    pub(super) fn close_all(&mut self) {
        for i in 0..self.peers.len() {
            let p = &mut self.peers[i];
            let eps = [p.hs_ep.take(), p.ep.take()];
            p.state = PeerState::Dead;
            self.close_peer_eps(i as u32, eps);
        }
        let accepted: Vec<Ep> = self.accepted.iter_mut().filter_map(Option::take).collect();
        for ep in accepted {
            if let Some(r) = self.worker.close_ep(ep, true) {
                self.closing.push(r);
            }
        }
    }
}

/// A GID for log lines: `ip:port#instance`.
pub(super) fn fmt_gid(g: &[u8; 16]) -> String {
    match Gid::decode(g) {
        Some(a) => format!("{}:{}#{:08x}", a.ip, a.port, a.instance),
        None => format!("{g:02x?}"),
    }
}
