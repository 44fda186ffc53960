//! An AF_PACKET socket on one Linux interface: sends whole Ethernet frames and receives
//! the frames arriving on it (its own outgoing copies filtered out). Needs root or
//! CAP_NET_RAW; no `ip` binary or other tools.

#![allow(dead_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A raw packet socket bound to one interface.
pub struct RawSocket {
    fd: OwnedFd,
    ifindex: i32,
}

fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

impl RawSocket {
    /// Opens a socket on interface `ifname` (e.g. "lo").
    pub fn open(ifname: &str) -> io::Result<RawSocket> {
        let c = std::ffi::CString::new(ifname)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name with NUL"))?;
        // SAFETY: `c` is a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(c.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no network interface named {ifname:?}"),
            ));
        }
        let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
        // SAFETY: plain socket(2) call.
        let fd = check(
            unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto) },
            "socket(AF_PACKET) (needs root or CAP_NET_RAW)",
        )?;
        // SAFETY: `fd` was just returned by socket(2) and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let s = RawSocket {
            fd,
            ifindex: ifindex as i32,
        };
        let addr = s.sockaddr(proto as u16);
        // SAFETY: `addr` is a valid sockaddr_ll of the size passed.
        check(
            unsafe {
                libc::bind(
                    s.fd.as_raw_fd(),
                    (&addr as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as u32,
                )
            },
            "bind(AF_PACKET)",
        )?;
        // A big receive buffer so bursts from a GPU are not dropped by the socket; FORCE
        // works as root, the plain option otherwise (capped by rmem_max).
        let size: libc::c_int = 64 << 20;
        for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
            if s.setsockopt(libc::SOL_SOCKET, opt, size).is_ok() {
                break;
            }
        }
        // Kernel receive timestamps (CLOCK_REALTIME, ns): arrival times without this
        // process's wake-up latency, for the burst spacing measurement.
        s.setsockopt(libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1 as libc::c_int)?;
        Ok(s)
    }

    fn sockaddr(&self, proto_be: u16) -> libc::sockaddr_ll {
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
        let mut a: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        a.sll_family = libc::AF_PACKET as u16;
        a.sll_protocol = proto_be;
        a.sll_ifindex = self.ifindex;
        a.sll_halen = 6;
        a
    }

    fn setsockopt<T>(&self, level: libc::c_int, opt: libc::c_int, v: T) -> io::Result<()> {
        // SAFETY: `v` lives for the call and its size is passed.
        check(
            unsafe {
                libc::setsockopt(
                    self.fd.as_raw_fd(),
                    level,
                    opt,
                    (&v as *const T).cast(),
                    std::mem::size_of::<T>() as u32,
                )
            },
            "setsockopt",
        )
        .map(drop)
    }

    /// Sets how long `recv` waits for a frame.
    pub fn set_timeout(&self, t: Duration) -> io::Result<()> {
        let tv = libc::timeval {
            tv_sec: t.as_secs() as libc::time_t,
            tv_usec: t.subsec_micros().max(if t.is_zero() { 0 } else { 1 }) as libc::suseconds_t,
        };
        self.setsockopt(libc::SOL_SOCKET, libc::SO_RCVTIMEO, tv)
    }

    /// Sends one Ethernet frame.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        let addr = self.sockaddr((libc::ETH_P_IP as u16).to_be());
        loop {
            // SAFETY: `frame` and `addr` are valid for the sizes passed.
            let r = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    frame.as_ptr().cast(),
                    frame.len(),
                    0,
                    (&addr as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as u32,
                )
            };
            if r >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            // The device queue is momentarily full: retry rather than lose the frame.
            if e.raw_os_error() == Some(libc::ENOBUFS) || e.kind() == io::ErrorKind::Interrupted {
                std::thread::yield_now();
                continue;
            }
            return Err(e);
        }
    }

    /// Receives one incoming frame into `buf`: its length and kernel arrival time
    /// (CLOCK_REALTIME ns, when the kernel gave one), or None on timeout/interrupt.
    /// Copies of frames sent from this host (PACKET_OUTGOING) are skipped.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, Option<u64>)>> {
        loop {
            // SAFETY: sockaddr_ll is plain old data.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut iov = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            };
            // Room for one SCM_TIMESTAMPNS control message (u64 for alignment).
            let mut control = [0u64; 8];
            // SAFETY: msghdr is plain old data; the fields set below point at live locals.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = (&mut from as *mut libc::sockaddr_ll).cast();
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control);
            // SAFETY: `msg` describes valid buffers that outlive the call.
            let r = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
            if r < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                    _ => Err(e),
                };
            }
            if from.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            return Ok(Some(((r as usize).min(buf.len()), timestamp_of(&msg))));
        }
    }
}

/// The SCM_TIMESTAMPNS time in `msg`'s control data, in ns.
fn timestamp_of(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: CMSG_* walk the control buffer the kernel filled, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>());
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}
