//! The RDMA-CM emulation: connection management over a TCP connection per RDMA
//! connection, carrying the same blobs as `doca_rdma_export`, driven by the context's
//! progress (`doca_pe_progress`), results through the connection callbacks.
//!
//! * Server: `listen` binds TCP on the device's IPv4 address and the given port. Each
//!   accepted stream that sends a request takes a free connection (Requested) and is
//!   reported through the request callback; `accept` connects the QP and answers, the
//!   established callback follows at the next progress; `reject` answers no. With no free
//!   connection the request is refused.
//! * Client: `connect` (from `connect_to_addr`) opens the stream (a bounded wait) and sends
//!   the request; the answer arrives in a later progress: the QP is connected and the
//!   established callback runs, or the failure callback (refused, no listener, bad answer).
//! * Either side: a stream that closes after the connection is up reports a disconnection
//!   (the disconnection callback); `close` (from `doca_rdma_connection_disconnect`) closes
//!   it.
//!
//! Messages: request `"DSCM" 1 0 0 0` + 32-byte blob; answer `"DSCM" 2|3 LEN 0 0` + 32-byte
//! blob + LEN bytes of private data (2 accept, 3 reject).

use super::conn::{self, Connection, Phase};
use super::datapath::Datapath;
use super::{connect_qp, ConnEvent, RdmaAddr};
use crate::dev::DevInfo;
use crate::error::{DocaError, DocaResult};
use doca_soft_nic::rdma::CONN_BLOB_LEN;
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

const MAGIC: &[u8; 4] = b"DSCM";
const HEADER: usize = 8;
const MSG: usize = HEADER + CONN_BLOB_LEN;
const REQUEST: u8 = 1;
const ACCEPT: u8 = 2;
const REJECT: u8 = 3;
/// How long `connect_to_addr` waits for the TCP connection itself.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

fn message(kind: u8, blob: &[u8; CONN_BLOB_LEN], private: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(MSG + private.len());
    m.extend_from_slice(MAGIC);
    m.extend_from_slice(&[kind, private.len() as u8, 0, 0]);
    m.extend_from_slice(blob);
    m.extend_from_slice(private);
    m
}

/// A stream and what was read from it so far.
struct Link {
    stream: Option<TcpStream>,
    buf: Vec<u8>,
    /// Client side: waiting for the answer. Server side: false.
    awaiting_answer: bool,
    /// Client side: the stream could not be opened (failure at the next progress).
    failed: bool,
    /// Server side: our blob, for the answer.
    local: [u8; CONN_BLOB_LEN],
}

impl Link {
    /// Reads what is available; Ok(false) on end of stream or error.
    fn fill(&mut self) -> bool {
        let Some(s) = self.stream.as_mut() else {
            return false;
        };
        let mut tmp = [0u8; 512];
        loop {
            match s.read(&mut tmp) {
                Ok(0) => return false,
                Ok(n) => self.buf.extend_from_slice(&tmp[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
    }
}

/// An accepted stream before its request arrived.
struct Incoming {
    link: Link,
}

/// CM state of a started context.
#[derive(Default)]
pub(crate) struct Cm {
    listeners: Vec<(u16, TcpListener)>,
    incoming: Vec<Incoming>,
    links: HashMap<usize, Link>,
}

impl Cm {
    /// Listens on `port` of the device's address.
    pub(crate) fn listen(&mut self, info: &DevInfo, port: u16) -> DocaResult<()> {
        if self.listeners.iter().any(|(p, _)| *p == port) {
            return Err(DocaError::ALREADY_EXIST);
        }
        let ip = crate::gpuqp::bind_addr(info);
        let l = TcpListener::bind(SocketAddr::from((ip, port))).map_err(|e| {
            sdk_err!("rdma", "cannot listen on {ip}:{port}: {e}");
            DocaError::OPERATING_SYSTEM
        })?;
        l.set_nonblocking(true)
            .map_err(|_| DocaError::OPERATING_SYSTEM)?;
        self.listeners.push((port, l));
        Ok(())
    }

    /// Stops listening on `port` (NOT_FOUND when not listening there).
    pub(crate) fn stop_listen(&mut self, port: u16) -> DocaResult<()> {
        let before = self.listeners.len();
        self.listeners.retain(|(p, _)| *p != port);
        if self.listeners.len() == before {
            return Err(DocaError::NOT_FOUND);
        }
        Ok(())
    }

    /// Client: opens a stream for connection `i` and sends the request.
    pub(crate) fn connect(
        &mut self,
        i: usize,
        to: &RdmaAddr,
        local: [u8; CONN_BLOB_LEN],
    ) -> DocaResult<()> {
        let addr = to.socket_addr();
        let stream = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)
            .and_then(|mut s| {
                s.set_nodelay(true)?;
                s.write_all(&message(REQUEST, &local, &[]))?;
                s.set_nonblocking(true)?;
                Ok(s)
            })
            .map_err(|e| sdk_err!("rdma", "RDMA-CM connect to {addr}: {e}"))
            .ok();
        let failed = stream.is_none();
        self.links.insert(
            i,
            Link {
                stream,
                buf: Vec::new(),
                awaiting_answer: true,
                failed,
                local,
            },
        );
        Ok(())
    }

    /// Server: answers the request of connection `i`.
    pub(crate) fn answer(&mut self, i: usize, accept: bool, private: &[u8]) -> DocaResult<()> {
        let link = self.links.get_mut(&i).ok_or(DocaError::BAD_STATE)?;
        let s = link.stream.as_mut().ok_or(DocaError::CONNECTION_RESET)?;
        let kind = if accept { ACCEPT } else { REJECT };
        let _ = s.set_nonblocking(false);
        let r = s.write_all(&message(kind, &link.local, private));
        let _ = s.set_nonblocking(true);
        r.map_err(|e| {
            sdk_err!("rdma", "RDMA-CM answer for connection {i}: {e}");
            DocaError::CONNECTION_RESET
        })?;
        if !accept {
            self.links.remove(&i);
        }
        Ok(())
    }

    /// Closes connection `i`'s stream (the peer sees a disconnection).
    pub(crate) fn close(&mut self, i: usize) {
        if let Some(mut l) = self.links.remove(&i) {
            if let Some(s) = l.stream.take() {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }

    /// One round: accepts streams, reads requests and answers, notices closed streams.
    pub(crate) fn progress(
        &mut self,
        conns: &[Connection],
        dp: &Datapath,
        out: &mut Vec<ConnEvent>,
    ) {
        let ptr = |i: usize| &conns[i] as *const Connection as *mut Connection;
        for (_, l) in &self.listeners {
            while let Ok((s, _)) = l.accept() {
                if s.set_nonblocking(true).is_ok() {
                    let _ = s.set_nodelay(true);
                    self.incoming.push(Incoming {
                        link: Link {
                            stream: Some(s),
                            buf: Vec::new(),
                            awaiting_answer: false,
                            failed: false,
                            local: [0; CONN_BLOB_LEN],
                        },
                    });
                }
            }
        }
        // Requests.
        let mut keep = Vec::new();
        for mut inc in std::mem::take(&mut self.incoming) {
            let open = inc.link.fill();
            if inc.link.buf.len() < MSG {
                if open {
                    keep.push(inc);
                }
                continue;
            }
            let b = &inc.link.buf;
            let remote = (&b[..4] == MAGIC && b[4] == REQUEST)
                .then(|| conn::decode_remote(&b[HEADER..MSG]).ok())
                .flatten();
            let Some(remote) = remote else {
                sdk_err!("rdma", "RDMA-CM: a malformed request was refused");
                continue;
            };
            let Some(i) = conns
                .iter()
                .position(|c| c.transition(Phase::Free, Phase::Requested))
            else {
                sdk_err!(
                    "rdma",
                    "RDMA-CM: a request was refused: every connection is in use"
                );
                if let Some(s) = inc.link.stream.as_mut() {
                    let _ = s.write_all(&message(REJECT, &[0; CONN_BLOB_LEN], &[]));
                }
                continue;
            };
            conns[i].set_remote(remote);
            inc.link.local = conns[i].local_info();
            inc.link.buf.clear();
            self.links.insert(i, inc.link);
            out.push(ConnEvent::Request(ptr(i)));
        }
        self.incoming = keep;
        // Answers and closed streams.
        let mut gone = Vec::new();
        for (&i, link) in self.links.iter_mut() {
            let c = &conns[i];
            if link.failed {
                c.set_phase(Phase::Failed);
                out.push(ConnEvent::Failure(ptr(i)));
                gone.push(i);
                continue;
            }
            if link.awaiting_answer {
                let open = link.fill();
                if link.buf.len() >= MSG {
                    let b = &link.buf;
                    let plen = b[5] as usize;
                    if b.len() < MSG + plen && open {
                        continue;
                    }
                    link.awaiting_answer = false;
                    let answer = (&b[..4] == MAGIC && b[4] == ACCEPT)
                        .then(|| conn::decode_remote(&b[HEADER..MSG]).ok())
                        .flatten();
                    link.buf.clear();
                    let ok = answer.and_then(|info| {
                        connect_qp(dp, i, &info).ok()?;
                        c.set_remote(info);
                        Some(())
                    });
                    if ok.is_some() && c.transition(Phase::Connecting, Phase::Connected) {
                        out.push(ConnEvent::Established(ptr(i)));
                    } else {
                        sdk_err!("rdma", "RDMA-CM: connection {i} was refused by the peer");
                        c.set_phase(Phase::Failed);
                        out.push(ConnEvent::Failure(ptr(i)));
                        gone.push(i);
                    }
                } else if !open {
                    sdk_err!(
                        "rdma",
                        "RDMA-CM: the peer closed before answering (connection {i})"
                    );
                    c.set_phase(Phase::Failed);
                    out.push(ConnEvent::Failure(ptr(i)));
                    gone.push(i);
                }
                continue;
            }
            if matches!(c.phase(), Phase::Connected | Phase::Accepted) && !link.fill() {
                c.set_phase(Phase::Disconnected);
                out.push(ConnEvent::Disconnect(ptr(i)));
                gone.push(i);
            }
            link.buf.clear();
        }
        for i in gone {
            self.links.remove(&i);
        }
    }
}
