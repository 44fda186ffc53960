//! The out-of-band TCP channel of DOCA's RDMA and verbs samples: the server listens on
//! port 2000 of every address and accepts one client; each item goes as raw
//! host-byte-order bytes, a blob as its `size_t` length followed by its bytes, with no
//! other framing, so these programs and the C samples understand each other.

use doca_common::error::{Error, Result};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};

/// The samples' port.
pub const DEFAULT_PORT: u16 = 2000;
/// The largest blob accepted (a bigger length is a broken peer).
pub const MAX_BLOB: usize = 1 << 20;

fn io(op: &str, e: std::io::Error) -> Error {
    Error::InvalidArgument(format!("out-of-band {op}: {e}"))
}

/// One connected out-of-band channel.
#[derive(Debug)]
pub struct OobStream {
    s: TcpStream,
    peer: SocketAddr,
}

impl OobStream {
    /// Server: listens on `port` of every address, accepts one client.
    pub fn accept(port: u16) -> Result<OobStream> {
        let l = TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).map_err(|e| io("bind", e))?;
        let (s, peer) = l.accept().map_err(|e| io("accept", e))?;
        s.set_nodelay(true).map_err(|e| io("setsockopt", e))?;
        Ok(OobStream { s, peer })
    }

    /// Client: connects to `ip:port`.
    pub fn connect(ip: &str, port: u16) -> Result<OobStream> {
        let ip: Ipv4Addr = ip
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("'{ip}' is not an IPv4 address")))?;
        let s = TcpStream::connect((ip, port)).map_err(|e| io("connect", e))?;
        s.set_nodelay(true).map_err(|e| io("setsockopt", e))?;
        let peer = s.peer_addr().map_err(|e| io("getpeername", e))?;
        Ok(OobStream { s, peer })
    }

    /// The other end.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Sends raw bytes.
    pub fn send(&mut self, b: &[u8]) -> Result<()> {
        self.s.write_all(b).map_err(|e| io("send", e))
    }

    /// Receives exactly `n` raw bytes.
    pub fn recv(&mut self, n: usize) -> Result<Vec<u8>> {
        let mut b = vec![0u8; n];
        self.s.read_exact(&mut b).map_err(|e| io("recv", e))?;
        Ok(b)
    }

    /// Sends a blob: its length (`size_t`, host order), then the bytes.
    pub fn send_blob(&mut self, b: &[u8]) -> Result<()> {
        self.send(&b.len().to_ne_bytes())?;
        self.send(b)
    }

    /// Receives a blob sent by [`OobStream::send_blob`] (or a C sample).
    pub fn recv_blob(&mut self) -> Result<Vec<u8>> {
        let n = self.recv(std::mem::size_of::<usize>())?;
        let len = usize::from_ne_bytes(n.try_into().expect("size_t bytes"));
        if len == 0 || len > MAX_BLOB {
            return Err(Error::InvalidArgument(format!(
                "out-of-band blob of {len} bytes refused"
            )));
        }
        self.recv(len)
    }

    /// Sends a 64-bit value (host order).
    pub fn send_u64(&mut self, v: u64) -> Result<()> {
        self.send(&v.to_ne_bytes())
    }

    /// Receives a 64-bit value (host order).
    pub fn recv_u64(&mut self) -> Result<u64> {
        Ok(u64::from_ne_bytes(
            self.recv(8)?.try_into().expect("8 bytes"),
        ))
    }
}
