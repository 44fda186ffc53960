//! Network namespaces, veth pairs and links, made with system calls alone (no `ip`
//! command, no iproute2 libraries): the two-host set-ups of the end-to-end tests, the
//! port tests and the AF_XDP bench.
//!
//! A namespace is held by an open descriptor of its `/proc/.../ns/net` file ([`NetNs`]);
//! it disappears when that descriptor, every socket made in it and every thread or
//! process inside it are gone, taking its interfaces (and so its veth ends) with it.
//! Nothing of the host's namespace changes unless asked ([`HostLink`]) and nothing
//! needs removing by name.
//!
//! * [`NetNs::run`] runs a closure on a thread inside the namespace: sockets it creates
//!   stay in that namespace wherever they are used afterwards.
//! * [`NetNs::enter`] makes a [`Command`] start its process inside the namespace, with a
//!   private mount namespace whose `/sys` is a fresh sysfs, so `/sys/class/net` lists the
//!   namespace's own interfaces (as `ip netns exec` arranges; doca-soft and UCX read it).
//! * [`VethPair::create`] (or [`VethPair::builder`]) makes two namespaces, the veth pair
//!   between them (one `RTM_NEWLINK` netlink request), addresses on both ends and every
//!   link up; [`HostLink::create`] joins one new namespace to the caller's.
//! * In the calling thread's namespace: [`Veth`] makes a pair, [`link_up`], [`set_addr`],
//!   [`link`] (flags, carrier, XDP program), [`delete_link`].
//! * [`NetNs::id`] and [`held_by_this_process`]: whether anything of this process (a
//!   descriptor, a socket, a thread) still keeps a namespace alive.
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

mod link;
mod netlink;
mod pair;

pub use link::{delete_link, link, link_up, set_addr, Veth};
pub use netlink::Link;
pub use pair::{unavailable_reason, HostLink, VethPair, VethPairBuilder};

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::process::CommandExt as _;
use std::process::Command;

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
                let ns = NetNs::current()?;
                link_up("lo")?;
                Ok(ns)
            })
            .join()
            .map_err(|_| io::Error::other("namespace thread panicked"))?
        })?;
        Ok(ns)
    }

    /// The calling thread's namespace.
    pub fn current() -> io::Result<NetNs> {
        Ok(NetNs {
            fd: open_cloexec(c"/proc/thread-self/ns/net")?,
        })
    }

    /// Another handle on the same namespace (a duplicate descriptor).
    pub fn try_clone(&self) -> io::Result<NetNs> {
        let fd = self
            .fd
            .try_clone()
            .map_err(|e| io::Error::new(e.kind(), format!("dup of a namespace: {e}")))?;
        Ok(NetNs { fd })
    }

    /// The namespace's descriptor (valid as long as `self`).
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The namespace's identity: the inode number of its nsfs file (what
    /// `/proc/PID/ns/net` links to as `net:[ID]`), for [`held_by_this_process`].
    pub fn id(&self) -> io::Result<u64> {
        let f = std::fs::File::from(self.fd.try_clone()?);
        let md = f
            .metadata()
            .map_err(|e| io::Error::new(e.kind(), format!("fstat of a namespace: {e}")))?;
        Ok(md.ino())
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

/// The namespace id in a `/proc/.../ns/net` link target (`net:[4026531840]`).
fn ns_link_id(target: &str) -> Option<u64> {
    target
        .strip_prefix("net:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// `SIOCGSKNS` (linux/sockios.h): a descriptor of a socket's network namespace.
const SIOCGSKNS: libc::Ioctl = 0x894C;

/// The namespace id of socket `fd` (None when the kernel will not say).
fn socket_ns_id(fd: RawFd) -> Option<u64> {
    // SAFETY: ioctl(SIOCGSKNS) on a descriptor of ours; it returns a new descriptor or -1.
    let ns = unsafe { libc::ioctl(fd, SIOCGSKNS) };
    if ns < 0 {
        return None;
    }
    // SAFETY: ns was just returned to us and is owned by nobody else.
    let ns = NetNs {
        fd: unsafe { OwnedFd::from_raw_fd(ns) },
    };
    ns.id().ok()
}

/// What of this process keeps namespace `id` ([`NetNs::id`]) alive: descriptors of the
/// namespace, sockets made in it, threads inside it, one line each (empty: nothing; the
/// namespace goes once other processes let go too).
///
/// A thread that was just joined may still show for a moment (the kernel wakes the
/// joiner before the thread has left its namespaces): poll for an empty list
/// ([`crate::poll_until`]) rather than asserting it once.
pub fn held_by_this_process(id: u64) -> io::Result<Vec<String>> {
    let list = |dir: &str| {
        std::fs::read_dir(dir).map_err(|e| io::Error::new(e.kind(), format!("{dir}: {e}")))
    };
    let mut held = Vec::new();
    for task in list("/proc/self/task")?.filter_map(Result::ok) {
        let target = std::fs::read_link(task.path().join("ns/net"));
        if target.is_ok_and(|t| ns_link_id(&t.to_string_lossy()) == Some(id)) {
            held.push(format!("thread {}", task.file_name().to_string_lossy()));
        }
    }
    for fd in list("/proc/self/fd")?.filter_map(Result::ok) {
        let Ok(num) = fd.file_name().to_string_lossy().parse::<RawFd>() else {
            continue;
        };
        // Gone already (the directory's own descriptor, say): nothing to check.
        let Ok(target) = std::fs::read_link(fd.path()) else {
            continue;
        };
        let target = target.to_string_lossy();
        if ns_link_id(&target) == Some(id) {
            held.push(format!("descriptor {num}"));
        } else if target.starts_with("socket:") && socket_ns_id(num) == Some(id) {
            held.push(format!("socket descriptor {num} ({target})"));
        }
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_link_targets_give_their_id() {
        assert_eq!(ns_link_id("net:[4026531840]"), Some(4_026_531_840));
        assert_eq!(ns_link_id("mnt:[4026531840]"), None);
        assert_eq!(ns_link_id("net:[12"), None);
        assert_eq!(ns_link_id("socket:[77]"), None);
    }

    #[test]
    fn the_callers_namespace_is_held_by_its_threads_and_a_descriptor() {
        let ns = NetNs::current().unwrap();
        let id = ns.id().unwrap();
        let target = std::fs::read_link("/proc/thread-self/ns/net").unwrap();
        assert_eq!(ns_link_id(&target.to_string_lossy()), Some(id));
        let held = held_by_this_process(id).unwrap();
        let fd = format!("descriptor {}", ns.fd());
        assert!(held.contains(&fd), "{held:?}");
        assert!(held.iter().any(|h| h.starts_with("thread ")), "{held:?}");
        // A socket of this namespace shows too (SIOCGSKNS needs CAP_NET_ADMIN).
        if unavailable_reason().is_some() {
            return;
        }
        let s = socket(libc::AF_INET, libc::SOCK_DGRAM, 0).unwrap();
        let held = held_by_this_process(id).unwrap();
        let sock = format!("socket descriptor {} ", s.as_raw_fd());
        assert!(held.iter().any(|h| h.starts_with(&sock)), "{held:?}");
        // Another id is held by nothing.
        assert_eq!(held_by_this_process(1).unwrap(), Vec::<String>::new());
    }
}
