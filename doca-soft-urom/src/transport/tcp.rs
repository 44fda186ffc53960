//! Plain TCP, written here rather than left to UCX: the sockets a UROM daemon or worker
//! exposes to the network are ours, so a peer that sends garbage, never speaks, or opens
//! connections by the thousand meets code that bounds it (UCX's client/server listener
//! kept a descriptor in CLOSE-WAIT and spun a CPU forever on 3 KB of garbage).
//!
//! * [`TcpConn`]: a non-blocking connection with an output queue (bounded: a peer that
//!   does not read is dropped) and a non-blocking connect.
//! * [`Limits`]: what a listener admits (see the daemon's documentation for the defaults).

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::time::Duration;

/// Most bytes queued for a peer that does not read (far above any UROM exchange: a
/// message is at most 16 MiB and hosts read their replies).
pub(crate) const MAX_QUEUED: usize = 64 << 20;

/// How a listener bounds its connections. A connection is *pending* from its accept until
/// its owner [admits](super::Node::admit) it (the peer spoke the protocol correctly:
/// `Hello` to the daemon, `Attach` with the worker's token to a worker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections at once, pending or admitted. New ones beyond it are closed at once
    /// (after evicting the oldest pending one, if there is one).
    pub max_conns: usize,
    /// Connections at once from one peer address (beyond it, new ones from that peer are
    /// closed at once).
    pub max_per_peer: usize,
    /// Pending connections at once: a new one evicts the oldest. The rest of `max_conns`
    /// is kept for admitted peers: connections that never speak cannot crowd them out.
    pub max_pending: usize,
    /// How long a connection may stay pending before it is closed.
    pub pending_timeout: Duration,
    /// How old a pending connection must be to be evicted for a new one: younger ones are
    /// peers that connected a moment ago and are about to speak, so new connections wait in
    /// the kernel's backlog until then.
    pub eviction_age: Duration,
}

impl Limits {
    /// The daemon's defaults for `max_conns` connections.
    pub fn for_daemon(max_conns: usize) -> Limits {
        let max_conns = max_conns.max(4);
        Limits {
            max_conns,
            max_per_peer: (max_conns / 2).max(2),
            max_pending: (max_conns / 4).clamp(2, 256),
            pending_timeout: Duration::from_secs(5),
            eviction_age: Duration::from_millis(20),
        }
    }

    /// A worker's defaults (it serves the hosts that attach to it).
    pub fn for_worker() -> Limits {
        Limits {
            max_conns: 256,
            max_per_peer: 128,
            max_pending: 32,
            pending_timeout: Duration::from_secs(5),
            eviction_age: Duration::from_millis(20),
        }
    }
}

/// A non-blocking TCP connection.
pub(crate) struct TcpConn {
    sock: TcpStream,
    out: Vec<u8>,
    out_at: usize,
    connecting: bool,
    /// The peer's address.
    pub peer: IpAddr,
}

fn would_block(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted)
}

impl TcpConn {
    /// Wraps an accepted socket (made non-blocking).
    pub(crate) fn accepted(sock: TcpStream, peer: SocketAddr) -> std::io::Result<TcpConn> {
        sock.set_nonblocking(true)?;
        let _ = sock.set_nodelay(true);
        Ok(TcpConn {
            sock,
            out: Vec::new(),
            out_at: 0,
            connecting: false,
            peer: peer.ip(),
        })
    }

    /// Starts a non-blocking connect to `addr`; writes queue until it completes.
    pub(crate) fn connect(addr: SocketAddrV4) -> std::io::Result<TcpConn> {
        // SAFETY: plain socket creation; the descriptor is owned by the TcpStream below.
        let fd = unsafe {
            libc::socket(
                libc::AF_INET,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let sock = unsafe { TcpStream::from_raw_fd(fd) };
        let sa = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: addr.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(addr.ip().octets()),
            },
            sin_zero: [0; 8],
        };
        // SAFETY: a valid sockaddr_in of the length given.
        let r = unsafe {
            libc::connect(
                fd,
                &sa as *const libc::sockaddr_in as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        let connecting = if r == 0 {
            false
        } else {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINPROGRESS) {
                return Err(e);
            }
            true
        };
        let _ = sock.set_nodelay(true);
        Ok(TcpConn {
            sock,
            out: Vec::new(),
            out_at: 0,
            connecting,
            peer: IpAddr::V4(*addr.ip()),
        })
    }

    /// The descriptor.
    pub(crate) fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// This end's address (`None` before a connect has bound the socket, or when the
    /// socket failed).
    pub(crate) fn local_ip(&self) -> Option<IpAddr> {
        self.sock.local_addr().ok().map(|a| a.ip())
    }

    /// Whether it waits for writability (connecting, or output queued).
    pub(crate) fn wants_write(&self) -> bool {
        self.connecting || self.out_at < self.out.len()
    }

    /// Whether output is still queued.
    pub(crate) fn has_output(&self) -> bool {
        self.out_at < self.out.len()
    }

    /// Finishes a connect the socket reported writable (or failed) for.
    fn finish_connect(&mut self) -> std::io::Result<()> {
        if !self.connecting {
            return Ok(());
        }
        let mut pfd = libc::pollfd {
            fd: self.fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        if unsafe { libc::poll(&mut pfd, 1, 0) } <= 0 {
            return Ok(());
        }
        match self.sock.take_error()? {
            Some(e) => Err(e),
            None => {
                self.connecting = false;
                Ok(())
            }
        }
    }

    /// Queues `bytes` and writes what the socket takes now.
    pub(crate) fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.out.len() - self.out_at + bytes.len() > MAX_QUEUED {
            return Err(std::io::Error::new(
                ErrorKind::OutOfMemory,
                "peer does not read its replies",
            ));
        }
        if self.out_at == self.out.len() && !self.connecting {
            // Nothing queued: write straight from the caller's buffer.
            let mut at = 0;
            while at < bytes.len() {
                match self.sock.write(&bytes[at..]) {
                    Ok(0) => return Err(ErrorKind::WriteZero.into()),
                    Ok(n) => at += n,
                    Err(e) if would_block(&e) => break,
                    Err(e) => return Err(e),
                }
            }
            self.out.clear();
            self.out_at = 0;
            self.out.extend_from_slice(&bytes[at..]);
            return Ok(());
        }
        self.out.extend_from_slice(bytes);
        self.flush()
    }

    /// Writes queued output (as much as the socket takes now).
    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        self.finish_connect()?;
        if self.connecting {
            return Ok(());
        }
        while self.out_at < self.out.len() {
            match self.sock.write(&self.out[self.out_at..]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => self.out_at += n,
                Err(e) if would_block(&e) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.out_at = 0;
        Ok(())
    }

    /// Reads what is there into `buf`: `Ok(Some(n))` bytes, `Ok(None)` nothing now,
    /// `Ok(Some(0))` end of stream.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        if self.connecting {
            self.finish_connect()?;
            if self.connecting {
                return Ok(None);
            }
        }
        match self.sock.read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if would_block(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Closes both directions (what is queued is dropped).
    pub(crate) fn shutdown(&self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemon_limits_keep_room_for_admitted_peers() {
        for n in [4usize, 64, 1000, 100_000] {
            let l = Limits::for_daemon(n);
            assert!(l.max_pending < l.max_conns, "{l:?}");
            assert!(l.max_per_peer < l.max_conns, "{l:?}");
        }
    }

    #[test]
    fn a_connect_completes_and_bytes_flow_both_ways() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let mut c =
            TcpConn::connect(SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, port)).unwrap();
        c.send(b"hello").unwrap();
        let (s, peer) = l.accept().unwrap();
        let mut s = TcpConn::accepted(s, peer).unwrap();
        let mut buf = [0u8; 16];
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while got.len() < 5 && std::time::Instant::now() < deadline {
            c.flush().unwrap();
            if let Some(n) = s.read(&mut buf).unwrap() {
                got.extend_from_slice(&buf[..n]);
            }
        }
        assert_eq!(got, b"hello");
        drop(c);
        let mut eof = false;
        while !eof && std::time::Instant::now() < deadline {
            eof = matches!(s.read(&mut buf), Ok(Some(0)) | Err(_));
        }
        assert!(eof, "end of stream seen");
    }
}
