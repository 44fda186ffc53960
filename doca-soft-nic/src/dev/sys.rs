//! The Linux network interfaces of this machine (names, indexes, MAC and IPv4 addresses).

use std::collections::HashMap;
use std::ffi::CStr;

/// One Linux interface as read from sysfs and getifaddrs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinuxIface {
    /// Interface name.
    pub name: String,
    /// Interface index.
    pub ifindex: u32,
    /// MAC address (all zero for `lo`).
    pub mac: [u8; 6],
    /// First IPv4 address, if any.
    pub ipv4: Option<[u8; 4]>,
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub(crate) fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut mac = [0u8; 6];
    let mut parts = s.trim().split(':');
    for b in mac.iter_mut() {
        *b = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

/// Lists the interfaces in /sys/class/net, sorted by name.
pub(crate) fn linux_ifaces() -> Vec<LinuxIface> {
    let ipv4 = ipv4_addrs();
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/sys/class/net") else {
        return out;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let base = e.path();
        let read = |f: &str| std::fs::read_to_string(base.join(f)).unwrap_or_default();
        let Ok(ifindex) = read("ifindex").trim().parse::<u32>() else {
            continue;
        };
        let mac = parse_mac(&read("address")).unwrap_or([0; 6]);
        out.push(LinuxIface {
            ipv4: ipv4.get(&name).copied(),
            name,
            ifindex,
            mac,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The first IPv4 address of each interface, from getifaddrs.
fn ipv4_addrs() -> HashMap<String, [u8; 4]> {
    let mut map = HashMap::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `head` is a valid out-pointer; the list is freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return map;
    }
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: ifa_addr is non-null and points to a sockaddr.
        if i32::from(unsafe { (*ifa.ifa_addr).sa_family }) != libc::AF_INET {
            continue;
        }
        // SAFETY: the family is AF_INET, so the address is a sockaddr_in.
        let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
        // SAFETY: ifa_name is a NUL-terminated name.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        map.entry(name)
            .or_insert_with(|| sin.sin_addr.s_addr.to_ne_bytes());
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_parsing() {
        assert_eq!(
            parse_mac("02:1a:ff:00:10:9b\n"),
            Some([2, 0x1a, 0xff, 0, 0x10, 0x9b])
        );
        assert_eq!(parse_mac("02:1a:ff:00:10"), None);
        assert_eq!(parse_mac("02:1a:ff:00:10:9b:00"), None);
        assert_eq!(parse_mac("zz:1a:ff:00:10:9b"), None);
    }

    #[test]
    fn loopback_is_listed_with_its_address() {
        let all = linux_ifaces();
        let lo = all.iter().find(|i| i.name == "lo").expect("lo exists");
        assert!(lo.ifindex > 0);
        assert_eq!(lo.ipv4, Some([127, 0, 0, 1]));
    }
}
