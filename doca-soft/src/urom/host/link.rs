//! A host-side protocol connection: one UCX node, one connection, a strict decoder.

use crate::error::{DocaError, DocaResult};
use crate::urom::transport::{ConnId, EventRef, Node};
use crate::urom::wire::{Decoder, Msg};
use std::net::SocketAddrV4;
use std::time::{Duration, Instant};

/// A connection to the daemon or to a worker process.
pub(crate) struct Link {
    node: Node,
    conn: ConnId,
    dec: Decoder,
    failed: Option<DocaError>,
}

impl Link {
    /// Connects to `addr`; frames larger than `max_payload` are protocol errors.
    pub(crate) fn connect(addr: SocketAddrV4, max_payload: usize) -> DocaResult<Link> {
        let mut node = Node::new()?;
        let conn = node.connect(addr)?;
        Ok(Link {
            node,
            conn,
            dec: Decoder::new(max_payload),
            failed: None,
        })
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
        self.node.poll_with(|e| match e {
            EventRef::Data(_, b) => dec.push(b),
            EventRef::Closed(_) => {
                failed.get_or_insert(DocaError::CONNECTION_RESET);
            }
            EventRef::Accepted(_) => {}
        })
    }

    fn broken(&mut self, e: DocaError) {
        sdk_err!("urom", "protocol error from peer: {e:?}");
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

    /// Blocks until one message arrives (others before it are returned too) or `timeout`.
    pub(crate) fn wait_for(
        &mut self,
        timeout: Duration,
        mut done: impl FnMut(&Msg) -> bool,
    ) -> DocaResult<Vec<Msg>> {
        let deadline = Instant::now() + timeout;
        let mut got = Vec::new();
        loop {
            let msgs = self.poll();
            let hit = msgs.iter().any(&mut done);
            got.extend(msgs);
            if hit {
                return Ok(got);
            }
            if let Some(e) = self.failed {
                return Err(e);
            }
            if Instant::now() > deadline {
                return Err(DocaError::TIME_OUT);
            }
            self.node.wait(5);
        }
    }
}
