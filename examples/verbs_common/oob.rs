//! The samples' out-of-band channel: one TCP connection (server on `INADDR_ANY:port`,
//! client to the server's address), every item a raw host-order value: addresses 8 bytes,
//! keys, QPNs and LIDs 4 bytes, GIDs 16 bytes. The server sends first unless a sample says
//! otherwise.

use cuda_kernels::RemoteBuf;
use doca::gpunetio::verbs::{Gid, MemoryRegion, QpInfo};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// How long a client retries connecting (the server may still be setting up).
const CONNECT_FOR: Duration = Duration::from_secs(60);

/// One side of the exchange.
pub struct Oob {
    s: TcpStream,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> String + '_ {
    move |e| format!("out-of-band {what}: {e}")
}

impl Oob {
    /// Listens on `port` and accepts one client.
    pub fn server(prog: &str, port: u16) -> Result<Oob, String> {
        let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port))
            .map_err(io("bind"))?;
        super::info(prog, "Socket created successfully");
        super::info(prog, "Done with binding");
        super::info(prog, "Listening for incoming connections");
        let (s, peer) = l.accept().map_err(io("accept"))?;
        super::info(
            prog,
            format!(
                "Client connected at IP: {} and port: {}",
                peer.ip(),
                peer.port()
            ),
        );
        Ok(Oob { s })
    }

    /// Connects to `server_ip:port` (retrying for a minute while nobody listens).
    pub fn client(prog: &str, server_ip: &str, port: u16) -> Result<Oob, String> {
        let ip: Ipv4Addr = server_ip
            .parse()
            .map_err(|_| format!("invalid server address {server_ip:?}"))?;
        let t0 = Instant::now();
        let s = loop {
            match TcpStream::connect(SocketAddrV4::new(ip, port)) {
                Ok(s) => break s,
                Err(e)
                    if t0.elapsed() < CONNECT_FOR
                        && e.kind() == std::io::ErrorKind::ConnectionRefused =>
                {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(e) => return Err(format!("out-of-band connect to {ip}:{port}: {e}")),
            }
        };
        super::info(prog, "Connected with server successfully");
        Ok(Oob { s })
    }

    fn send(&mut self, b: &[u8]) -> Result<(), String> {
        self.s.write_all(b).map_err(io("send"))
    }

    fn recv<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut b = [0u8; N];
        self.s.read_exact(&mut b).map_err(io("receive"))?;
        Ok(b)
    }

    /// Sends a buffer: address (8 bytes), key (4 bytes).
    pub fn send_buf(&mut self, b: RemoteBuf) -> Result<(), String> {
        self.send(&b.addr.to_ne_bytes())?;
        self.send(&b.key.to_ne_bytes())
    }

    /// Sends a registered buffer of ours ([`send_buf`](Self::send_buf) of its address and
    /// key).
    pub fn send_mr(&mut self, mr: &MemoryRegion) -> Result<(), String> {
        self.send_buf(RemoteBuf {
            addr: mr.addr(),
            key: mr.key(),
        })
    }

    /// Receives `n` buffers.
    pub fn recv_bufs(&mut self, n: usize) -> Result<Vec<RemoteBuf>, String> {
        (0..n).map(|_| self.recv_buf()).collect()
    }

    /// Receives what [`send_buf`](Self::send_buf) sent.
    pub fn recv_buf(&mut self) -> Result<RemoteBuf, String> {
        let addr = u64::from_ne_bytes(self.recv()?);
        let key = u32::from_ne_bytes(self.recv()?);
        Ok(RemoteBuf { addr, key })
    }

    /// Sends a 4-byte value (a QPN or LID).
    pub fn send_u32(&mut self, v: u32) -> Result<(), String> {
        self.send(&v.to_ne_bytes())
    }

    /// Receives a 4-byte value.
    pub fn recv_u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_ne_bytes(self.recv()?))
    }

    /// Sends a GID (16 bytes).
    pub fn send_gid(&mut self, g: Gid) -> Result<(), String> {
        self.send(&g.0)
    }

    /// Receives a GID.
    pub fn recv_gid(&mut self) -> Result<Gid, String> {
        Ok(Gid(self.recv()?))
    }

    /// Each side sends, then receives: the QPN(s) (main first), GID, LID.
    pub fn exchange_qps(&mut self, mine: &[QpInfo]) -> Result<Vec<QpInfo>, String> {
        for q in mine {
            self.send_u32(q.qpn)?;
        }
        self.send_gid(mine[0].gid)?;
        self.send_u32(mine[0].lid)?;
        let qpns = (0..mine.len())
            .map(|_| self.recv_u32())
            .collect::<Result<Vec<_>, _>>()?;
        let gid = self.recv_gid()?;
        let lid = self.recv_u32()?;
        Ok(qpns
            .into_iter()
            .map(|qpn| QpInfo { qpn, gid, lid })
            .collect())
    }
}
