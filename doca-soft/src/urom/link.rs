//! A host-side protocol connection: one UCX node, one connection, a strict decoder.

use crate::error::{DocaError, DocaResult};
use crate::ucx::{ConnId, Event, Node};
use crate::urom::wire::{Decoder, Msg};
use std::net::SocketAddrV4;
use std::time::{Duration, Instant};

/// A connection to the daemon or to a worker process.
pub struct Link {
    node: Node,
    conn: ConnId,
    dec: Decoder,
    failed: Option<DocaError>,
}

impl Link {
    /// Connects to `addr`; frames larger than `max_payload` are protocol errors.
    pub fn connect(addr: SocketAddrV4, max_payload: usize) -> DocaResult<Link> {
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
    pub fn send(&mut self, m: &Msg) -> DocaResult<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.node
            .send(self.conn, m.encode())
            .inspect_err(|&e| self.failed = Some(e))
    }

    /// The error that broke the link, if any.
    pub fn failed(&self) -> Option<DocaError> {
        self.failed
    }

    /// Progresses and returns the messages that arrived (the link may fail meanwhile).
    pub fn poll(&mut self) -> Vec<Msg> {
        for e in self.node.poll() {
            match e {
                Event::Data(_, b) => self.dec.push(&b),
                Event::Closed(_) => {
                    self.failed.get_or_insert(DocaError::CONNECTION_RESET);
                }
                Event::Accepted(_) => {}
            }
        }
        let mut out = Vec::new();
        loop {
            match self.dec.next_msg() {
                Ok(Some(m)) => out.push(m),
                Ok(None) => break,
                Err(e) => {
                    sdk_err!("urom", "protocol error from peer: {e:?}");
                    self.failed.get_or_insert(DocaError::CONNECTION_ABORTED);
                    break;
                }
            }
        }
        out
    }

    /// Blocks until one message arrives (others before it are returned too) or `timeout`.
    pub fn wait_for(
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
