//! Two network namespaces joined by a veth pair, made with system calls alone (no `ip`
//! command, no iproute2 libraries): the two-host set-up of the end-to-end tests.
//!
//! A namespace is held by an open descriptor of its `/proc/.../ns/net` file ([`NetNs`]);
//! it disappears when that descriptor and every process inside it are gone, taking its
//! interfaces (and so the veth pair) with it. Nothing of the host's namespace changes and
//! nothing needs removing by name.
//!
//! * [`NetNs::run`] runs a closure on a thread inside the namespace: sockets it creates
//!   stay in that namespace wherever they are used afterwards.
//! * [`NetNs::enter`] makes a [`Command`] start its process inside the namespace, with a
//!   private mount namespace whose `/sys` is a fresh sysfs, so `/sys/class/net` lists the
//!   namespace's own interfaces (as `ip netns exec` arranges; doca-soft and UCX read it).
//! * [`VethPair::create`] makes two namespaces, the veth pair between them (one
//!   `RTM_NEWLINK` netlink request), addresses on both ends and every link up.
//!
//! Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and the kernel's veth driver; without them
//! [`VethPair::create`] says why, for the test to skip.
//!
//! ```no_run
//! use doca_test_support::netns::VethPair;
//! use std::process::Command;
//!
//! let pair = match VethPair::create() {
//!     Ok(p) => p,
//!     Err(why) => return doca_test_support::skip(&format!("two namespaces: {why}")),
//! };
//! let mut server = Command::new("my_server");
//! pair.ns[0].enter(&mut server).args(["--listen", &pair.addr[0].to_string()]);
//! ```

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt as _;
use std::process::Command;
use std::time::Duration;

/// A network namespace, kept alive by an open descriptor of it.
#[derive(Debug)]
pub struct NetNs {
    fd: OwnedFd,
}

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl NetNs {
    /// A new, empty network namespace (only `lo`, brought up here).
    pub fn new() -> io::Result<NetNs> {
        // A thread of our own leaves the new namespace for good (it exits afterwards);
        // the descriptor keeps the namespace.
        let ns = std::thread::scope(|s| {
            s.spawn(|| -> io::Result<NetNs> {
                // SAFETY: plain unshare(2); affects only this thread.
                if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                    return Err(os_err("unshare(CLONE_NEWNET)"));
                }
                let fd = open_cloexec(c"/proc/thread-self/ns/net")?;
                let ns = NetNs { fd };
                link_up("lo")?;
                Ok(ns)
            })
            .join()
            .map_err(|_| io::Error::other("namespace thread panicked"))?
        })?;
        Ok(ns)
    }

    /// The namespace's descriptor (valid as long as `self`).
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Runs `f` on a thread that has joined this namespace, and returns its result.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: setns(2) on a namespace descriptor we own; affects this thread.
                if unsafe { libc::setns(self.fd(), libc::CLONE_NEWNET) } != 0 {
                    return Err(os_err("setns(CLONE_NEWNET)"));
                }
                Ok(f())
            })
            .join()
            .map_err(|_| io::Error::other("namespace thread panicked"))?
        })
    }

    /// Like [`NetNs::run`], on a thread that also has a private mount namespace with a
    /// fresh `/sys` (what a process started by [`NetNs::enter`] sees).
    pub fn run_with_sysfs<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        self.run(|| match enter_sysfs(None) {
            Ok(()) => Ok(f()),
            Err((what, e)) => Err(io::Error::new(e.kind(), format!("{what}: {e}"))),
        })?
    }

    /// Makes `cmd` start its process inside this namespace, with a private mount
    /// namespace whose `/sys` shows this namespace's interfaces. The command holds a
    /// duplicate of the namespace's descriptor, so it may outlive `self`. Where entering
    /// is refused, the spawn fails with the refused call's errno ([`NetNs::run_with_sysfs`]
    /// names the call).
    ///
    /// # Panics
    ///
    /// When the descriptor cannot be duplicated (out of descriptors).
    pub fn enter<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        let fd = self
            .fd
            .try_clone()
            .expect("duplicating a network namespace descriptor");
        // SAFETY: the closure makes only async-signal-safe system calls (setns, unshare,
        // mount, umount2) on static strings and a descriptor the closure owns.
        unsafe {
            cmd.pre_exec(move || enter_sysfs(Some(fd.as_raw_fd())).map_err(|(_, e)| e));
        }
        cmd
    }
}

/// Joins network namespace `fd` (if any), then a private mount namespace in which `/sys`
/// is a sysfs of that network namespace. Async-signal-safe (system calls only, no
/// allocation), for use between fork and exec; the error names the failed call.
fn enter_sysfs(fd: Option<RawFd>) -> Result<(), (&'static str, io::Error)> {
    let err = |what: &'static str| (what, io::Error::last_os_error());
    let null = std::ptr::null::<libc::c_char>();
    let no_data = std::ptr::null::<libc::c_void>();
    let (root, sys, sysfs) = (c"/".as_ptr(), c"/sys".as_ptr(), c"sysfs".as_ptr());
    // SAFETY: system calls on a namespace descriptor and static NUL-terminated strings;
    // they change only this thread/process's namespaces and mounts.
    unsafe {
        if let Some(fd) = fd {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(err("setns(CLONE_NEWNET)"));
            }
        }
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            return Err(err("unshare(CLONE_NEWNS)"));
        }
        // Keep our unmount and mount from propagating back to the host's mounts.
        if libc::mount(null, root, null, libc::MS_REC | libc::MS_SLAVE, no_data) != 0 {
            return Err(err("mount(/, MS_REC | MS_SLAVE)"));
        }
        // The old /sys belongs to the host's network namespace; a fresh sysfs mounted by
        // a process of this one lists this one's interfaces. (Nothing mounted at /sys is
        // fine: the mount below is what matters.)
        libc::umount2(sys, libc::MNT_DETACH);
        if libc::mount(sysfs, sys, sysfs, 0, no_data) != 0 {
            return Err(err("mount(sysfs on /sys)"));
        }
    }
    Ok(())
}

fn open_cloexec(path: &std::ffi::CStr) -> io::Result<OwnedFd> {
    // SAFETY: open(2) of a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(os_err(&format!("open {}", path.to_string_lossy())));
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A socket of the calling thread's namespace.
fn socket(domain: libc::c_int, ty: libc::c_int, proto: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(os_err("socket"));
    }
    // SAFETY: fd was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

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

/// The interface flags of `dev` in the calling thread's namespace.
fn link_flags(dev: &str) -> io::Result<libc::c_int> {
    let fd = socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
    let mut ifr = ifreq(dev)?;
    ioctl(
        &fd,
        libc::SIOCGIFFLAGS,
        &mut ifr,
        &format!("SIOCGIFFLAGS {dev}"),
    )?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    Ok(libc::c_int::from(unsafe { ifr.ifr_ifru.ifru_flags }))
}

/// Sets `dev` up in the calling thread's namespace.
fn link_up(dev: &str) -> io::Result<()> {
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

/// Gives `dev` address `addr` with a `/prefix` netmask (calling thread's namespace).
fn set_addr(dev: &str, addr: Ipv4Addr, prefix: u8) -> io::Result<()> {
    let fd = socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
    let mut ifr = ifreq(dev)?;
    ifr.ifr_ifru.ifru_addr = sockaddr_in(addr);
    ioctl(
        &fd,
        libc::SIOCSIFADDR,
        &mut ifr,
        &format!("SIOCSIFADDR {dev}"),
    )?;
    let mask = Ipv4Addr::from(u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0));
    ifr.ifr_ifru.ifru_netmask = sockaddr_in(mask);
    ioctl(
        &fd,
        libc::SIOCSIFNETMASK,
        &mut ifr,
        &format!("SIOCSIFNETMASK {dev}"),
    )
}

// rtnetlink numbers (linux/rtnetlink.h, linux/if_link.h, linux/veth.h).
const IFLA_IFNAME: u16 = 3;
const IFLA_LINKINFO: u16 = 18;
const IFLA_NET_NS_FD: u16 = 28;
const IFLA_INFO_KIND: u16 = 1;
const IFLA_INFO_DATA: u16 = 2;
const VETH_INFO_PEER: u16 = 1;
const NLA_F_NESTED: u16 = 1 << 15;
/// sizeof(struct ifinfomsg).
const IFINFOMSG_LEN: usize = 16;
const NLMSG_HDR_LEN: usize = 16;

/// A netlink attribute: header, payload, padding to 4 bytes.
fn attr(ty: u16, payload: &[u8]) -> Vec<u8> {
    let len = 4 + payload.len();
    let mut v = Vec::with_capacity(len.next_multiple_of(4));
    v.extend_from_slice(&(len as u16).to_ne_bytes());
    v.extend_from_slice(&ty.to_ne_bytes());
    v.extend_from_slice(payload);
    v.resize(len.next_multiple_of(4), 0);
    v
}

fn name_attr(name: &str) -> Vec<u8> {
    let mut z = name.as_bytes().to_vec();
    z.push(0);
    attr(IFLA_IFNAME, &z)
}

/// The `RTM_NEWLINK` request creating veth `name` here with peer `peer` in the namespace
/// of descriptor `peer_ns`.
pub(crate) fn new_veth_request(name: &str, peer: &str, peer_ns: RawFd, seq: u32) -> Vec<u8> {
    let mut peer_info = vec![0u8; IFINFOMSG_LEN]; // AF_UNSPEC, no index, no flags
    peer_info.extend(name_attr(peer));
    peer_info.extend(attr(IFLA_NET_NS_FD, &(peer_ns as u32).to_ne_bytes()));
    let data = attr(VETH_INFO_PEER | NLA_F_NESTED, &peer_info);
    let mut info = attr(IFLA_INFO_KIND, b"veth\0");
    info.extend(attr(IFLA_INFO_DATA | NLA_F_NESTED, &data));
    let mut body = vec![0u8; IFINFOMSG_LEN];
    body.extend(name_attr(name));
    body.extend(attr(IFLA_LINKINFO | NLA_F_NESTED, &info));
    let flags = libc::NLM_F_REQUEST | libc::NLM_F_ACK | libc::NLM_F_CREATE | libc::NLM_F_EXCL;
    let mut msg = Vec::with_capacity(NLMSG_HDR_LEN + body.len());
    msg.extend_from_slice(&((NLMSG_HDR_LEN + body.len()) as u32).to_ne_bytes());
    msg.extend_from_slice(&libc::RTM_NEWLINK.to_ne_bytes());
    msg.extend_from_slice(&(flags as u16).to_ne_bytes());
    msg.extend_from_slice(&seq.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend(body);
    msg
}

/// The errno of the netlink acknowledgement in `reply` for request `seq` (0: success), or
/// None when `reply` holds no such acknowledgement.
pub(crate) fn ack_errno(reply: &[u8], seq: u32) -> Option<i32> {
    let mut off = 0;
    while off + NLMSG_HDR_LEN <= reply.len() {
        let u32_at = |o: usize| u32::from_ne_bytes(reply[o..o + 4].try_into().unwrap());
        let len = u32_at(off) as usize;
        let ty = u16::from_ne_bytes(reply[off + 4..off + 6].try_into().unwrap());
        if len < NLMSG_HDR_LEN || off + len > reply.len() {
            return None;
        }
        if i32::from(ty) == libc::NLMSG_ERROR && u32_at(off + 8) == seq && len >= NLMSG_HDR_LEN + 4
        {
            return Some(-(u32_at(off + NLMSG_HDR_LEN) as i32));
        }
        off += len.next_multiple_of(4);
    }
    None
}

/// Creates veth `name` in the calling thread's namespace with peer `peer` in `peer_ns`.
fn create_veth(name: &str, peer: &str, peer_ns: &NetNs) -> io::Result<()> {
    let fd = socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE)?;
    let seq = 1;
    let req = new_veth_request(name, peer, peer_ns.fd(), seq);
    // SAFETY: an all-zero sockaddr_nl addresses the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: req is a valid buffer of its length; kernel is a sockaddr_nl of its size.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            (&kernel as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if n < 0 {
        return Err(os_err("netlink sendto"));
    }
    let mut buf = vec![0u8; 8192];
    // SAFETY: buf is writable for its length.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        return Err(os_err("netlink recv"));
    }
    match ack_errno(&buf[..n as usize], seq) {
        Some(0) => Ok(()),
        Some(e) => {
            let e = io::Error::from_raw_os_error(e);
            Err(io::Error::new(
                e.kind(),
                format!("RTM_NEWLINK veth {name}/{peer}: {e} (is the veth driver available?)"),
            ))
        }
        None => Err(io::Error::other(
            "RTM_NEWLINK veth: no acknowledgement from the kernel",
        )),
    }
}

/// Two network namespaces joined by a veth pair: `dev[i]` with address `addr[i]/24` in
/// `ns[i]`, both ends and both `lo` up. Dropping it removes everything (once the
/// processes started inside have exited).
#[derive(Debug)]
pub struct VethPair {
    /// The two namespaces.
    pub ns: [NetNs; 2],
    /// The veth end in each namespace.
    pub dev: [String; 2],
    /// The IPv4 address of each end.
    pub addr: [Ipv4Addr; 2],
}

/// Why namespaces cannot be made by this process, if it is clear without trying: not
/// root.
pub fn unavailable_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (network namespaces need CAP_SYS_ADMIN)".into());
    }
    None
}

impl VethPair {
    /// Names of the two ends (the namespaces are fresh, so fixed names never collide).
    pub const DEVS: [&'static str; 2] = ["dveth0", "dveth1"];
    /// Addresses of the two ends (private to the two namespaces).
    pub const ADDRS: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 77, 0, 1), Ipv4Addr::new(10, 77, 0, 2)];

    /// Makes the two namespaces and the pair, waits (up to 10 s) for carrier on both ends,
    /// and checks that a process started in either sees its end in `/sys/class/net`. The
    /// error says which step failed (for a test's skip line).
    pub fn create() -> Result<VethPair, String> {
        if let Some(why) = unavailable_reason() {
            return Err(why);
        }
        let ns = [
            NetNs::new().map_err(|e| e.to_string())?,
            NetNs::new().map_err(|e| e.to_string())?,
        ];
        let [d0, d1] = Self::DEVS;
        let pair = VethPair {
            dev: [d0.to_string(), d1.to_string()],
            addr: Self::ADDRS,
            ns,
        };
        let flat = |r: io::Result<io::Result<()>>| r.and_then(|x| x).map_err(|e| e.to_string());
        flat(pair.ns[0].run(|| create_veth(d0, d1, &pair.ns[1])))?;
        for i in 0..2 {
            let (dev, addr) = (&pair.dev[i], pair.addr[i]);
            flat(pair.ns[i].run(|| {
                set_addr(dev, addr, 24)?;
                link_up(dev)
            }))?;
        }
        // UCX lists the running interfaces when a process starts: wait for carrier.
        let running = |i: usize| {
            pair.ns[i]
                .run(|| link_flags(&pair.dev[i]))
                .ok()
                .and_then(|r| r.ok())
                .is_some_and(|f| f & libc::IFF_RUNNING != 0)
        };
        if !crate::poll_until(Duration::from_secs(10), || running(0) && running(1)) {
            return Err("the veth pair did not get carrier within 10 s".into());
        }
        for i in 0..2 {
            let path = format!("/sys/class/net/{}", pair.dev[i]);
            let seen = pair.ns[i]
                .run_with_sysfs(|| std::path::Path::new(&path).exists())
                .map_err(|e| format!("a private /sys in the namespace: {e}"))?;
            if !seen {
                return Err(format!(
                    "{path} missing under a fresh sysfs in the namespace"
                ));
            }
        }
        Ok(pair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16_at(b: &[u8], o: usize) -> u16 {
        u16::from_ne_bytes(b[o..o + 2].try_into().unwrap())
    }

    /// The attributes of `b` from `off` on: (type without flags, payload).
    fn attrs(b: &[u8]) -> Vec<(u16, &[u8])> {
        let mut out = Vec::new();
        let mut o = 0;
        while o + 4 <= b.len() {
            let len = usize::from(u16_at(b, o));
            assert!(
                len >= 4 && o + len <= b.len(),
                "attribute at {o}: length {len}"
            );
            out.push((u16_at(b, o + 2) & !NLA_F_NESTED, &b[o + 4..o + len]));
            o += len.next_multiple_of(4);
        }
        assert_eq!(o, b.len(), "attributes end on a 4-byte boundary");
        out
    }

    #[test]
    fn veth_request_nests_the_peer_with_its_name_and_namespace() {
        let m = new_veth_request("va", "peer0", 7, 42);
        let len = u32::from_ne_bytes(m[0..4].try_into().unwrap()) as usize;
        assert_eq!(len, m.len());
        assert_eq!(u16_at(&m, 4), libc::RTM_NEWLINK);
        let flags = libc::NLM_F_REQUEST | libc::NLM_F_ACK | libc::NLM_F_CREATE | libc::NLM_F_EXCL;
        assert_eq!(u16_at(&m, 6), flags as u16);
        assert_eq!(u32::from_ne_bytes(m[8..12].try_into().unwrap()), 42);
        let top = attrs(&m[NLMSG_HDR_LEN + IFINFOMSG_LEN..]);
        assert_eq!(top[0], (IFLA_IFNAME, &b"va\0"[..]));
        assert_eq!(top[1].0, IFLA_LINKINFO);
        let info = attrs(top[1].1);
        assert_eq!(info[0], (IFLA_INFO_KIND, &b"veth\0"[..]));
        assert_eq!(info[1].0, IFLA_INFO_DATA);
        let data = attrs(info[1].1);
        assert_eq!(data[0].0, VETH_INFO_PEER);
        let peer = attrs(&data[0].1[IFINFOMSG_LEN..]);
        assert_eq!(peer[0], (IFLA_IFNAME, &b"peer0\0"[..]));
        assert_eq!(peer[1], (IFLA_NET_NS_FD, &7u32.to_ne_bytes()[..]));
    }

    fn error_msg(seq: u32, errno: i32) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&36u32.to_ne_bytes());
        m.extend_from_slice(&(libc::NLMSG_ERROR as u16).to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&seq.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(&(-errno).to_ne_bytes());
        m.extend_from_slice(&[0u8; 16]); // the request's header, echoed
        m
    }

    #[test]
    fn acknowledgements_give_the_errno_of_their_request() {
        assert_eq!(ack_errno(&error_msg(5, 0), 5), Some(0));
        assert_eq!(
            ack_errno(&error_msg(5, libc::EEXIST), 5),
            Some(libc::EEXIST)
        );
        // Another request's answer, then ours.
        let mut two = error_msg(4, libc::EPERM);
        two.extend(error_msg(5, libc::EOPNOTSUPP));
        assert_eq!(ack_errno(&two, 5), Some(libc::EOPNOTSUPP));
        assert_eq!(ack_errno(&two, 6), None);
        // Truncated or nonsense lengths are no answer, never a panic.
        assert_eq!(ack_errno(&error_msg(5, 0)[..20], 5), None);
        let mut bad = error_msg(5, 0);
        bad[0..4].copy_from_slice(&1000u32.to_ne_bytes());
        assert_eq!(ack_errno(&bad, 5), None);
        bad[0..4].copy_from_slice(&3u32.to_ne_bytes());
        assert_eq!(ack_errno(&bad, 5), None);
    }
}
