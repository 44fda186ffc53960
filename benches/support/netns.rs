//! Runs a bench in a network namespace of its own: its `lo` carries only the bench's
//! traffic (other processes on the machine cannot disturb the figures), and it may accept
//! frames injected on `lo` through AF_PACKET (the soft NIC's TX path), which the kernel
//! treats as martian 127.0.0.1 traffic unless `route_localnet` and `accept_local` are set.
//! Those settings exist only inside this namespace; nothing of the host changes.

use std::io;

/// Moves the calling thread (call it first thing in `main`, before any other thread exists)
/// into a new network namespace with `lo` up and frames injected on `lo` accepted.
pub fn isolate() -> io::Result<()> {
    // SAFETY: plain unshare(2); affects only this thread and the threads it creates later.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("unshare(CLONE_NEWNET): {}", io::Error::last_os_error()),
        ));
    }
    lo_up()?;
    for dev in ["all", "lo"] {
        for knob in ["route_localnet", "accept_local"] {
            std::fs::write(format!("/proc/sys/net/ipv4/conf/{dev}/{knob}"), "1")
                .map_err(|e| io::Error::new(e.kind(), format!("{dev}/{knob}: {e}")))?;
        }
    }
    Ok(())
}

fn lo_up() -> io::Result<()> {
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = super::udp::Sock(fd);
    // SAFETY: ifreq is plain data; all-zero is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
        *d = *s as libc::c_char;
    }
    // SAFETY: fd is a socket; ifr names an interface and has room for the flags.
    if unsafe { libc::ioctl(fd.0, libc::SIOCGIFFLAGS, &mut ifr) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe { ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short };
    // SAFETY: as above.
    if unsafe { libc::ioctl(fd.0, libc::SIOCSIFFLAGS, &ifr) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Isolates the bench, or says (on stderr) why it runs in the host's namespace. Returns
/// whether it is isolated.
pub fn isolate_or_warn() -> bool {
    match isolate() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("running in the host network namespace: {e}");
            false
        }
    }
}
