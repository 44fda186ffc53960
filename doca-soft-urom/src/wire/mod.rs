//! The UROM wire protocol between hosts, the daemon and worker processes.
//!
//! Every message is one frame: a 16-byte header then `len` payload bytes, little endian:
//!
//! | off | field | value |
//! |---|---|---|
//! | 0 | magic `u32` | `0x4d4f5255` ("UROM") |
//! | 4 | version `u16` | `VERSION` |
//! | 6 | kind `u16` | [`Msg`] discriminant |
//! | 8 | len `u32` | payload length, at most the receiver's limit |
//! | 12 | reserved `u32` | 0 |
//!
//! Payload fields are fixed-width integers, byte strings as `u32` length + bytes, lists as
//! `u32` count + items. Decoding is strict: bad magic/version/kind, a length over the limit,
//! a truncated field or trailing bytes are protocol errors; the receiver answers with
//! [`Msg::Error`] when it can and drops the connection (it never trusts the peer further).
//!
//! Flows: host -> daemon `Hello`/`HelloOk`, `Spawn`/`Spawned`, `Destroy`/`Destroyed`,
//! `GidQuery`/`GidList`; host -> worker `Attach`/`Attached` (the worker's token, and both
//! UCX worker addresses: the connection then moves to UCX, see `urom::transport`),
//! `Cmd`/`Notify`, `DomainInit`/`DomainOk`; `Ping`/`Pong` on either (liveness). Requests
//! carry a `req` cookie echoed by their reply. The payloads of `Cmd` and `Notify` have a
//! codec of their own: [`command`].

pub mod command;

use crate::error::{DocaError, DocaResult};

/// Frame magic.
pub(crate) const MAGIC: u32 = 0x4d4f_5255;
/// Protocol version.
pub(crate) const VERSION: u16 = 3;
/// Frame header size.
pub const HEADER_LEN: usize = 16;
/// Room a frame needs beyond the UROM message size limit (our own fields).
pub const OVERHEAD: usize = 256;
/// Frame kind of [`Msg::Cmd`].
pub(crate) const KIND_CMD: u16 = 12;
/// Frame kind of [`Msg::Notify`].
pub const KIND_NOTIFY: u16 = 13;

/// Starts a frame of `kind` at the end of `out` (length patched by [`frame_end`]); returns
/// where it starts. With [`frame_end`] this lets the command path build a frame in place,
/// in a reused buffer, instead of encoding a [`Msg`] (which allocates).
pub(crate) fn frame_begin(out: &mut Vec<u8>, kind: u16) -> usize {
    let at = out.len();
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    at
}

/// Completes the frame started at `at`: everything after its header is the payload.
pub(crate) fn frame_end(out: &mut [u8], at: usize) {
    let len = (out.len() - at - HEADER_LEN) as u32;
    out[at + 8..at + 12].copy_from_slice(&len.to_le_bytes());
}

/// One plugin as the daemon reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginDesc {
    /// Daemon-assigned id (a single bit).
    pub id: u64,
    /// `urom_plugin_get_version` result.
    pub version: u64,
    /// File name without `.so`.
    pub name: String,
}

/// A worker spawn request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnReq {
    /// Request cookie.
    pub req: u64,
    /// Worker id, or `u64::MAX` (ANY).
    pub worker_id: u64,
    /// Group id.
    pub gid: u32,
    /// Plugin mask.
    pub plugins: u64,
    /// CPU set bitmap (16 words).
    pub cpuset: Vec<u64>,
    /// `NAME=value` entries.
    pub env: Vec<String>,
}

/// A domain member as sent to workers: domain id and each plugin's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPeer {
    /// Domain id (the plugin `dest`).
    pub domain_id: u64,
    /// (plugin id, address bytes).
    pub addrs: Vec<(u64, Vec<u8>)>,
}

/// A domain buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainBuf {
    /// Owning domain id.
    pub domain_id: u64,
    /// Start address.
    pub va: u64,
    /// Length.
    pub len: u64,
    /// Packed memory handle.
    pub memh: Vec<u8>,
    /// Packed remote key.
    pub mkey: Vec<u8>,
}

/// Every message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// Failure reply: `req` of the failed request (0 if none), DOCA error code.
    Error { req: u64, code: u32 },
    /// Host greets the daemon with its message size limit.
    Hello { max_msg: u64 },
    /// Daemon's plugins and CPU set.
    HelloOk {
        plugins: Vec<PluginDesc>,
        cpuset: Vec<u64>,
        max_msg: u64,
    },
    /// Spawn (or reuse) a worker.
    Spawn(SpawnReq),
    /// Worker is up and listens on `port` of the daemon's address; `token` is what
    /// attaching to it takes.
    Spawned {
        req: u64,
        worker_id: u64,
        port: u16,
        token: Vec<u8>,
    },
    /// Tear a worker down (this host's use of it).
    Destroy { req: u64, worker_id: u64 },
    /// Worker torn down.
    Destroyed { req: u64, worker_id: u64 },
    /// Ids of workers with this gid.
    GidQuery { req: u64, gid: u32 },
    /// Reply to `GidQuery`.
    GidList { req: u64, ids: Vec<u64> },
    /// Host attaches to a worker process, with the token the daemon gave it and its UCX
    /// worker address (empty: keep the data on this connection). `unwatched`: the host
    /// offers an endpoint without UCX's peer failure detection, which UCX may put on shared
    /// memory (the host sees both ends of the connection on one machine and
    /// `DOCA_SOFT_UROM_UCX_WATCH` does not ask for watching; see `urom::transport`).
    Attach {
        worker_id: u64,
        token: Vec<u8>,
        ucx_addr: Vec<u8>,
        unwatched: bool,
    },
    /// Worker's reply: the connection's `dest_id`, plugin addresses, and the worker's UCX
    /// address (empty: the data stays on this connection; else both sides move to UCX
    /// endpoints made from each other's address). `unwatched`: the worker's decision, which
    /// the host follows (both endpoints must agree: UCX drops the traffic of a pair whose
    /// error handling differs); true only when the host offered it.
    Attached {
        dest_id: u64,
        addrs: Vec<(u64, Vec<u8>)>,
        ucx_addr: Vec<u8>,
        unwatched: bool,
    },
    /// A `urom_worker_cmd` (24-byte header + plugin command).
    Cmd(Vec<u8>),
    /// A packed `urom_worker_notify` (32-byte header + plugin notification).
    Notify(Vec<u8>),
    /// Domain setup pushed to a worker.
    DomainInit {
        req: u64,
        peers: Vec<DomainPeer>,
        bufs: Vec<DomainBuf>,
    },
    /// Domain setup accepted.
    DomainOk { req: u64 },
    /// Are you there? (answered at once by `Pong` with the same `seq`).
    Ping { seq: u64 },
    /// Answer to `Ping`.
    Pong { seq: u64 },
}

struct W(Vec<u8>);
impl W {
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn bool(&mut self, v: bool) {
        self.0.push(u8::from(v));
    }
    fn u64s(&mut self, v: &[u64]) {
        self.u32(v.len() as u32);
        v.iter().for_each(|x| self.u64(*x));
    }
    fn addrs(&mut self, v: &[(u64, Vec<u8>)]) {
        self.u32(v.len() as u32);
        for (id, a) in v {
            self.u64(*id);
            self.bytes(a);
        }
    }
}

struct R<'a>(&'a [u8]);
impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> DocaResult<&'a [u8]> {
        if self.0.len() < n {
            return Err(DocaError::INVALID_VALUE);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u16(&mut self) -> DocaResult<u16> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> DocaResult<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> DocaResult<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn bytes(&mut self) -> DocaResult<Vec<u8>> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    /// One byte, 0 or 1 (anything else is malformed).
    fn bool(&mut self) -> DocaResult<bool> {
        match self.take(1)? {
            [0] => Ok(false),
            [1] => Ok(true),
            _ => Err(DocaError::INVALID_VALUE),
        }
    }
    fn string(&mut self) -> DocaResult<String> {
        String::from_utf8(self.bytes()?).map_err(|_| DocaError::INVALID_VALUE)
    }
    fn count(&mut self, item_min: usize) -> DocaResult<usize> {
        let n = self.u32()? as usize;
        // A count that cannot fit in the rest of the frame is malformed (and must not make
        // us allocate for it).
        if n.saturating_mul(item_min) > self.0.len() {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(n)
    }
    fn u64s(&mut self) -> DocaResult<Vec<u64>> {
        let n = self.count(8)?;
        (0..n).map(|_| self.u64()).collect()
    }
    fn addrs(&mut self) -> DocaResult<Vec<(u64, Vec<u8>)>> {
        let n = self.count(12)?;
        (0..n).map(|_| Ok((self.u64()?, self.bytes()?))).collect()
    }
    fn end(self) -> DocaResult<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(DocaError::INVALID_VALUE)
        }
    }
}

impl Msg {
    fn kind(&self) -> u16 {
        match self {
            Msg::Error { .. } => 1,
            Msg::Hello { .. } => 2,
            Msg::HelloOk { .. } => 3,
            Msg::Spawn(_) => 4,
            Msg::Spawned { .. } => 5,
            Msg::Destroy { .. } => 6,
            Msg::Destroyed { .. } => 7,
            Msg::GidQuery { .. } => 8,
            Msg::GidList { .. } => 9,
            Msg::Attach { .. } => 10,
            Msg::Attached { .. } => 11,
            Msg::Cmd(_) => KIND_CMD,
            Msg::Notify(_) => KIND_NOTIFY,
            Msg::DomainInit { .. } => 14,
            Msg::DomainOk { .. } => 15,
            Msg::Ping { .. } => 16,
            Msg::Pong { .. } => 17,
        }
    }

    /// Encodes one frame (header + payload).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = W(Vec::with_capacity(64));
        match self {
            Msg::Error { req, code } => {
                w.u64(*req);
                w.u32(*code);
            }
            Msg::Hello { max_msg } => w.u64(*max_msg),
            Msg::HelloOk {
                plugins,
                cpuset,
                max_msg,
            } => {
                w.u32(plugins.len() as u32);
                for p in plugins {
                    w.u64(p.id);
                    w.u64(p.version);
                    w.bytes(p.name.as_bytes());
                }
                w.u64s(cpuset);
                w.u64(*max_msg);
            }
            Msg::Spawn(s) => {
                w.u64(s.req);
                w.u64(s.worker_id);
                w.u32(s.gid);
                w.u64(s.plugins);
                w.u64s(&s.cpuset);
                w.u32(s.env.len() as u32);
                s.env.iter().for_each(|e| w.bytes(e.as_bytes()));
            }
            Msg::Spawned {
                req,
                worker_id,
                port,
                token,
            } => {
                w.u64(*req);
                w.u64(*worker_id);
                w.u16(*port);
                w.bytes(token);
            }
            Msg::Destroy { req, worker_id } | Msg::Destroyed { req, worker_id } => {
                w.u64(*req);
                w.u64(*worker_id);
            }
            Msg::GidQuery { req, gid } => {
                w.u64(*req);
                w.u32(*gid);
            }
            Msg::GidList { req, ids } => {
                w.u64(*req);
                w.u64s(ids);
            }
            Msg::Attach {
                worker_id,
                token,
                ucx_addr,
                unwatched,
            } => {
                w.u64(*worker_id);
                w.bytes(token);
                w.bytes(ucx_addr);
                w.bool(*unwatched);
            }
            Msg::Attached {
                dest_id,
                addrs,
                ucx_addr,
                unwatched,
            } => {
                w.u64(*dest_id);
                w.addrs(addrs);
                w.bytes(ucx_addr);
                w.bool(*unwatched);
            }
            Msg::Cmd(b) | Msg::Notify(b) => w.0.extend_from_slice(b),
            Msg::DomainInit { req, peers, bufs } => {
                w.u64(*req);
                w.u32(peers.len() as u32);
                for p in peers {
                    w.u64(p.domain_id);
                    w.addrs(&p.addrs);
                }
                w.u32(bufs.len() as u32);
                for b in bufs {
                    w.u64(b.domain_id);
                    w.u64(b.va);
                    w.u64(b.len);
                    w.bytes(&b.memh);
                    w.bytes(&b.mkey);
                }
            }
            Msg::DomainOk { req } => w.u64(*req),
            Msg::Ping { seq } | Msg::Pong { seq } => w.u64(*seq),
        }
        let payload = w.0;
        let mut f = W(Vec::with_capacity(HEADER_LEN + payload.len()));
        f.u32(MAGIC);
        f.u16(VERSION);
        f.u16(self.kind());
        f.u32(payload.len() as u32);
        f.u32(0);
        f.0.extend_from_slice(&payload);
        f.0
    }

    /// Decodes one payload of `kind`.
    pub fn decode(kind: u16, payload: &[u8]) -> DocaResult<Msg> {
        let mut r = R(payload);
        let m = match kind {
            1 => Msg::Error {
                req: r.u64()?,
                code: r.u32()?,
            },
            2 => Msg::Hello { max_msg: r.u64()? },
            3 => {
                let n = r.count(20)?;
                let mut plugins = Vec::with_capacity(n);
                for _ in 0..n {
                    plugins.push(PluginDesc {
                        id: r.u64()?,
                        version: r.u64()?,
                        name: r.string()?,
                    });
                }
                Msg::HelloOk {
                    plugins,
                    cpuset: r.u64s()?,
                    max_msg: r.u64()?,
                }
            }
            4 => {
                let req = r.u64()?;
                let worker_id = r.u64()?;
                let gid = r.u32()?;
                let plugins = r.u64()?;
                let cpuset = r.u64s()?;
                let n = r.count(4)?;
                let env = (0..n).map(|_| r.string()).collect::<DocaResult<_>>()?;
                Msg::Spawn(SpawnReq {
                    req,
                    worker_id,
                    gid,
                    plugins,
                    cpuset,
                    env,
                })
            }
            5 => Msg::Spawned {
                req: r.u64()?,
                worker_id: r.u64()?,
                port: r.u16()?,
                token: r.bytes()?,
            },
            6 => Msg::Destroy {
                req: r.u64()?,
                worker_id: r.u64()?,
            },
            7 => Msg::Destroyed {
                req: r.u64()?,
                worker_id: r.u64()?,
            },
            8 => Msg::GidQuery {
                req: r.u64()?,
                gid: r.u32()?,
            },
            9 => Msg::GidList {
                req: r.u64()?,
                ids: r.u64s()?,
            },
            10 => Msg::Attach {
                worker_id: r.u64()?,
                token: r.bytes()?,
                ucx_addr: r.bytes()?,
                unwatched: r.bool()?,
            },
            11 => Msg::Attached {
                dest_id: r.u64()?,
                addrs: r.addrs()?,
                ucx_addr: r.bytes()?,
                unwatched: r.bool()?,
            },
            KIND_CMD => Msg::Cmd(r.take(payload.len())?.to_vec()),
            KIND_NOTIFY => Msg::Notify(r.take(payload.len())?.to_vec()),
            14 => {
                let req = r.u64()?;
                let n = r.count(12)?;
                let mut peers = Vec::with_capacity(n);
                for _ in 0..n {
                    peers.push(DomainPeer {
                        domain_id: r.u64()?,
                        addrs: r.addrs()?,
                    });
                }
                let n = r.count(32)?;
                let mut bufs = Vec::with_capacity(n);
                for _ in 0..n {
                    bufs.push(DomainBuf {
                        domain_id: r.u64()?,
                        va: r.u64()?,
                        len: r.u64()?,
                        memh: r.bytes()?,
                        mkey: r.bytes()?,
                    });
                }
                Msg::DomainInit { req, peers, bufs }
            }
            15 => Msg::DomainOk { req: r.u64()? },
            16 => Msg::Ping { seq: r.u64()? },
            17 => Msg::Pong { seq: r.u64()? },
            _ => return Err(DocaError::NOT_SUPPORTED),
        };
        r.end()?;
        Ok(m)
    }
}

/// Splits a byte stream into messages, strictly.
pub struct Decoder {
    buf: Vec<u8>,
    // Bytes of `buf` before this were handed out already (dropped at the next push, so a
    // frame borrowed from `next_frame` stays valid until then; the buffer keeps its
    // capacity: a steady stream allocates nothing).
    start: usize,
    max_payload: usize,
    broken: bool,
}

impl Decoder {
    /// A decoder that refuses payloads over `max_payload` bytes.
    pub fn new(max_payload: usize) -> Decoder {
        Decoder {
            buf: Vec::new(),
            start: 0,
            max_payload,
            broken: false,
        }
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.broken {
            return;
        }
        if self.start == self.buf.len() {
            self.buf.clear();
        } else if self.start > 0 {
            self.buf.drain(..self.start);
        }
        self.start = 0;
        self.buf.extend_from_slice(bytes);
    }

    fn fail(&mut self, e: DocaError) -> DocaError {
        self.broken = true;
        self.buf.clear();
        self.start = 0;
        e
    }

    /// The next complete frame as (kind, payload) without decoding it, `Ok(None)` if more
    /// bytes are needed, or the framing error (the decoder stays broken after it).
    pub fn next_frame(&mut self) -> DocaResult<Option<(u16, &[u8])>> {
        if self.broken {
            return Err(DocaError::BAD_STATE);
        }
        let rest = &self.buf[self.start..];
        if rest.len() < HEADER_LEN {
            return Ok(None);
        }
        let mut h = R(&rest[..HEADER_LEN]);
        let (magic, version, kind, len, reserved) =
            (h.u32()?, h.u16()?, h.u16()?, h.u32()?, h.u32()?);
        let bad = if magic != MAGIC || reserved != 0 {
            Some(DocaError::INVALID_VALUE)
        } else if version != VERSION {
            Some(DocaError::UNSUPPORTED_VERSION)
        } else if len as usize > self.max_payload {
            Some(DocaError::TOO_BIG)
        } else {
            None
        };
        if let Some(e) = bad {
            return Err(self.fail(e));
        }
        let total = HEADER_LEN + len as usize;
        if rest.len() < total {
            return Ok(None);
        }
        let at = self.start;
        self.start += total;
        Ok(Some((kind, &self.buf[at + HEADER_LEN..at + total])))
    }

    /// The next complete message, `Ok(None)` if more bytes are needed, or the protocol
    /// error (after which the decoder stays broken: the connection must be dropped).
    pub fn next_msg(&mut self) -> DocaResult<Option<Msg>> {
        let m = match self.next_frame()? {
            None => return Ok(None),
            Some((kind, payload)) => Msg::decode(kind, payload),
        };
        m.map(Some).map_err(|e| self.fail(e))
    }

    /// Marks the stream broken by a frame the caller refused (same as a decode error).
    pub fn reject(&mut self, e: DocaError) -> DocaError {
        self.fail(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(m: Msg) {
        let f = m.encode();
        let mut d = Decoder::new(1 << 20);
        // Byte by byte: framing must not depend on how the stream is split.
        for b in &f {
            assert!(d.next_msg().unwrap().is_none());
            d.push(std::slice::from_ref(b));
        }
        assert_eq!(d.next_msg().unwrap(), Some(m));
        assert_eq!(d.next_msg().unwrap(), None);
    }

    #[test]
    fn every_message_roundtrips() {
        roundtrip(Msg::Error { req: 7, code: 16 });
        roundtrip(Msg::Hello { max_msg: 4096 });
        roundtrip(Msg::HelloOk {
            plugins: vec![PluginDesc {
                id: 2,
                version: 1,
                name: "worker_graph".into(),
            }],
            cpuset: vec![0xff; 16],
            max_msg: 4096,
        });
        roundtrip(Msg::Spawn(SpawnReq {
            req: 1,
            worker_id: u64::MAX,
            gid: 3,
            plugins: 4,
            cpuset: vec![1, 2],
            env: vec!["A=b".into()],
        }));
        roundtrip(Msg::Spawned {
            req: 1,
            worker_id: 9,
            port: 4444,
            token: vec![7; 16],
        });
        roundtrip(Msg::Attach {
            worker_id: 9,
            token: vec![7; 16],
            ucx_addr: vec![1, 2, 3],
            unwatched: true,
        });
        roundtrip(Msg::Ping { seq: 5 });
        roundtrip(Msg::Pong { seq: 5 });
        roundtrip(Msg::GidList {
            req: 2,
            ids: vec![1, 3],
        });
        roundtrip(Msg::Attached {
            dest_id: 5,
            addrs: vec![(1, vec![9, 8])],
            ucx_addr: vec![],
            unwatched: false,
        });
        roundtrip(Msg::Cmd(vec![1, 2, 3]));
        roundtrip(Msg::DomainInit {
            req: 3,
            peers: vec![DomainPeer {
                domain_id: 0,
                addrs: vec![(1, vec![1])],
            }],
            bufs: vec![DomainBuf {
                domain_id: 0,
                va: 1,
                len: 2,
                memh: vec![3],
                mkey: vec![4],
            }],
        });
    }

    #[test]
    fn bad_magic_version_and_size_are_rejected() {
        let mut f = Msg::Hello { max_msg: 1 }.encode();
        f[0] ^= 1;
        let mut d = Decoder::new(64);
        d.push(&f);
        assert_eq!(d.next_msg(), Err(DocaError::INVALID_VALUE));
        assert_eq!(d.next_msg(), Err(DocaError::BAD_STATE), "stays broken");

        let mut f = Msg::Hello { max_msg: 1 }.encode();
        f[4] = 9;
        let mut d = Decoder::new(64);
        d.push(&f);
        assert_eq!(d.next_msg(), Err(DocaError::UNSUPPORTED_VERSION));

        let f = Msg::Cmd(vec![0; 100]).encode();
        let mut d = Decoder::new(64);
        d.push(&f[..HEADER_LEN]);
        assert_eq!(
            d.next_msg(),
            Err(DocaError::TOO_BIG),
            "rejected from the header alone"
        );
    }

    #[test]
    fn a_flag_byte_other_than_0_or_1_is_malformed() {
        let mut f = Msg::Attached {
            dest_id: 1,
            addrs: vec![],
            ucx_addr: vec![1],
            unwatched: true,
        }
        .encode();
        *f.last_mut().unwrap() = 2;
        let mut d = Decoder::new(64);
        d.push(&f);
        assert_eq!(d.next_msg(), Err(DocaError::INVALID_VALUE));
    }

    #[test]
    fn frames_built_in_place_match_encode_and_decode_borrowed() {
        let body = b"0123456789abcdefghijklmnopqrstuv".to_vec();
        let mut f = Vec::new();
        let at = frame_begin(&mut f, KIND_CMD);
        f.extend_from_slice(&body);
        frame_end(&mut f, at);
        assert_eq!(f, Msg::Cmd(body.clone()).encode());
        // Two frames split across pushes: borrowed frames come out whole, in order.
        let n = Msg::Notify(vec![9; 40]).encode();
        let stream = [f.as_slice(), n.as_slice()].concat();
        let mut d = Decoder::new(1024);
        d.push(&stream[..20]);
        assert_eq!(d.next_frame().unwrap(), None);
        d.push(&stream[20..50]);
        assert_eq!(d.next_frame().unwrap(), Some((KIND_CMD, body.as_slice())));
        assert_eq!(d.next_frame().unwrap(), None);
        d.push(&stream[50..]);
        assert_eq!(
            d.next_frame().unwrap(),
            Some((KIND_NOTIFY, [9u8; 40].as_slice()))
        );
        assert_eq!(d.next_frame().unwrap(), None);
        // The buffer is reused: once it held the traffic, the same traffic does not grow it.
        let mut cap = 0;
        for i in 0..100 {
            d.push(&stream);
            assert!(d.next_frame().unwrap().is_some());
            assert!(d.next_frame().unwrap().is_some());
            if i == 0 {
                cap = d.buf.capacity();
            }
        }
        assert_eq!(d.buf.capacity(), cap);
        // A refused frame breaks the stream like a decode error.
        assert_eq!(d.reject(DocaError::INVALID_VALUE), DocaError::INVALID_VALUE);
        d.push(&stream);
        assert_eq!(d.next_frame(), Err(DocaError::BAD_STATE));
    }

    #[test]
    fn truncated_trailing_and_unknown_payloads_are_rejected() {
        assert_eq!(Msg::decode(2, &[0; 7]), Err(DocaError::INVALID_VALUE));
        assert_eq!(Msg::decode(2, &[0; 9]), Err(DocaError::INVALID_VALUE));
        assert_eq!(Msg::decode(99, &[]), Err(DocaError::NOT_SUPPORTED));
        // A list count far larger than the frame.
        let mut p = 0u64.to_le_bytes().to_vec();
        p.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(Msg::decode(9, &p), Err(DocaError::INVALID_VALUE));
    }
}
