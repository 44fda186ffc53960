//! Links of the calling thread's network namespace: bring one up, give it an address,
//! ask the kernel about it, make a veth pair, remove a link. Run them inside a namespace
//! with [`NetNs::run`](super::NetNs::run); every error names the failed step and link.

use super::netlink::{self, Link};
use super::{os_err, socket, NetNs};
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};

/// An `ifreq` naming `dev` (at most 15 bytes).
fn ifreq(dev: &str) -> io::Result<libc::ifreq> {
    // SAFETY: ifreq is plain data; all-zero is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    if dev.len() >= ifr.ifr_name.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name {dev:?} is too long"),
        ));
    }
    for (d, s) in ifr.ifr_name.iter_mut().zip(dev.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(ifr)
}

fn ioctl(fd: &OwnedFd, req: libc::Ioctl, ifr: &mut libc::ifreq, what: &str) -> io::Result<()> {
    // SAFETY: fd is a socket; ifr names an interface and has room for any answer.
    if unsafe { libc::ioctl(fd.as_raw_fd(), req, ifr as *mut libc::ifreq) } != 0 {
        return Err(os_err(what));
    }
    Ok(())
}

/// Sets `dev` up (`IFF_UP`) in the calling thread's namespace.
pub fn link_up(dev: &str) -> io::Result<()> {
    let fd = socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
    let mut ifr = ifreq(dev)?;
    ioctl(
        &fd,
        libc::SIOCGIFFLAGS,
        &mut ifr,
        &format!("SIOCGIFFLAGS {dev}"),
    )?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe { ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    ioctl(
        &fd,
        libc::SIOCSIFFLAGS,
        &mut ifr,
        &format!("SIOCSIFFLAGS {dev}"),
    )
}

fn sockaddr_in(a: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(a.octets()),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr are both 16 bytes of plain data; the kernel reads
    // the address family to interpret the rest.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

/// The netmask of a `/prefix` (prefixes above 32 are 32).
fn netmask(prefix: u8) -> Ipv4Addr {
    let zeros = 32 - u32::from(prefix.min(32));
    Ipv4Addr::from(u32::MAX.checked_shl(zeros).unwrap_or(0))
}

/// Gives `dev` address `addr` with a `/prefix` netmask (calling thread's namespace).
pub fn set_addr(dev: &str, addr: Ipv4Addr, prefix: u8) -> io::Result<()> {
    let fd = socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
    let mut ifr = ifreq(dev)?;
    ifr.ifr_ifru.ifru_addr = sockaddr_in(addr);
    ioctl(
        &fd,
        libc::SIOCSIFADDR,
        &mut ifr,
        &format!("SIOCSIFADDR {dev} {addr}"),
    )?;
    ifr.ifr_ifru.ifru_netmask = sockaddr_in(netmask(prefix));
    ioctl(
        &fd,
        libc::SIOCSIFNETMASK,
        &mut ifr,
        &format!("SIOCSIFNETMASK {dev} /{prefix}"),
    )
}

/// What the kernel says about link `dev` of the calling thread's namespace (one
/// `RTM_GETLINK` request): index, flags (up, running, carrier) and XDP program.
pub fn link(dev: &str) -> io::Result<Link> {
    let seq = 1;
    let what = format!("RTM_GETLINK {dev}");
    let reply = netlink::exchange(&netlink::get_link_request(dev, seq))
        .map_err(|e| io::Error::new(e.kind(), format!("{what}: {e}")))?;
    netlink::parse_link(&reply, seq).map_err(|errno| match errno {
        0 => io::Error::other(format!("{what}: no answer about the link")),
        e => {
            let e = io::Error::from_raw_os_error(e);
            io::Error::new(e.kind(), format!("{what}: {e}"))
        }
    })
}

/// Removes link `dev` of the calling thread's namespace (`RTM_DELLINK`; a veth end takes
/// its peer with it, wherever that is).
pub fn delete_link(dev: &str) -> io::Result<()> {
    let seq = 1;
    netlink::request(
        &netlink::del_link_request(dev, seq),
        seq,
        &format!("RTM_DELLINK {dev}"),
    )
}

/// A veth pair to make in the calling thread's namespace ([`Veth::create`]): end `name`
/// there, end `peer` there too or in another namespace, both down and without addresses.
///
/// ```no_run
/// use doca_test_support::netns::{self, NetNs, Veth};
///
/// let ns = NetNs::new()?;
/// // Both ends inside `ns`, four queues each way.
/// ns.run(|| Veth::new("xa", "xb").queues(4).create())??;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Veth<'a> {
    name: &'a str,
    peer: &'a str,
    peer_ns: Option<&'a NetNs>,
    queues: u32,
}

impl<'a> Veth<'a> {
    /// The pair `name` - `peer`, both in the calling thread's namespace, with the
    /// kernel's default number of queues.
    pub fn new(name: &'a str, peer: &'a str) -> Veth<'a> {
        Veth {
            name,
            peer,
            peer_ns: None,
            queues: 0,
        }
    }

    /// Puts the `peer` end in namespace `ns` instead.
    pub fn peer_in(mut self, ns: &'a NetNs) -> Veth<'a> {
        self.peer_ns = Some(ns);
        self
    }

    /// Gives each end `n` receive and `n` transmit queues (0: the kernel's default, one).
    pub fn queues(mut self, n: u32) -> Veth<'a> {
        self.queues = n;
        self
    }

    /// Makes the pair (one `RTM_NEWLINK` request on the calling thread's namespace). The
    /// error names the pair and suggests the likely cause (no veth driver) when the
    /// kernel refuses.
    pub fn create(&self) -> io::Result<()> {
        let seq = 1;
        let req = netlink::new_veth_request(
            self.name,
            self.peer,
            self.peer_ns.map(NetNs::fd),
            self.queues,
            seq,
        );
        let what = format!(
            "RTM_NEWLINK veth {}/{} (is the veth driver available?)",
            self.name, self.peer
        );
        netlink::request(&req, seq, &what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netmasks_of_prefixes() {
        assert_eq!(netmask(24), Ipv4Addr::new(255, 255, 255, 0));
        assert_eq!(netmask(0), Ipv4Addr::new(0, 0, 0, 0));
        assert_eq!(netmask(32), Ipv4Addr::new(255, 255, 255, 255));
        assert_eq!(netmask(40), Ipv4Addr::new(255, 255, 255, 255));
        assert_eq!(netmask(9), Ipv4Addr::new(255, 128, 0, 0));
    }

    #[test]
    fn interface_names_longer_than_15_bytes_are_refused() {
        assert!(ifreq("a234567890abcde").is_ok());
        let e = ifreq("a234567890abcdef").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("too long"), "{e}");
    }
}
