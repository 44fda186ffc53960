//! `SocketAddr` <-> C socket addresses for UCX's sockaddr parameters.

use crate::sys;
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};

/// A C socket address with storage for either family.
pub(crate) struct CSockAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl CSockAddr {
    pub(crate) fn new(addr: SocketAddr) -> CSockAddr {
        // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let len = match addr {
            SocketAddr::V4(a) => {
                // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
                let sin = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in) };
                sin.sin_family = libc::AF_INET as libc::sa_family_t;
                sin.sin_port = a.port().to_be();
                sin.sin_addr.s_addr = u32::from(*a.ip()).to_be();
                std::mem::size_of::<libc::sockaddr_in>()
            }
            SocketAddr::V6(a) => {
                // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in6.
                let sin6 = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in6) };
                sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                sin6.sin6_port = a.port().to_be();
                sin6.sin6_addr.s6_addr = a.ip().octets();
                sin6.sin6_flowinfo = a.flowinfo();
                sin6.sin6_scope_id = a.scope_id();
                std::mem::size_of::<libc::sockaddr_in6>()
            }
        };
        CSockAddr {
            storage,
            len: len as libc::socklen_t,
        }
    }

    /// As UCX's `ucs_sock_addr_t` (borrowing `self`).
    pub(crate) fn as_ucs(&self) -> sys::ucs_sock_addr_t {
        sys::ucs_sock_addr_t {
            addr: &self.storage as *const libc::sockaddr_storage as *const sys::sockaddr,
            addrlen: self.len,
        }
    }
}

/// Reads a C socket address of family AF_INET or AF_INET6.
///
/// # Safety
/// `storage` holds a socket address written by the system or UCX.
pub(crate) unsafe fn from_storage(storage: *const libc::sockaddr_storage) -> Option<SocketAddr> {
    // SAFETY: caller contract; the family says which struct the storage holds.
    unsafe {
        match (*storage).ss_family as i32 {
            libc::AF_INET => {
                let sin = &*(storage as *const libc::sockaddr_in);
                let ip = u32::from_be(sin.sin_addr.s_addr);
                Some(SocketAddr::V4(SocketAddrV4::new(
                    ip.into(),
                    u16::from_be(sin.sin_port),
                )))
            }
            libc::AF_INET6 => {
                let sin6 = &*(storage as *const libc::sockaddr_in6);
                Some(SocketAddr::V6(SocketAddrV6::new(
                    sin6.sin6_addr.s6_addr.into(),
                    u16::from_be(sin6.sin6_port),
                    sin6.sin6_flowinfo,
                    sin6.sin6_scope_id,
                )))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    #[test]
    fn addresses_round_trip() {
        for a in [
            "127.0.0.1:4567".parse::<SocketAddr>().unwrap(),
            "[::1]:80".parse().unwrap(),
        ] {
            let c = CSockAddr::new(a);
            // SAFETY: written by CSockAddr::new.
            assert_eq!(unsafe { from_storage(&c.storage) }, Some(a));
            assert_eq!(
                c.len as usize,
                match a.ip() {
                    IpAddr::V4(_) => std::mem::size_of::<libc::sockaddr_in>(),
                    IpAddr::V6(_) => std::mem::size_of::<libc::sockaddr_in6>(),
                }
            );
        }
    }
}
