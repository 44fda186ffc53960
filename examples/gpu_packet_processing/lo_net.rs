//! The private loopback network the end-to-end tests and the HTTP/ICMP bench run
//! gpu_packet_processing in (not part of the example program; included with `#[path]`).
//!
//! A new network namespace made with plain syscalls and ioctls (no `ip`): `lo` up with
//! 127.0.0.1/32 only, a route 127.0.0.2/32 over `lo`, and frames injected on `lo` accepted
//! (`route_localnet`, `accept_local`). The server address 127.0.0.2 is then not local: the
//! Linux kernel neither answers echo requests for it nor resets TCP SYNs to it (a looped
//! packet to a non-local address is discarded), so clients bound to 127.0.0.1 get their
//! answers only from the application on `lo`. Nothing on the host changes.

#![allow(dead_code)]

/// Where clients send from.
pub const CLIENT_IP: [u8; 4] = [127, 0, 0, 1];
/// The application's address.
pub const SERVER_IP: [u8; 4] = [127, 0, 0, 2];

use std::io;

fn sock() -> io::Result<std::os::fd::OwnedFd> {
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is plain data; all-zero is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    ifr
}

fn sin(addr: [u8; 4]) -> libc::sockaddr {
    let a = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(addr),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr have the same size; plain data.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(a) }
}

fn ioctl<T>(
    fd: &std::os::fd::OwnedFd,
    req: libc::c_ulong,
    arg: &mut T,
    what: &str,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: `arg` is the struct this request takes, alive for the call.
    if unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg as *mut T) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

/// `struct rtentry` of <net/route.h> (the libc crate has it only for musl).
#[repr(C)]
struct RtEntry {
    rt_pad1: libc::c_ulong,
    rt_dst: libc::sockaddr,
    rt_gateway: libc::sockaddr,
    rt_genmask: libc::sockaddr,
    rt_flags: libc::c_ushort,
    rt_pad2: libc::c_short,
    rt_pad3: libc::c_ulong,
    rt_pad4: *mut libc::c_void,
    rt_metric: libc::c_short,
    rt_dev: *mut libc::c_char,
    rt_mtu: libc::c_ulong,
    rt_window: libc::c_ulong,
    rt_irtt: libc::c_ushort,
}

fn write(path: &str, v: &str) -> io::Result<()> {
    std::fs::write(path, v).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
}

/// Moves the calling thread into a new network namespace set up as the module docs say.
pub fn private_lo() -> io::Result<()> {
    // SAFETY: plain unshare(2); affects this thread and what it creates afterwards.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("unshare(CLONE_NEWNET): {e}"),
        ));
    }
    let fd = sock()?;
    let mut ifr = ifreq("lo");
    ioctl(&fd, libc::SIOCGIFFLAGS as _, &mut ifr, "SIOCGIFFLAGS lo")?;
    // SAFETY: SIOCGIFFLAGS filled the flags member.
    unsafe { ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short };
    ioctl(&fd, libc::SIOCSIFFLAGS as _, &mut ifr, "SIOCSIFFLAGS lo")?;
    // 127.0.0.1/32: only that address is local.
    let mut ifr = ifreq("lo");
    ifr.ifr_ifru.ifru_netmask = sin([255, 255, 255, 255]);
    ioctl(
        &fd,
        libc::SIOCSIFNETMASK as _,
        &mut ifr,
        "SIOCSIFNETMASK lo",
    )?;
    for dev in ["all", "lo"] {
        for knob in ["route_localnet", "accept_local"] {
            write(&format!("/proc/sys/net/ipv4/conf/{dev}/{knob}"), "1")?;
        }
    }
    write("/proc/sys/net/ipv4/conf/all/forwarding", "0")?;
    // 127.0.0.2/32 over lo.
    let mut dev = *b"lo\0";
    let mut rt = RtEntry {
        rt_pad1: 0,
        rt_dst: sin(SERVER_IP),
        rt_gateway: sin([0; 4]),
        rt_genmask: sin([255, 255, 255, 255]),
        rt_flags: libc::RTF_UP | libc::RTF_HOST,
        rt_pad2: 0,
        rt_pad3: 0,
        rt_pad4: std::ptr::null_mut(),
        rt_metric: 0,
        rt_dev: dev.as_mut_ptr().cast(),
        rt_mtu: 0,
        rt_window: 0,
        rt_irtt: 0,
    };
    ioctl(
        &fd,
        libc::SIOCADDRT as _,
        &mut rt,
        "SIOCADDRT 127.0.0.2/32 dev lo",
    )?;
    Ok(())
}

/// A TCP connection from 127.0.0.1 (an ephemeral port) to `to` (the kernel would pick no
/// source address for 127.0.0.2 on its own: 127.0.0.1 is host-scoped).
pub fn connect_from_client(
    to: std::net::SocketAddrV4,
    timeout: std::time::Duration,
) -> io::Result<std::net::TcpStream> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own; the TcpStream takes it over below.
    let owned: std::os::fd::OwnedFd = unsafe { FromRawFd::from_raw_fd(fd) };
    let sa = |ip: [u8; 4], port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(ip),
        },
        sin_zero: [0; 8],
    };
    let local = sa(CLIENT_IP, 0);
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: `local` is a valid sockaddr_in of `len` bytes.
    if unsafe { libc::bind(fd, (&local as *const libc::sockaddr_in).cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let stream = std::net::TcpStream::from(owned);
    let remote = sa(to.ip().octets(), to.port());
    stream.set_write_timeout(Some(timeout))?;
    // A blocking connect bounded by SO_SNDTIMEO (set just above).
    // SAFETY: `remote` is a valid sockaddr_in of `len` bytes; fd is the stream's.
    if unsafe { libc::connect(fd, (&remote as *const libc::sockaddr_in).cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    stream.set_read_timeout(Some(timeout))?;
    Ok(stream)
}
