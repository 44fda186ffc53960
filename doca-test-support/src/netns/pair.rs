//! Ready-made set-ups: two namespaces joined by a veth pair ([`VethPair`]), and one
//! namespace joined to the caller's ([`HostLink`]).

use super::link::{delete_link, link, link_up, set_addr, Veth};
use super::NetNs;
use std::io;
use std::net::Ipv4Addr;
use std::time::Duration;

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
        return Some(
            "not root (network namespaces need CAP_SYS_ADMIN); run the test as root".into(),
        );
    }
    None
}

/// How long a new veth pair gets to come up.
const CARRIER_WAIT: Duration = Duration::from_secs(10);

/// Whether `dev` of `ns` is running with carrier (false when it cannot be asked).
fn carrier_in(ns: &NetNs, dev: &str) -> bool {
    ns.run(|| link(dev))
        .ok()
        .and_then(|r| r.ok())
        .is_some_and(|l| l.is_running() && l.has_carrier())
}

/// Flattens a result of [`NetNs::run`] into a message for a skip line.
fn flat<T>(r: io::Result<io::Result<T>>) -> Result<T, String> {
    r.and_then(|x| x).map_err(|e| e.to_string())
}

/// The settings of a [`VethPair`] ([`VethPair::builder`]).
#[derive(Debug, Clone)]
pub struct VethPairBuilder {
    dev: [String; 2],
    addr: [Ipv4Addr; 2],
    queues: u32,
    sysfs_check: bool,
}

impl VethPairBuilder {
    /// Names of the two ends (at most 15 bytes each).
    pub fn devs(mut self, a: &str, b: &str) -> VethPairBuilder {
        self.dev = [a.to_string(), b.to_string()];
        self
    }

    /// Addresses of the two ends (each with a `/24` netmask).
    pub fn addrs(mut self, a: Ipv4Addr, b: Ipv4Addr) -> VethPairBuilder {
        self.addr = [a, b];
        self
    }

    /// Receive and transmit queues of each end (default: the kernel's, one).
    pub fn queues(mut self, n: u32) -> VethPairBuilder {
        self.queues = n;
        self
    }

    /// Makes the two namespaces and the pair, waits (up to 10 s) for carrier on both
    /// ends, and checks that a process started in either sees its end in
    /// `/sys/class/net`. The error says which step failed (for a test's skip line).
    pub fn create(self) -> Result<VethPair, String> {
        if let Some(why) = unavailable_reason() {
            return Err(why);
        }
        let ns = [
            NetNs::new().map_err(|e| e.to_string())?,
            NetNs::new().map_err(|e| e.to_string())?,
        ];
        let pair = VethPair {
            dev: self.dev,
            addr: self.addr,
            ns,
        };
        let (d0, d1) = (&pair.dev[0], &pair.dev[1]);
        let veth = Veth::new(d0, d1).peer_in(&pair.ns[1]).queues(self.queues);
        flat(pair.ns[0].run(|| veth.create()))?;
        for i in 0..2 {
            let (dev, addr) = (&pair.dev[i], pair.addr[i]);
            flat(pair.ns[i].run(|| {
                set_addr(dev, addr, 24)?;
                link_up(dev)
            }))?;
        }
        // UCX lists the running interfaces when a process starts: wait for carrier.
        let up = || carrier_in(&pair.ns[0], d0) && carrier_in(&pair.ns[1], d1);
        if !crate::poll_until(CARRIER_WAIT, up) {
            return Err(format!(
                "the veth pair {d0}/{d1} did not get carrier within {CARRIER_WAIT:?}"
            ));
        }
        if self.sysfs_check {
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
        }
        Ok(pair)
    }
}

impl VethPair {
    /// Names of the two ends (the namespaces are fresh, so fixed names never collide).
    pub const DEVS: [&'static str; 2] = ["dveth0", "dveth1"];
    /// Addresses of the two ends (private to the two namespaces).
    pub const ADDRS: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 77, 0, 1), Ipv4Addr::new(10, 77, 0, 2)];

    /// The default pair ([`VethPair::DEVS`], [`VethPair::ADDRS`], one queue each way),
    /// to adjust before [`VethPairBuilder::create`].
    pub fn builder() -> VethPairBuilder {
        let [d0, d1] = Self::DEVS;
        VethPairBuilder {
            dev: [d0.to_string(), d1.to_string()],
            addr: Self::ADDRS,
            queues: 0,
            sysfs_check: true,
        }
    }

    /// The default pair: `VethPair::builder().create()`.
    pub fn create() -> Result<VethPair, String> {
        Self::builder().create()
    }

    /// The ids of the two namespaces ([`NetNs::id`]), for checking after the drop that
    /// nothing of this process keeps them ([`super::held_by_this_process`]).
    pub fn ids(&self) -> io::Result<[u64; 2]> {
        Ok([self.ns[0].id()?, self.ns[1].id()?])
    }
}

/// A new namespace joined to the caller's by a veth pair: `host_dev` with `host_addr` in
/// the namespace of the thread that made it, `dev` with `addr` in `ns` (both `/24`), both
/// ends and the namespace's `lo` up. The other machine of a two-host test whose first
/// host is the test process itself. Dropping it removes the host end (and so the pair)
/// right away; the namespace goes once the processes started in it have exited.
#[derive(Debug)]
pub struct HostLink {
    /// The new namespace.
    pub ns: NetNs,
    /// The veth end in `ns`.
    pub dev: String,
    /// Its address.
    pub addr: Ipv4Addr,
    /// The veth end in the caller's namespace (names there must not collide: choose
    /// one unique to the process).
    pub host_dev: String,
    /// Its address.
    pub host_addr: Ipv4Addr,
    /// The caller's namespace, where `host_dev` is removed on drop.
    host_ns: NetNs,
}

impl HostLink {
    /// Makes the namespace and the pair, and waits (up to 10 s) for carrier on both ends.
    /// The error says which step failed (for a test's skip line); on failure nothing is
    /// left behind.
    pub fn create(
        host_dev: &str,
        host_addr: Ipv4Addr,
        dev: &str,
        addr: Ipv4Addr,
    ) -> Result<HostLink, String> {
        if let Some(why) = unavailable_reason() {
            return Err(why);
        }
        let host_ns = NetNs::current().map_err(|e| e.to_string())?;
        let ns = NetNs::new().map_err(|e| e.to_string())?;
        Veth::new(host_dev, dev)
            .peer_in(&ns)
            .create()
            .map_err(|e| e.to_string())?;
        // From here on, dropping `l` removes the pair.
        let l = HostLink {
            ns,
            dev: dev.to_string(),
            addr,
            host_dev: host_dev.to_string(),
            host_addr,
            host_ns,
        };
        flat(l.host_ns.run(|| {
            set_addr(host_dev, host_addr, 24)?;
            link_up(host_dev)
        }))?;
        flat(l.ns.run(|| {
            set_addr(dev, addr, 24)?;
            link_up(dev)
        }))?;
        let up = || carrier_in(&l.host_ns, host_dev) && carrier_in(&l.ns, dev);
        if !crate::poll_until(CARRIER_WAIT, up) {
            return Err(format!(
                "the veth pair {host_dev}/{dev} did not get carrier within {CARRIER_WAIT:?}"
            ));
        }
        Ok(l)
    }
}

impl Drop for HostLink {
    fn drop(&mut self) {
        let r = flat(self.host_ns.run(|| delete_link(&self.host_dev)));
        if let Err(e) = r {
            // Not a panic in drop: say so; the kernel removes the pair with `ns` anyway.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "removing the host end: {e}");
        }
    }
}
