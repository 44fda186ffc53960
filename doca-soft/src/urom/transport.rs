//! [`Node`]: one UCP context and worker (through `ucx_sys`'s safe layer) with connections
//! reached through listeners (client/server sockaddr), carrying byte streams.
//!
//! UROM's host library, daemon and workers all talk through `Node`s. A node is not
//! thread-safe on its own; owners keep it behind a mutex (the UCX worker is created
//! SERIALIZED so that handing the node between threads is allowed).
//!
//! Stream semantics: [`Node::poll`] progresses the worker, accepts pending connection
//! requests, and returns received bytes per connection as they arrive; framing belongs to
//! the caller (see `urom::wire`). Sends copy their buffer and keep it until UCX reports
//! completion. A peer that dies (even by SIGKILL) shows up as [`Event::Closed`] through the
//! endpoint error handler (error handling mode PEER).

use crate::error::{DocaError, DocaResult};
use std::collections::HashMap;
use std::net::SocketAddrV4;
use ucx_sys::{
    CloseMode, Context, Endpoint, Features, Listener, PendingSend, Sent, ThreadMode, Worker,
};

/// A connection handle inside one node.
pub type ConnId = u64;

/// Something that happened on a node.
#[derive(Debug)]
pub enum Event {
    /// A peer connected to our listener.
    Accepted(ConnId),
    /// Bytes arrived on a connection (in order; frames may be split or merged).
    Data(ConnId, Vec<u8>),
    /// The connection failed or the peer went away.
    Closed(ConnId),
}

/// [`Event`] without owning the bytes: what [`Node::poll_with`] reports (the data is UCX's
/// receive buffer, valid for the call only, so the steady path copies nothing it need not).
#[derive(Debug)]
pub enum EventRef<'a> {
    /// A peer connected to our listener.
    Accepted(ConnId),
    /// Bytes arrived on a connection.
    Data(ConnId, &'a [u8]),
    /// The connection failed or the peer went away.
    Closed(ConnId),
}

/// Most send buffers a node keeps for reuse (each as large as the largest frame sent).
const SPARE_BUFS: usize = 32;

struct Conn {
    ep: Endpoint,
    closed: bool,
}

/// One UCP context + worker, an optional listener and its connections.
pub struct Node {
    // Field order is drop order: connections and sends go before the listener and worker
    // (each of them also keeps the worker alive until it is gone).
    conns: HashMap<ConnId, Conn>,
    sends: Vec<PendingSend<Vec<u8>>>,
    // Buffers of completed sends, reused by `send_with` (steady sends allocate nothing).
    spare: Vec<Vec<u8>>,
    listener: Option<Listener>,
    worker: Worker,
    next_id: ConnId,
}

// SAFETY: the UCX worker is created ThreadMode::Serialized, so it may be used from any
// thread as long as calls do not overlap; the node owns the worker and everything made on
// it (listener, endpoints, sends) and touches them only through `&mut self` (the `&self`
// methods only read).
unsafe impl Send for Node {}

/// Logs a failed UCX call and maps it to the DOCA code the caller reports.
fn fail(e: ucx_sys::Error, code: DocaError) -> DocaError {
    sdk_err!("ucx", "{e}");
    code
}

impl Node {
    /// A new node. Unless `UCX_TLS` is set, connections use TCP and shared memory (`tcp,sm`;
    /// connection establishment always goes through the TCP sockaddr CM). Fails (logged,
    /// naming both versions) when the UCX loaded is older than the one built against.
    pub fn new() -> DocaResult<Node> {
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
        Ok(Node {
            conns: HashMap::new(),
            sends: Vec::new(),
            spare: Vec::new(),
            listener: None,
            worker,
            next_id: 1,
        })
    }

    /// Listens on `addr` (port 0 picks one); returns the bound port.
    pub fn listen(&mut self, addr: SocketAddrV4) -> DocaResult<u16> {
        if self.listener.is_some() {
            return Err(DocaError::BAD_STATE);
        }
        let l = Listener::bind(&self.worker, addr.into()).map_err(|e| {
            sdk_err!("ucx", "listen on {addr}: {e}");
            DocaError::IO_FAILED
        })?;
        let port = l
            .local_addr()
            .map_err(|e| fail(e, DocaError::DRIVER))?
            .port();
        self.listener = Some(l);
        Ok(port)
    }

    fn add_conn(&mut self, ep: Endpoint) -> ConnId {
        let id = self.next_id;
        self.next_id += 1;
        self.conns.insert(id, Conn { ep, closed: false });
        id
    }

    /// Connects to a listener at `addr`. The connection completes asynchronously; sends may
    /// be posted at once.
    pub fn connect(&mut self, addr: SocketAddrV4) -> DocaResult<ConnId> {
        let ep = Endpoint::connect(&self.worker, addr.into()).map_err(|e| {
            sdk_warn!("ucx", "{e}");
            DocaError::CONNECTION_ABORTED
        })?;
        Ok(self.add_conn(ep))
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

    fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < SPARE_BUFS && buf.capacity() > 0 {
            self.spare.push(buf);
        }
    }

    fn post(&mut self, conn: ConnId, bytes: Vec<u8>) -> DocaResult<()> {
        let sent = match self.conns.get(&conn) {
            Some(c) if !c.closed => c.ep.stream_send(bytes),
            _ => {
                self.recycle(bytes);
                return Err(DocaError::NOT_CONNECTED);
            }
        };
        match sent {
            Sent::Done(b) => {
                self.recycle(b);
                Ok(())
            }
            Sent::Pending(p) => {
                self.sends.push(p);
                Ok(())
            }
            Sent::Failed(_, b) => {
                self.recycle(b);
                Err(DocaError::CONNECTION_RESET)
            }
        }
    }

    /// Progresses UCX and returns what happened since the last call.
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

    /// Progresses UCX and hands what happened since the last call to `f`, received bytes
    /// straight from UCX's buffers. Allocates nothing unless a connection is accepted.
    /// Returns whether anything happened (an event, or a send completing).
    pub fn poll_with(&mut self, mut f: impl FnMut(EventRef<'_>)) -> bool {
        let mut busy = self.worker.progress_all();
        let requests = self
            .listener
            .as_ref()
            .map(Listener::take_requests)
            .unwrap_or_default();
        for req in requests {
            match Endpoint::accept(&self.worker, req) {
                Ok(ep) => {
                    let id = self.add_conn(ep);
                    busy = true;
                    f(EventRef::Accepted(id));
                }
                Err(e) => sdk_warn!("ucx", "{e}"),
            }
        }
        for (&id, c) in self.conns.iter_mut() {
            if !c.closed && c.ep.failure().is_some() {
                c.closed = true;
                busy = true;
                f(EventRef::Closed(id));
            }
        }
        for (&id, c) in self.conns.iter() {
            if c.closed {
                continue;
            }
            while let Some(bytes) = c.ep.stream_recv() {
                busy = true;
                f(EventRef::Data(id, &bytes));
            }
        }
        let mut i = 0;
        while i < self.sends.len() {
            if !self.sends[i].is_done() {
                i += 1;
                continue;
            }
            if let Ok((buf, _)) = self.sends.swap_remove(i).finish() {
                self.recycle(buf);
            }
            busy = true;
        }
        busy
    }

    /// Whether sends are still waiting for UCX.
    pub fn sends_pending(&self) -> bool {
        !self.sends.is_empty()
    }

    /// The UCX event descriptor (readable when the worker has something to do after
    /// [`Node::arm`]), if the worker has one.
    pub fn event_fd(&self) -> Option<i32> {
        self.worker.event_fd()
    }

    /// Arms the event descriptor for a sleep: `true` when armed, `false` when UCX has
    /// work pending (progress again instead of sleeping).
    pub fn arm(&mut self) -> bool {
        self.worker.arm().unwrap_or(false)
    }

    /// Blocks until UCX has something to do or `timeout_ms` passes.
    pub fn wait(&mut self, timeout_ms: i32) {
        self.worker.wait(timeout_ms);
    }

    /// Closes one connection at once (force close: unsent data is dropped). Used for
    /// connections that already failed.
    pub fn close(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.remove(&conn) {
            c.ep.close(CloseMode::Force);
        }
    }

    /// Closes one connection after delivering what was sent on it (bounded wait).
    pub fn close_flushed(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.remove(&conn) {
            let mode = if c.closed {
                CloseMode::Force
            } else {
                CloseMode::Flush
            };
            c.ep.close(mode);
        }
    }

    /// Progresses until queued sends complete (bounded), e.g. before closing.
    pub fn flush(&mut self, timeout: std::time::Duration) {
        let deadline = std::time::Instant::now() + timeout;
        while self.sends_pending() && std::time::Instant::now() < deadline {
            let _ = self.poll();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.flush(std::time::Duration::from_millis(200));
        // The fields then close the connections (force), cancel what is still in flight,
        // and destroy the listener, the worker and the context, in that order.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn loopback(port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
    }

    #[test]
    fn two_nodes_exchange_bytes_and_see_close() {
        let mut server = Node::new().expect("server node");
        let port = server.listen(loopback(0)).expect("listen");
        assert_ne!(port, 0);
        let mut client = Node::new().expect("client node");
        let c = client.connect(loopback(port)).expect("connect");
        client.send(c, b"hello".to_vec()).expect("send");
        let mut got = Vec::new();
        let mut accepted = None;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while got.len() < 5 && std::time::Instant::now() < deadline {
            let _ = client.poll();
            for e in server.poll() {
                match e {
                    Event::Accepted(id) => accepted = Some(id),
                    Event::Data(_, b) => got.extend(b),
                    Event::Closed(_) => {}
                }
            }
        }
        assert_eq!(got, b"hello");
        let sid = accepted.expect("accepted");
        server.send(sid, b"back".to_vec()).expect("reply");
        let mut back = Vec::new();
        while back.len() < 4 && std::time::Instant::now() < deadline {
            let _ = server.poll();
            for e in client.poll() {
                if let Event::Data(_, b) = e {
                    back.extend(b);
                }
            }
        }
        assert_eq!(back, b"back");
        drop(client);
        let mut closed = false;
        while !closed && std::time::Instant::now() < deadline {
            closed = server
                .poll()
                .iter()
                .any(|e| matches!(e, Event::Closed(id) if *id == sid));
        }
        assert!(closed, "server saw the client go away");
    }
}
